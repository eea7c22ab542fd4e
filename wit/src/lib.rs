//! Extension Protocol v2 (`reasonix.extension.v2`).
//!
//! The contract is written in WIT (`wit/since_v2.0.0/`); this crate holds the
//! JSON-RPC wire form of the same contract, as upstream Reasonix speaks it to
//! native sidecars.
