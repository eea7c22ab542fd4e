//! `reasonix serve`'s session routes through a real HTTP client against a
//! real server on 127.0.0.1, over real sessions with real sidecars: every
//! route, status and error code (busy 409, unknown sessions and questions,
//! bad ids and bodies, the workspace and session-file rules, the session
//! limit), an SSE stream of a turn the starter extension rewrote, questions
//! answered by the client, status-ui's surfaces, action and form, and a
//! reload refused while a session's turn runs.

#[path = "dispatch_common/mod.rs"]
mod dispatch_common;
#[path = "examples_support.rs"]
mod examples;
#[path = "serve_support/mod.rs"]
mod support;

use reqwest::Method;
use serde_json::{Value, json};
use support::{Answer, Kit, write};

/// A package whose runtime is the scripted test sidecar
/// (`host/examples/scripted_sidecar.rs`), written into the kit's work dir;
/// returns its source for `plan_and_install`.
fn scripted(kit: &Kit, name: &str, runtime: Value, script: Value) -> String {
    let root = kit.work.path().join(name);
    let mut script = script;
    script["name"] = json!(name);
    script["log"] = json!(kit.work.path().join("calls.log"));
    if script.get("subscriptions").is_none() {
        script["subscriptions"] = json!([]);
    }
    write(&root.join("script.json"), &script.to_string());
    let mut block = json!({
        "command": dispatch_common::sidecar_binary(),
        "args": ["${REASONIX_PLUGIN_ROOT}/script.json"],
        "intercepts": script["subscriptions"],
        "capabilities": ["interceptors"],
    });
    for (key, value) in runtime.as_object().cloned().unwrap_or_default() {
        block[key] = value;
    }
    let manifest = json!({
        "apiVersion": "reasonix.io/plugin/v2", "name": name, "version": "1.0.0",
        "runtime": block,
    });
    write(&root.join("reasonix-plugin.json"), &manifest.to_string());
    format!("./{name}")
}

/// A provider whose stream says "first words" and then holds until it is
/// cancelled: a turn that runs until someone stops it.
fn holder(kit: &Kit) -> String {
    scripted(
        kit,
        "holder",
        json!({"capabilities": ["providers"]}),
        json!({"providers": [{"ref": "plugin/holder/p/m"}],
               "streams": {"*": {"chunks": [[1, {"type": "text", "text": "first words"}]], "hold": true}}}),
    )
}

fn starter(kit: &Kit) -> String {
    examples::built_copy(
        "starter",
        examples::Kind::Native,
        &kit.work.path().join("starter"),
    );
    "./starter".into()
}

async fn input(kit: &Kit, id: &str, line: &str) -> Answer {
    kit.post(&format!("/sessions/{id}/input"), json!({ "line": line }))
        .await
}

/// Submit `line` in the background (a turn answers when it ends).
fn spawn_input(kit: &Kit, id: &str, line: &str) -> tokio::task::JoinHandle<Answer> {
    let request = kit
        .req(Method::POST, &format!("/sessions/{id}/input"))
        .header("content-type", "application/json")
        .body(json!({ "line": line }).to_string());
    tokio::spawn(async move { Answer::of(request.send().await.unwrap()).await })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_routes_check_ids_bodies_and_their_rules() {
    let kit = Kit::start().await;
    std::fs::create_dir_all(kit.work.path().join("proj/sub")).unwrap();
    assert_eq!(kit.get("/sessions").await.json(), json!({"sessions": []}));

    // Create: 201 with the session's status and workspace.
    let created = kit.post("/sessions", json!({"workspace": "proj"})).await;
    assert_eq!(created.status, 201, "{}", created.text());
    let view = created.json();
    let id = view["sessionId"].as_str().unwrap().to_string();
    assert!(id.starts_with("rs-"), "{view}");
    assert_eq!(view["model"], "echo");
    assert_eq!(view["busy"], false);
    assert_eq!(view["generation"], 1);
    let canon_work = std::fs::canonicalize(kit.work.path()).unwrap();
    assert_eq!(
        view["workspace"],
        json!(canon_work.join("proj").to_str().unwrap())
    );
    let listed = kit.get("/sessions").await.json();
    assert_eq!(listed["sessions"][0]["sessionId"], id);
    let detail = kit.get(&format!("/sessions/{id}")).await.json();
    assert_eq!(detail["models"], json!(["echo"]));
    assert!(
        detail["commands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["command"] == "/help"),
        "{detail}"
    );
    assert_eq!(detail["surfaces"], json!([]));
    let status = kit.get("/extensions").await.json();
    assert_eq!(status["sessions"][0]["sessionId"], id, "{status}");

    // Bodies of POST /sessions.
    Answer::of(
        kit.req(Method::POST, "/sessions")
            .header("content-type", "text/plain")
            .body("{}")
            .send()
            .await
            .unwrap(),
    )
    .await
    .refused(415, "request.bad_content_type");
    let unknown = kit.post("/sessions", json!({"workspaces": "x"})).await;
    let body = unknown.refused(400, "request.bad_body");
    assert!(
        body["params"]["detail"]
            .as_str()
            .unwrap()
            .contains("workspaces")
    );
    kit.post("/sessions", json!({"readOnly": "yes"}))
        .await
        .refused(400, "request.bad_body");
    for outside in ["..", "../", "/", "proj/../.."] {
        kit.post("/sessions", json!({ "workspace": outside }))
            .await
            .refused(403, "session.workspace_not_allowed");
    }
    kit.post("/sessions", json!({"workspace": "nope"}))
        .await
        .refused(422, "session.workspace_missing");
    for bad in ["../x", "a/b", ".hidden", ""] {
        if bad.is_empty() {
            continue;
        }
        kit.post("/sessions", json!({ "sessionFile": bad }))
            .await
            .refused(400, "session.bad_file_name");
    }
    let model = kit
        .post("/sessions", json!({"model": "plugin/ghost/p/m"}))
        .await;
    let body = model.refused(422, "model.unknown");
    assert!(
        body["params"]["detail"].as_str().unwrap().contains("echo"),
        "{body}"
    );
    let calls: Vec<Value> = (0..9)
        .map(|_| json!({"name": "echo", "arguments": {}}))
        .collect();
    let body = kit
        .post("/sessions", json!({ "echoCalls": calls }))
        .await
        .refused(400, "request.bad_body");
    assert_eq!(body["params"]["limit"], 8);
    let body = kit
        .post("/sessions", json!({"echoCalls": [{"arguments": {}}]}))
        .await
        .refused(400, "request.missing_field");
    assert_eq!(body["params"]["field"], "echoCalls[0].name");
    // None of those left a session open.
    assert_eq!(
        kit.get("/sessions").await.json()["sessions"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // Ids are checked before use; unknown sessions are 404 on every route.
    let routes: [(Method, &str, Option<Value>); 9] = [
        (Method::GET, "", None),
        (Method::DELETE, "", None),
        (Method::GET, "/events", None),
        (Method::POST, "/input", Some(json!({"line": "hi"}))),
        (
            Method::POST,
            "/answer",
            Some(json!({"question": "q1", "allow": true})),
        ),
        (
            Method::POST,
            "/actions",
            Some(json!({"plugin": "p", "action": "a"})),
        ),
        (
            Method::POST,
            "/forms",
            Some(json!({"plugin": "p", "surfaceId": "s", "values": {}})),
        ),
        (Method::POST, "/cancel", None),
        (Method::POST, "/cancel", Some(json!({}))),
    ];
    for (method, tail, body) in &routes {
        for (sid, status, code) in [
            ("rs-0000000000000000", 404, "session.not_found"),
            ("a%20b", 400, "session.bad_id"),
            ("..%2F..%2Fetc", 400, "session.bad_id"),
            (&"x".repeat(129), 400, "session.bad_id"),
        ] {
            let mut req = kit.req(method.clone(), &format!("/sessions/{sid}{tail}"));
            if let Some(body) = body {
                req = req
                    .header("content-type", "application/json")
                    .body(body.to_string());
            }
            Answer::of(req.send().await.unwrap())
                .await
                .refused(status, code);
        }
    }
    Answer::of(
        kit.req(Method::PUT, &format!("/sessions/{id}"))
            .send()
            .await
            .unwrap(),
    )
    .await
    .refused(405, "request.method_not_allowed");

    // Input.
    kit.post(&format!("/sessions/{id}/input"), json!({}))
        .await
        .refused(400, "request.missing_field");
    input(&kit, &id, "   ")
        .await
        .refused(400, "request.missing_field");
    let mut big = String::from("x");
    big.push_str(&"y".repeat(64 * 1024));
    input(&kit, &id, &big)
        .await
        .refused(413, "request.too_large");
    let unknown = input(&kit, &id, "/nosuch").await;
    let body = unknown.refused(422, "command.unknown");
    assert!(
        body["params"]["detail"]
            .as_str()
            .unwrap()
            .contains("/nosuch")
    );
    let help = input(&kit, &id, "/help").await;
    assert_eq!(help.status, 200);
    let help = help.json();
    assert_eq!(help["kind"], "command");
    assert!(help["text"].as_str().unwrap().contains("/reload"), "{help}");
    let turn = input(&kit, &id, "hello there").await.json();
    assert_eq!(turn["kind"], "turn");
    assert_eq!(turn["status"]["status"], "completed");
    assert_eq!(turn["model"], "echo");

    // Answers.
    let answer_path = format!("/sessions/{id}/answer");
    let answer = |body: Value| kit.post(&answer_path, body);
    answer(json!({"allow": true}))
        .await
        .refused(400, "request.missing_field");
    for bad in ["x1", "q", "q1a", "q-1", &format!("q{}", "9".repeat(21))] {
        answer(json!({"question": bad, "allow": true}))
            .await
            .refused(400, "question.bad_id");
    }
    answer(json!({"question": "q99", "allow": true}))
        .await
        .refused(404, "question.unknown");
    for both in [
        json!({"question": "q1"}),
        json!({"question": "q1", "allow": true, "values": {}}),
        json!({"question": "q1", "values": {}, "cancel": true}),
        json!({"question": "q1", "cancel": false}),
        json!({"question": "q1", "values": {}, "always": true}),
    ] {
        answer(both).await.refused(400, "request.bad_body");
    }

    // Actions and forms.
    let action_path = format!("/sessions/{id}/actions");
    let action = |body: Value| kit.post(&action_path, body);
    action(json!({"plugin": "../x", "action": "a"}))
        .await
        .refused(400, "plugin.bad_name");
    let body = action(json!({"plugin": "p", "action": "a b"}))
        .await
        .refused(400, "request.bad_id");
    assert_eq!(body["params"]["field"], "action");
    action(json!({"plugin": "p"}))
        .await
        .refused(400, "request.missing_field");
    let body = action(json!({"plugin": "ghost", "action": "go"}))
        .await
        .refused(422, "action.failed");
    assert!(
        body["params"]["detail"]
            .as_str()
            .unwrap()
            .contains("/ghost:go"),
        "{body}"
    );
    let form_path = format!("/sessions/{id}/forms");
    let form = |body: Value| kit.post(&form_path, body);
    form(json!({"plugin": "ghost", "surfaceId": "f"}))
        .await
        .refused(400, "request.missing_field");
    form(json!({"plugin": "ghost", "surfaceId": "f/../x", "values": {}}))
        .await
        .refused(400, "request.bad_id");
    form(json!({"plugin": "ghost", "surfaceId": "f", "values": {}}))
        .await
        .refused(422, "form.failed");

    // Cancel with no turn running.
    assert_eq!(
        kit.post(&format!("/sessions/{id}/cancel"), json!({}))
            .await
            .json(),
        json!({"cancelled": false})
    );
    assert_eq!(
        Answer::of(
            kit.req(Method::POST, &format!("/sessions/{id}/cancel"))
                .send()
                .await
                .unwrap()
        )
        .await
        .json(),
        json!({"cancelled": false})
    );

    // Session files: by name, in the home, one session at a time.
    let filed = kit.open_session(json!({"sessionFile": "work"})).await;
    kit.post("/sessions", json!({"sessionFile": "work"}))
        .await
        .refused(409, "session.file_in_use");
    let turn = input(&kit, &filed, "remember me").await.json();
    assert_eq!(turn["status"]["status"], "completed", "{turn}");
    let saved = kit.home.path().join("sessions/work.json");
    let text = std::fs::read_to_string(&saved).unwrap();
    assert!(text.contains("remember me"), "{text}");
    assert_eq!(
        kit.get(&format!("/sessions/{filed}")).await.json()["sessionFile"],
        "work"
    );
    let closed = kit.delete(&format!("/sessions/{filed}")).await;
    assert_eq!(closed.json(), json!({"sessionId": filed, "closed": true}));
    kit.delete(&format!("/sessions/{filed}"))
        .await
        .refused(404, "session.not_found");
    // Reopened by name: the same session continues.
    let again = kit.post("/sessions", json!({"sessionFile": "work"})).await;
    assert_eq!(again.json()["sessionId"], filed);

    // At most eight sessions are open.
    let mut open = 2;
    while open < 8 {
        kit.open_session(json!({})).await;
        open += 1;
    }
    let body = kit
        .post("/sessions", json!({}))
        .await
        .refused(409, "session.limit");
    assert_eq!(body["params"]["limit"], 8);
    kit.delete(&format!("/sessions/{id}")).await;
    kit.open_session(json!({})).await;
    kit.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sse_stream_shows_a_turn_the_starter_rewrote() {
    let kit = Kit::start().await;
    let source = starter(&kit);
    kit.plan_and_install(&source).await;
    let id = kit.open_session(json!({})).await;
    let mut events = kit.events(&id).await;
    let opened = events.until("opened", |_| true).await;
    assert_eq!(opened["type"], "opened");
    assert_eq!(opened["status"]["runtimes"], json!(["starter"]));

    let turn = input(&kit, &id, "hello from http").await;
    assert_eq!(turn.status, 200, "{}", turn.text());
    assert_eq!(turn.json()["status"]["status"], "completed");

    let user = events.until("user_message", |_| true).await;
    assert_eq!(user["text"], "[starter] hello from http");
    let reply = events.until("assistant_message", |_| true).await;
    assert_eq!(reply["text"], "echo: [starter] hello from http");
    let ended = events.until("turn_ended", |_| true).await;
    assert_eq!(ended["status"]["status"], "completed");
    assert!(
        ended["prefix_hash"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    events
        .until("status", |s| s["status"]["busy"] == false)
        .await;
    // Every SSE event is named by its type; the input point's chain names
    // the starter's rewrite.
    for (name, data) in &events.seen {
        assert_eq!(data["type"], json!(name), "{data}");
    }
    let names = events.names();
    let started = names.iter().position(|n| *n == "turn_started").unwrap();
    let user_at = names.iter().position(|n| *n == "user_message").unwrap();
    assert!(started < user_at, "{names:?}");
    let point = events
        .seen
        .iter()
        .find(|(n, d)| n == "point" && d["record"]["point"] == "input.receive")
        .expect("the input.receive point")
        .1
        .clone();
    assert_eq!(point["record"]["steps"][0]["plugin"], "starter", "{point}");

    // Closing ends the stream with `closed`.
    kit.delete(&format!("/sessions/{id}")).await;
    events.rest().await;
    assert_eq!(events.names().last(), Some(&"closed"));
    kit.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_go_to_the_client_and_wait_for_its_answer() {
    let kit = Kit::start().await;
    let asker = scripted(
        &kit,
        "asker",
        json!({"capabilities": ["interceptors", "ui"]}),
        json!({"subscriptions": ["input.receive"],
               "intercept": {"input.receive": {"decision": "continue",
                   "request": {"surfaceId": "asker.q", "kind": "input",
                               "payload": {"title": "Who?", "fields": [{"key": "value", "kind": "input", "label": "Name"}]}}}}}),
    );
    kit.plan_and_install(&asker).await;
    let id = kit
        .open_session(json!({"echoCalls": [
            {"name": "write_file", "arguments": {"path": "made.txt", "content": "made over http"}}
        ]}))
        .await;
    let mut events = kit.events(&id).await;
    let running = spawn_input(&kit, &id, "go");

    // The extension's form comes first (input.receive), then the permission.
    let asked = events.until("question", |_| true).await;
    assert_eq!(asked["question"]["kind"], "form");
    assert_eq!(asked["question"]["plugin"], "asker");
    assert_eq!(asked["question"]["form"]["fields"][0]["key"], "value");
    let form_id = asked["id"].as_str().unwrap().to_string();
    // The session is busy meanwhile.
    input(&kit, &id, "another")
        .await
        .refused(409, "session.busy");
    let answered = kit
        .post(
            &format!("/sessions/{id}/answer"),
            json!({"question": form_id, "values": {"value": "Ada"}}),
        )
        .await;
    assert_eq!(
        answered.json(),
        json!({"question": form_id, "answered": true})
    );
    events
        .until("question_closed", |q| q["id"] == json!(form_id))
        .await;
    // An answered question is gone.
    kit.post(
        &format!("/sessions/{id}/answer"),
        json!({"question": form_id, "cancel": true}),
    )
    .await
    .refused(404, "question.unknown");

    let permission = events.until("question", |_| true).await;
    assert_eq!(permission["question"]["kind"], "permission");
    assert_eq!(permission["question"]["tool"], "write_file");
    let permission_id = permission["id"].as_str().unwrap().to_string();
    assert!(!kit.work.path().join("made.txt").exists());
    kit.post(
        &format!("/sessions/{id}/answer"),
        json!({"question": permission_id, "allow": true}),
    )
    .await;
    let result = events.until("tool_result", |_| true).await;
    assert_eq!(result["record"]["decision"], "allow", "{result}");
    let done = running.await.unwrap().json();
    assert_eq!(done["status"]["status"], "completed", "{done}");
    assert_eq!(
        std::fs::read_to_string(kit.work.path().join("made.txt")).unwrap(),
        "made over http"
    );
    let log = std::fs::read_to_string(kit.work.path().join("calls.log")).unwrap();
    assert!(log.contains("Ada"), "the extension got the answer: {log}");

    // Denied, the call never runs; a dismissed form is a cancel.
    std::fs::remove_file(kit.work.path().join("made.txt")).unwrap();
    let running = spawn_input(&kit, &id, "again");
    let asked = events
        .until("question", |q| q["question"]["kind"] == "form")
        .await;
    kit.post(
        &format!("/sessions/{id}/answer"),
        json!({"question": asked["id"], "cancel": true}),
    )
    .await;
    let permission = events
        .until("question", |q| q["question"]["kind"] == "permission")
        .await;
    kit.post(
        &format!("/sessions/{id}/answer"),
        json!({"question": permission["id"], "allow": false}),
    )
    .await;
    let result = events.until("tool_result", |_| true).await;
    assert_eq!(result["record"]["decision"], "deny", "{result}");
    running.await.unwrap();
    assert!(!kit.work.path().join("made.txt").exists());
    kit.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_ui_surfaces_its_action_and_its_form_over_http() {
    let kit = Kit::start().await;
    examples::built_copy(
        "status-ui",
        examples::Kind::Native,
        &kit.work.path().join("status-ui"),
    );
    kit.plan_and_install("./status-ui").await;
    let id = kit.open_session(json!({})).await;
    let mut events = kit.events(&id).await;
    input(&kit, &id, "count these three").await;
    let status = events
        .until("surface", |s| s["update"]["kind"] == "status")
        .await;
    assert_eq!(status["update"]["plugin"], "status-ui");
    assert!(
        status["update"]["payload"]["label"]
            .as_str()
            .unwrap()
            .contains("1 inputs"),
        "{status}"
    );
    let card = events
        .until("surface", |s| s["update"]["kind"] == "card")
        .await;
    let actions = card["update"]["payload"]["actions"].as_array().unwrap();
    assert!(actions.iter().any(|a| a["actionId"] == "reset"), "{card}");
    // What a client finds when it arrives later.
    let detail = kit.get(&format!("/sessions/{id}")).await.json();
    let kinds: Vec<&str> = detail["surfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"status") && kinds.contains(&"card"),
        "{kinds:?}"
    );

    // The card's button.
    let reset = kit
        .post(
            &format!("/sessions/{id}/actions"),
            json!({"plugin": "status-ui", "action": "reset"}),
        )
        .await;
    assert_eq!(reset.status, 200, "{}", reset.text());
    assert_eq!(reset.json()["action"], "reset");
    events
        .until("surface", |s| {
            s["update"]["kind"] == "status"
                && s["update"]["payload"]["label"]
                    .as_str()
                    .is_some_and(|l| l.contains("0 inputs"))
        })
        .await;

    // The rename action publishes a form; submitting it renames the status.
    kit.post(
        &format!("/sessions/{id}/actions"),
        json!({"plugin": "status-ui", "action": "rename"}),
    )
    .await;
    let form = events
        .until("surface", |s| s["update"]["kind"] == "form")
        .await;
    let surface = form["update"]["surfaceId"].as_str().unwrap().to_string();
    let bad = kit
        .post(
            &format!("/sessions/{id}/forms"),
            json!({"plugin": "status-ui", "surfaceId": surface, "values": {"nome": "x"}}),
        )
        .await;
    bad.refused(422, "form.failed");
    let submitted = kit
        .post(
            &format!("/sessions/{id}/forms"),
            json!({"plugin": "status-ui", "surfaceId": surface, "values": {"name": "Docs"}}),
        )
        .await;
    assert_eq!(
        submitted.json(),
        json!({"plugin": "status-ui", "surfaceId": surface, "submitted": true})
    );
    events
        .until("surface", |s| {
            s["update"]["payload"]["label"]
                .as_str()
                .is_some_and(|l| l.starts_with("Docs:"))
        })
        .await;
    kit.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_while_a_session_turn_runs_is_refused_and_writes_say_so() {
    let kit = Kit::start().await;
    let starter = starter(&kit);
    kit.plan_and_install(&starter).await;
    let holder = holder(&kit);
    kit.plan_and_install(&holder).await;
    let id = kit
        .open_session(json!({"model": "plugin/holder/p/m"}))
        .await;
    let mut events = kit.events(&id).await;
    let running = spawn_input(&kit, &id, "go");
    let delta = events.until("assistant_delta", |_| true).await;
    assert_eq!(delta["text"], "first words");

    // A turn runs: the reload is refused, the caller retries once idle.
    let busy = kit
        .req(Method::POST, "/extensions/reload")
        .send()
        .await
        .unwrap();
    let body = Answer::of(busy).await.refused(409, "reload.busy");
    assert!(
        body["params"]["detail"].as_str().unwrap().contains("retry"),
        "{body}"
    );
    let status = kit.get("/extensions").await.json();
    assert_eq!(status["busy"], true, "{status}");
    assert_eq!(status["sessions"][0]["busy"], true, "{status}");
    // The session itself refuses more input, a slash command too.
    for line in ["more", "/reload", "/help"] {
        let body = input(&kit, &id, line).await.refused(409, "session.busy");
        assert!(
            body["params"]["next"].as_str().unwrap().contains("cancel"),
            "{body}"
        );
    }

    // A write lands on disk and says the reload was refused.
    let disabled = kit
        .post(
            "/plugins/enabled",
            json!({"name": "starter", "enabled": false}),
        )
        .await
        .json();
    assert_eq!(disabled["enabled"], false);
    let why = disabled["reloadError"].as_str().unwrap();
    assert!(why.contains("turn is running"), "{why}");
    assert_eq!(kit.row("starter").await.unwrap()["state"], "disabled");
    let status = kit.get("/extensions").await.json();
    assert_eq!(
        status["sessions"][0]["runtimes"],
        json!(["holder", "starter"])
    );

    // Cancel: the turn ends cancelled, its input request answers.
    let cancelled = kit
        .post(&format!("/sessions/{id}/cancel"), json!({}))
        .await
        .json();
    assert_eq!(cancelled, json!({"cancelled": true}));
    let turn = running.await.unwrap();
    assert_eq!(turn.status, 200, "{}", turn.text());
    assert_eq!(turn.json()["status"]["status"], "cancelled");
    let ended = events.until("turn_ended", |_| true).await;
    assert_eq!(ended["status"]["status"], "cancelled");

    // Idle now: the retried reload goes through, the session's too.
    let swapped = Answer::of(
        kit.req(Method::POST, "/extensions/reload")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(swapped.status, 200, "{}", swapped.text());
    let swapped = swapped.json();
    assert_eq!(swapped["status"], "swapped");
    assert_eq!(swapped["removed"], json!(["starter"]));
    assert_eq!(swapped["sessions"][0]["sessionId"], id);
    assert_eq!(swapped["sessions"][0]["status"], "swapped", "{swapped}");
    assert_eq!(swapped["sessions"][0]["removed"], json!(["starter"]));
    let reload = events.until("reload", |_| true).await;
    assert_eq!(reload["outcome"]["status"], "swapped");
    let status = kit.get("/extensions").await.json();
    assert_eq!(status["sessions"][0]["runtimes"], json!(["holder"]));
    assert_eq!(status["busy"], false);

    // Every successful write reloads the open sessions the same way.
    let enabled = kit
        .post(
            "/plugins/enabled",
            json!({"name": "starter", "enabled": true}),
        )
        .await
        .json();
    assert!(enabled.get("reloadError").is_none(), "{enabled}");
    let status = kit.get("/extensions").await.json();
    assert_eq!(
        status["sessions"][0]["runtimes"],
        json!(["holder", "starter"])
    );
    kit.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_reload_fails_keeps_its_generation_and_writes_say_so() {
    let kit = Kit::start().await;
    let source = starter(&kit);
    kit.plan_and_install(&source).await;
    let id = kit.open_session(json!({})).await;
    // Break the installed manifest. The server's runtime is built as a new
    // session would be (the package left out); the open session refuses to
    // rebuild without a package it runs, and keeps its generation.
    write(
        &kit.home.path().join("plugins/starter/reasonix-plugin.json"),
        "{ not json",
    );
    let reload = Answer::of(
        kit.req(Method::POST, "/extensions/reload")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(reload.status, 200, "{}", reload.text());
    let reload = reload.json();
    assert_eq!(reload["removed"], json!(["starter"]), "{reload}");
    let session = &reload["sessions"][0];
    assert_eq!(session["sessionId"], id);
    assert_eq!(session["status"], "failed", "{reload}");
    assert_eq!(session["kept"], 1);
    assert!(
        session["why"].as_str().unwrap().contains("no longer reads"),
        "{session}"
    );
    // A write says which session kept its generation.
    support::package(&kit.work.path().join("plain"), "plain", "");
    let installed = kit.plan_and_install("./plain").await;
    let why = installed["reloadError"].as_str().unwrap();
    assert!(
        why.starts_with(&format!("session {id}: generation 1 keeps running")),
        "{why}"
    );
    // The session keeps serving its generation, the starter still rewriting.
    let mut events = kit.events(&id).await;
    input(&kit, &id, "still here").await;
    let user = events.until("user_message", |_| true).await;
    assert_eq!(user["text"], "[starter] still here");
    kit.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_switch_reaches_the_open_sessions() {
    let kit = Kit::start().await;
    let source = starter(&kit);
    kit.plan_and_install(&source).await;
    let id = kit.open_session(json!({})).await;
    let offered = |detail: &Value| {
        detail["commands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["command"] == "/starter:hello")
    };
    assert!(offered(&kit.get(&format!("/sessions/{id}")).await.json()));
    let off = kit
        .post(
            "/skills/enabled",
            json!({"name": "starter:hello", "enabled": false}),
        )
        .await
        .json();
    assert!(off.get("reloadError").is_none(), "{off}");
    assert_eq!(off["active"], false);
    // GET /skills and the session agree.
    assert_eq!(
        kit.get("/skills").await.json()["skills"][0]["active"],
        false
    );
    assert!(!offered(&kit.get(&format!("/sessions/{id}")).await.json()));
    let refused = input(&kit, &id, "/starter:hello").await;
    let body = refused.refused(422, "command.usage");
    assert!(
        body["params"]["detail"]
            .as_str()
            .unwrap()
            .contains("switched off"),
        "{body}"
    );
    let listed = input(&kit, &id, "/skills").await.json();
    assert!(
        listed["text"]
            .as_str()
            .unwrap()
            .contains("switched off: starter:hello"),
        "{listed}"
    );
    kit.post(
        "/skills/enabled",
        json!({"name": "starter:hello", "enabled": true}),
    )
    .await;
    assert!(offered(&kit.get(&format!("/sessions/{id}")).await.json()));
    let used = input(&kit, &id, "/starter:hello").await.json();
    assert_eq!(used["kind"], "turn", "{used}");
    kit.stop().await;
}
