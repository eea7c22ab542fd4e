//! Progress for large copies and clones: a bar on an interactive stderr,
//! nothing when stderr is not a terminal or output is JSON.
use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Below this many bytes a copy is quick enough to need no bar.
const SHOW_FROM_BYTES: u64 = 8 << 20;

pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Never draws.
    pub fn hidden() -> Self {
        Self { bar: None }
    }

    /// Draws on stderr when it is a terminal and `quiet` is false.
    pub fn for_terminal(quiet: bool) -> Self {
        if quiet || !std::io::stderr().is_terminal() {
            return Self::hidden();
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {bytes}/{total_bytes}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_draw_target(ProgressDrawTarget::hidden());
        Self { bar: Some(bar) }
    }

    /// Start a copy of about `total()` bytes (only counted when a bar may
    /// be drawn: it is a walk of its own).
    pub fn start_copy(&self, message: &str, total: impl FnOnce() -> u64) {
        if let Some(bar) = &self.bar {
            let total = total();
            bar.reset();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg} {bytes}/{total_bytes}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_length(total);
            bar.set_message(message.to_string());
            let target = if total >= SHOW_FROM_BYTES {
                ProgressDrawTarget::stderr()
            } else {
                ProgressDrawTarget::hidden()
            };
            bar.set_draw_target(target);
        }
    }

    /// A long step with no byte count (a git clone).
    pub fn start_step(&self, message: &str) {
        if let Some(bar) = &self.bar {
            bar.reset();
            bar.set_style(ProgressStyle::default_spinner());
            bar.set_message(message.to_string());
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
        }
    }

    pub fn advance(&self, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(bytes);
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.disable_steady_tick();
            bar.finish_and_clear();
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
    }
}
