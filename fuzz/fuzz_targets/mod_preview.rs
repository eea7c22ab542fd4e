//! Arbitrary bytes into the mods install preview (oxc parse + the listing
//! walk), as JavaScript, TypeScript and CommonJS. It must never panic or
//! overflow its stack; whatever it lists must be a served name or be
//! reported as unserved, and bytes it cannot read must say why.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reasonix_package::mods::preview::preview_source;
use reasonix_package::mods::{SERVED_CALLS, SERVED_EVENTS};
use oxc_span::SourceType;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, source)) = data.split_first() else {
        return;
    };
    let source_type = match selector % 3 {
        0 => SourceType::mjs(),
        1 => SourceType::ts(),
        _ => SourceType::cjs(),
    };
    let preview = preview_source(source, source_type);
    for event in &preview.events {
        assert!(SERVED_EVENTS.contains(&event.as_str()), "{event}");
    }
    for call in &preview.calls {
        assert!(SERVED_CALLS.contains(&call.as_str()), "{call}");
    }
    if std::str::from_utf8(source).is_err() {
        assert!(preview.error.is_some());
    }
    assert!(preview.not_listed.len() <= 21);
});
