//! The wasm component runtime driven by WAT fixtures built at test time:
//! intercepts through the real engine, CPU/memory/stack limits, the
//! handshake checks, versioning and the compiled-component cache. Every
//! attack must fail its own call cleanly while the runtime keeps serving.

mod wasm_support;

use std::time::Duration;

use reasonix::runtime::wasm::{
    CacheOutcome, ComponentCache, InstanceLimits, WasmErrorKind, WasmRuntime,
};
use reasonix_protocol::types::Decision;
use reasonix_protocol::{ErrorReason, HookPoint};
use serde_json::value::RawValue;
use wasm_support::TestPlugin;
use wasm_support::fixtures::{
    Fixture, INPUT_RECEIVE, Intercept, PERMISSION_DECISION, REASON_INTERNAL,
};

const BUDGET: Duration = Duration::from_secs(5);

fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_owned()).expect("valid JSON")
}

/// A payload that makes attack fixtures misbehave.
fn attack_payload() -> Box<RawValue> {
    raw(r#""attack""#)
}

fn benign_payload() -> Box<RawValue> {
    raw(r#"{"text":"hello"}"#)
}

fn started(fixture: &Fixture) -> (TestPlugin, WasmRuntime) {
    let plugin = TestPlugin::new("wat-plugin", &fixture.build());
    let runtime = WasmRuntime::start(plugin.start()).expect("the fixture starts");
    (plugin, runtime)
}

fn assert_serves_next_call(runtime: &WasmRuntime) {
    let reply = runtime
        .intercept(HookPoint::InputReceive, &benign_payload(), BUDGET)
        .expect("the next call is served");
    assert_eq!(reply.decision, Decision::Continue);
}

#[test]
fn a_well_behaved_component_intercepts() {
    let (_plugin, runtime) = started(&Fixture::new(Intercept::Continue));
    let declaration = runtime.declaration();
    assert_eq!(declaration.name, "wat-fixture");
    assert_eq!(declaration.subscriptions, vec!["input.receive".to_owned()]);
    assert_eq!(runtime.facts().package_version.to_string(), "2.0.0");
    assert_eq!(runtime.facts().reported_version, "2.0.0");
    for _ in 0..3 {
        let reply = runtime
            .intercept(HookPoint::InputReceive, &benign_payload(), BUDGET)
            .unwrap();
        assert_eq!(reply.decision, Decision::Continue);
        assert!(reply.replacement.is_none());
    }
    assert_eq!(runtime.rebuilds(), 0);
}

#[test]
fn the_payload_crosses_the_boundary_intact() {
    let (_plugin, runtime) = started(&Fixture::new(Intercept::Echo));
    for size in [100, 64 * 1024, 1024 * 1024] {
        let text = "é".repeat(size / 2);
        let payload = raw(&serde_json::json!({ "text": text }).to_string());
        let reply = runtime
            .intercept(HookPoint::InputReceive, &payload, BUDGET)
            .unwrap();
        assert_eq!(reply.decision, Decision::Block);
        assert_eq!(reply.reason.as_deref(), Some(payload.get()));
    }
}

#[test]
fn block_and_replace_answers_reach_the_host() {
    let (_plugin, runtime) = started(&Fixture::new(Intercept::Block("not today".into())));
    let reply = runtime
        .intercept(HookPoint::InputReceive, &benign_payload(), BUDGET)
        .unwrap();
    assert_eq!(reply.decision, Decision::Block);
    assert_eq!(reply.reason.as_deref(), Some("not today"));

    let (_plugin, runtime) = started(&Fixture::new(Intercept::Replace(
        r#"{"text":"rewritten"}"#.into(),
    )));
    let reply = runtime
        .intercept(HookPoint::InputReceive, &benign_payload(), BUDGET)
        .unwrap();
    assert_eq!(reply.decision, Decision::Replace);
    let replacement = reply.replacement.expect("a replacement");
    assert_eq!(replacement.get(), r#"{"text":"rewritten"}"#);
    reasonix_protocol::payloads::validate_replacement(HookPoint::InputReceive, &replacement)
        .expect("a valid input.receive replacement");
}

#[test]
fn a_replacement_that_is_not_json_fails_the_call_only() {
    let (_plugin, runtime) = started(&Fixture::new(Intercept::Replace("{not json".into())));
    let err = runtime
        .intercept(HookPoint::InputReceive, &benign_payload(), BUDGET)
        .unwrap_err();
    assert_eq!(err.kind, WasmErrorKind::Protocol);
    assert_eq!(err.reason, ErrorReason::ProtocolError);
    assert!(err.message.contains("replacement"), "{err}");
    // Not a trap: the instance stays.
    assert!(runtime.unavailable().is_none());
    assert_eq!(runtime.rebuilds(), 0);
}

#[test]
fn a_replacement_that_fails_the_point_dto_is_caught_by_validation() {
    // Emptying the input must be a block, not a replace (spec §6).
    let (_plugin, runtime) = started(&Fixture::new(Intercept::Replace(r#"{"text":""}"#.into())));
    let reply = runtime
        .intercept(HookPoint::InputReceive, &benign_payload(), BUDGET)
        .unwrap();
    let replacement = reply.replacement.expect("a replacement");
    let err =
        reasonix_protocol::payloads::validate_replacement(HookPoint::InputReceive, &replacement)
            .unwrap_err();
    assert!(err.to_string().contains("text"), "{err}");
    let extra = r#"{"text":"x","smuggled":true}"#;
    assert!(
        reasonix_protocol::payloads::validate_replacement(HookPoint::InputReceive, &raw(extra))
            .is_err()
    );
}

#[test]
fn an_infinite_loop_returns_intercept_timeout_and_the_host_serves_on() {
    let (_plugin, runtime) = started(&Fixture::new(Intercept::Loop));
    let err = runtime
        .intercept(
            HookPoint::InputReceive,
            &attack_payload(),
            Duration::from_millis(100),
        )
        .unwrap_err();
    assert_eq!(err.kind, WasmErrorKind::Timeout);
    assert_eq!(err.reason, ErrorReason::InterceptTimeout);
    assert!(err.message.contains("100 ms"), "{err}");
    assert_serves_next_call(&runtime);
    assert_eq!(runtime.rebuilds(), 1);
    // Again: each timeout costs one rebuild and nothing else.
    let err = runtime
        .intercept(
            HookPoint::InputReceive,
            &attack_payload(),
            Duration::from_millis(20),
        )
        .unwrap_err();
    assert_eq!(err.reason, ErrorReason::InterceptTimeout);
    assert_serves_next_call(&runtime);
    assert_eq!(runtime.rebuilds(), 2);
}

#[test]
fn a_memory_bomb_hits_the_default_limit_and_the_host_serves_on() {
    let (_plugin, runtime) = started(&Fixture::new(Intercept::MemoryBomb));
    assert_eq!(runtime.facts().memory_mib, 64);
    let err = runtime
        .intercept(HookPoint::InputReceive, &attack_payload(), BUDGET)
        .unwrap_err();
    assert_eq!(err.kind, WasmErrorKind::MemoryLimit);
    assert!(err.message.contains("memory limit of 64 MiB"), "{err}");
    assert_serves_next_call(&runtime);
}

#[test]
fn the_manifest_memory_limit_lowers_the_ceiling() {
    let plugin = TestPlugin::new("wat-plugin", &Fixture::new(Intercept::MemoryBomb).build());
    let mut start = plugin.start();
    start.limits = InstanceLimits::from_manifest(Some(4));
    let runtime = WasmRuntime::start(start).unwrap();
    let err = runtime
        .intercept(HookPoint::InputReceive, &attack_payload(), BUDGET)
        .unwrap_err();
    assert_eq!(err.kind, WasmErrorKind::MemoryLimit);
    assert!(err.message.contains("memory limit of 4 MiB"), "{err}");
    assert_serves_next_call(&runtime);
    // A payload larger than the whole limit cannot even be passed in.
    let big = raw(&serde_json::json!({ "text": "x".repeat(5 * 1024 * 1024) }).to_string());
    let err = runtime
        .intercept(HookPoint::InputReceive, &big, BUDGET)
        .unwrap_err();
    assert_eq!(err.kind, WasmErrorKind::MemoryLimit, "{err}");
    assert_serves_next_call(&runtime);
}

#[test]
fn a_memory_limit_below_the_initial_memory_fails_the_start() {
    let mut fixture = Fixture::new(Intercept::Continue);
    fixture.memory_pages = 64; // 4 MiB
    let plugin = TestPlugin::new("wat-plugin", &fixture.build());
    let mut start = plugin.start();
    start.limits = InstanceLimits::from_manifest(Some(1));
    let err = WasmRuntime::start(start).unwrap_err();
    assert_eq!(err.kind, WasmErrorKind::Load);
    assert_eq!(err.reason, ErrorReason::ActivationFailed);
    assert!(err.message.contains("memory limit of 1 MiB"), "{err}");
    let mut start = plugin.start();
    start.limits = InstanceLimits::from_manifest(Some(8));
    let runtime = WasmRuntime::start(start).expect("4 MiB fits in 8 MiB");
    assert_serves_next_call(&runtime);
}

#[test]
fn runaway_recursion_overflows_the_stack_and_the_host_serves_on() {
    let (_plugin, runtime) = started(&Fixture::new(Intercept::Recurse));
    let err = runtime
        .intercept(HookPoint::InputReceive, &attack_payload(), BUDGET)
        .unwrap_err();
    assert_eq!(err.kind, WasmErrorKind::StackOverflow);
    assert!(err.message.contains("stack overflow"), "{err}");
    assert_serves_next_call(&runtime);
}

#[test]
fn a_trap_fails_the_call_and_the_instance_is_rebuilt() {
    let (_plugin, runtime) = started(&Fixture::new(Intercept::Unreachable));
    let err = runtime
        .intercept(HookPoint::InputReceive, &attack_payload(), BUDGET)
        .unwrap_err();
    assert_eq!(err.kind, WasmErrorKind::Trap);
    assert!(err.message.contains("unreachable"), "{err}");
    assert_eq!(runtime.rebuilds(), 0);
    assert_serves_next_call(&runtime);
    assert_eq!(runtime.rebuilds(), 1);
}

#[test]
fn a_guest_error_keeps_its_reason() {
    let (_plugin, runtime) = started(&Fixture::new(Intercept::Error(REASON_INTERNAL)));
    let err = runtime
        .intercept(HookPoint::InputReceive, &benign_payload(), BUDGET)
        .unwrap_err();
    assert_eq!(err.kind, WasmErrorKind::Rejected);
    assert_eq!(err.reason, ErrorReason::Internal);
    assert_eq!(err.message, ErrorReason::Internal.message());
}

#[test]
fn a_subscription_outside_the_manifest_is_capability_not_declared() {
    let mut fixture = Fixture::new(Intercept::Continue);
    fixture.subscriptions = vec![INPUT_RECEIVE, 16]; // frontend-event
    let plugin = TestPlugin::new("wat-plugin", &fixture.build());
    let err = WasmRuntime::start(plugin.start()).unwrap_err();
    assert_eq!(err.kind, WasmErrorKind::Handshake);
    assert_eq!(err.reason, ErrorReason::CapabilityNotDeclared);
    assert!(err.message.contains("frontend.event"), "{err}");
}

#[test]
fn a_tool_without_the_tools_capability_is_capability_not_declared() {
    let mut fixture = Fixture::new(Intercept::Continue);
    fixture.tools = vec!["lookup".into()];
    let plugin = TestPlugin::new("wat-plugin", &fixture.build());
    let err = WasmRuntime::start(plugin.start()).unwrap_err();
    assert_eq!(err.reason, ErrorReason::CapabilityNotDeclared);
    assert!(err.message.contains("lookup"), "{err}");

    // Declared in the manifest, the same component starts and serves it.
    let mut ceiling = plugin.ceiling();
    ceiling.capabilities.push("tools".into());
    ceiling.tools = vec!["lookup".into()];
    let runtime =
        WasmRuntime::start(plugin.start_with(ceiling, Default::default())).expect("declared");
    let reply = runtime.tool_call("lookup", &raw("{}"), BUDGET).unwrap();
    assert_eq!(reply.content, "served by wat");
    let err = runtime.tool_call("other", &raw("{}"), BUDGET).unwrap_err();
    assert_eq!(err.reason, ErrorReason::UnknownMethod);
}

#[test]
fn a_component_of_another_major_is_refused_before_it_runs() {
    let mut fixture = Fixture::new(Intercept::Continue);
    fixture.package_version = "3.0.0".into();
    fixture.protocol_version = "3.0.0".into();
    // If the host ran it, the handshake would spin instead of refusing.
    fixture.initialize_loops = true;
    let plugin = TestPlugin::new("wat-plugin", &fixture.build());
    let err = WasmRuntime::start(plugin.start()).unwrap_err();
    assert_eq!(err.kind, WasmErrorKind::UnsupportedVersion);
    assert_eq!(err.reason, ErrorReason::UnsupportedVersion);
    assert!(err.message.contains("3.0.0"), "{err}");
}

#[test]
fn a_later_minor_is_served_by_the_newest_adapter() {
    let mut fixture = Fixture::new(Intercept::Continue);
    fixture.package_version = "2.3.0".into();
    fixture.protocol_version = "2.3.0".into();
    let plugin = TestPlugin::new("wat-plugin", &fixture.build());
    let runtime = WasmRuntime::start(plugin.start()).expect("a 2.x component starts");
    assert_eq!(runtime.facts().package_version.to_string(), "2.3.0");
    assert_serves_next_call(&runtime);
}

#[test]
fn a_reported_version_of_another_major_is_unsupported_version() {
    let mut fixture = Fixture::new(Intercept::Continue);
    fixture.protocol_version = "3.0.0".into();
    let plugin = TestPlugin::new("wat-plugin", &fixture.build());
    let err = WasmRuntime::start(plugin.start()).unwrap_err();
    assert_eq!(err.reason, ErrorReason::UnsupportedVersion);

    let mut fixture = Fixture::new(Intercept::Continue);
    fixture.protocol_version = "2.1.0".into();
    let plugin = TestPlugin::new("wat-plugin", &fixture.build());
    let err = WasmRuntime::start(plugin.start()).unwrap_err();
    assert_eq!(err.reason, ErrorReason::ProtocolError, "{err}");
}

#[test]
fn the_initialize_result_version_follows_the_sidecar_rules() {
    for (version, reason) in [
        ("3", ErrorReason::UnsupportedVersion),
        ("two", ErrorReason::ProtocolError),
    ] {
        let mut fixture = Fixture::new(Intercept::Continue);
        fixture.wire_protocol_version = version.into();
        let plugin = TestPlugin::new("wat-plugin", &fixture.build());
        let err = WasmRuntime::start(plugin.start()).unwrap_err();
        assert_eq!(err.reason, reason, "{version}: {err}");
    }
    let mut fixture = Fixture::new(Intercept::Continue);
    fixture.wire_protocol_version = "02".into();
    let plugin = TestPlugin::new("wat-plugin", &fixture.build());
    WasmRuntime::start(plugin.start()).expect("\"02\" passes like Go's Atoi");
}

#[test]
fn a_handshake_that_never_answers_times_out() {
    let mut fixture = Fixture::new(Intercept::Continue);
    fixture.initialize_loops = true;
    let plugin = TestPlugin::new("wat-plugin", &fixture.build());
    let mut start = plugin.start();
    start.handshake_timeout = Duration::from_millis(100);
    let err = WasmRuntime::start(start).unwrap_err();
    assert_eq!(err.kind, WasmErrorKind::Timeout);
    assert!(err.message.contains("handshake"), "{err}");
}

#[test]
fn a_file_that_is_not_a_component_fails_activation() {
    let plugin = TestPlugin::new("wat-plugin", b"\0asm not really");
    let err = WasmRuntime::start(plugin.start()).unwrap_err();
    assert_eq!(err.kind, WasmErrorKind::Load);
    assert_eq!(err.reason, ErrorReason::ActivationFailed);

    // A core module is not a component either.
    let core = wat::parse_str("(module)").unwrap();
    let plugin = TestPlugin::new("wat-plugin", &core);
    let err = WasmRuntime::start(plugin.start()).unwrap_err();
    assert_eq!(err.reason, ErrorReason::ActivationFailed);
}

#[test]
fn allow_and_deny_are_passed_on_for_the_dispatcher_to_judge() {
    let mut fixture = Fixture::new(Intercept::Decision(3));
    fixture.subscriptions = vec![PERMISSION_DECISION];
    let (_plugin, runtime) = started(&fixture);
    let reply = runtime
        .intercept(
            HookPoint::PermissionDecision,
            &raw(r#"{"name":"shell","hostDecision":"deny"}"#),
            BUDGET,
        )
        .unwrap();
    assert_eq!(reply.decision, Decision::Allow);
}

#[test]
fn shutdown_is_answered_once_and_later_calls_fail_fast() {
    let (_plugin, runtime) = started(&Fixture::new(Intercept::Continue));
    assert_eq!(runtime.shutdown(BUDGET).map(|r| r.unwrap()), Some(true));
    assert!(runtime.shutdown(BUDGET).is_none());
    let err = runtime
        .intercept(HookPoint::InputReceive, &benign_payload(), BUDGET)
        .unwrap_err();
    assert!(err.message.contains("shut down"), "{err}");
    assert!(runtime.unavailable().is_some());
}

#[test]
fn compiled_components_are_cached_and_bad_entries_rebuilt() {
    let component = Fixture::new(Intercept::Continue).build();
    let plugin = TestPlugin::new("wat-plugin", &component);
    let cache = ComponentCache::in_home(plugin.home());
    let start = || {
        let mut start = plugin.start();
        start.cache = Some(cache.clone());
        WasmRuntime::start(start).unwrap()
    };
    assert_eq!(start().facts().cache, CacheOutcome::Compiled);
    let hit = start();
    assert_eq!(hit.facts().cache, CacheOutcome::Hit);
    assert_serves_next_call(&hit);

    let entries: Vec<_> = std::fs::read_dir(cache.dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "one entry, no temp files: {entries:?}");
    let entry = entries[0].clone();
    let name = entry.file_name().unwrap().to_string_lossy().into_owned();
    let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&component));
    assert!(name.starts_with(&digest), "{name}");

    // A flipped byte in the artifact.
    let mut bytes = std::fs::read(&entry).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&entry, &bytes).unwrap();
    let rebuilt = start();
    assert!(
        matches!(&rebuilt.facts().cache, CacheOutcome::Rebuilt(why) if why.contains("digest")),
        "{:?}",
        rebuilt.facts().cache
    );
    assert_serves_next_call(&rebuilt);
    assert_eq!(start().facts().cache, CacheOutcome::Hit);

    // Truncated, and foreign bytes under the right name.
    for garbage in [
        &bytes[..10],
        b"RXCWASM1 but nothing else of use here".as_slice(),
    ] {
        std::fs::write(&entry, garbage).unwrap();
        let rebuilt = start();
        assert!(
            matches!(rebuilt.facts().cache, CacheOutcome::Rebuilt(_)),
            "{:?}",
            rebuilt.facts().cache
        );
        assert_eq!(start().facts().cache, CacheOutcome::Hit);
    }

    // Another component's (valid) entry copied under this one's name.
    let other = Fixture::new(Intercept::Block("other".into())).build();
    let other_plugin = TestPlugin::new("other", &other);
    let mut other_start = other_plugin.start();
    other_start.cache = Some(cache.clone());
    WasmRuntime::start(other_start).unwrap();
    let other_entry = std::fs::read_dir(cache.dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p != &entry)
        .expect("the other entry");
    std::fs::copy(&other_entry, &entry).unwrap();
    let rebuilt = start();
    assert!(
        matches!(&rebuilt.facts().cache, CacheOutcome::Rebuilt(why) if why.contains("another component")),
        "{:?}",
        rebuilt.facts().cache
    );
    // And it is this component that runs, not the other one.
    assert_serves_next_call(&rebuilt);
}
