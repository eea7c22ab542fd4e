//! Every decision at every hook point, legal and illegal, against real
//! sidecar processes (installed through the plugin flow) and the dispatcher
//! of a generation built from the registry.

mod dispatch_common;

use dispatch_common::Env;
use reasonix::runtime::dispatcher::{DispatchError, Outcome, StepResult};
use reasonix_protocol::points::HookPoint;
use serde_json::{Value, json};

/// A payload valid as a replacement at each point.
fn valid_payload(point: HookPoint) -> Value {
    use HookPoint as P;
    match point {
        P::SessionStart | P::SessionEnd | P::SessionLoad | P::SessionSave | P::SessionRotate => {
            json!({"sessionPath": "/tmp/s.json", "phase": point.session_phase().unwrap()})
        }
        P::InputReceive => json!({"text": "replaced input"}),
        P::AgentBeforeStart => json!({"model": "m", "toolCount": 2, "sessionId": "s-1"}),
        P::SystemPromptBuild => json!({"prompt": "replaced prompt", "workspaceRoot": "/w"}),
        P::ContextPrepare => json!({"messages": [{"role": "user", "content": "x"}]}),
        P::ProviderRequest => json!({"request": {"messages": [], "tools": [], "maxTokens": 7}}),
        P::ProviderResponse => json!({"text": "replaced answer"}),
        P::ToolBefore => json!({"name": "echo", "arguments": "{\"a\":1}", "callId": "c1"}),
        P::ToolAfter => json!({"name": "echo", "result": "replaced result", "callId": "c1"}),
        P::PermissionDecision => json!({"name": "echo", "arguments": "{}", "hostDecision": "deny"}),
        P::CompactionPrepare => json!({"messages": [], "guidance": "short"}),
        P::CompactionComplete => json!({"summary": "replaced summary"}),
        P::FrontendEvent => json!({"kind": "replaced"}),
    }
}

/// The host payload sent at each point (valid, but different from the
/// replacement so a replace is visible).
fn host_payload(point: HookPoint) -> Value {
    use HookPoint as P;
    match point {
        P::InputReceive => json!({"text": "host input"}),
        P::SystemPromptBuild => json!({"prompt": "host prompt", "workspaceRoot": "/w"}),
        P::ProviderResponse => json!({"text": "host answer"}),
        P::CompactionComplete => json!({"summary": "host summary"}),
        P::FrontendEvent => json!({"kind": "host"}),
        P::ContextPrepare => json!({"messages": []}),
        P::ProviderRequest => json!({"request": {"messages": [], "tools": [], "maxTokens": 1}}),
        P::ToolBefore => json!({"name": "echo", "arguments": "{}", "callId": "c1"}),
        P::ToolAfter => json!({"name": "echo", "result": "host result", "callId": "c1"}),
        P::AgentBeforeStart => json!({"model": "echo", "toolCount": 3, "sessionId": "s-1"}),
        _ => valid_payload(point),
    }
}

fn all_points() -> Vec<String> {
    HookPoint::ALL
        .iter()
        .map(|p| p.as_str().to_string())
        .collect()
}

/// One plugin answering `rule(point)` at every point.
fn plugin(env: &Env, name: &str, required: bool, rule: impl Fn(HookPoint) -> Value) {
    let intercept: serde_json::Map<String, Value> = HookPoint::ALL
        .iter()
        .map(|p| (p.as_str().to_string(), rule(*p)))
        .collect();
    env.add(
        name,
        json!({"required": required}),
        json!({"subscriptions": all_points(), "intercept": intercept}),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_decision_at_every_point() {
    type Rule = Box<dyn Fn(HookPoint) -> Value>;
    let cases: Vec<(&str, Rule)> = vec![
        ("continue", Box::new(|_| json!({"decision": "continue"}))),
        (
            "block",
            Box::new(|_| json!({"decision": "block", "reason": "stop here"})),
        ),
        (
            "replace",
            Box::new(|p| json!({"decision": "replace", "replacement": valid_payload(p)})),
        ),
        (
            "invalid",
            Box::new(|_| json!({"decision": "replace", "replacement": {"bogus": 1}})),
        ),
        ("missing", Box::new(|_| json!({"decision": "replace"}))),
        ("allow", Box::new(|_| json!({"decision": "allow"}))),
        ("deny", Box::new(|_| json!({"decision": "deny"}))),
    ];
    let mut checked = 0;
    for (decision, rule) in cases {
        let env = Env::new();
        plugin(&env, "judge", true, rule);
        let (generation, _hub) = env.generation(1).await.expect("generation builds");
        for point in HookPoint::ALL {
            let result = generation
                .dispatcher
                .intercept(point, host_payload(point))
                .await;
            let at = format!("{decision} at {}", point.as_str());
            let permission = point == HookPoint::PermissionDecision;
            match decision {
                "continue" => {
                    let ruling = result.expect(&at);
                    assert_eq!(*ruling.outcome(), Outcome::Continue, "{at}");
                    assert!(!ruling.replaced(), "{at}");
                    assert_eq!(*ruling.payload(), host_payload(point), "{at}");
                }
                "block" => {
                    let ruling = result.expect(&at);
                    assert_eq!(
                        *ruling.outcome(),
                        Outcome::Blocked {
                            plugin: "judge".into(),
                            reason: "stop here".into()
                        },
                        "{at}"
                    );
                }
                "replace" => {
                    let ruling = result.expect(&at);
                    assert!(ruling.replaced(), "{at}");
                    assert_eq!(*ruling.payload(), valid_payload(point), "{at}");
                    assert_eq!(ruling.steps()[0].result, StepResult::Replaced, "{at}");
                }
                "invalid" | "missing" => {
                    let error = result.expect_err(&at);
                    let DispatchError::MemberFailed { plugin, why, .. } = &*error else {
                        panic!("{at}: {error:?}")
                    };
                    assert_eq!(plugin, "judge");
                    assert!(why.contains("replace"), "{at}: {why}");
                }
                "allow" | "deny" if permission => {
                    let ruling = result.expect(&at);
                    assert_eq!(
                        *ruling.outcome(),
                        Outcome::Permission {
                            plugin: "judge".into(),
                            allow: decision == "allow",
                            overrode_host_deny: decision == "allow",
                        },
                        "{at}"
                    );
                }
                "allow" | "deny" => {
                    let error = result.expect_err(&at);
                    assert!(
                        error
                            .to_string()
                            .contains("legal only at permission.decision"),
                        "{at}: {error}"
                    );
                }
                _ => unreachable!(),
            }
            checked += 1;
        }
        if decision == "allow" {
            let audit = generation.diagnostics.audit_entries();
            assert_eq!(audit.len(), 1, "one override was audited");
            assert!(audit[0].applied);
        }
        generation.retire().await;
    }
    assert_eq!(checked, 7 * 17);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_optional_plugin_breaking_the_contract_is_skipped_and_warned_once() {
    let env = Env::new();
    plugin(&env, "sloppy", false, |_| json!({"decision": "allow"}));
    let (generation, _hub) = env.generation(1).await.unwrap();
    for point in HookPoint::ALL {
        let ruling = generation
            .dispatcher
            .intercept(point, host_payload(point))
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", point.as_str()));
        if point != HookPoint::PermissionDecision {
            assert!(
                matches!(ruling.steps()[0].result, StepResult::Skipped { .. }),
                "{}",
                point.as_str()
            );
            assert_eq!(*ruling.payload(), host_payload(point));
        }
    }
    assert_eq!(generation.diagnostics.warnings().len(), 1);
    generation.retire().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_reach_subscribers_and_slot_owners_without_blocking() {
    let env = Env::new();
    env.add(
        "watcher",
        json!({}),
        json!({"subscriptions": ["frontend.event", "tool.after"]}),
    );
    env.add(
        "owner",
        json!({"replaces": ["frontend_events"], "capabilities": ["strategies"]}),
        json!({"replaces": ["frontend_events"]}),
    );
    env.add(
        "bystander",
        json!({}),
        json!({"subscriptions": ["input.receive"]}),
    );
    let (generation, _hub) = env.generation(1).await.unwrap();
    generation
        .dispatcher
        .observe(HookPoint::FrontendEvent, &json!({"kind": "turn.complete"}));
    // Events are fire-and-forget: wait (bounded) until the sidecars logged them.
    let mut log = env.log();
    for _ in 0..100 {
        if log.iter().filter(|l| l.contains("extension/event")).count() >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        log = env.log();
    }
    generation.retire().await;
    let events: Vec<&String> = log
        .iter()
        .filter(|l| l.contains("extension/event"))
        .collect();
    assert_eq!(events.len(), 2, "{log:?}");
    assert!(events.iter().any(|l| l.starts_with("watcher ")));
    assert!(events.iter().any(|l| l.starts_with("owner ")));
}
