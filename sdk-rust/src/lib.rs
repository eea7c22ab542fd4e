//! Write Reasonix extensions in Rust.
//!
//! Implement [`Extension`] once; serve it as a native sidecar with
//! [`run_stdio`] (JSON-RPC over stdio, Extension Protocol v2) or export it
//! from a wasm component with [`export_extension!`] (the WIT world
//! `reasonix:extension/extension@2.0.0`, built with
//! `cargo build --target wasm32-wasip2`). The author's code does not change
//! between the two.
//!
//! ```no_run
//! use reasonix_extension_sdk::prelude::*;
//!
//! struct Shout;
//!
//! impl Extension for Shout {
//!     fn initialize(&self, _init: &InitializeParams) -> Result<Declaration, Error> {
//!         Ok(Declaration::new("shout", "0.1.0").intercept(HookPoint::InputReceive))
//!     }
//!
//!     fn on_input_receive(&self, _ctx: &Context, payload: &Payload) -> Result<Verdict, Error> {
//!         let input: InputPayload = payload.decode()?;
//!         Verdict::replace(&InputPayload { text: input.text.to_uppercase() })
//!     }
//! }
//!
//! # #[cfg(not(target_family = "wasm"))]
//! fn main() -> std::process::ExitCode {
//!     reasonix_extension_sdk::run_stdio(Shout)
//! }
//! ```

mod content;
mod core;
mod declaration;
mod error;
mod extension;
mod host;
mod payload;
pub mod stream;
pub mod ui;
mod verdict;

#[cfg(not(target_family = "wasm"))]
mod stdio;
#[cfg(target_family = "wasm")]
#[doc(hidden)]
pub mod wasm;

pub use declaration::Declaration;
pub use error::Error;
pub use extension::{Extension, ToolOutput};
pub use host::{Context, LogLevel};
pub use payload::Payload;
pub use stream::{
    CancelToken, ChunkReceiver, ChunkSender, ChunkStream, StreamRequest, chunk, chunk_channel,
};
pub use ui::HostUi;
pub use verdict::Verdict;

#[cfg(not(target_family = "wasm"))]
pub use stdio::{MAX_IN_FLIGHT, NOTIFICATION_QUEUE, ServeError, run_stdio, serve};

/// The wire vocabulary (params, results, DTOs) from `reasonix-protocol`.
pub use reasonix_protocol as protocol;
/// Per-point payload DTOs (`InputPayload`, `ToolBeforePayload`, …).
pub use reasonix_protocol::payloads;
pub use reasonix_protocol::{ErrorReason, HookPoint, Slot};

/// Everything an extension usually needs.
pub mod prelude {
    pub use crate::payloads::*;
    pub use crate::protocol::types::{
        InitializeParams, ProviderDescriptor, ProviderRequest, RawJson, UIActionParams,
        UISubmitParams,
    };
    pub use crate::ui::{Card, FieldKind, Form, FormField, Notification, Severity, Status};
    pub use crate::{
        ChunkStream, Context, Declaration, Error, ErrorReason, Extension, HookPoint, LogLevel,
        Payload, Slot, StreamRequest, ToolOutput, Verdict, chunk,
    };
}

/// Exports an [`Extension`] type (which must implement `Default`) as the
/// component's implementation of the world `reasonix:extension/extension`.
/// Put it at the root of a `cdylib` crate built with
/// `cargo build --target wasm32-wasip2`; on other targets it expands to
/// nothing, so the crate still builds natively.
///
/// ```ignore
/// reasonix_extension_sdk::export_extension!(starter::Starter);
/// ```
#[macro_export]
macro_rules! export_extension {
    ($ty:ty) => {
        #[cfg(target_family = "wasm")]
        type __ReasonixExtensionAdapter = $crate::wasm::Adapter<$ty>;
        #[cfg(target_family = "wasm")]
        $crate::wasm::bindings::__export_reasonix_extension_world!(
            __ReasonixExtensionAdapter with_types_in $crate::wasm::bindings
        );
    };
}
