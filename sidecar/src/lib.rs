//! Native sidecars for Extension Protocol v2: launching plugin runtimes,
//! the NDJSON JSON-RPC transport over their stdio, the handshake, content
//! references and the lifecycle (shutdown, crash, parent death).
//!
//! Entry point for the host: [`Sidecar::start`] with a [`LaunchSpec`] and a
//! [`ManifestCeiling`] built from a registry entry (only registry-installed
//! plugins may start a runtime), then the calls on [`Sidecar`].

pub mod connection;
pub mod content;
pub mod errors;
pub mod frame;
pub mod guard;
pub mod handshake;
pub mod launch;
pub mod redact;
pub mod services;
pub mod sidecar;
pub mod stderr_tail;

pub use connection::{CrashCallback, Enqueued, StreamEvent};
pub use errors::{CallError, Failure, FailureKind, StartError, StartStage, Status};
pub use handshake::{Declaration, ManifestCeiling, Undeclared, check_declaration};
pub use launch::{Guard, LaunchError, LaunchSpec, ProcessTree, ResolvedCommand, spawn_tree};
pub use redact::redact;
pub use services::{BoxFuture, HostServices, NoHostServices};
pub use sidecar::{
    InterceptOutcome, Launched, ProviderStream, ShutdownReport, Sidecar, StartOptions,
};
