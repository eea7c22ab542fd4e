//! Which adapter serves a component, read from its type before it runs.
//!
//! A component built against `reasonix:extension@X.Y.Z` carries that
//! version in every interface name it imports and exports. The host reads
//! the names from the compiled component's type, refuses another major with
//! `unsupported_version` and picks the newest adapter whose minor is not
//! later than the component's (older minors are served by the adapter they
//! were built for; a newer minor by the newest adapter, since minors only
//! add). Only 2.0 exists today; a `V2_1` variant goes beside `V2_0`.

use std::collections::BTreeSet;

use wasmtime::Engine;
use wasmtime::component::{Component, Linker};

use super::error::WasmError;
use super::instance::HostState;
use super::v2_0;

/// The package the world belongs to.
pub const PACKAGE: &str = "reasonix:extension";

/// A `major.minor.patch` package version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct PackageVersion {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

impl std::fmt::Display for PackageVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl PackageVersion {
    /// Parses `2.0.0` (pre-release and build suffixes are not part of the
    /// protocol's versions and are refused).
    pub fn parse(text: &str) -> Option<PackageVersion> {
        let mut parts = text.split('.');
        let mut next = || parts.next()?.parse::<u64>().ok();
        let version = PackageVersion {
            major: next()?,
            minor: next()?,
            patch: next()?,
        };
        parts.next().is_none().then_some(version)
    }
}

/// The adapters this host has, newest last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adapter {
    V2_0,
}

impl Adapter {
    pub const ALL: [Adapter; 1] = [Adapter::V2_0];

    pub fn version(self) -> (u64, u64) {
        match self {
            Adapter::V2_0 => v2_0::PACKAGE_VERSION,
        }
    }

    /// The adapter for a component built against `version`.
    pub fn for_version(version: PackageVersion) -> Result<Adapter, WasmError> {
        let host_major = Adapter::ALL[0].version().0;
        if version.major != host_major {
            return Err(WasmError::unsupported_version(format!(
                "the component is built against {PACKAGE}@{version}; this host speaks major {host_major}"
            )));
        }
        Ok(Adapter::ALL
            .iter()
            .rev()
            .copied()
            .find(|a| a.version().1 <= version.minor)
            .unwrap_or(Adapter::ALL[0]))
    }
}

/// Read the package version from the component's interface names. Every
/// name of the package must carry the same version.
pub fn detect_version(engine: &Engine, component: &Component) -> Result<PackageVersion, WasmError> {
    let ty = component.component_type();
    let names: Vec<String> = ty
        .exports(engine)
        .map(|(name, _)| name.to_owned())
        .chain(ty.imports(engine).map(|(name, _)| name.to_owned()))
        .collect();
    let mut versions = BTreeSet::new();
    for name in &names {
        let Some(rest) = name.strip_prefix(PACKAGE).and_then(|r| r.strip_prefix('/')) else {
            continue;
        };
        let Some((_, version)) = rest.split_once('@') else {
            return Err(WasmError::unsupported_version(format!(
                "interface {name} carries no package version"
            )));
        };
        let parsed = PackageVersion::parse(version).ok_or_else(|| {
            WasmError::unsupported_version(format!(
                "interface {name} carries an unreadable version {version:?}"
            ))
        })?;
        versions.insert(parsed);
    }
    let mut versions = versions.into_iter();
    match (versions.next(), versions.next()) {
        (Some(version), None) => Ok(version),
        (Some(a), Some(b)) => Err(WasmError::unsupported_version(format!(
            "the component mixes {PACKAGE}@{a} and @{b}"
        ))),
        (None, _) => Err(WasmError::load(format!(
            "the component exports no {PACKAGE} interface (is it built for world `extension`?)"
        ))),
    }
}

/// A component linked and type-checked for one adapter, ready to
/// instantiate any number of times.
pub(crate) enum ComponentPre {
    V2_0(v2_0::ExtensionPre<HostState>),
}

impl ComponentPre {
    pub(crate) fn new(
        adapter: Adapter,
        linker: &Linker<HostState>,
        component: &Component,
    ) -> Result<ComponentPre, WasmError> {
        let pre = linker.instantiate_pre(component).map_err(|e| {
            WasmError::load(format!(
                "the component's imports cannot be satisfied by the sandbox: {e:#}"
            ))
        })?;
        match adapter {
            Adapter::V2_0 => v2_0::ExtensionPre::new(pre)
                .map(ComponentPre::V2_0)
                .map_err(|e| {
                    WasmError::load(format!(
                        "the component does not implement world `extension`: {e:#}"
                    ))
                }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_strictly() {
        assert_eq!(
            PackageVersion::parse("2.0.0"),
            Some(PackageVersion {
                major: 2,
                minor: 0,
                patch: 0
            })
        );
        for bad in ["2", "2.0", "2.0.0.0", "2.0.0-rc1", "v2.0.0", ""] {
            assert_eq!(PackageVersion::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn adapters_follow_the_minor_and_refuse_other_majors() {
        let v = |major, minor| PackageVersion {
            major,
            minor,
            patch: 0,
        };
        assert_eq!(Adapter::for_version(v(2, 0)).unwrap(), Adapter::V2_0);
        // A later minor only adds: the newest adapter serves it.
        assert_eq!(Adapter::for_version(v(2, 7)).unwrap(), Adapter::V2_0);
        for major in [0, 1, 3] {
            let err = Adapter::for_version(v(major, 0)).unwrap_err();
            assert_eq!(
                err.reason,
                reasonix_protocol::ErrorReason::UnsupportedVersion
            );
        }
    }
}
