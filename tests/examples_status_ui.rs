//! examples/status-ui end to end: each input publishes a status and a card
//! with an action button, and the action is offered as `/status-ui:reset`.

#[path = "examples_support.rs"]
mod support;

use serde_json::json;
use support::{Kind, install, steps};

#[test]
fn a_turn_publishes_status_and_card_and_offers_the_action() {
    let ui = install("status-ui", Kind::Native);
    let report = ui.turn_json(&["--input", "count these four words"]);
    assert_eq!(steps(&report, "input.receive")[0]["result"], "continued");
    let published = report["ui"].as_array().expect("ui list");
    assert_eq!(published.len(), 2, "{published:?}");
    let status = &published[0];
    assert_eq!(status["plugin"], "status-ui");
    assert_eq!(status["kind"], "status");
    assert_eq!(status["surfaceId"], "status-ui.status");
    assert_eq!(status["sessionId"], report["sessionId"]);
    assert_eq!(status["generation"], report["generation"]);
    assert_eq!(status["payload"]["label"], "1 inputs, 4 words");
    let card = &published[1];
    assert_eq!(card["kind"], "card");
    assert_eq!(
        card["payload"]["fields"][1],
        json!({"key": "words", "value": "4"})
    );
    assert_eq!(
        card["payload"]["actions"],
        json!([{"actionId": "reset", "label": "Reset counters"}])
    );
    assert_eq!(
        report["uiActions"],
        json!([
            {"command": "/status-ui:rename", "plugin": "status-ui", "actionId": "rename", "label": "Name the counter (asks with a form)"},
            {"command": "/status-ui:reset", "plugin": "status-ui", "actionId": "reset", "label": "Reset the input counters"}
        ])
    );
}
