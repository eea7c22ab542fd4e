//! The starter extension as a wasm component. The logic is
//! `examples/starter/src/lib.rs`; this crate only exports it through the
//! WIT world `reasonix:extension/extension@2.0.0`:
//!
//!     cargo build -p reasonix-example-starter-wasm --target wasm32-wasip2 --profile component
//!
//! (or `examples/build starter-wasm`, which also copies the component to
//! `examples/starter-wasm/bin/starter-wasm.wasm`). On a native target this
//! crate builds to an empty library.

reasonix_extension_sdk::export_extension!(starter::Starter);
