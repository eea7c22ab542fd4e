//! What a session produces, as typed events on one subscription.
//!
//! The session prints nothing. Every frontend (the terminal, HTTP
//! server-sent events, ACP notifications, `dev turn`'s report) renders these
//! events. All text from packages and extensions in them is already
//! credential-redacted and free of control characters.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;

use super::report::{HookRecord, PointRecord, ToolRecord, TurnStatus};
use crate::runtime::host::ReloadOutcome;
use crate::runtime::ui::{FormPayload, RequestKind, SurfaceUpdate};

/// Where a turn's input came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InputSource {
    /// Typed by the user.
    User,
    /// A rendered `/<plugin>:<command>` or `/<plugin>:<prompt>` template.
    Command,
    /// A skill loaded with `/<plugin>:<skill>`.
    Skill,
}

/// A question the session needs a frontend to answer (see
/// `Session::answer`). Unanswered questions are cancelled with the turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Question {
    /// May this tool call run? Answer with `Answer::Permission`.
    Permission {
        tool: String,
        arguments: String,
        read_only: bool,
    },
    /// An extension's `host/ui/request`; answer with `Answer::Form`.
    Form {
        plugin: String,
        surface_id: String,
        request: RequestKind,
        form: FormPayload,
    },
}

/// A frontend's answer to a [`Question`].
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Permission {
        allow: bool,
        /// Allow this tool for the rest of the session.
        always: bool,
    },
    Form {
        /// `None` = cancelled.
        values: Option<BTreeMap<String, Value>>,
    },
}

/// The session's state as a status line shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub session_id: String,
    pub generation: u64,
    pub model: String,
    pub busy: bool,
    pub reload_queued: bool,
    /// Plugins with a running runtime.
    pub runtimes: Vec<String>,
    /// Runtimes left out of the generation, and why.
    pub degraded: Vec<crate::runtime::generation::Degraded>,
    /// Enabled packages.
    pub plugins: usize,
}

/// One event. Serialised with a `type` tag, e.g. `{"type":"user_message",…}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum SessionEvent {
    /// The session is open (first event of every subscription).
    Opened {
        status: Status,
    },
    Status {
        status: Status,
    },
    TurnStarted {
        turn: u64,
        generation: u64,
        model: String,
        source: InputSource,
    },
    /// The input as it reaches the model (after interceptors and hooks).
    UserMessage {
        text: String,
    },
    /// Context added to the turn's tail (SessionStart hooks).
    Context {
        source: String,
        text: String,
    },
    /// Streamed assistant text.
    AssistantDelta {
        text: String,
    },
    /// One finished assistant message of a provider round.
    AssistantMessage {
        text: String,
    },
    /// A hook point's decision chain.
    Point {
        record: PointRecord,
    },
    /// A declarative hook ran.
    Hook {
        record: HookRecord,
    },
    ToolCall {
        call_id: String,
        name: String,
        arguments: String,
    },
    ToolResult {
        record: ToolRecord,
    },
    /// A question for the frontend; answer it with `Session::answer(id, …)`.
    Question {
        id: String,
        question: Question,
    },
    /// A question is no longer waiting (answered, or cancelled).
    QuestionClosed {
        id: String,
    },
    /// An extension published or updated a UI surface.
    Surface {
        update: SurfaceUpdate,
    },
    Warning {
        source: String,
        message: String,
    },
    Reload {
        outcome: ReloadOutcome,
    },
    /// Output of a slash command that is not a turn (`/help`, `/plugins`…).
    CommandOutput {
        command: String,
        text: String,
        #[serde(skip_serializing_if = "Value::is_null")]
        data: Value,
    },
    TurnEnded {
        turn: u64,
        status: TurnStatus,
        prefix_hash: String,
    },
    Closed,
}

/// The subscribers of a session. A subscriber that went away is dropped.
#[derive(Debug, Default)]
pub(crate) struct EventBus {
    subscribers: Mutex<Vec<mpsc::UnboundedSender<SessionEvent>>>,
}

impl EventBus {
    /// A new subscription whose first event is `first`.
    pub(crate) fn subscribe_with(
        &self,
        first: SessionEvent,
    ) -> mpsc::UnboundedReceiver<SessionEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        let _ = tx.send(first);
        self.lock().push(tx);
        rx
    }

    pub(crate) fn emit(&self, event: SessionEvent) {
        let mut subscribers = self.lock();
        subscribers.retain(|tx| tx.send(event.clone()).is_ok());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<mpsc::UnboundedSender<SessionEvent>>> {
        self.subscribers
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}
