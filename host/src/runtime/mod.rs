//! Code-extension runtimes.
pub mod wasm;
