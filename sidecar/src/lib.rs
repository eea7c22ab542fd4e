//! Native sidecars for Extension Protocol v2: launching plugin runtimes,
//! the NDJSON JSON-RPC transport over their stdio, the handshake, content
//! references and the lifecycle (shutdown, crash, parent death).

pub mod frame;
pub mod guard;
pub mod launch;
pub mod redact;
pub mod stderr_tail;

pub use launch::{Guard, LaunchError, LaunchSpec, ResolvedCommand};
pub use redact::redact;
