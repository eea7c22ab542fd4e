//! glossary-tool through the host-side transport: handshake with the
//! manifest's tool ceiling, then `extension/tool/call`.

use reasonix_protocol::types::{SessionContext, raw_json};
use reasonix_sidecar::{Guard, LaunchSpec, ManifestCeiling, Sidecar, StartOptions};
use std::path::PathBuf;
use std::time::Duration;

async fn start() -> Sidecar {
    let spec = LaunchSpec {
        plugin_root: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        name: "glossary-tool".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        command: env!("CARGO_BIN_EXE_glossary-tool").into(),
        args: Vec::new(),
        env: Default::default(),
    };
    let ceiling = ManifestCeiling {
        plugin_id: "glossary-tool".into(),
        capabilities: vec!["tools".into()],
        tools: vec!["lookup".into()],
        ..Default::default()
    };
    let mut options = StartOptions::new(SessionContext {
        session_id: "s".into(),
        workspace_root: env!("CARGO_MANIFEST_DIR").into(),
        generation: 1,
        epoch: None,
    });
    options.guard = Guard::Disabled;
    Sidecar::start(spec, ceiling, options)
        .await
        .unwrap_or_else(|e| panic!("start: {e}"))
}

#[tokio::test]
async fn lookup_answers_and_reports_misses_as_tool_errors() {
    let sidecar = start().await;
    assert_eq!(sidecar.declaration().tools, vec!["lookup"]);
    let hit = sidecar
        .tool_call(
            "lookup",
            raw_json(r#"{"term":"slot"}"#).unwrap(),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert!(hit.content.starts_with("slot: a host strategy"), "{hit:?}");
    assert_eq!(hit.is_error, None);
    let miss = sidecar
        .tool_call(
            "lookup",
            raw_json(r#"{"term":"daemon"}"#).unwrap(),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert_eq!(miss.is_error, Some(true));
    let bad = sidecar
        .tool_call(
            "lookup",
            raw_json(r#"{"word":"x"}"#).unwrap(),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    assert!(bad.content.contains("unknown field"), "{bad:?}");
    let report = sidecar.shutdown().await;
    assert_eq!(report.accepted, Some(true));
}
