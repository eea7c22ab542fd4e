//! The Reasonix plugin host: package management and the extension runtime.
pub mod cli;
pub mod runtime;
pub mod turn;
