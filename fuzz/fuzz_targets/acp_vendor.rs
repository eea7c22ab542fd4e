//! Arbitrary bytes as what an ACP client sends outside the ACP schema: the
//! params of `_reasonix.io/session/reloadExtensions`, the answer to a form
//! (`_reasonix.io/extensionSurface/request`) and `clientCapabilities._meta`.
//! Nothing may panic; accepted params carry a session id that names a file
//! safely; an accepted form answer names only fields of the form and covers
//! the required one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

// The decoders are plain serde, compiled here from the host's source.
#[allow(dead_code)]
#[path = "../../host/src/acp/vendor.rs"]
mod vendor;

use vendor::FieldRule;

const FIELDS: [FieldRule<'static>; 2] = [
    FieldRule {
        key: "name",
        required: true,
    },
    FieldRule {
        key: "note",
        required: false,
    },
];

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if let Ok(params) = vendor::decode_session_params(&value) {
        let id = &params.session_id;
        assert!(vendor::check_session_id(id).is_ok());
        assert!(!id.contains('/') && !id.contains('\\') && !id.starts_with('.'));
    }
    if let Ok(Some(values)) = vendor::decode_form_answer(&value, &FIELDS) {
        assert!(values.contains_key("name"));
        assert!(values.keys().all(|k| k == "name" || k == "note"));
    }
    if let Value::Object(map) = &value {
        let _ = vendor::surface_capability(Some(map));
        if let Some(Value::Object(meta)) = map.get("_meta") {
            let _ = vendor::surface_capability(Some(meta));
        }
    }
});
