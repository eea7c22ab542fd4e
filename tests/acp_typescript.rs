//! The done-when of `reasonix acp`, checked by code we did not write: the
//! TypeScript ACP reference SDK (`@agentclientprotocol/sdk` from npm, run
//! under node; `tests/acp_ts/`) starts `reasonix acp` over real pipes,
//! prompts it with the starter and status-ui examples installed, receives
//! the starter's rewrite, finds `/status-ui:reset` among the available
//! commands, and gets `queued` then `applied` from
//! `_reasonix.io/session/reloadExtensions` sent mid-turn.

#[path = "examples_support.rs"]
mod support;

use std::process::Command;

use serde_json::Value;
use support::{Kind, workspace_root};

const REASONIX: &str = env!("CARGO_BIN_EXE_reasonix");

#[test]
fn the_typescript_reference_client_drives_reasonix_acp() {
    // The SDK is installed into target/acp-ts (a no-op when it is there).
    let install = Command::new("bash")
        .arg(workspace_root().join("tests/acp_ts/install"))
        .output()
        .expect("run tests/acp_ts/install (needs bash, node and npm)");
    assert!(
        install.status.success(),
        "installing @agentclientprotocol/sdk failed:\n{}{}",
        String::from_utf8_lossy(&install.stdout),
        String::from_utf8_lossy(&install.stderr)
    );
    let installed = support::install("starter", Kind::Native);
    support::add_to(
        &installed.home,
        &installed.workspace,
        "status-ui",
        Kind::Native,
    );

    let client = workspace_root().join("target/acp-ts/client.mjs");
    let out = Command::new("node")
        .arg(&client)
        .env("REASONIX", REASONIX)
        .env("REASONIX_HOME", installed.home.path())
        .env("WORKSPACE", installed.workspace.path())
        .current_dir(installed.workspace.path())
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the node client failed:\n{stdout}\n{stderr}"
    );
    let report: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("the client's report is not JSON ({e}):\n{stdout}\n{stderr}"));
    let context = format!("{report:#}\nstderr:\n{stderr}");

    assert_eq!(report["protocolVersion"], 1, "{context}");
    assert_eq!(report["loadSession"], true, "{context}");
    assert_eq!(report["models"][0], "echo", "{context}");
    // The extension's action is among the available commands.
    let commands: Vec<&str> = report["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(commands.contains(&"status-ui:reset"), "{context}");
    assert!(commands.contains(&"starter:greet"), "{context}");
    // The starter's rewrite streamed back.
    assert_eq!(report["firstStop"], "end_turn", "{context}");
    assert!(
        report["firstText"]
            .as_str()
            .unwrap()
            .contains("echo: [starter] hello from node"),
        "{context}"
    );
    // Sent mid-turn (while the turn waited on a permission), the reload
    // was queued; when the turn ended it was applied, once.
    assert_eq!(report["reloadAnswer"]["outcome"], "queued", "{context}");
    assert_eq!(report["reloadAnswer"]["generation"], 1, "{context}");
    assert_eq!(report["secondStop"], "end_turn", "{context}");
    let applied = report["reloadsApplied"].as_array().unwrap();
    assert_eq!(applied.len(), 1, "{context}");
    assert_eq!(applied[0]["outcome"], "applied", "{context}");
    assert_eq!(applied[0]["generation"], 2, "{context}");
    assert_eq!(applied[0]["sessionId"], report["sessionId"], "{context}");
    // And the session runs on the new generation.
    assert!(
        report["statusText"]
            .as_str()
            .unwrap()
            .contains("generation 2"),
        "{context}"
    );
    assert_eq!(report["permissions"], 2, "{context}");
    // This client advertised reasonix.extensionSurface: status-ui's surfaces
    // came as vendor notifications, from both generations.
    let surfaces = report["surfaces"].as_array().unwrap();
    assert!(
        surfaces
            .iter()
            .any(|s| s["plugin"] == "status-ui" && s["kind"] == "status" && s["generation"] == 1),
        "{context}"
    );
    let kinds: Vec<&str> = report["updateKinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    for kind in [
        "available_commands_update",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
        "config_option_update",
    ] {
        assert!(kinds.contains(&kind), "{kind}: {context}");
    }
    assert_eq!(report["exitCode"], 0, "{context}");
}
