//! Every transport, handshake and lifecycle rule against real child
//! processes: `examples/test_sidecar.rs` (behaviour chosen by argv[1]),
//! `examples/guard_host.rs` (guard binary and stand-in host) and
//! `tests/py_sidecar.py`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reasonix_protocol::HookPoint;
use reasonix_protocol::error::{ErrorReason, RpcError};
use reasonix_protocol::types::{
    CapabilityWire, Decision, ProviderRequest, RawJson, SessionContext, StreamOpenParams,
    UIActionParams, UIPublishParams, UIPublishResult,
};
use reasonix_sidecar::{
    BoxFuture, CallError, FailureKind, Guard, HostServices, LaunchSpec, ManifestCeiling, Sidecar,
    StartError, StartOptions, StartStage, Status, StreamEvent,
};

fn examples_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().join("examples")
}

fn test_sidecar() -> String {
    examples_dir().join("test_sidecar").display().to_string()
}

fn guard_host() -> PathBuf {
    examples_dir().join("guard_host")
}

fn spec(args: &[&str]) -> LaunchSpec {
    LaunchSpec {
        plugin_root: PathBuf::from("/tmp/reasonix-test-root"),
        name: "test".into(),
        version: "1.0.0".into(),
        command: test_sidecar(),
        args: args.iter().map(|s| s.to_string()).collect(),
        env: BTreeMap::new(),
    }
}

fn ceiling() -> ManifestCeiling {
    ManifestCeiling {
        plugin_id: "test".into(),
        intercepts: vec!["tool.before".into()],
        ..Default::default()
    }
}

fn options() -> StartOptions {
    let mut o = StartOptions::new(SessionContext {
        session_id: "session-1".into(),
        workspace_root: "/tmp".into(),
        generation: 1,
        epoch: None,
    });
    o.guard = Guard::Exe(guard_host());
    o.handshake_timeout = Duration::from_secs(20);
    o
}

async fn start(args: &[&str]) -> Sidecar {
    Sidecar::start(spec(args), ceiling(), options())
        .await
        .unwrap_or_else(|e| panic!("start {args:?}: {e}"))
}

async fn start_err(
    spec: LaunchSpec,
    ceiling: ManifestCeiling,
    options: StartOptions,
) -> StartError {
    match Sidecar::start(spec, ceiling, options).await {
        Ok(s) => panic!("expected a start failure, got {:?}", s.declaration()),
        Err(e) => e,
    }
}

fn raw(value: serde_json::Value) -> RawJson {
    serde_json::value::to_raw_value(&value).unwrap()
}

fn action(name: &str) -> RawJson {
    raw(serde_json::json!({ "action": name }))
}

const T: Duration = Duration::from_secs(20);

/// Processes in group `pgid` that are not zombies.
fn group_members(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Some((state, pgrp)) = stat(pid)
            && pgrp == pgid
            && state != 'Z'
            && state != 'X'
        {
            out.push(pid);
        }
    }
    out
}

fn stat(pid: i32) -> Option<(char, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

fn alive(pid: i32) -> bool {
    stat(pid).is_some_and(|(state, _)| state != 'Z' && state != 'X')
}

/// Polls `done` for up to 20 s (a bound against hanging, not a timing
/// assertion).
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..400 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never happened: {what}");
}

// ---------------------------------------------------------------- handshake

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn well_behaved_handshake_intercept_and_events() {
    let sidecar = start(&["good"]).await;
    assert_eq!(sidecar.status(), Status::Ready);
    assert_eq!(sidecar.declaration().name, "test-sidecar");
    assert_eq!(sidecar.declaration().subscriptions, vec!["tool.before"]);

    let out = sidecar
        .intercept(HookPoint::ToolBefore, action("continue"), T)
        .await
        .unwrap();
    assert_eq!(out.decision, Decision::Continue);
    assert!(out.replacement.is_none());

    let out = sidecar
        .intercept(HookPoint::ToolBefore, action("block"), T)
        .await
        .unwrap();
    assert_eq!(out.decision, Decision::Block);
    assert_eq!(out.reason.as_deref(), Some("no: password=hunter2"));

    let payload = serde_json::json!({"action": "echo", "name": "grep", "arguments": "{}"});
    let out = sidecar
        .intercept(HookPoint::ToolBefore, raw(payload.clone()), T)
        .await
        .unwrap();
    assert_eq!(out.decision, Decision::Replace);
    let replaced: serde_json::Value = serde_json::from_str(out.replacement.unwrap().get()).unwrap();
    assert_eq!(replaced, payload);

    for _ in 0..3 {
        sidecar
            .event(HookPoint::ToolBefore, action("observe"))
            .unwrap();
    }
    // Events are queued, intercepts written directly: ask until all three
    // have been seen.
    let mut seen = String::new();
    for _ in 0..200 {
        let out = sidecar
            .intercept(HookPoint::ToolBefore, action("events"), T)
            .await
            .unwrap();
        seen = out.reason.unwrap();
        if seen == "3" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(seen, "3");

    let report = sidecar.shutdown().await;
    assert_eq!(report.accepted, Some(true));
    assert!(report.reaped);
    assert_eq!(sidecar.status(), Status::Stopped);
}

#[tokio::test]
async fn initialize_params_match_the_go_sdk_wire() {
    let sidecar = start(&["echo-init"]).await;
    let params: serde_json::Value =
        serde_json::from_str(sidecar.declaration().component_id.as_deref().unwrap()).unwrap();
    assert_eq!(
        params,
        serde_json::json!({
            "protocolVersion": "2",
            "protocolId": "reasonix.extension.v2",
            "manifest": {"intercepts": ["tool.before"]},
            "session": {"sessionId": "session-1", "workspaceRoot": "/tmp", "generation": 1},
            "capabilities": {"contentRefs": true, "uiHost": "headless", "protocolVersion": "2", "dependencySchemaVersion": 1},
            "dependencySchemaVersion": 1
        })
    );
    sidecar.shutdown().await;
}

#[tokio::test]
async fn early_request_poisons_the_connection() {
    let err = start_err(spec(&["early-request"]), ceiling(), options()).await;
    assert_eq!(err.stage, StartStage::Initialize);
    assert_eq!(err.reason, Some(ErrorReason::ProtocolError), "{err}");
    assert!(err.detail.contains("host/content/read"), "{err}");
}

#[tokio::test]
async fn early_notification_poisons_the_connection() {
    let err = start_err(spec(&["early-notification"]), ceiling(), options()).await;
    assert_eq!(err.reason, Some(ErrorReason::ProtocolError), "{err}");
    assert!(err.detail.contains("stream/end"), "{err}");
}

#[tokio::test]
async fn garbage_line_gets_a_parse_error_and_the_connection_survives() {
    let sidecar = start(&["garbage"]).await;
    assert_eq!(sidecar.declaration().name, "answer--32700-idnull");
    sidecar.shutdown().await;
}

#[tokio::test]
async fn float_and_string_ids_are_invalid_requests() {
    for mode in ["float-id", "string-id"] {
        let sidecar = start(&[mode]).await;
        assert_eq!(sidecar.declaration().name, "answer--32600-idnull", "{mode}");
        sidecar.shutdown().await;
    }
}

#[tokio::test]
async fn unknown_result_field_is_a_protocol_error() {
    let err = start_err(spec(&["unknown-field"]), ceiling(), options()).await;
    assert_eq!(err.reason, Some(ErrorReason::ProtocolError), "{err}");
    assert!(err.detail.contains("invalid initialize result"), "{err}");
    assert!(err.detail.contains("bogus"), "{err}");
}

fn with_init(args: &[&str], init: serde_json::Value) -> LaunchSpec {
    let mut s = spec(args);
    s.env.insert("TEST_INIT_RESULT".into(), init.to_string());
    s
}

fn init(extra: serde_json::Value) -> serde_json::Value {
    let mut base = serde_json::json!({
        "protocolVersion": "2", "name": "n", "version": "1", "stateSchemaVersion": 0
    });
    for (k, v) in extra.as_object().unwrap() {
        base[k] = v.clone();
    }
    base
}

#[tokio::test]
async fn version_rule_uses_atoi_semantics() {
    for accepted in ["02", "+2"] {
        let s = Sidecar::start(
            with_init(
                &["good"],
                init(serde_json::json!({"protocolVersion": accepted})),
            ),
            ceiling(),
            options(),
        )
        .await
        .unwrap_or_else(|e| panic!("{accepted}: {e}"));
        s.shutdown().await;
    }
    let err = start_err(
        with_init(&["good"], init(serde_json::json!({"protocolVersion": "3"}))),
        ceiling(),
        options(),
    )
    .await;
    assert_eq!(err.reason, Some(ErrorReason::UnsupportedVersion), "{err}");
    assert_eq!(err.stage, StartStage::Validate);
    let err = start_err(
        with_init(
            &["good"],
            init(serde_json::json!({"protocolVersion": "2.0"})),
        ),
        ceiling(),
        options(),
    )
    .await;
    assert_eq!(err.reason, Some(ErrorReason::ProtocolError), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undeclared_capabilities_are_refused_by_name() {
    let cases = [
        (
            serde_json::json!({"subscriptions": ["input.receive"]}),
            "input.receive",
        ),
        (
            serde_json::json!({"replaces": ["system_prompt"]}),
            "system_prompt",
        ),
        (
            serde_json::json!({"providers": [{"ref": "plugin/test/p/m"}]}),
            "providers",
        ),
        (
            serde_json::json!({"uiActions": [{"actionId": "go"}]}),
            "\"go\"",
        ),
        (serde_json::json!({"tools": ["grep"]}), "grep"),
        (
            serde_json::json!({"provides": [{"namespace": "test", "kind": "tool", "id": "other"}]}),
            "test/tool/other",
        ),
    ];
    let mut ceiling = ceiling();
    ceiling.provides = vec![CapabilityWire {
        namespace: "test".into(),
        kind: "tool".into(),
        id: "grep".into(),
        version: Some("1.0.0".into()),
        schema_hash: None,
    }];
    let runs = cases.iter().map(|(extra, needle)| {
        let ceiling = ceiling.clone();
        async move {
            let err = start_err(
                with_init(&["good"], init(extra.clone())),
                ceiling,
                options(),
            )
            .await;
            assert_eq!(
                err.reason,
                Some(ErrorReason::CapabilityNotDeclared),
                "{err}"
            );
            assert!(err.detail.contains(needle), "{needle}: {err}");
        }
    });
    for run in runs {
        run.await;
    }
    // Within the ceiling the same declarations pass.
    let mut wide = ceiling.clone();
    wide.capabilities = vec!["providers".into(), "ui".into(), "tools".into()];
    wide.tools = vec!["grep".into()];
    wide.replaces = vec!["system_prompt".into()];
    let ok = Sidecar::start(
        with_init(
            &["good"],
            init(serde_json::json!({
                "replaces": ["system_prompt"], "providers": [{"ref": "plugin/test/p/m"}],
                "uiActions": [{"actionId": "go"}], "tools": ["grep"],
                "provides": [{"namespace": "test", "kind": "tool", "id": "grep", "version": "1.0.0"}]
            })),
        ),
        wide,
        options(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ok.declaration().tools, vec!["grep"]);
    ok.shutdown().await;
}

#[tokio::test]
async fn python_sidecar_negative_cases() {
    let python = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is installed");
    let python = String::from_utf8(python.stdout).unwrap().trim().to_owned();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py_sidecar.py");
    let py = |mode: &str| LaunchSpec {
        command: python.clone(),
        args: vec![script.display().to_string(), mode.to_owned()],
        ..spec(&[])
    };

    let err = start_err(py("null-result"), ceiling(), options()).await;
    assert_eq!(err.reason, Some(ErrorReason::ProtocolError), "{err}");

    let mut quick = options();
    quick.handshake_timeout = Duration::from_secs(1);
    let err = start_err(py("trailing-garbage"), ceiling(), quick).await;
    assert_eq!(err.stage, StartStage::Initialize);
    // The only answer was unreadable: a protocol error, not a timeout.
    assert_eq!(err.reason, Some(ErrorReason::ProtocolError), "{err}");
    assert!(err.detail.contains("no valid answer"), "{err}");
    assert!(err.stderr_tail.contains("sent trailing garbage"), "{err}");
    assert!(err.stderr_tail.contains("\"code\": -32700"), "{err}");

    let sidecar = Sidecar::start(py("string-id-request"), ceiling(), options())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let out = sidecar
        .intercept(HookPoint::ToolBefore, action("x"), T)
        .await
        .unwrap();
    assert_eq!(out.reason.as_deref(), Some("-32600/None"));
    sidecar.shutdown().await;
}

// ------------------------------------------------------------------ content

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_refs_round_trip_both_ways() {
    let sidecar = start(&["good"]).await;
    // 600 KiB: three 256 KiB pages; the sidecar answers with an externalised
    // replacement naming the same host ref.
    let payload = serde_json::json!({"action": "ref-back", "blob": "z".repeat(600 * 1024)});
    let out = sidecar
        .intercept(HookPoint::ToolBefore, raw(payload.clone()), T)
        .await
        .unwrap();
    assert_eq!(out.decision, Decision::Replace, "{:?}", out.reason);
    let back: serde_json::Value = serde_json::from_str(out.replacement.unwrap().get()).unwrap();
    assert_eq!(back, payload);

    // 200 KiB paged in, sent back inline (an inline replacement over 64 KiB
    // from the extension is fine while it fits a frame).
    let payload = serde_json::json!({"action": "inline-back", "blob": "q".repeat(200 * 1024)});
    let out = sidecar
        .intercept(HookPoint::ToolBefore, raw(payload.clone()), T)
        .await
        .unwrap();
    let back: serde_json::Value = serde_json::from_str(out.replacement.unwrap().get()).unwrap();
    assert_eq!(back, payload);

    // A large event is externalised too (and counted by the sidecar).
    sidecar
        .event(
            HookPoint::ToolBefore,
            raw(serde_json::json!({"blob": "e".repeat(100 * 1024)})),
        )
        .unwrap();

    // An object over the 8 MiB content cap cannot be sent at all.
    let huge = raw(serde_json::json!({"blob": "h".repeat(9 * 1024 * 1024)}));
    let err = sidecar
        .intercept(HookPoint::ToolBefore, huge, T)
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(ErrorReason::FrameTooLarge), "{err}");
    // ...and only that message failed.
    let out = sidecar
        .intercept(HookPoint::ToolBefore, action("continue"), T)
        .await
        .unwrap();
    assert_eq!(out.decision, Decision::Continue);
    sidecar.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_requests_are_validated_and_routed() {
    let sidecar = start(&["good"]).await;
    let out = sidecar
        .intercept(HookPoint::ToolBefore, action("unknown-method"), T)
        .await
        .unwrap();
    assert_eq!(out.reason.as_deref(), Some("unknown_method"));
    let out = sidecar
        .intercept(HookPoint::ToolBefore, action("bad-ref"), T)
        .await
        .unwrap();
    assert_eq!(out.reason.as_deref(), Some("invalid_params"));
    let err = sidecar
        .intercept(HookPoint::ToolBefore, action("bad-result"), T)
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(ErrorReason::ProtocolError), "{err}");
    // A bad result fails that call only.
    assert!(
        sidecar
            .intercept(HookPoint::ToolBefore, action("continue"), T)
            .await
            .is_ok()
    );
    sidecar.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_in_both_directions() {
    let sidecar = Arc::new(start(&["good"]).await);
    let calls = (0..16).map(|n| {
        let sidecar = sidecar.clone();
        tokio::spawn(async move {
            let payload = serde_json::json!({"action": "ask-host", "n": n, "sleepMs": 100});
            sidecar
                .intercept(HookPoint::ToolBefore, raw(payload), T)
                .await
        })
    });
    let calls: Vec<_> = calls.collect();
    for (n, call) in calls.into_iter().enumerate() {
        let out = call.await.unwrap().unwrap();
        assert_eq!(out.reason.unwrap(), format!("{n}:content_ref_expired"));
    }
    sidecar.shutdown().await;
}

/// Calls put in flight from one task are written by their callers a page
/// at a time while the writer idles, by the writer otherwise, and partly by
/// both when the pipe fills: whatever the split, every frame arrives whole
/// and in order, and every answer reaches its own caller.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bursts_written_by_callers_and_writer_keep_every_frame_whole() {
    use futures::StreamExt;
    let sidecar = start(&["good"]).await;
    for round in 0..3 {
        // Frames from a few bytes to just under the inline limit (64 KiB,
        // beyond which payloads are externalised): bursts of megabytes,
        // past the pipe (64 KiB) and past what callers write themselves.
        let mut calls: futures::stream::FuturesUnordered<_> = (0..96usize)
            .map(|n| {
                let pad = "x".repeat((n * 7919 + round * 131) % 65_000);
                let payload = serde_json::json!({"action": "echo", "n": n, "pad": pad});
                let sidecar = &sidecar;
                async move {
                    let out = sidecar
                        .intercept(HookPoint::ToolBefore, raw(payload.clone()), T)
                        .await
                        .unwrap();
                    let back: serde_json::Value =
                        serde_json::from_str(out.replacement.unwrap().get()).unwrap();
                    assert_eq!(back, payload, "call {n} of round {round}");
                }
            })
            .collect();
        while calls.next().await.is_some() {}
    }
    sidecar.shutdown().await;
}

// ------------------------------------------------------- other host calls

struct Ui;

impl HostServices for Ui {
    fn ui_publish(
        &self,
        plugin: &str,
        params: UIPublishParams,
    ) -> BoxFuture<Result<UIPublishResult, RpcError>> {
        let ok = plugin == "test" && params.surface_id == "s1";
        Box::pin(async move { Ok(UIPublishResult { accepted: ok }) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_providers_streams_and_ui() {
    let mut o = options();
    o.host_services = Arc::new(Ui);
    let sidecar = Sidecar::start(spec(&["good"]), ceiling(), o).await.unwrap();

    let tool = sidecar
        .tool_call("grep", raw(serde_json::json!({"q": 1})), T)
        .await
        .unwrap();
    assert_eq!(tool.content, "grep:{\"q\":1}");

    let catalog = sidecar.provider_catalog(T).await.unwrap();
    assert_eq!(catalog.providers[0].reference, "plugin/test/echo/m1");

    let open = StreamOpenParams {
        stream_id: String::new(),
        provider_ref: "plugin/test/echo/m1".into(),
        model: Some("m1".into()),
        effort: None,
        request: serde_json::from_value::<ProviderRequest>(
            serde_json::json!({"messages": [], "tools": [], "maxTokens": 16}),
        )
        .unwrap(),
        seq_base: 0,
        generation: None,
        epoch: None,
    };
    let mut stream = sidecar.stream_open(open, T).await.unwrap();
    assert!(stream.stream_id.starts_with("es_") && stream.stream_id.len() == 27);
    let mut seen = Vec::new();
    while let Some(event) = stream.events.recv().await {
        let end = matches!(event, StreamEvent::End(_));
        seen.push(match event {
            StreamEvent::Chunk(c) => format!("chunk{}:{}", c.seq, c.chunk.text.unwrap_or_default()),
            StreamEvent::End(e) => format!("end{}", e.last_seq),
            StreamEvent::Invalid(_) => "invalid".into(),
            StreamEvent::Interrupted(_) => "interrupted".into(),
        });
        if end {
            break;
        }
    }
    assert_eq!(seen, vec!["chunk1:hel", "chunk2:lo", "invalid", "end3"]);

    let action = UIActionParams {
        action_id: "go".into(),
        session_id: "session-1".into(),
        generation: 1,
        args: Default::default(),
    };
    let result = sidecar.ui_action(action.clone(), T).await.unwrap();
    assert!(result.accepted);
    sidecar.shutdown().await;

    // Without UI services the publish is answered unknown_method.
    let bare = start(&["good"]).await;
    let result = bare.ui_action(action, T).await.unwrap();
    assert!(!result.accepted);
    assert_eq!(result.message.as_deref(), Some("unknown_method"));
    bare.shutdown().await;
}

// --------------------------------------------------------- failure paths

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_mid_intercept_fails_pending_at_once_and_later_calls_fast() {
    let crashes = Arc::new(AtomicUsize::new(0));
    let mut o = options();
    let counter = crashes.clone();
    o.on_crash = Some(Arc::new(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    }));
    let sidecar = Arc::new(Sidecar::start(spec(&["good"]), ceiling(), o).await.unwrap());
    let long = Duration::from_secs(600);
    let hanging: Vec<_> = (0..3)
        .map(|_| {
            let s = sidecar.clone();
            tokio::spawn(async move {
                s.intercept(HookPoint::ToolBefore, action("hang"), long)
                    .await
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let crash = sidecar
        .intercept(HookPoint::ToolBefore, action("crash"), long)
        .await
        .unwrap_err();
    assert_eq!(
        crash.reason(),
        Some(ErrorReason::ProviderInterrupted),
        "{crash}"
    );
    for h in hanging {
        let err = h.await.unwrap().unwrap_err();
        assert!(matches!(err, CallError::Interrupted(_)), "{err}");
    }
    let later = sidecar
        .intercept(HookPoint::ToolBefore, action("continue"), long)
        .await
        .unwrap_err();
    assert_eq!(later.reason(), Some(ErrorReason::ProviderInterrupted));
    assert!(sidecar.event(HookPoint::ToolBefore, action("x")).is_err());
    assert!(matches!(sidecar.status(), Status::Crashed(_)));
    assert_eq!(crashes.load(Ordering::SeqCst), 1);
    let group = sidecar.process_group();
    eventually("crashed group is gone", || group_members(group).is_empty()).await;
}

#[tokio::test]
async fn hanging_intercept_times_out_and_the_connection_survives() {
    let sidecar = start(&["good"]).await;
    let err = sidecar
        .intercept(
            HookPoint::ToolBefore,
            action("hang"),
            Duration::from_millis(300),
        )
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(ErrorReason::InterceptTimeout), "{err}");
    let out = sidecar
        .intercept(HookPoint::ToolBefore, action("continue"), T)
        .await
        .unwrap();
    assert_eq!(out.decision, Decision::Continue);
    sidecar.shutdown().await;
}

#[tokio::test]
async fn oversized_inbound_frame_is_fatal() {
    let sidecar = start(&["good"]).await;
    let err = sidecar
        .intercept(HookPoint::ToolBefore, action("huge-line"), T)
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(ErrorReason::FrameTooLarge), "{err}");
    assert!(err.to_string().ends_with(" [frame_too_large]"), "{err}");
    match sidecar.status() {
        Status::Crashed(f) => assert_eq!(f.kind, FailureKind::FrameTooLarge),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_errors_name_their_reason_code() {
    let sidecar = start(&["good"]).await;
    let short = Duration::from_millis(500);
    let err = sidecar
        .intercept(HookPoint::ToolBefore, action("hang"), short)
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(ErrorReason::InterceptTimeout), "{err}");
    assert!(err.to_string().contains("timed out"), "{err}");
    assert!(err.to_string().ends_with(" [intercept_timeout]"), "{err}");

    // An answer to an id the host never sent, and nothing else: a protocol
    // error naming what arrived, not a timeout.
    let err = sidecar
        .intercept(HookPoint::ToolBefore, action("wrong-id"), short)
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(ErrorReason::ProtocolError), "{err}");
    assert!(err.to_string().contains("never sent"), "{err}");
    assert!(!err.to_string().contains("timed out"), "{err}");
    assert!(err.to_string().ends_with(" [protocol_error]"), "{err}");

    // An answer that is not JSON-RPC at all.
    let err = sidecar
        .intercept(HookPoint::ToolBefore, action("garbage-answer"), short)
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(ErrorReason::ProtocolError), "{err}");
    assert!(err.to_string().contains("rejected"), "{err}");
    assert!(err.to_string().ends_with(" [protocol_error]"), "{err}");

    // The connection itself is fine.
    let out = sidecar
        .intercept(HookPoint::ToolBefore, action("continue"), T)
        .await
        .unwrap();
    assert_eq!(out.decision, Decision::Continue);
    sidecar.shutdown().await;
}

#[tokio::test]
async fn outbound_oversized_frame_fails_only_that_message() {
    let sidecar = start(&["good"]).await;
    let args = raw(serde_json::json!({"blob": "a".repeat(9 * 1024 * 1024)}));
    let err = sidecar.tool_call("grep", args, T).await.unwrap_err();
    assert!(matches!(err, CallError::FrameTooLarge { .. }), "{err}");
    let tool = sidecar
        .tool_call("grep", raw(serde_json::json!(null)), T)
        .await
        .unwrap();
    assert_eq!(tool.content, "grep:null");
    sidecar.shutdown().await;
}

/// Events queued just before `shutdown()` reach the sidecar before the
/// shutdown request. On a current-thread runtime the writer has not run
/// when `shutdown()` is called, so a request written ahead of the queue
/// overtakes every one of them.
#[tokio::test]
async fn queued_events_are_written_before_the_shutdown_request() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("events");
    let mut s = spec(&["good"]);
    s.env
        .insert("TEST_EVENTS_FILE".into(), file.display().to_string());
    let sidecar = Sidecar::start(s, ceiling(), options()).await.unwrap();
    for _ in 0..100 {
        sidecar
            .event(HookPoint::ToolBefore, action("observe"))
            .unwrap();
    }
    let report = sidecar.shutdown().await;
    assert_eq!(report.accepted, Some(true));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "100");
}

/// A request sent alone is written by its caller through a second handle
/// on stdin; closing stdin must still reach the sidecar as EOF (that handle
/// must not keep the pipe open).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_closes_at_shutdown_after_requests_written_by_their_callers() {
    let sidecar = start(&["await-eof"]).await;
    for _ in 0..3 {
        let outcome = sidecar
            .intercept(HookPoint::ToolBefore, action("continue"), T)
            .await
            .unwrap();
        assert_eq!(outcome.decision, Decision::Continue);
    }
    let report = sidecar.shutdown_within(Duration::from_millis(300)).await;
    assert_eq!(report.accepted, None, "await-eof never answers shutdown");
    assert!(
        report.exited_in_grace,
        "the sidecar did not see EOF on stdin: {report:?}"
    );
}

#[tokio::test]
async fn sidecar_ignoring_shutdown_is_killed() {
    let sidecar = start(&["ignore-shutdown"]).await;
    let group = sidecar.process_group();
    let report = sidecar.shutdown_within(Duration::from_millis(300)).await;
    assert_eq!(report.accepted, None);
    assert!(!report.exited_in_grace);
    assert!(report.reaped);
    eventually("killed group is gone", || group_members(group).is_empty()).await;
    // Idempotent.
    assert_eq!(sidecar.shutdown().await, report);
    let err = sidecar
        .intercept(HookPoint::ToolBefore, action("x"), T)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            CallError::NotReady | CallError::Closed | CallError::Interrupted(_)
        ),
        "{err}"
    );
}

#[tokio::test]
async fn grandchildren_die_with_the_group() {
    for guard in [Guard::Exe(guard_host()), Guard::Disabled] {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pids");
        let mut s = spec(&["grandchild"]);
        s.env
            .insert("TEST_PID_FILE".into(), pid_file.display().to_string());
        let mut o = options();
        o.guard = guard.clone();
        let sidecar = Sidecar::start(s, ceiling(), o).await.unwrap();
        let pids: Vec<i32> = std::fs::read_to_string(&pid_file)
            .unwrap()
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        assert!(pids.iter().all(|&p| alive(p)), "{guard:?}");
        let report = sidecar.shutdown().await;
        assert_eq!(report.accepted, Some(true));
        for pid in pids {
            eventually("grandchild is gone", || !alive(pid)).await;
        }
    }
}

/// The pid a `daemon` sidecar wrote, once it is there.
async fn daemon_pid(file: &Path) -> i32 {
    let mut pid = None;
    eventually("the daemon's pid is written", || {
        pid = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse().ok());
        pid.is_some()
    })
    .await;
    pid.unwrap()
}

/// Session and process group of a live process.
fn session_of(pid: i32) -> Option<(i32, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = text[text.rfind(')')? + 2..].split_whitespace();
    let pgrp = fields.nth(2)?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some((pgrp, session))
}

/// A daemon that left the process group and the session (`setsid` after
/// its parent exited) is still found and ended: the guard is a child
/// subreaper, so the orphan is re-parented to it. Started during
/// initialize and during an intercept; ended by shutdown and by drop.
#[tokio::test]
async fn setsid_daemons_do_not_outlive_the_sidecar() {
    for (how, end_by_drop) in [("init", false), ("intercept", false), ("intercept", true)] {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("daemon");
        let mut s = spec(&[if how == "init" { "daemon-init" } else { "good" }]);
        s.env
            .insert("TEST_PID_FILE".into(), pid_file.display().to_string());
        let sidecar = Sidecar::start(s, ceiling(), options()).await.unwrap();
        if how == "intercept" {
            let out = sidecar
                .intercept(HookPoint::ToolBefore, action("daemon"), T)
                .await
                .unwrap();
            assert_eq!(out.decision, Decision::Continue);
        }
        let daemon = daemon_pid(&pid_file).await;
        assert!(alive(daemon), "{how}: the daemon runs");
        let group = sidecar.process_group();
        eventually("the daemon left the process group", || {
            session_of(daemon).is_some_and(|(pgrp, _)| pgrp != group)
        })
        .await;
        if end_by_drop {
            drop(sidecar);
        } else {
            let report = sidecar.shutdown().await;
            assert_eq!(report.accepted, Some(true), "{how}");
            assert!(report.reaped, "{how}");
            // The guard ends the tree before it exits: gone at once.
            assert!(!alive(daemon), "{how}: the daemon outlived shutdown");
        }
        eventually("the daemon is gone", || !alive(daemon)).await;
    }
}

#[tokio::test]
async fn dropping_a_sidecar_kills_its_group() {
    let sidecar = start(&["ignore-shutdown"]).await;
    let group = sidecar.process_group();
    assert!(!group_members(group).is_empty());
    drop(sidecar);
    eventually("dropped group is gone", || group_members(group).is_empty()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_writer_fails_the_connection_and_kills() {
    let mut o = options();
    o.write_stall_timeout = Duration::from_millis(500);
    let sidecar = Sidecar::start(spec(&["stop-reading"]), ceiling(), o)
        .await
        .unwrap();
    let group = sidecar.process_group();
    let mut status = sidecar.watch_status();
    // 60 KiB events fill the pipe; the writer stalls; the bound fires.
    for _ in 0..64 {
        let _ = sidecar.event(
            HookPoint::ToolBefore,
            raw(serde_json::json!({"blob": "s".repeat(60 * 1024)})),
        );
    }
    let crashed = tokio::time::timeout(T, status.wait_for(|s| matches!(s, Status::Crashed(_))))
        .await
        .expect("the stall bound fired")
        .unwrap()
        .clone();
    match crashed {
        Status::Crashed(f) => assert_eq!(f.kind, FailureKind::WriteStalled, "{f}"),
        _ => unreachable!(),
    }
    eventually("stalled group is gone", || group_members(group).is_empty()).await;
}

// ------------------------------------------------------------------ launch

#[tokio::test]
async fn shells_and_relative_commands_are_refused() {
    for command in ["/bin/sh", "/usr/bin/bash", "test_sidecar", "./bin/x"] {
        let mut s = spec(&[]);
        s.command = command.into();
        let err = start_err(s, ceiling(), options()).await;
        assert_eq!(err.stage, StartStage::Launch, "{command}: {err}");
    }
}

#[tokio::test]
async fn environment_identity_wins_and_root_is_expanded() {
    let mut s = spec(&["env", "${REASONIX_PLUGIN_ROOT}/data"]);
    s.env
        .insert("TEST_MANIFEST_VAR".into(), "from-manifest".into());
    s.env
        .insert("REASONIX_PLUGIN_NAME".into(), "spoofed".into());
    s.env
        .insert("REASONIX_PLUGIN_VERSION".into(), "9.9.9".into());
    let sidecar = Sidecar::start(s, ceiling(), options()).await.unwrap();
    assert_eq!(
        sidecar.declaration().component_id.as_deref(),
        Some("/tmp/reasonix-test-root|test|1.0.0|from-manifest|/tmp/reasonix-test-root/data")
    );
    sidecar.shutdown().await;
}

#[tokio::test]
async fn stderr_tail_is_redacted_in_start_errors() {
    let err = start_err(spec(&["stderr-secret"]), ceiling(), options()).await;
    assert_eq!(err.stage, StartStage::Initialize);
    assert!(err.stderr_tail.contains("fatal: cannot continue"), "{err}");
    assert!(err.stderr_tail.contains("[REDACTED]"), "{err}");
    assert!(!err.stderr_tail.contains("supersecret123"), "{err}");
    assert!(!err.stderr_tail.contains("sk-abcdefghij"), "{err}");
    assert!(!err.to_string().contains("supersecret123"));
}

#[tokio::test]
async fn host_death_takes_sidecar_and_grandchild_along() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let mut host = tokio::process::Command::new(guard_host())
        .arg(test_sidecar())
        .arg(&pid_file)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = tokio::io::BufReader::new(host.stdout.take().unwrap());
    let mut line = String::new();
    tokio::time::timeout(
        T,
        tokio::io::AsyncBufReadExt::read_line(&mut stdout, &mut line),
    )
    .await
    .expect("host became ready")
    .unwrap();
    assert!(line.starts_with("READY "), "{line:?}");
    let group: i32 = line.trim()["READY ".len()..].parse().unwrap();
    let pids: Vec<i32> = std::fs::read_to_string(&pid_file)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|&p| alive(p)));
    assert!(!group_members(group).is_empty());

    host.start_kill().unwrap(); // SIGKILL: no cleanup code runs in the host
    host.wait().await.unwrap();
    for pid in pids {
        eventually("sidecar process is gone after host death", || !alive(pid)).await;
    }
    eventually("group is empty", || group_members(group).is_empty()).await;
}
