//! The Reasonix plugin host: package management and the extension runtime.
pub mod acp;
pub mod capabilities;
pub mod cli;
pub mod config;
pub mod export;
pub mod home;
pub mod hooks;
pub mod install;
pub mod mcp;
pub mod mods;
pub mod proxy;
pub mod registry;
pub mod runtime;
pub mod serve;
pub mod session;
pub mod skills;
