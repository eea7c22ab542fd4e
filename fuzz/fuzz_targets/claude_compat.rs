//! Arbitrary bytes as the Claude-compatible files of a package: a
//! `hooks/hooks.json` document, an `.mcp.json` document (every shape the
//! importer knows), a markdown file's frontmatter and a command template
//! rendered with arguments. Nothing may panic; every skipped entry names
//! its file; a template without `$` renders as written.
#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use reasonix_package::compat::{hooks, mcp};
use reasonix_package::inventory::{frontmatter, render_template};

fuzz_target!(|data: &[u8]| {
    if let Ok(doc) = serde_json::from_slice::<serde_json::Value>(data) {
        let mut set = hooks::HookSet::default();
        let mut skipped = Vec::new();
        hooks::import_document(&doc, "hooks/hooks.json", &mut set, &mut skipped);
        for hook in set.into_vec() {
            assert!(!hook.event.is_empty());
        }
        if let Some((servers, shape)) = mcp::server_map(&doc) {
            let mut out = BTreeMap::new();
            mcp::import_servers(servers, ".mcp.json", shape, &mut out, &mut skipped);
        }
        for skip in &skipped {
            assert!(skip.path.is_some(), "{skip:?}");
        }
    }
    let text = String::from_utf8_lossy(data);
    let fm = frontmatter::parse(&text);
    let _ = fm.get("description");
    let args: Vec<String> = text
        .split_whitespace()
        .take(12)
        .map(str::to_owned)
        .collect();
    let rendered = render_template(&text, &args);
    if !text.contains('$') {
        assert_eq!(rendered, text);
    }
});
