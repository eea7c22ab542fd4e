//! The starter extension: the smallest useful one. It intercepts
//! `input.receive` and tags the user's text with `[starter]`, so a turn
//! shows at a glance that the extension ran. Empty input and input that
//! already carries the tag pass through unchanged.
//!
//! This file is the whole extension; `main.rs` serves it as a native
//! sidecar and `examples/starter-wasm` exports the same type as a wasm
//! component.

use reasonix_extension_sdk::prelude::*;

/// The tag put in front of every input.
pub const TAG: &str = "[starter]";

/// The rewrite itself, kept apart from the protocol so it is easy to test.
/// `None` means "leave the input alone".
pub fn rewrite(text: &str) -> Option<String> {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed.starts_with(TAG) {
        return None;
    }
    Some(format!("{TAG} {trimmed}"))
}

/// The extension.
#[derive(Debug, Default, Clone, Copy)]
pub struct Starter;

impl Extension for Starter {
    fn initialize(&self, _init: &InitializeParams) -> Result<Declaration, Error> {
        Ok(Declaration::new("starter", env!("CARGO_PKG_VERSION"))
            .intercept(HookPoint::InputReceive))
    }

    fn on_input_receive(&self, _ctx: &Context, payload: &Payload) -> Result<Verdict, Error> {
        let input: InputPayload = payload.decode()?;
        match rewrite(&input.text) {
            Some(text) => Verdict::replace(&InputPayload { text }),
            None => Ok(Verdict::Continue),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_once_and_leaves_empty_input_alone() {
        assert_eq!(rewrite("  hello "), Some("[starter] hello".to_owned()));
        assert_eq!(rewrite("[starter] hello"), None);
        assert_eq!(rewrite("   "), None);
    }
}
