//! Generations and fail-atomic reload with real sidecars: a reload during a
//! turn is queued (exactly one), a failed reload keeps the old generation
//! serving, old runtimes retire only after the swap, session state is
//! carried, and a no-op reload keeps the provider-visible prefix identical.

mod dispatch_common;

use std::collections::BTreeSet;

use dispatch_common::Env;
use reasonix::runtime::dispatcher::Outcome;
use reasonix::runtime::host::ReloadOutcome;
use reasonix::runtime::provider::ProviderStream;
use reasonix::runtime::provider::reassembly::StreamFailure;
use reasonix::runtime::{ExtensionRuntime, StreamOpen};
use reasonix::session::{
    InputSource, Interaction, ScriptedCall, Session, SessionOptions, TurnOptions, TurnStatus,
};
use reasonix_protocol::points::HookPoint;
use serde_json::json;

/// A scripted session over the env's home whose echo model calls
/// `write_file` in every turn.
async fn session(env: &Env) -> Session {
    let mut options = SessionOptions::new(env.reasonix_home(), env.workspace.clone());
    options.guard = reasonix_sidecar::Guard::Exe(dispatch_common::REASONIX.into());
    options.interaction = Interaction::Scripted {
        deny: BTreeSet::new(),
        ui_answers: None,
    };
    options.scripted_calls = vec![ScriptedCall {
        name: "write_file".into(),
        arguments: "{\"path\":\"x.txt\",\"content\":\"x\"}".into(),
    }];
    Session::open(options).await.unwrap()
}

async fn turn(session: &Session, input: &str) -> reasonix::session::TurnReport {
    session
        .run_turn(input.to_string(), InputSource::User, TurnOptions::default())
        .await
        .unwrap()
}

fn appender(suffix: &str) -> serde_json::Value {
    json!({"subscriptions": ["input.receive", "system_prompt.build"],
           "intercept": {"input.receive": {"decision": "replace", "appendText": suffix},
                         "system_prompt.build": {"decision": "continue"}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_during_a_turn_is_queued_once_and_runs_when_the_turn_ends() {
    let env = Env::new();
    env.add("alpha", json!({}), appender("-a"));
    let host = env.host().await.unwrap();
    let pin = host.begin_turn().unwrap();
    assert_eq!(pin.generation.number, 1);
    assert_eq!(host.reload().await, ReloadOutcome::Queued);
    assert_eq!(host.reload().await, ReloadOutcome::Queued);
    assert!(host.reload_queued());
    // The running turn keeps its generation, which keeps serving.
    let ruling = pin
        .generation
        .dispatcher
        .intercept(HookPoint::InputReceive, json!({"text": "x"}))
        .await
        .unwrap();
    assert_eq!(*ruling.payload(), json!({"text": "x-a"}));
    assert_eq!(host.current().number, 1);
    let outcome = host.end_turn(pin).await;
    let Some(ReloadOutcome::Swapped(report)) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!((report.from_generation, report.to_generation), (1, 2));
    assert!(report.is_noop());
    // Exactly one reload ran.
    assert_eq!(host.current().number, 2);
    assert!(!host.reload_queued());
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_reload_keeps_the_old_generation_untouched_and_serving() {
    let env = Env::new();
    let root = env.plugin("alpha", json!({"required": true}), appender("-a"));
    env.install(&root, true);
    let host = env.host().await.unwrap();
    let before = host.current();

    // The linked plugin now exits during startup: the build must fail.
    let mut broken = appender("-b");
    broken["startup"] = json!({"exit": 7});
    env.rewrite_script(&root, "alpha", broken);
    let outcome = host.reload().await;
    let ReloadOutcome::Failed { kept, why } = &outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(*kept, 1);
    assert!(why.contains("alpha"), "{why}");
    let now = host.current();
    assert!(
        std::sync::Arc::ptr_eq(&before, &now),
        "the old generation stays current"
    );
    // The old sidecar still answers, with its old behaviour.
    let ruling = now
        .dispatcher
        .intercept(HookPoint::InputReceive, json!({"text": "x"}))
        .await
        .unwrap();
    assert_eq!(*ruling.payload(), json!({"text": "x-a"}));

    // Fixed again: the reload swaps, and the old sidecar is retired after
    // the new one was started.
    env.rewrite_script(&root, "alpha", appender("-c"));
    let ReloadOutcome::Swapped(report) = host.reload().await else {
        panic!("reload after the fix")
    };
    assert_eq!(report.to_generation, 2);
    let log = env.log();
    let started = log
        .iter()
        .position(|l| l == "alpha initialize generation=2")
        .expect("new start");
    let retired = log
        .iter()
        .rposition(|l| l == "alpha shutdown")
        .expect("old retired");
    assert!(started < retired, "{log:?}");
    let ruling = host
        .current()
        .dispatcher
        .intercept(HookPoint::InputReceive, json!({"text": "x"}))
        .await
        .unwrap();
    assert_eq!(*ruling.payload(), json!({"text": "x-c"}));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noop_reload_keeps_the_prefix_byte_identical_and_carries_the_session() {
    let env = Env::new();
    let root = env.plugin(
        "prompter",
        json!({"replaces": ["system_prompt"], "capabilities": ["strategies"]}),
        json!({"replaces": ["system_prompt"],
               "intercept": {"system_prompt.build": {"decision": "replace", "appendText": " Be terse."}}}),
    );
    env.install(&root, true);
    env.add("alpha", json!({}), appender("-a"));
    let session = session(&env).await;
    let report = turn(&session, "one").await;
    assert_eq!(report.status, TurnStatus::Completed);
    let before = report.prefix_hash.clone();
    let transcript = session.transcript();
    assert_eq!(report.tool_calls[0].decision, "allow");
    assert_eq!(report.tool_calls[0].host_decision, "ask");

    let ReloadOutcome::Swapped(reload) = session.reload().await else {
        panic!("no-op reload")
    };
    assert!(reload.is_noop(), "{reload:?}");
    assert_eq!(
        session.transcript(),
        transcript,
        "session state carried across the swap"
    );
    let report = turn(&session, "two").await;
    assert_eq!(report.generation, 2);
    assert_eq!(
        report.prefix_hash, before,
        "no-op reload changed the prefix"
    );
    // The transcript continued across the swap, and the approval granted
    // in the first turn still stands (the tool is not asked again).
    assert!(report.transcript.len() > transcript.len());
    assert_eq!(report.tool_calls[0].host_decision, "allow");

    // A real change to the strategy changes the prefix (the hash can fail).
    env.rewrite_script(
        &root,
        "prompter",
        json!({"replaces": ["system_prompt"],
               "intercept": {"system_prompt.build": {"decision": "replace", "appendText": " Be verbose."}}}),
    );
    let ReloadOutcome::Swapped(_) = session.reload().await else {
        panic!("reload")
    };
    let report = turn(&session, "three").await;
    assert_ne!(report.prefix_hash, before);
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_stream_cancel_tells_the_extension() {
    let env = Env::new();
    env.add(
        "streamer",
        json!({"capabilities": ["providers"]}),
        json!({"providers": [{"ref": "plugin/streamer/p/m"}],
               "streams": {"*": {"chunks": [[1, {"type": "text", "text": "first"}]], "hold": true}}}),
    );
    let (generation, _hub) = env.generation(1).await.unwrap();
    let entry = generation
        .provider("plugin/streamer/p/m")
        .expect("catalog entry")
        .clone();
    let runtime: std::sync::Arc<dyn ExtensionRuntime> =
        generation.runtime("streamer").unwrap().clone();
    let request =
        json!({"messages": [{"role": "user", "content": "hi"}], "tools": [], "maxTokens": 5});
    let mut stream = ProviderStream::open(
        runtime,
        StreamOpen {
            stream_id: reasonix::runtime::provider::new_stream_id(),
            provider_ref: entry.provider_ref().to_string(),
            model: entry.model(),
            effort: None,
            request: serde_json::value::to_raw_value(&request).unwrap(),
            generation: 1,
        },
    )
    .await
    .unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first.text.as_deref(), Some("first"));
    let stream_id = stream.stream_id().to_string();
    assert_eq!(stream.cancel().await, StreamFailure::Cancelled);
    let log = env.log();
    assert!(
        log.iter()
            .any(|l| l.starts_with("streamer stream-cancel es_")),
        "{log:?}"
    );
    assert!(stream_id.starts_with("es_"));
    generation.retire().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn optional_runtime_that_fails_to_start_degrades_and_a_required_one_fails_the_build() {
    let env = Env::new();
    let mut broken = appender("-x");
    broken["startup"] = json!({"exit": 3});
    env.add("broken", json!({}), broken.clone());
    env.add("alpha", json!({}), appender("-a"));
    let (generation, _hub) = env.generation(1).await.unwrap();
    assert_eq!(generation.degraded.len(), 1);
    assert_eq!(generation.degraded[0].plugin, "broken");
    let ruling = generation
        .dispatcher
        .intercept(HookPoint::InputReceive, json!({"text": "x"}))
        .await
        .unwrap();
    assert_eq!(*ruling.payload(), json!({"text": "x-a"}));
    assert_eq!(*ruling.outcome(), Outcome::Continue);
    generation.retire().await;

    let env = Env::new();
    env.add("broken", json!({"required": true}), broken);
    env.add("alpha", json!({}), appender("-a"));
    let error = env.generation(1).await.unwrap_err();
    assert!(error.contains("required runtime `broken`"), "{error}");
    // Nothing is left running: alpha was started and then shut down.
    let log = env.log();
    assert!(
        log.iter().any(|l| l == "alpha shutdown")
            || !log.iter().any(|l| l.starts_with("alpha initialize")),
        "{log:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_most_four_start_at_once_inside_one_shared_budget() {
    // Six optional runtimes that each take 2 s to answer initialize, and a
    // 3.2 s shared budget: four start together and make it; the last two
    // can only start when a slot frees up and run out of budget.
    let env = Env::new();
    for i in 0..6 {
        let mut script = appender("-s");
        script["startup"] = json!({"sleepMs": 2000});
        env.add(&format!("slow{i}"), json!({}), script);
    }
    let hub = std::sync::Arc::new(reasonix::runtime::ui::UiHub::new(
        reasonix::runtime::ui::UiAnswers::Headless,
    ));
    let candidates =
        reasonix::runtime::host::CandidateSource::candidates(&*env.source(&hub)).unwrap();
    let generation = reasonix::runtime::generation::Generation::build_with_budget(
        1,
        candidates,
        "s-test",
        "/w",
        std::time::Duration::from_millis(3200),
    )
    .await
    .unwrap();
    assert_eq!(generation.runtimes.len(), 4, "{:?}", generation.degraded);
    assert_eq!(generation.degraded.len(), 2);
    for degraded in &generation.degraded {
        assert!(
            degraded.why.contains("budget") || degraded.why.contains("initialize"),
            "{}",
            degraded.why
        );
    }
    generation.retire().await;
}
