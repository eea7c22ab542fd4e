//! End-to-end: real sidecars installed through `reasonix plugin install`,
//! driven by `reasonix dev turn`.

mod dispatch_common;

use dispatch_common::Env;
use serde_json::json;

#[test]
fn nil_path_turn_runs_every_point_without_extensions() {
    let env = Env::new();
    let run = env.turn(&[
        "--input",
        "hello",
        "--call",
        "echo={\"text\":\"x\"}",
        "--compact",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let points: Vec<&str> = run.report["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["point"].as_str().unwrap())
        .collect();
    assert_eq!(
        points,
        vec![
            "session.start",
            "input.receive",
            "agent.before_start",
            "system_prompt.build",
            "context.prepare",
            "provider.request",
            "provider.response",
            "tool.before",
            "permission.decision",
            "tool.after",
            "provider.request",
            "provider.response",
            "compaction.prepare",
            "compaction.complete",
            "session.save",
            "session.end",
        ]
    );
    assert!(
        run.report["points"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["steps"] == json!([]))
    );
    assert_eq!(run.report["runtimes"], json!([]));
    assert_eq!(run.status(), "completed");
}

#[test]
fn chain_order_is_priority_then_plugin_id_and_each_sees_earlier_replacements() {
    let env = Env::new();
    let rule = |suffix: &str| {
        json!({"subscriptions": ["input.receive"],
               "intercept": {"input.receive": {"decision": "replace", "appendText": suffix}}})
    };
    // Installed out of order on purpose.
    env.add("zeta", json!({"priority": -10}), rule("-zeta"));
    env.add("beta", json!({}), rule("-beta"));
    env.add("alpha", json!({}), rule("-alpha"));
    env.add("first", json!({"priority": 100}), rule("-first"));
    let run = env.turn(&["--input", "hi"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let order: Vec<String> = run
        .chain("input.receive")
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert_eq!(order, vec!["zeta", "alpha", "beta", "first"]);
    assert_eq!(run.transcript_text()[0], "hi-zeta-alpha-beta-first");
    // Every sidecar saw the payload as replaced by the ones before it.
    let seen: Vec<String> = env
        .log()
        .into_iter()
        .filter(|l| l.contains("intercept input.receive"))
        .collect();
    assert_eq!(seen.len(), 4);
    assert!(
        seen[0].starts_with("zeta ") && seen[0].contains(r#"{"text":"hi"}"#),
        "{seen:?}"
    );
    assert!(
        seen[3].starts_with("first ") && seen[3].contains("hi-zeta-alpha-beta"),
        "{seen:?}"
    );
}

#[test]
fn block_stops_the_turn_with_a_redacted_reason() {
    let env = Env::new();
    env.add(
        "guard",
        json!({}),
        json!({"subscriptions": ["input.receive"],
               "intercept": {"input.receive": {"decision": "block",
                   "reason": "contains api_key=sk-live-abcdefghijklmnopqrstuvwx0123"}}}),
    );
    let run = env.turn(&["--input", "my secret"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.status(), "blocked");
    let reason = run.report["status"]["reason"].as_str().unwrap();
    assert!(
        !reason.contains("sk-live-abcdefghijklmnopqrstuvwx0123"),
        "{reason}"
    );
    assert!(!run.stdout.contains("sk-live-abcdefghijklmnopqrstuvwx0123"));
    // No later point of the turn ran; the session closed.
    let points: Vec<&str> = run.report["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["point"].as_str().unwrap())
        .collect();
    assert_eq!(points, ["session.start", "input.receive", "session.end"]);
}

#[test]
fn slot_collision_fails_the_build_naming_both_plugins_and_the_slot() {
    let env = Env::new();
    let owner = json!({"subscriptions": [], "replaces": ["system_prompt"]});
    env.add(
        "one",
        json!({"replaces": ["system_prompt"], "capabilities": ["strategies"]}),
        owner.clone(),
    );
    env.add(
        "two",
        json!({"replaces": ["system_prompt"], "capabilities": ["strategies"]}),
        owner,
    );
    let run = env.turn(&["--input", "hi"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("system_prompt"), "{}", run.stderr);
    assert!(
        run.stderr.contains("`one`") && run.stderr.contains("`two`"),
        "{}",
        run.stderr
    );
}

/// The collision is between manifests: neither sidecar announcing the slot
/// at initialize does not make two declarations of it acceptable, and
/// nothing is started.
#[test]
fn slot_collision_between_declarations_fails_before_any_start() {
    let env = Env::new();
    let silent = json!({"subscriptions": [], "replaces": []});
    for name in ["one", "two"] {
        env.add(
            name,
            json!({"replaces": ["system_prompt"], "capabilities": ["strategies"]}),
            silent.clone(),
        );
    }
    let run = env.turn(&["--input", "hi"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("system_prompt"), "{}", run.stderr);
    assert!(
        run.stderr.contains("`one`") && run.stderr.contains("`two`"),
        "{}",
        run.stderr
    );
    assert_eq!(run.report["ok"], false, "{}", run.stdout);
    assert_eq!(
        run.report["errorCode"], "runtime.start_failed",
        "{}",
        run.stdout
    );
    // Neither runtime was started.
    assert!(env.log().is_empty(), "{:?}", env.log());
}

#[test]
fn slot_owner_has_the_final_say_after_the_chain() {
    let env = Env::new();
    env.add(
        "chain",
        json!({}),
        json!({"subscriptions": ["system_prompt.build"],
               "intercept": {"system_prompt.build": {"decision": "replace", "appendText": " +chain"}}}),
    );
    env.add(
        "owner",
        json!({"replaces": ["system_prompt"], "capabilities": ["strategies"], "priority": -500}),
        json!({"replaces": ["system_prompt"],
               "intercept": {"system_prompt.build": {"decision": "replace", "appendText": " +owner"}}}),
    );
    let run = env.turn(&["--input", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let chain = run.chain("system_prompt.build");
    assert_eq!(
        chain,
        vec![
            ("chain".into(), "replaced".into()),
            ("owner".into(), "replaced".into())
        ]
    );
    let step = &run.report["points"][3]["steps"][1];
    assert_eq!(step["role"], "strategy");
    // The owner is required-class.
    let owner = run.report["runtimes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["plugin"] == "owner")
        .unwrap();
    assert_eq!(owner["required"], true);
    // The provider saw the owner's prompt, which includes the chain's.
    let seen = env
        .log()
        .into_iter()
        .find(|l| l.starts_with("owner intercept"))
        .unwrap();
    assert!(seen.contains("+chain"), "{seen}");

    // A strategy block is fatal.
    let env = Env::new();
    env.add(
        "owner",
        json!({"replaces": ["system_prompt"], "capabilities": ["strategies"]}),
        json!({"replaces": ["system_prompt"],
               "intercept": {"system_prompt.build": {"decision": "block", "reason": "no"}}}),
    );
    let run = env.turn(&["--input", "hi"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(run.status(), "failed");
    assert!(
        run.report["status"]["error"]
            .as_str()
            .unwrap()
            .contains("owns slot `system_prompt`")
    );
}

#[test]
fn timeouts_skip_optional_members_and_fail_required_ones() {
    let env = Env::new();
    let slow = json!({"subscriptions": ["input.receive"],
                      "intercept": {"input.receive": {"decision": "continue", "sleepMs": 3000}}});
    env.add("slow", json!({"timeoutMillis": 200}), slow.clone());
    let run = env.turn(&["--input", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.status(), "completed");
    assert_eq!(run.chain("input.receive")[0].1, "skipped");
    let warnings = run.report["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let message = warnings[0]["message"].as_str().unwrap();
    assert!(
        message.contains("timed out") || message.contains("no answer"),
        "{message}"
    );
    assert!(message.contains("200"), "{message}");

    let env = Env::new();
    env.add(
        "slow",
        json!({"timeoutMillis": 200, "required": true}),
        slow,
    );
    let run = env.turn(&["--input", "hi"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.report["status"]["point"], "input.receive");
    assert!(
        run.report["status"]["error"]
            .as_str()
            .unwrap()
            .contains("(required)")
    );
}

#[test]
fn crash_mid_turn_fails_a_required_plugin_and_skips_an_optional_one() {
    let script = json!({"subscriptions": ["input.receive", "provider.request", "session.end"],
                        "intercept": {"provider.request": {"crash": true}}});
    let env = Env::new();
    env.add("crashy", json!({"required": true}), script.clone());
    let run = env.turn(&["--input", "hi"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.report["status"]["point"], "provider.request");
    assert!(
        env.log()
            .iter()
            .any(|l| l == "crashy crash provider.request")
    );

    let env = Env::new();
    env.add("crashy", json!({}), script);
    let run = env.turn(&["--input", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.chain("provider.request")[0].1, "skipped");
    // Later calls fail fast and are skipped too; one warning only.
    assert_eq!(run.chain("session.end")[0].1, "skipped");
    assert_eq!(run.report["warnings"].as_array().unwrap().len(), 1);
}

#[test]
fn extension_tool_runs_after_the_permission_check_and_a_deny_stops_it() {
    let env = Env::new();
    let tools = json!([{"name": "lookup", "description": "Look a word up",
                        "inputSchema": {"type": "object"}, "readOnly": true},
                       {"name": "fail", "description": "Always fails",
                        "inputSchema": {"type": "object"}}]);
    env.add(
        "gloss",
        json!({"capabilities": ["tools"], "tools": tools}),
        json!({"tools": ["lookup", "fail"],
               "toolResults": {"lookup": {"echoArguments": true},
                               "fail": {"content": "no such word", "isError": true}}}),
    );
    let run = env.turn(&[
        "--input",
        "define",
        "--call",
        "ext__gloss__lookup={\"word\":\"x\"}",
        "--call",
        "ext__gloss__fail={}",
        "--call",
        "ext__gloss__missing={}",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let calls = run.report["toolCalls"].as_array().unwrap();
    assert_eq!(calls[0]["result"], r#"lookup({"word":"x"})"#);
    assert_eq!(calls[0]["isError"], false);
    assert_eq!(calls[1]["result"], "no such word");
    assert_eq!(calls[1]["isError"], true);
    assert!(
        calls[2]["result"]
            .as_str()
            .unwrap()
            .contains("unknown capability")
    );
    // The provider-visible tool list never names extension tools.
    let names: Vec<String> = env
        .log()
        .into_iter()
        .filter(|l| l.starts_with("gloss tool"))
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");

    let run = env.turn(&[
        "--input",
        "define",
        "--call",
        "ext__gloss__lookup={}",
        "--deny",
        "ext__gloss__lookup",
    ]);
    assert_eq!(run.code, 0);
    let call = &run.report["toolCalls"][0];
    assert_eq!(call["decision"], "deny");
    assert_eq!(call["isError"], true);
    assert!(
        call["result"]
            .as_str()
            .unwrap()
            .contains("permission denied")
    );
    let tool_lines = env
        .log()
        .into_iter()
        .filter(|l| l.starts_with("gloss tool"))
        .count();
    assert_eq!(tool_lines, 2, "a denied call must not reach the sidecar");
}

#[test]
fn a_block_at_tool_after_withholds_the_result_and_marks_it_an_error() {
    let env = Env::new();
    let tools = json!([{"name": "lookup", "description": "Look a word up",
                        "inputSchema": {"type": "object"}, "readOnly": true}]);
    env.add(
        "gloss",
        json!({"capabilities": ["tools"], "tools": tools, "intercepts": ["tool.after"]}),
        json!({"tools": ["lookup"],
               "toolResults": {"lookup": {"echoArguments": true}},
               "subscriptions": ["tool.after"],
               "intercept": {"tool.after": {"decision": "block", "reason": "not for you"}}}),
    );
    let run = env.turn(&["--input", "define", "--call", "ext__gloss__lookup={}"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let call = &run.report["toolCalls"][0];
    assert_eq!(
        call["result"], "result withheld by gloss: not for you",
        "{call}"
    );
    assert_eq!(call["isError"], true);
}

#[test]
fn full_trust_allow_over_a_host_deny_is_applied_and_audited() {
    let env = Env::new();
    env.add(
        "override",
        json!({}),
        json!({"subscriptions": ["permission.decision"],
               "intercept": {"permission.decision": {"decision": "allow"}}}),
    );
    let run = env.turn(&[
        "--input",
        "x",
        "--call",
        "echo={\"text\":\"ran\"}",
        "--deny",
        "echo",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let call = &run.report["toolCalls"][0];
    assert_eq!(call["hostDecision"], "deny");
    assert_eq!(call["decision"], "allow");
    assert_eq!(call["result"], "ran");
    let audit = run.report["audit"].as_array().unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0]["applied"], true);
    assert_eq!(audit[0]["tool"], "echo");
}

#[test]
fn stale_ui_update_is_dropped_and_the_current_one_tagged() {
    let env = Env::new();
    env.add(
        "status-ui",
        json!({"capabilities": ["interceptors", "ui"]}),
        json!({"subscriptions": ["input.receive"],
               "uiActions": [{"actionId": "refresh", "label": "Refresh"}],
               "intercept": {"input.receive": {"decision": "continue", "publish": [
                   {"surfaceId": "old", "kind": "status", "payload": {"label": "stale"}, "generationDelta": -1},
                   {"surfaceId": "bad", "kind": "status", "payload": {"title": "wrong shape"}},
                   {"surfaceId": "main", "kind": "card",
                    "payload": {"title": "token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "text": "<b>hi</b>"}}
               ]}}}),
    );
    let run = env.turn(&["--input", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ui = run.report["ui"].as_array().unwrap();
    assert_eq!(ui.len(), 1, "{ui:?}");
    assert_eq!(ui[0]["plugin"], "status-ui");
    assert_eq!(ui[0]["surfaceId"], "main");
    assert_eq!(ui[0]["generation"], run.report["generation"]);
    assert_eq!(ui[0]["sessionId"], run.report["sessionId"]);
    let title = ui[0]["payload"]["title"].as_str().unwrap();
    assert!(
        !title.contains("ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        "{title}"
    );
    assert_eq!(
        ui[0]["payload"]["text"], "<b>hi</b>",
        "markup passes only as inert text"
    );
    assert_eq!(run.report["uiActions"][0]["command"], "/status-ui:refresh");
    let responses: Vec<String> = env
        .log()
        .into_iter()
        .filter(|l| l.contains(" response "))
        .collect();
    // The host serves the three requests concurrently: answers may arrive in any order.
    assert_eq!(responses.len(), 3, "{responses:?}");
    let count = |needle: &str| responses.iter().filter(|r| r.contains(needle)).count();
    assert_eq!(count(r#"{"accepted":false}"#), 1, "{responses:?}");
    assert_eq!(count(r#"{"accepted":true}"#), 1, "{responses:?}");
    assert_eq!(count("unknown field `title`"), 1, "{responses:?}");
}

#[test]
fn extension_provider_streams_and_a_gap_fails_the_turn_without_fallback() {
    let env = Env::new();
    let block = json!({"capabilities": ["providers"]});
    let descriptor = json!([{"ref": "plugin/echoer/local/small", "displayName": "Echo small"}]);
    let root = env.plugin(
        "echoer",
        block.clone(),
        json!({"providers": descriptor,
               "streams": {"*": {"chunks": [
                    [2, {"type": "text", "text": " world"}],
                    [1, {"type": "text", "text": "hello"}],
                    [1, {"type": "text", "text": "hello"}],
                    [3, {"type": "usage", "usage": {"promptTokens": 1, "completionTokens": 2, "totalTokens": 3,
                          "cacheHitTokens": 0, "cacheMissTokens": 1, "reasoningTokens": 0}}]],
                    "end": {"lastSeq": 3}}}}),
    );
    env.install(&root, true);
    let run = env.turn(&["--input", "hi", "--model", "plugin/echoer/local/small"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.transcript_text()[1], "hello world");
    assert_eq!(run.report["model"], "plugin/echoer/local/small");

    // A gap: chunk 2 never arrives.
    env.rewrite_script(
        &root,
        "echoer",
        json!({"providers": descriptor,
               "streams": {"*": {"chunks": [[1, {"type": "text", "text": "a"}], [3, {"type": "text", "text": "c"}]],
                                 "end": {"lastSeq": 3}}}}),
    );
    let run = env.turn(&["--input", "hi", "--model", "plugin/echoer/local/small"]);
    assert_eq!(run.code, 1);
    let error = run.report["status"]["error"].as_str().unwrap();
    assert!(error.contains("missing chunk 2 of 3"), "{error}");
    assert!(error.contains("no fallback"), "{error}");

    // An error end is redacted.
    env.rewrite_script(
        &root,
        "echoer",
        json!({"providers": descriptor,
               "streams": {"*": {"chunks": [], "end": {"lastSeq": 0,
                   "error": "upstream rejected key sk-proj-abcdefghijklmnopqrstuvwxyz012345"}}}}),
    );
    let run = env.turn(&["--input", "hi", "--model", "plugin/echoer/local/small"]);
    assert_eq!(run.code, 1);
    let error = run.report["status"]["error"].as_str().unwrap();
    assert!(error.contains("upstream rejected key"), "{error}");
    assert!(
        !error.contains("sk-proj-abcdefghijklmnopqrstuvwxyz012345"),
        "{error}"
    );

    // Unknown model: fails, names what exists.
    let run = env.turn(&["--input", "hi", "--model", "plugin/echoer/local/huge"]);
    assert_eq!(run.code, 1);
    let error = run.report["status"]["error"].as_str().unwrap();
    assert!(error.contains("plugin/echoer/local/small"), "{error}");

    // A crashed provider fails the turn; the echo provider is not used instead.
    env.rewrite_script(
        &root,
        "echoer",
        json!({"providers": descriptor,
               "streams": {"*": {"chunks": [[1, {"type": "text", "text": "par"}]], "crash": true}}}),
    );
    let run = env.turn(&["--input", "hi", "--model", "plugin/echoer/local/small"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.report["status"]["point"], "provider.stream");
    assert!(!run.stdout.contains("echo: hi"));
}

#[test]
fn text_output_is_aligned_and_says_what_happened() {
    let env = Env::new();
    env.add(
        "alpha",
        json!({}),
        json!({"subscriptions": ["input.receive"],
               "intercept": {"input.receive": {"decision": "replace", "appendText": "!"}}}),
    );
    let out = env.reasonix(&["dev", "turn", "--input", "hi"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("runtimes: alpha (full trust)"), "{text}");
    assert!(
        text.contains("  input.receive        alpha replace  (input → \"hi!\")"),
        "{text}"
    );
    assert!(
        text.contains("  session.start        · (no extension)"),
        "{text}"
    );
    assert!(text.contains("result: completed"), "{text}");

    let out = env.reasonix(&["dev", "turn", "--input", "x", "--call", "echo=[1]"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("must be a JSON object") && err.contains("for example"),
        "{err}"
    );
}

#[test]
fn session_file_is_saved_and_loaded_with_extension_state_beside_it() {
    let env = Env::new();
    env.add(
        "alpha",
        json!({}),
        json!({"subscriptions": ["session.start", "session.load"]}),
    );
    let session = env.workspace.join("s1.json");
    let path = session.to_str().unwrap();
    let run = env.turn(&[
        "--input",
        "first",
        "--session",
        path,
        "--call",
        "write_file={\"path\":\"out.txt\",\"content\":\"t\"}",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.report["points"][0]["point"], "session.start");
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&session).unwrap()).unwrap();
    assert_eq!(saved["sessionId"], run.report["sessionId"]);
    let state_path = env.workspace.join("s1.json.extensions.json");
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    assert_eq!(state["plugins"]["alpha"]["version"], "1.0.0");
    // A scripted approval of a tool that asks is a grant for the session.
    assert_eq!(state["approvalGrants"], json!(["write_file"]));

    let again = env.turn(&["--input", "second", "--session", path]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.report["points"][0]["point"], "session.load");
    assert_eq!(again.report["sessionId"], run.report["sessionId"]);
    let texts = again.transcript_text();
    assert_eq!(texts[0], "first");
    assert!(texts.contains(&"second".to_string()));

    std::fs::write(&session, "{not json").unwrap();
    let broken = env.turn(&["--input", "x", "--session", path]);
    assert_eq!(broken.code, 1);
    assert!(
        broken.stderr.contains("s1.json") && broken.stderr.contains("not a Reasonix session file"),
        "{}",
        broken.stderr
    );
}

#[test]
fn dev_reload_reports_changes_and_keeps_the_old_record_on_failure() {
    let env = Env::new();
    let root = env.plugin(
        "alpha",
        json!({"required": true}),
        json!({"subscriptions": ["input.receive"]}),
    );
    env.install(&root, true);
    let out = env.reasonix(&["dev", "reload", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(first["status"], "swapped");
    assert_eq!(first["added"], json!(["alpha"]));
    assert_eq!(first["toGeneration"], 2);

    let out = env.reasonix(&["dev", "reload"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        text.contains("generation 2 → 3") && text.contains("nothing changed"),
        "{text}"
    );

    // The turn uses the recorded generation number.
    let run = env.turn(&["--input", "hi"]);
    assert_eq!(run.report["generation"], 3);

    // A broken required runtime: the reload fails and generation 3 stays.
    env.rewrite_script(
        &root,
        "alpha",
        json!({"subscriptions": ["input.receive"], "startup": {"exit": 4}}),
    );
    let out = env.reasonix(&["dev", "reload"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("generation 3 keeps running") && err.contains("alpha"),
        "{err}"
    );
    let out = env.reasonix(&["dev", "reload", "--json"]);
    let failed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(failed["keptGeneration"], 3);
}

#[test]
fn tools_come_and_go_without_changing_the_provider_visible_prefix() {
    let env = Env::new();
    let nil = env.turn(&["--input", "hi"]);
    assert_eq!(nil.code, 0);
    env.add(
        "gloss",
        json!({"capabilities": ["tools"],
               "tools": [{"name": "lookup", "description": "Look a word up",
                          "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}}},
                          "readOnly": true}]}),
        json!({"tools": ["lookup"], "toolResults": {"lookup": {"echoArguments": true}}}),
    );
    env.add(
        "watcher",
        json!({}),
        json!({"subscriptions": ["provider.request", "tool.after"]}),
    );
    let run = env.turn(&[
        "--input",
        "hi",
        "--call",
        "use_capability={\"list\":true}",
        "--call",
        "use_capability={\"name\":\"ext__gloss__lookup\",\"arguments\":{\"word\":\"w\"}}",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.report["prefixHash"], nil.report["prefixHash"],
        "installing plugins changed the prefix"
    );
    let calls = run.report["toolCalls"].as_array().unwrap();
    let listing: serde_json::Value =
        serde_json::from_str(calls[0]["result"].as_str().unwrap()).unwrap();
    assert_eq!(listing[0]["name"], "ext__gloss__lookup");
    assert_eq!(listing[0]["readOnly"], true);
    assert_eq!(calls[0]["kind"], "proxy");
    // A call through the proxy is recorded as the capability it reaches.
    assert_eq!(calls[1]["kind"], "extension");
    assert_eq!(calls[1]["name"], "ext__gloss__lookup");
    assert_eq!(calls[1]["result"], r#"lookup({"word":"w"})"#);
}
