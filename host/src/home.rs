//! Where Reasonix keeps its global state: `$REASONIX_HOME`, else `~/.reasonix`.
use std::path::{Path, PathBuf};

/// File name of the plugin registry inside the home.
pub const REGISTRY_FILE: &str = "plugin-packages.json";

/// The Reasonix home directory and the paths derived from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReasonixHome {
    root: PathBuf,
}

/// The home could not be located.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot locate the Reasonix home: set REASONIX_HOME, or HOME so that ~/.reasonix can be used"
)]
pub struct HomeNotFound;

impl ReasonixHome {
    /// A home rooted at `root` (no I/O).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// `$REASONIX_HOME` when set and non-empty, else `~/.reasonix`.
    pub fn from_env() -> Result<Self, HomeNotFound> {
        if let Some(dir) = std::env::var_os("REASONIX_HOME").filter(|v| !v.is_empty()) {
            let dir = PathBuf::from(dir);
            let dir = if dir.is_relative() {
                std::env::current_dir().map_err(|_| HomeNotFound)?.join(dir)
            } else {
                dir
            };
            return Ok(Self::at(dir));
        }
        user_home()
            .map(|h| Self::at(h.join(".reasonix")))
            .ok_or(HomeNotFound)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<home>/plugin-packages.json`
    pub fn registry_path(&self) -> PathBuf {
        self.root.join(REGISTRY_FILE)
    }

    /// `<home>/plugins`
    pub fn plugins_dir(&self) -> PathBuf {
        self.root.join("plugins")
    }

    /// `<home>/plugins/<name>`: where a copied package lives.
    pub fn plugin_dir(&self, name: &str) -> PathBuf {
        self.plugins_dir().join(name)
    }

    /// `<home>/cache`
    pub fn cache_dir(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// `<home>/data/<plugin>`: a plugin's private data directory.
    pub fn data_dir(&self, plugin: &str) -> PathBuf {
        self.root.join("data").join(plugin)
    }

    /// Registry roots are relative to the home for copies (`plugins/<name>`)
    /// and absolute for links.
    pub fn resolve_root(&self, root: &str) -> PathBuf {
        let p = Path::new(root);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.root.join(p)
        }
    }

    /// A registry root as a directory to read from. A link's root is the
    /// absolute source directory it names; a copy's root is relative and
    /// must stay inside `<home>/plugins/` both as written and after symlinks
    /// are resolved: a tampered `../..` or a `plugins/x` symlinked elsewhere
    /// would have export, show or a session read files from outside.
    pub fn checked_root(&self, root: &str) -> Result<PathBuf, String> {
        let path = Path::new(root);
        if path.is_absolute() {
            return Ok(path.to_path_buf());
        }
        let plugins = self.plugins_dir();
        let escapes = || {
            format!(
                "registered root {root:?} resolves outside {}; a copied plugin lives in plugins/<name>",
                plugins.display()
            )
        };
        let mut depth = 0usize;
        for part in path.components() {
            match part {
                std::path::Component::Normal(_) => depth += 1,
                std::path::Component::CurDir => {}
                _ => return Err(escapes()),
            }
        }
        let joined = self.root.join(path);
        if depth < 2 || !joined.starts_with(&plugins) {
            return Err(escapes());
        }
        // A root that does not exist is reported as missing by the caller.
        if let (Ok(real), Ok(real_plugins)) = (
            std::fs::canonicalize(&joined),
            std::fs::canonicalize(&plugins),
        ) && (!real.starts_with(&real_plugins) || real == real_plugins)
        {
            return Err(escapes());
        }
        Ok(joined)
    }

    /// The relative spelling of a root inside the home, or the absolute path.
    pub fn relative_root(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }
}

/// The user's home directory (`$HOME`).
pub fn user_home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_derive_from_the_root() {
        let h = ReasonixHome::at("/x/home");
        assert_eq!(h.registry_path(), Path::new("/x/home/plugin-packages.json"));
        assert_eq!(h.plugin_dir("a"), Path::new("/x/home/plugins/a"));
        assert_eq!(h.data_dir("a"), Path::new("/x/home/data/a"));
        assert_eq!(h.cache_dir(), Path::new("/x/home/cache"));
        assert_eq!(h.resolve_root("plugins/a"), Path::new("/x/home/plugins/a"));
        assert_eq!(h.resolve_root("/src/a"), Path::new("/src/a"));
        assert_eq!(h.relative_root(Path::new("/x/home/plugins/a")), "plugins/a");
        assert_eq!(h.relative_root(Path::new("/elsewhere/a")), "/elsewhere/a");
    }

    #[test]
    fn copy_roots_stay_inside_plugins() {
        let dir = tempfile::tempdir().unwrap();
        let h = ReasonixHome::at(dir.path());
        std::fs::create_dir_all(h.plugin_dir("a")).unwrap();
        assert_eq!(h.checked_root("plugins/a").unwrap(), h.plugin_dir("a"));
        assert_eq!(
            h.checked_root("/src/linked").unwrap(),
            Path::new("/src/linked")
        );
        for bad in [
            "../outside",
            "plugins/../../x",
            "plugins",
            "data/a",
            "plugins/a/../../x",
            ".",
        ] {
            let err = h.checked_root(bad).unwrap_err();
            assert!(err.contains("resolves outside"), "{bad}: {err}");
        }
        // Inside as written, outside once the symlink is followed.
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, h.plugin_dir("sneaky")).unwrap();
        assert!(h.checked_root("plugins/sneaky").is_err());
    }
}
