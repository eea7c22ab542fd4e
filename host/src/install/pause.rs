//! Test-only pause points for the crash matrix.
//!
//! With `REASONIX_TEST_PAUSE_AT=<step>[,<step>…]` and
//! `REASONIX_TEST_PAUSE_DIR=<dir>`, the process writes `<dir>/<step>` (its
//! pid) when it reaches `<step>` and then waits until `<dir>/<step>.resume`
//! exists, so a test can SIGKILL it there or change the world and let it go
//! on. Without both variables this is a no-op.
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The publication steps, in order, that can be paused at.
pub const STEPS: &[&str] = &[
    "after_plan",
    "staging_partial",
    "after_staging",
    "after_backup",
    "after_swap",
    "before_registry_rename",
    "after_registry_rename",
    "after_cleanup",
];

pub fn pause_at(step: &str) {
    let Some(steps) = std::env::var_os("REASONIX_TEST_PAUSE_AT") else {
        return;
    };
    let Some(dir) = std::env::var_os("REASONIX_TEST_PAUSE_DIR").map(PathBuf::from) else {
        return;
    };
    let steps = steps.to_string_lossy().into_owned();
    if !steps.split(',').any(|s| s.trim() == step) {
        return;
    }
    let marker = dir.join(step);
    let resume = dir.join(format!("{step}.resume"));
    let _ = std::fs::write(&marker, std::process::id().to_string());
    // Bounded so a forgotten test cannot leave a process behind forever.
    let deadline = Instant::now() + Duration::from_secs(300);
    while !resume.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
}
