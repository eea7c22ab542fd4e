//! Arbitrary bytes as a Claude or a Codex marketplace file. Parsing and
//! selection must never panic, and whatever a selection returns must be
//! installable by the rules: valid unique names, sorted, at most 64 in bulk,
//! relative sources inside the marketplace.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reasonix_package::inventory::names::is_valid_name;
use reasonix_package::marketplace::{EntrySource, Format, MAX_ENTRIES, parse_as};

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let format = if first & 1 == 0 {
        Format::Claude
    } else {
        Format::Codex
    };
    let Ok(market) = parse_as(text, format) else {
        return;
    };
    for entry in &market.entries {
        if let EntrySource::Relative(p) = &entry.source {
            // Clean segments only: no root, no `.`/`..`, no empty part
            // (a directory may well be called `..plugins`).
            assert!(
                !p.starts_with('/') && p.split('/').all(|s| !matches!(s, "" | "." | "..")),
                "{p}"
            );
        }
    }
    if let Ok(all) = market.select(None) {
        assert!(all.entries.len() <= MAX_ENTRIES);
        assert!(all.entries.windows(2).all(|w| w[0].name < w[1].name));
        assert!(all.entries.iter().all(|e| is_valid_name(&e.name)));
    }
    if let Some(entry) = market.entries.first()
        && let Ok(one) = market.select(Some(&entry.name))
    {
        assert_eq!(one.entries.len(), 1);
        assert!(is_valid_name(&one.entries[0].name));
    }
});
