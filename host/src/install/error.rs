//! Typed install errors: every failure carries a stable `errorCode` and a
//! remediation (`next`) that tells the user what to do.
use std::fmt;

/// Stable error codes (`install.*`), shown as `errorCode` in JSON output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// The material changed between plan and apply (or during publication).
    DigestMismatch,
    /// The registry pointer could not be published (rename refused, EXDEV, I/O).
    PublicationFailed,
    /// A presented planId does not match the plan this run computed.
    ApprovalDenied,
    /// `--expect-digest` given for material that cannot be pinned.
    NotPinnable,
    /// The source cannot be read (missing path, git failure, bad zip).
    SourceUnreadable,
    /// The source is not a supported kind (URL shape, link of a zip…).
    UnsupportedSource,
    /// No plugin manifest at the source.
    ManifestMissing,
    /// A manifest exists but does not validate.
    InvalidManifest,
    /// The plugin name is not `^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$`.
    InvalidName,
    /// The manifest names a different plugin than the plan or `--name`.
    NameMismatch,
    /// A plugin with this name is installed and `--replace` was not given.
    AlreadyExists,
    /// A size or entry-count limit was exceeded.
    LimitExceeded,
    /// An archive entry or symlink would leave the package.
    UnsafePath,
    /// The package contains a fifo, socket or device file.
    NonRegularFile,
    /// A linked source lies outside the home and workspace.
    UnsafeLink,
    /// A non-native package maps nothing Reasonix can use.
    NoCompatibleCapabilities,
    /// The named plugin is not installed.
    NotInstalled,
    /// A registered plugin's root directory is gone.
    MissingRoot,
    /// The plugin registry cannot be read.
    RegistryUnreadable,
    /// Any other I/O failure.
    Io,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::DigestMismatch => "install.digest_mismatch",
            ErrorCode::PublicationFailed => "install.publication_failed",
            ErrorCode::ApprovalDenied => "install.approval_denied",
            ErrorCode::NotPinnable => "install.not_pinnable",
            ErrorCode::SourceUnreadable => "install.source_unreadable",
            ErrorCode::UnsupportedSource => "install.unsupported_source",
            ErrorCode::ManifestMissing => "install.manifest_missing",
            ErrorCode::InvalidManifest => "install.invalid_manifest",
            ErrorCode::InvalidName => "install.invalid_name",
            ErrorCode::NameMismatch => "install.name_mismatch",
            ErrorCode::AlreadyExists => "install.already_exists",
            ErrorCode::LimitExceeded => "install.limit_exceeded",
            ErrorCode::UnsafePath => "install.unsafe_path",
            ErrorCode::NonRegularFile => "install.non_regular_file",
            ErrorCode::UnsafeLink => "install.unsafe_link",
            ErrorCode::NoCompatibleCapabilities => "install.no_compatible_capabilities",
            ErrorCode::NotInstalled => "plugin.not_installed",
            ErrorCode::MissingRoot => "plugin.missing_root",
            ErrorCode::RegistryUnreadable => "plugin.state_unreadable",
            ErrorCode::Io => "install.io",
        }
    }

    /// The default remediation for this code.
    pub fn next(self) -> &'static str {
        match self {
            ErrorCode::DigestMismatch => {
                "The source changed after it was reviewed. Re-run with --dry-run, review the new plan, then apply it."
            }
            ErrorCode::PublicationFailed => {
                "Nothing was published; the previous installation is intact. Check that the Reasonix home is writable and on one filesystem, then retry."
            }
            ErrorCode::ApprovalDenied => {
                "The plan changed since it was approved. Re-run with --dry-run and approve the new planId."
            }
            ErrorCode::NotPinnable => {
                "This source cannot be pinned by content (link mode). Drop --expect-digest or install in copy mode."
            }
            ErrorCode::SourceUnreadable => {
                "Check the path or URL and that it is readable, then retry."
            }
            ErrorCode::UnsupportedSource => {
                "Use a local plugin directory, an exported .zip, git:github.com/<owner>/<repo> or https://github.com/<owner>/<repo>[/tree/<ref>[/<dir>]]."
            }
            ErrorCode::ManifestMissing => {
                "Point at a directory holding reasonix-plugin.json, .codex-plugin/plugin.json or .claude-plugin/plugin.json."
            }
            ErrorCode::InvalidManifest => {
                "Fix the manifest errors listed above (reasonix plugin validate <dir> shows them all), then retry."
            }
            ErrorCode::InvalidName => {
                "Plugin names are 1-64 characters of letters, digits, '.', '_' or '-', starting with a letter or digit; pass a valid --name."
            }
            ErrorCode::NameMismatch => {
                "Install under the manifest's name, or pass --name to choose the installed name explicitly."
            }
            ErrorCode::AlreadyExists => {
                "Re-run with --replace to update it, choose another --name, or remove it first (reasonix plugin remove <name> --yes)."
            }
            ErrorCode::LimitExceeded => {
                "Shrink the package (remove build outputs, vendored dependencies or large assets) and retry."
            }
            ErrorCode::UnsafePath => {
                "The package points outside itself; fix the archive or symlink so every path stays inside the package."
            }
            ErrorCode::NonRegularFile => {
                "Remove fifos, sockets and device files from the package directory, then retry."
            }
            ErrorCode::UnsafeLink => {
                "Linked sources must be inside your home directory or the current workspace; copy-install it instead."
            }
            ErrorCode::NoCompatibleCapabilities => {
                "Choose a plugin that exports a supported skill, command, agent, hook, or MCP server."
            }
            ErrorCode::NotInstalled => "Run `reasonix plugin list` to see installed plugins.",
            ErrorCode::MissingRoot => {
                "Reinstall it with --replace, or remove it with `reasonix plugin remove <name> --yes`."
            }
            ErrorCode::RegistryUnreadable => {
                "Fix or move the registry file named above (it is never rewritten while unreadable), then retry."
            }
            ErrorCode::Io => "Inspect the error, fix the file system problem, then retry.",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An install/registry failure with its code, message and remediation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallError {
    pub code: ErrorCode,
    pub message: String,
    pub next: String,
}

impl InstallError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            next: code.next().to_string(),
        }
    }

    pub fn with_next(mut self, next: impl Into<String>) -> Self {
        self.next = next.into();
        self
    }

    /// An I/O failure on `path`, as `<what> <path>: <err>`.
    pub fn io(what: &str, path: &std::path::Path, err: std::io::Error) -> Self {
        Self::new(ErrorCode::Io, format!("{what} {}: {err}", path.display()))
    }
}

impl fmt::Display for InstallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for InstallError {}

pub type InstallResult<T> = Result<T, InstallError>;
