//! Arbitrary bytes through the SSE parser of the legacy MCP transport, once
//! whole and once cut at a point chosen by the first byte. Nothing may
//! panic, both runs must agree (events and error), and no event may exceed
//! the parser's limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reasonix_sse::Parser;

const LIMIT: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, stream)) = data.split_first() else {
        return;
    };
    let mut whole = Parser::new(LIMIT);
    let mut whole_events = Vec::new();
    let whole_result = whole.push(stream, &mut whole_events);

    let at = usize::from(cut) % (stream.len() + 1);
    let mut split = Parser::new(LIMIT);
    let mut split_events = Vec::new();
    let split_result = split
        .push(&stream[..at], &mut split_events)
        .and_then(|()| split.push(&stream[at..], &mut split_events));

    assert_eq!(whole_result.is_err(), split_result.is_err());
    if whole_result.is_ok() {
        assert_eq!(whole_events, split_events);
    }
    for event in &whole_events {
        assert!(event.data.len() <= LIMIT);
    }
});
