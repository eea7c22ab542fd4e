//! The starter sidecar driven by the host-side transport
//! (`reasonix-sidecar`): spawn, handshake against the manifest ceiling,
//! intercept `input.receive`, orderly shutdown.

use reasonix_protocol::HookPoint;
use reasonix_protocol::types::{Decision, SessionContext, raw_json};
use reasonix_sidecar::{Guard, LaunchSpec, ManifestCeiling, Sidecar, StartOptions};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

fn spec() -> LaunchSpec {
    LaunchSpec {
        plugin_root: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        name: "starter".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        command: env!("CARGO_BIN_EXE_starter").into(),
        args: Vec::new(),
        env: BTreeMap::new(),
    }
}

fn ceiling(intercepts: &[&str]) -> ManifestCeiling {
    ManifestCeiling {
        plugin_id: "starter".into(),
        intercepts: intercepts.iter().map(|s| s.to_string()).collect(),
        capabilities: vec!["interceptors".into()],
        ..Default::default()
    }
}

fn options() -> StartOptions {
    let mut o = StartOptions::new(SessionContext {
        session_id: "session-1".into(),
        workspace_root: env!("CARGO_MANIFEST_DIR").into(),
        generation: 1,
        epoch: None,
    });
    // The test binary is no guard host; the sidecar still gets its own
    // process group and is killed on drop.
    o.guard = Guard::Disabled;
    o
}

#[tokio::test]
async fn the_host_transport_sees_the_rewrite() {
    let sidecar = Sidecar::start(spec(), ceiling(&["input.receive"]), options())
        .await
        .unwrap_or_else(|e| panic!("start: {e}"));
    assert_eq!(sidecar.declaration().name, "starter");
    assert_eq!(sidecar.declaration().subscriptions, vec!["input.receive"]);

    let out = sidecar
        .intercept(
            HookPoint::InputReceive,
            raw_json(r#"{"text":"hello world"}"#).unwrap(),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert_eq!(out.decision, Decision::Replace);
    assert_eq!(
        out.replacement.unwrap().get(),
        r#"{"text":"[starter] hello world"}"#
    );

    let unchanged = sidecar
        .intercept(
            HookPoint::InputReceive,
            raw_json(r#"{"text":"[starter] already"}"#).unwrap(),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert_eq!(unchanged.decision, Decision::Continue);

    // A payload over 64 KiB travels as a content reference and still works.
    let long = "a".repeat(100 * 1024);
    let big = sidecar
        .intercept(
            HookPoint::InputReceive,
            raw_json(&format!(r#"{{"text":"{long}"}}"#)).unwrap(),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert_eq!(big.decision, Decision::Replace);
    assert!(
        big.replacement
            .unwrap()
            .get()
            .starts_with(r#"{"text":"[starter] aaaa"#)
    );

    let report = sidecar.shutdown().await;
    assert_eq!(report.accepted, Some(true));
    assert!(report.exited_in_grace, "{report:?}");
}

#[tokio::test]
async fn a_declaration_outside_the_manifest_is_refused_by_the_host() {
    // The manifest ceiling does not list input.receive: the host refuses.
    let err = match Sidecar::start(spec(), ceiling(&["tool.before"]), options()).await {
        Ok(_) => panic!("the host accepted an undeclared subscription"),
        Err(e) => e,
    };
    assert_eq!(
        err.reason,
        Some(reasonix_protocol::ErrorReason::CapabilityNotDeclared),
        "{err}"
    );
    // The SDK told the author why on stderr.
    assert!(
        err.stderr_tail.contains("runtime.intercepts"),
        "stderr tail: {}",
        err.stderr_tail
    );
}
