//! The executables a runtime command must never name (§13 "Process launch":
//! exec form only). One list, so the manifest check and the launcher refuse
//! the same shells.

/// The "never a shell" basenames, lowercase, as the protocol lists them.
pub const NEVER_A_SHELL: [&str; 12] = [
    "sh",
    "bash",
    "zsh",
    "fish",
    "dash",
    "ksh",
    "cmd",
    "cmd.exe",
    "powershell",
    "powershell.exe",
    "pwsh",
    "pwsh.exe",
];

/// The list entry a command's basename (after either path separator,
/// trimmed, case-insensitive) matches exactly, if any.
pub fn shell_basename(command: &str) -> Option<&'static str> {
    let base = command
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(command)
        .trim()
        .to_ascii_lowercase();
    NEVER_A_SHELL.iter().copied().find(|s| *s == base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basenames_match_exactly() {
        assert_eq!(shell_basename("/bin/sh"), Some("sh"));
        assert_eq!(
            shell_basename("C:\\x\\PowerShell.EXE"),
            Some("powershell.exe")
        );
        assert_eq!(shell_basename("/usr/bin/shellcheck"), None);
        assert_eq!(shell_basename("/opt/bash/server"), None);
    }
}
