//! Diagnostics of the library (`tracing` events: a component cache that
//! cannot be written, a sidecar connection that failed, guest log lines) on
//! stderr, never stdout: stdout belongs to the command's output (and, for
//! protocol frontends, to protocol frames alone).
//!
//! `RUST_LOG` (an `EnvFilter` directive such as `reasonix=debug`) wins when
//! set; otherwise `-v` raises the level from warnings to info, debug, trace.

use tracing_subscriber::EnvFilter;

/// The default filter for a verbosity count.
pub fn default_filter(verbose: u8) -> &'static str {
    match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    }
}

/// Install the process-wide subscriber once; later calls do nothing.
pub fn init(verbose: u8) {
    let filter = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .and_then(|v| EnvFilter::try_new(v).ok())
        .unwrap_or_else(|| EnvFilter::new(default_filter(verbose)));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbosity_raises_the_level() {
        assert_eq!(default_filter(0), "warn");
        assert_eq!(default_filter(1), "info");
        assert_eq!(default_filter(2), "debug");
        assert_eq!(default_filter(9), "trace");
    }
}
