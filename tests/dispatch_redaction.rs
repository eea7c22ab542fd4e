//! Every path by which extension text reaches a log, a UI surface, an error
//! or a block reason goes through the one redaction function
//! (`reasonix_sidecar::redact::redact`, whose table test lives with it).
//! Each path below carries a different secret shape; none may survive into
//! the `dev turn` report, its text rendering or stderr.

mod dispatch_common;

use dispatch_common::Env;
use serde_json::json;

const BLOCK_SECRET: &str = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
const UI_SECRET: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB";
const WARNING_SECRET: &str = "xoxb-123456789012-abcdefghijklmnop";
const TOOL_SECRET: &str = "AKIAABCDEFGHIJKLMNOP";
const PROVIDER_SECRET: &str = "glpat-abcdefghijklmnopqrst";
const STARTUP_SECRET: &str = "sk-proj-startupabcdefghijklmnopqrstuvwxyz";

fn assert_clean(text: &str, secrets: &[&str]) {
    for secret in secrets {
        assert!(
            !text.contains(secret),
            "secret {secret} leaked into:\n{text}"
        );
    }
}

#[test]
fn block_reasons_ui_warnings_tool_and_provider_errors_are_redacted() {
    let env = Env::new();
    env.add(
        "blocker",
        json!({"priority": 10}),
        json!({"subscriptions": ["tool.before"],
               "intercept": {"tool.before": {"decision": "block",
                   "reason": format!("refusing: key {BLOCK_SECRET}")}}}),
    );
    env.add(
        "talker",
        json!({"capabilities": ["interceptors", "ui", "tools"],
               "tools": [{"name": "leak", "description": "fails loudly", "inputSchema": {"type": "object"}}]}),
        json!({"subscriptions": ["input.receive", "context.prepare"],
               "tools": ["leak"],
               "intercept": {
                   "input.receive": {"decision": "continue", "publish": [
                       {"surfaceId": "s", "kind": "notification",
                        "payload": {"title": "login", "body": format!("Authorization: Bearer {UI_SECRET}")}}]},
                   "context.prepare": {"error": "internal",
                                        "errorMessage": format!("token={WARNING_SECRET} rejected")}},
               "toolResults": {"leak": {"error": "internal", "errorMessage": format!("aws {TOOL_SECRET}")}}}),
    );
    let run = env.turn(&[
        "--input",
        "go",
        "--call",
        "ext__talker__leak={}",
        "--call",
        "echo={\"text\":\"x\"}",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // Each path produced output at all (so the check below means something).
    assert_eq!(run.report["ui"][0]["payload"]["title"], "login");
    assert!(
        run.report["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["plugin"] == "talker")
    );
    assert!(
        run.report["toolCalls"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["decision"] == "blocked")
    );
    let secrets = [BLOCK_SECRET, UI_SECRET, WARNING_SECRET, TOOL_SECRET];
    assert_clean(&run.stdout, &secrets);
    assert_clean(&run.stderr, &secrets);
    let text = env.reasonix(&[
        "dev",
        "turn",
        "--input",
        "go",
        "--call",
        "ext__talker__leak={}",
    ]);
    assert_clean(&String::from_utf8_lossy(&text.stdout), &secrets);

    // The tool error path without the blocker in front of it.
    let env = Env::new();
    env.add(
        "talker",
        json!({"capabilities": ["tools"],
               "tools": [{"name": "leak", "description": "fails loudly", "inputSchema": {"type": "object"}}]}),
        json!({"tools": ["leak"],
               "toolResults": {"leak": {"error": "internal", "errorMessage": format!("aws {TOOL_SECRET}")}}}),
    );
    let run = env.turn(&["--input", "go", "--call", "ext__talker__leak={}"]);
    let call = &run.report["toolCalls"][0];
    assert_eq!(call["isError"], true);
    assert!(call["result"].as_str().unwrap().contains("aws"), "{call}");
    assert_clean(&run.stdout, &[TOOL_SECRET]);
}

#[test]
fn provider_errors_and_startup_failures_are_redacted() {
    let env = Env::new();
    env.add(
        "prov",
        json!({"capabilities": ["providers"]}),
        json!({"providers": [{"ref": "plugin/prov/p/m"}],
               "streams": {"*": {"chunks": [[1, {"type": "error",
                   "error": {"code": "provider_failed", "message": format!("bad key {PROVIDER_SECRET}")}}]],
                   "end": {"lastSeq": 1}}}}),
    );
    let run = env.turn(&["--input", "go", "--model", "plugin/prov/p/m"]);
    assert_eq!(run.code, 1);
    assert!(
        run.report["status"]["error"]
            .as_str()
            .unwrap()
            .contains("bad key")
    );
    assert_clean(&run.stdout, &[PROVIDER_SECRET]);

    let env = Env::new();
    env.add(
        "noisy",
        json!({"required": true}),
        json!({"startup": {"stderr": format!("boot with OPENAI_API_KEY={STARTUP_SECRET}"), "exit": 2}}),
    );
    let run = env.turn(&["--input", "go"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("noisy"), "{}", run.stderr);
    assert_clean(&run.stderr, &[STARTUP_SECRET]);
}

#[test]
fn slack_webhooks_and_azure_account_keys_are_redacted_on_every_path() {
    const SLACK: &str = "T01ABCDEF/B02GHIJKL/aBcDeFgHiJkLmNoPqRsTuVwX";
    const AZURE: &str = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA+/xyz==";
    let env = Env::new();
    env.add(
        "blocker",
        json!({"priority": 10}),
        json!({"subscriptions": ["tool.before"],
               "intercept": {"tool.before": {"decision": "block",
                   "reason": format!("would post to https://hooks.slack.com/services/{SLACK}")}}}),
    );
    env.add(
        "talker",
        json!({"capabilities": ["interceptors", "ui"]}),
        json!({"subscriptions": ["input.receive"],
               "intercept": {"input.receive": {"decision": "continue", "publish": [
                   {"surfaceId": "s", "kind": "notification",
                    "payload": {"title": "storage",
                                "body": format!("AccountName=acct;AccountKey={AZURE};EndpointSuffix=core.windows.net")}}]}}}),
    );
    let args = ["--input", "go", "--call", "echo={\"text\":\"x\"}"];
    let run = env.turn(&args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.report["ui"][0]["payload"]["title"], "storage");
    assert!(
        run.stdout.contains("AccountKey=[REDACTED]"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("hooks.slack.com/services/[REDACTED]"),
        "{}",
        run.stdout
    );
    assert_clean(&run.stdout, &[SLACK, AZURE]);
    assert_clean(&run.stderr, &[SLACK, AZURE]);
    let mut text_args = vec!["dev", "turn"];
    text_args.extend_from_slice(&args);
    let text = env.reasonix(&text_args);
    assert_clean(&String::from_utf8_lossy(&text.stdout), &[SLACK, AZURE]);

    // The stderr tail of a failed start.
    let env = Env::new();
    env.add(
        "noisy",
        json!({"required": true}),
        json!({"startup": {"stderr": format!(
            "webhook https://hooks.slack.com/services/{SLACK} key AccountKey={AZURE}"), "exit": 2}}),
    );
    let run = env.turn(&["--input", "go"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("hooks.slack.com/services/[REDACTED]"),
        "{}",
        run.stderr
    );
    assert_clean(&run.stderr, &[SLACK, AZURE]);
    assert_clean(&run.stdout, &[SLACK, AZURE]);
}
