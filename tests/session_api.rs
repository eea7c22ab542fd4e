//! The `Session` library as an agent embeds it, with real sidecars: a reload
//! asked for during a turn is queued and applies to the next one, cancel
//! stops a provider stream, questions (permissions, extension forms) wait
//! for a frontend's answer, and events flow on one subscription.

mod dispatch_common;

use std::collections::BTreeSet;
use std::time::Duration;

use dispatch_common::{Env, REASONIX};
use reasonix::runtime::host::ReloadOutcome;
use reasonix::session::{
    Answer, InputSource, Interaction, Question, Session, SessionEvent, SessionOptions, TurnOptions,
    TurnStatus,
};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

fn options(env: &Env, interaction: Interaction) -> SessionOptions {
    let mut options = SessionOptions::new(env.reasonix_home(), env.workspace.clone());
    options.guard = reasonix_sidecar::Guard::Exe(REASONIX.into());
    options.interaction = interaction;
    options
}

fn scripted() -> Interaction {
    Interaction::Scripted {
        deny: BTreeSet::new(),
        ui_answers: None,
    }
}

async fn next_matching(
    events: &mut UnboundedReceiver<SessionEvent>,
    pick: impl Fn(&SessionEvent) -> bool,
) -> SessionEvent {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .expect("an event in time")
            .expect("the session is open");
        if pick(&event) {
            return event;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_during_a_turn_is_queued_and_applies_to_the_next_turn() {
    let env = Env::new();
    env.add(
        "slow",
        json!({}),
        json!({"subscriptions": ["input.receive"],
               "intercept": {"input.receive": {"decision": "replace", "appendText": "-old", "sleepMs": 1500}}}),
    );
    let session = Session::open(options(&env, scripted())).await.unwrap();
    let mut events = session.subscribe();
    let running = {
        let session = session.clone();
        tokio::spawn(async move {
            session
                .run_turn("one".into(), InputSource::User, TurnOptions::default())
                .await
        })
    };
    next_matching(&mut events, |e| {
        matches!(e, SessionEvent::TurnStarted { .. })
    })
    .await;
    // The package changes on disk while the turn runs.
    let root = env.workspace.join("plugins/slow");
    env.rewrite_script(
        &root,
        "slow",
        json!({"subscriptions": ["input.receive"],
               "intercept": {"input.receive": {"decision": "replace", "appendText": "-new"}}}),
    );
    let out = env.reasonix(&[
        "plugin",
        "install",
        root.to_str().unwrap(),
        "--yes",
        "--replace",
    ]);
    assert!(out.status.success());
    assert_eq!(session.reload().await, ReloadOutcome::Queued);
    assert_eq!(session.reload().await, ReloadOutcome::Queued);
    assert!(session.status().reload_queued);
    let report = running.await.unwrap().unwrap();
    // The running turn kept its generation; the queued reload ran once at its end.
    assert_eq!(report.generation, 1);
    assert_eq!(report.transcript[0].content.as_deref(), Some("one-old"));
    let Some(ReloadOutcome::Swapped(swap)) = &report.reload else {
        panic!("{:?}", report.reload)
    };
    assert_eq!((swap.from_generation, swap.to_generation), (1, 2));
    assert_eq!(swap.changed, ["slow"]);
    let next = session
        .run_turn("two".into(), InputSource::User, TurnOptions::default())
        .await
        .unwrap();
    assert_eq!(next.generation, 2);
    assert_eq!(
        next.transcript.last().unwrap().content.as_deref(),
        Some("echo: two-new")
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_the_running_turn_and_its_provider_stream() {
    let env = Env::new();
    env.add(
        "streamer",
        json!({"capabilities": ["providers"]}),
        json!({"providers": [{"ref": "plugin/streamer/p/m"}],
               "streams": {"*": {"chunks": [[1, {"type": "text", "text": "first words"}]], "hold": true}}}),
    );
    let mut opts = options(&env, scripted());
    opts.model = Some("plugin/streamer/p/m".into());
    let session = Session::open(opts).await.unwrap();
    let mut events = session.subscribe();
    let running = {
        let session = session.clone();
        tokio::spawn(async move {
            session
                .run_turn("go".into(), InputSource::User, TurnOptions::default())
                .await
        })
    };
    let delta = next_matching(&mut events, |e| {
        matches!(e, SessionEvent::AssistantDelta { .. })
    })
    .await;
    assert_eq!(
        delta,
        SessionEvent::AssistantDelta {
            text: "first words".into()
        }
    );
    assert!(session.cancel());
    let report = running.await.unwrap().unwrap();
    assert_eq!(report.status, TurnStatus::Cancelled);
    assert!(
        env.log()
            .iter()
            .any(|l| l.starts_with("streamer stream-cancel es_")),
        "{:?}",
        env.log()
    );
    // Nothing of the cancelled turn entered the transcript; the session goes on.
    assert!(session.transcript().is_empty());
    assert!(!session.cancel(), "no turn runs now");
    session.switch_model("echo").unwrap();
    let next = session
        .run_turn("again".into(), InputSource::User, TurnOptions::default())
        .await
        .unwrap();
    assert_eq!(next.status, TurnStatus::Completed);
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_questions_wait_for_the_frontend_and_always_is_remembered() {
    let env = Env::new();
    let mut opts = options(&env, Interaction::Interactive);
    opts.scripted_calls = vec![reasonix::session::ScriptedCall {
        name: "write_file".into(),
        arguments: r#"{"path":"made.txt","content":"x"}"#.into(),
    }];
    let session = Session::open(opts).await.unwrap();
    let mut events = session.subscribe();
    let turn = |session: &Session| {
        let session = session.clone();
        tokio::spawn(async move {
            session
                .run_turn("write it".into(), InputSource::User, TurnOptions::default())
                .await
                .unwrap()
        })
    };

    let running = turn(&session);
    let SessionEvent::Question { id, question } =
        next_matching(&mut events, |e| matches!(e, SessionEvent::Question { .. })).await
    else {
        unreachable!()
    };
    assert!(
        matches!(&question, Question::Permission { tool, read_only: false, .. } if tool == "write_file"),
        "{question:?}"
    );
    assert!(
        session
            .answer(
                "q-unknown",
                Answer::Permission {
                    allow: true,
                    always: false
                }
            )
            .is_err()
    );
    session
        .answer(
            &id,
            Answer::Permission {
                allow: false,
                always: false,
            },
        )
        .unwrap();
    let report = running.await.unwrap();
    assert_eq!(report.tool_calls[0].decision, "deny");
    assert_eq!(report.tool_calls[0].decided_by.as_deref(), Some("the user"));
    assert!(!env.workspace.join("made.txt").exists());

    let running = turn(&session);
    let SessionEvent::Question { id, .. } =
        next_matching(&mut events, |e| matches!(e, SessionEvent::Question { .. })).await
    else {
        unreachable!()
    };
    session
        .answer(
            &id,
            Answer::Permission {
                allow: true,
                always: true,
            },
        )
        .unwrap();
    let report = running.await.unwrap();
    assert_eq!(report.tool_calls[0].decision, "allow");
    assert!(env.workspace.join("made.txt").exists());

    // "Always": the third call is not asked.
    let report = turn(&session).await.unwrap();
    assert_eq!(report.tool_calls[0].host_decision, "allow");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_ui_request_is_a_question_answered_by_the_frontend() {
    let env = Env::new();
    env.add(
        "asker",
        json!({"capabilities": ["interceptors", "ui"]}),
        json!({"subscriptions": ["input.receive"],
               "intercept": {"input.receive": {"decision": "continue",
                   "request": {"surfaceId": "asker.q", "kind": "input",
                               "payload": {"title": "Who?", "fields": [{"key": "value", "kind": "input", "label": "Name"}]}}}}}),
    );
    let session = Session::open(options(&env, Interaction::Interactive))
        .await
        .unwrap();
    let mut events = session.subscribe();
    let running = {
        let session = session.clone();
        tokio::spawn(async move {
            session
                .run_turn("hi".into(), InputSource::User, TurnOptions::default())
                .await
                .unwrap()
        })
    };
    let SessionEvent::Question { id, question } =
        next_matching(&mut events, |e| matches!(e, SessionEvent::Question { .. })).await
    else {
        unreachable!()
    };
    let Question::Form { plugin, form, .. } = question else {
        panic!("{question:?}")
    };
    assert_eq!(plugin, "asker");
    assert_eq!(form.fields[0].key, "value");
    let values = [("value".to_string(), json!("Ada"))].into_iter().collect();
    session
        .answer(
            &id,
            Answer::Form {
                values: Some(values),
            },
        )
        .unwrap();
    let report = running.await.unwrap();
    assert_eq!(report.status, TurnStatus::Completed);
    let log = env.log();
    assert!(
        log.iter().any(|l| l.contains("Ada")),
        "the extension got the answer: {log:?}"
    );
    session.close().await;
}
