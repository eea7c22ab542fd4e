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
}
