//! status-ui: structured UI from an extension. It watches `input.receive`
//! (and lets every input through), and after each input publishes
//!
//! - a `status` surface: "3 inputs, 12 words";
//! - a `card` surface with the same figures as fields and a button that
//!   invokes the extension's UI action `reset` (`/status-ui:reset`).
//!
//! The `reset` action sets the counters back to zero and republishes both.
//! The `rename` action publishes a form (`status-ui.rename`) asking for a
//! name; its submit puts the name in front of the status line.

use reasonix_extension_sdk::prelude::*;
use std::sync::Mutex;

const STATUS_SURFACE: &str = "status-ui.status";
const CARD_SURFACE: &str = "status-ui.card";
const RESET: &str = "reset";
const RENAME: &str = "rename";
const RENAME_FORM: &str = "status-ui.rename";

#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Counters {
    inputs: u64,
    words: u64,
    /// Set through the `rename` form.
    name: Option<String>,
}

impl Counters {
    fn status(&self) -> Status {
        let counts = format!("{} inputs, {} words", self.inputs, self.words);
        Status::new(match &self.name {
            Some(name) => format!("{name}: {counts}"),
            None => counts,
        })
        .detail("counted by the status-ui extension")
        .severity(Severity::Info)
    }

    fn card(&self) -> Card {
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
    fn publish(&self, ctx: &Context, counters: &Counters) -> Result<bool, Error> {
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
            .ui_action(RESET, "Reset the input counters")
            .ui_action(RENAME, "Name the counter (asks with a form)"))
    }

    fn on_input_receive(&self, ctx: &Context, payload: &Payload) -> Result<Verdict, Error> {
        let input: InputPayload = payload.decode()?;
        let counters = {
            let mut c = self.counters();
            c.inputs += 1;
            c.words += input.text.split_whitespace().count() as u64;
            c.clone()
        };
        // UI is a side effect: a host without UI must not fail the input.
        if let Err(e) = self.publish(ctx, &counters) {
            ctx.log(
                LogLevel::Warn,
                format!("could not publish the counters: {e}"),
            );
        }
        Ok(Verdict::Continue)
    }

    fn ui_action(&self, ctx: &Context, action: &UIActionParams) -> Result<Option<String>, Error> {
        match action.action_id.as_str() {
            RESET => {
                let counters = {
                    let mut c = self.counters();
                    let name = c.name.take();
                    *c = Counters {
                        name,
                        ..Counters::default()
                    };
                    c.clone()
                };
                let shown = self.publish(ctx, &counters)?;
                Ok(Some(if shown {
                    "counters reset".to_owned()
                } else {
                    "counters reset (the host did not show the update)".to_owned()
                }))
            }
            RENAME => {
                let form = Form::new("Name the counter")
                    .message("Shown in front of the status line.")
                    .field(
                        FormField::new("name", FieldKind::Input)
                            .label("Name")
                            .required(),
                    );
                ctx.ui().publish_form(RENAME_FORM, &form)?;
                Ok(Some(format!("answer the form {RENAME_FORM}")))
            }
            other => Err(Error::failed(format!("unknown action {other:?}"))),
        }
    }

    fn ui_submit(&self, ctx: &Context, submit: &UISubmitParams) -> Result<(), Error> {
        if submit.surface_id != RENAME_FORM {
            return Err(Error::failed(format!(
                "unknown form {:?}",
                submit.surface_id
            )));
        }
        let name = submit
            .values
            .get("name")
            .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty())
            .ok_or_else(|| Error::failed("the form needs a name"))?;
        let counters = {
            let mut c = self.counters();
            c.name = Some(name);
            c.clone()
        };
        self.publish(ctx, &counters)?;
        Ok(())
    }
}

fn main() -> std::process::ExitCode {
    reasonix_extension_sdk::run_stdio(StatusUi::default())
}
