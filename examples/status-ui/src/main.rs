//! status-ui: structured UI from an extension. It watches `input.receive`
//! (and lets every input through), and after each input publishes
//!
//! - a `status` surface: "3 inputs, 12 words";
//! - a `card` surface with the same figures as fields and a button that
//!   invokes the extension's UI action `reset` (`/status-ui:reset`).
//!
//! The `reset` action sets the counters back to zero and republishes both.

use reasonix_extension_sdk::prelude::*;
use std::sync::Mutex;

const STATUS_SURFACE: &str = "status-ui.status";
const CARD_SURFACE: &str = "status-ui.card";
const RESET: &str = "reset";

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counters {
    inputs: u64,
    words: u64,
}

impl Counters {
    fn status(self) -> Status {
        Status::new(format!("{} inputs, {} words", self.inputs, self.words))
            .detail("counted by the status-ui extension")
            .severity(Severity::Info)
    }

    fn card(self) -> Card {
        Card::new("Session input")
            .text("What the user typed in this session so far.")
            .field("inputs", self.inputs.to_string())
            .field("words", self.words.to_string())
            .action(RESET, "Reset counters")
    }
}

#[derive(Default)]
struct StatusUi {
    counters: Mutex<Counters>,
}

impl StatusUi {
    fn counters(&self) -> std::sync::MutexGuard<'_, Counters> {
        self.counters.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Publishes both surfaces; `false` if the host dropped either (a stale
    /// session or generation).
    fn publish(&self, ctx: &Context, counters: Counters) -> Result<bool, Error> {
        let status = ctx
            .ui()
            .publish_status(STATUS_SURFACE, &counters.status())?;
        let card = ctx.ui().publish_card(CARD_SURFACE, &counters.card())?;
        Ok(status && card)
    }
}

impl Extension for StatusUi {
    fn initialize(&self, _init: &InitializeParams) -> Result<Declaration, Error> {
        Ok(Declaration::new("status-ui", env!("CARGO_PKG_VERSION"))
            .intercept(HookPoint::InputReceive)
            .ui_action(RESET, "Reset the input counters"))
    }

    fn on_input_receive(&self, ctx: &Context, payload: &Payload) -> Result<Verdict, Error> {
        let input: InputPayload = payload.decode()?;
        let counters = {
            let mut c = self.counters();
            c.inputs += 1;
            c.words += input.text.split_whitespace().count() as u64;
            *c
        };
        // UI is a side effect: a host without UI must not fail the input.
        if let Err(e) = self.publish(ctx, counters) {
            ctx.log(
                LogLevel::Warn,
                format!("could not publish the counters: {e}"),
            );
        }
        Ok(Verdict::Continue)
    }

    fn ui_action(&self, ctx: &Context, action: &UIActionParams) -> Result<Option<String>, Error> {
        if action.action_id != RESET {
            return Err(Error::failed(format!(
                "unknown action {:?}",
                action.action_id
            )));
        }
        let counters = {
            let mut c = self.counters();
            *c = Counters::default();
            *c
        };
        let shown = self.publish(ctx, counters)?;
        Ok(Some(if shown {
            "counters reset".to_owned()
        } else {
            "counters reset (the host did not show the update)".to_owned()
        }))
    }
}

fn main() -> std::process::ExitCode {
    reasonix_extension_sdk::run_stdio(StatusUi::default())
}
