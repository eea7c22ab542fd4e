//! examples/echo-provider end to end: `dev turn --model
//! plugin/echo-provider/echo/echo-1` streams the answer from the sidecar;
//! an unknown model fails the turn with no fallback.

#[path = "examples_support.rs"]
mod support;

use support::{Kind, install, text};

#[test]
fn the_turn_streams_from_the_extension() {
    let echo = install("echo-provider", Kind::Native);
    let report = echo.turn_json(&[
        "--input",
        "streams are fun",
        "--model",
        "plugin/echo-provider/echo/echo-1",
    ]);
    assert_eq!(report["model"], "plugin/echo-provider/echo/echo-1");
    assert_eq!(report["transcript"][1]["role"], "assistant");
    // The built-in echo provider would answer "echo: …"; this is the sidecar.
    assert_eq!(report["transcript"][1]["content"], "streams are fun");
    assert_eq!(report["status"]["status"], "completed");
}

#[test]
fn an_unknown_model_fails_the_turn() {
    let echo = install("echo-provider", Kind::Native);
    let out = echo.run(&[
        "dev",
        "turn",
        "--input",
        "hi",
        "--model",
        "plugin/echo-provider/echo/echo-2",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("no fallback"), "{stdout}");
    assert!(
        stdout.contains("plugin/echo-provider/echo/echo-1"),
        "{stdout}"
    );
}
