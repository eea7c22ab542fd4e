//! WebAssembly component runtimes: the extension contract, sandboxed.
//!
//! A plugin whose `runtime.command` (after `${REASONIX_PLUGIN_ROOT}`
//! expansion) names a `.wasm` file runs as a component inside the host
//! through wasmtime's component model, against the WIT world
//! `reasonix:extension/extension` (`wit/since_v2.0.0`). It answers the same
//! interceptor, tool, provider and UI calls as a native sidecar, but with no
//! ambient authority ([`sandbox`]), bounded CPU and memory ([`limits`]) and
//! bounded open files and data (`fs_limits`).
//!
//! - [`engine`]: the one `Engine`, its epoch ticker and linker;
//! - [`cache`]: compiled components on disk, verified before use;
//! - [`bindings`]: the package version read from the component, and the
//!   adapter that serves it ([`v2_0`] today, later minors beside it);
//! - [`instance`]: one live `Store` and the discipline of a call;
//! - [`runtime`]: [`WasmRuntime`], the handshaken component;
//! - [`adapter`]: [`WasmExtension`], the dispatcher's [`ExtensionRuntime`]
//!   over it (trust label `Sandboxed`), and its [`WasmStarter`].
//!
//! [`ExtensionRuntime`]: super::ExtensionRuntime

pub mod adapter;
pub mod bindings;
pub mod cache;
pub mod engine;
pub mod error;
mod fs_limits;
pub mod instance;
pub mod limits;
mod redaction;
pub mod runtime;
pub mod sandbox;
pub mod v2_0;

pub use adapter::{WasmExtension, WasmStarter};
pub use bindings::{Adapter, PackageVersion};
pub use cache::{CacheOutcome, ComponentCache};
pub use engine::{Allocation, WasmEngine};
pub use error::{WasmError, WasmErrorKind};
pub use instance::UiBridge;
pub use limits::{
    DEFAULT_DATA_MIB, DEFAULT_MEMORY_MIB, HOST_DATA_CEILING_MIB, HOST_MEMORY_CEILING_MIB,
    InstanceLimits, MAX_OPEN_HANDLES,
};
pub use runtime::{StreamSink, WasmFacts, WasmRuntime, WasmStart, WasmStreamEvent};
pub use sandbox::{GUEST_DATA_DIR, GUEST_PLUGIN_ROOT, GuestLog, SandboxPolicy};

/// Whether a runtime command (after expansion) names a component file.
pub fn is_component_command(program: &str) -> bool {
    std::path::Path::new(program)
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("wasm"))
}
