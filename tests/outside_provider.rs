//! Black-box conformance of provider streaming (EXTENSION_PROTOCOL_V2.md §9)
//! with the independent Python sidecar `tests/outside/sidecar.py`.

mod outside_common;

use outside_common::{Outside, Run};
use serde_json::json;

fn stream(mode: &str) -> (Outside, Run) {
    let o = Outside::new();
    let root = o.package(
        "pv",
        mode,
        json!({"capabilities": ["interceptors", "providers"]}),
        json!({}),
    );
    o.install(&root);
    let run = o.turn(&["--input", "hi", "--model", "plugin/pv/echo/m1", "--json"]);
    o.assert_no_leftovers();
    (o, run)
}

#[test]
fn out_of_order_and_duplicate_chunks_are_reassembled_in_seq_order() {
    let (o, run) = stream("provider");
    assert_eq!(run.code, 0, "{}", run.all());
    let report = run.json();
    assert_eq!(report["transcript"][1]["content"], "abc", "{}", run.all());
    let open = &o.received_method("extension/provider/stream/open")[0]["params"];
    let id = open["streamId"].as_str().unwrap();
    let hex = id.strip_prefix("es_").expect("es_ prefix");
    assert!(
        hex.len() == 24 && hex.chars().all(|c| c.is_ascii_hexdigit()),
        "{open}"
    );
    assert_eq!(open["seqBase"], 1);
    assert_eq!(open["providerRef"], "plugin/pv/echo");
    assert_eq!(open["model"], "m1");
    assert!(open["request"]["messages"].is_array());
    assert!(open["request"]["tools"].is_array());
    assert!(open["request"]["maxTokens"].as_u64().is_some());
}

#[test]
fn a_missing_chunk_interrupts_the_stream_without_fallback() {
    let (_o, run) = stream("provider_gap");
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(run.all().contains("missing chunk 2 of 3"), "{}", run.all());
    let report = run.json();
    assert_ne!(report["status"]["status"], "completed");
}
