//! One ACP session: a [`Session`] and the task that forwards its events to
//! the client. Prompts run on that same task, so every update of a turn is
//! sent before the turn's answer (as ACP requires), and updates between
//! turns (a surface after an action, a queued reload that ran) still flow.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_client_protocol::v1::schema::{
    AvailableCommandsUpdate, ConfigOptionUpdate, ContentBlock, ContentChunk, PermissionOption,
    PermissionOptionKind, PromptResponse, RequestPermissionOutcome, RequestPermissionRequest,
    SessionConfigOption, SessionNotification, SessionUpdate, StopReason, ToolCallUpdate,
    ToolCallUpdateFields,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode, UntypedMessage};
use serde_json::json;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::{convert, diagnostic, vendor};
use crate::runtime::host::ReloadOutcome;
use crate::runtime::redaction::plain_text;
use crate::session::text::{event_lines, reload_text, surface_text};
use crate::session::{
    Answer, Question, Session, SessionError, SessionEvent, Submitted, TurnStatus,
};

const ALLOW_ONCE: &str = "allow-once";
const ALLOW_ALWAYS: &str = "allow-always";
const REJECT: &str = "reject-once";

/// A prompt waiting for the session's task.
struct Prompt {
    text: String,
    responder: Responder<PromptResponse>,
}

/// A live ACP session.
pub(super) struct Live {
    pub session: Session,
    prompts: UnboundedSender<Prompt>,
    /// A prompt is queued or running.
    busy: Arc<AtomicBool>,
}

/// The forwarding task of a new [`Live`], not yet running.
pub(super) struct Forwarder {
    task: Task,
    prompts: UnboundedReceiver<Prompt>,
    events: UnboundedReceiver<SessionEvent>,
}

impl Forwarder {
    /// Start forwarding: first the session's commands and the surfaces it
    /// already shows, then its events and prompts as they come.
    pub fn start(self) {
        let Forwarder {
            mut task,
            prompts,
            events,
        } = self;
        tokio::spawn(async move {
            task.commands();
            for update in task.session.surfaces() {
                task.surface(&update);
            }
            task.run(prompts, events).await;
        });
    }
}

impl Live {
    /// A live session and its (stopped) forwarder. The subscription starts
    /// now, so nothing the session does from here on is missed.
    pub fn new(
        id: &str,
        session: Session,
        cx: ConnectionTo<Client>,
        surfaces: bool,
    ) -> (Arc<Live>, Forwarder) {
        let (tx, rx) = unbounded_channel();
        let busy = Arc::new(AtomicBool::new(false));
        let events = session.subscribe();
        let model = (session.models(), session.model());
        let live = Arc::new(Live {
            session: session.clone(),
            prompts: tx,
            busy: Arc::clone(&busy),
        });
        let task = Task {
            id: id.to_string(),
            session,
            cx,
            surfaces,
            busy,
            line_start: true,
            reload_queued: false,
            round_ended: false,
            model,
        };
        (
            live,
            Forwarder {
                task,
                prompts: rx,
                events,
            },
        )
    }

    /// The session's config options (the model selector).
    pub fn config_options(&self) -> Vec<SessionConfigOption> {
        convert::config_options(&self.session.models(), &self.session.model())
    }

    /// Queue a prompt; one at a time (ACP clients wait for the answer or
    /// cancel first).
    pub fn prompt(&self, text: String, responder: Responder<PromptResponse>) -> Result<(), Error> {
        if self.busy.swap(true, Ordering::SeqCst) {
            return responder.respond_with_error(convert::session_error(&SessionError::Busy));
        }
        if let Err(refused) = self.prompts.send(Prompt { text, responder }) {
            self.busy.store(false, Ordering::SeqCst);
            return refused
                .0
                .responder
                .respond_with_error(convert::session_error(&SessionError::Closed));
        }
        Ok(())
    }
}

/// The forwarding task's state.
struct Task {
    id: String,
    session: Session,
    cx: ConnectionTo<Client>,
    /// The client shows extension surfaces itself.
    surfaces: bool,
    busy: Arc<AtomicBool>,
    /// The agent's message stream is at the start of a line.
    line_start: bool,
    /// A reload was queued: its application is announced.
    reload_queued: bool,
    /// A provider round ended since the last streamed text.
    round_ended: bool,
    /// The models and the current model last announced.
    model: (Vec<String>, String),
}

impl Task {
    async fn run(
        &mut self,
        mut prompts: UnboundedReceiver<Prompt>,
        mut events: UnboundedReceiver<SessionEvent>,
    ) {
        loop {
            tokio::select! {
                event = events.recv() => match event {
                    Some(SessionEvent::Closed) | None => return,
                    Some(event) => self.forward(event),
                },
                prompt = prompts.recv() => match prompt {
                    Some(prompt) => self.prompt(prompt, &mut events).await,
                    None => return,
                },
            }
        }
    }

    /// Run one prompt while forwarding its events; answer when every event
    /// it produced has gone out.
    async fn prompt(&mut self, prompt: Prompt, events: &mut UnboundedReceiver<SessionEvent>) {
        self.line_start = true;
        self.round_ended = false;
        let session = self.session.clone();
        let submit = session.submit(&prompt.text);
        tokio::pin!(submit);
        let result = loop {
            tokio::select! {
                result = &mut submit => break result,
                Some(event) = events.recv() => self.forward(event),
            }
        };
        while let Ok(event) = events.try_recv() {
            self.forward(event);
        }
        let answer = match result {
            Ok(Submitted::Turn { report }) => match &report.status {
                TurnStatus::Completed => Ok(StopReason::EndTurn),
                TurnStatus::Cancelled => Ok(StopReason::Cancelled),
                TurnStatus::Blocked { .. } => {
                    self.ended_early(&report.status);
                    Ok(StopReason::Refusal)
                }
                TurnStatus::Failed { point, error } => {
                    self.ended_early(&report.status);
                    Err(Error::new(
                        ErrorCode::INTERNAL_ERROR,
                        plain_text(&format!("the turn failed at {point}: {error}")),
                    )
                    .data(json!({"errorCode": "turn.failed", "point": point})))
                }
            },
            Ok(Submitted::Command { text, .. }) => {
                self.text(&text);
                Ok(StopReason::EndTurn)
            }
            Ok(Submitted::Reload { outcome }) => {
                self.text(&reload_text(&outcome));
                Ok(StopReason::EndTurn)
            }
            Err(error) => Err(convert::session_error(&error)),
        };
        self.busy.store(false, Ordering::SeqCst);
        let sent = prompt
            .responder
            .respond_with_result(answer.map(PromptResponse::new));
        if let Err(error) = sent {
            diagnostic(&format!("answering session/prompt: {}", error.message));
        }
    }

    /// Say why a turn stopped, in the message stream.
    fn ended_early(&mut self, status: &TurnStatus) {
        let lines = event_lines(&SessionEvent::TurnEnded {
            turn: 0,
            status: status.clone(),
            prefix_hash: String::new(),
            gaps: Vec::new(),
        });
        self.text(&lines.join("\n"));
    }

    fn forward(&mut self, event: SessionEvent) {
        match event {
            SessionEvent::AssistantDelta { text } => {
                // A new provider round (after tool calls) starts a new
                // paragraph.
                let lead = if std::mem::take(&mut self.round_ended) && !self.line_start {
                    "\n\n"
                } else {
                    ""
                };
                self.chunk(&format!("{lead}{}", plain_text(&text)));
            }
            SessionEvent::AssistantMessage { .. } => self.round_ended = true,
            SessionEvent::ToolCall {
                call_id,
                name,
                arguments,
            } => self.update(SessionUpdate::ToolCall(convert::tool_call(
                &call_id,
                &name,
                &arguments,
                self.session.workspace(),
            ))),
            SessionEvent::ToolResult { record } => {
                self.update(SessionUpdate::ToolCallUpdate(convert::tool_result(&record)));
            }
            SessionEvent::Question { id, question } => self.ask(id, question),
            SessionEvent::Surface { update } => self.surface(&update),
            SessionEvent::Warning { .. } => {
                let lines = event_lines(&event);
                diagnostic(&lines.join("; "));
                self.text(&lines.join("\n"));
            }
            SessionEvent::Reload { outcome } => self.reloaded(&outcome),
            // A model switch (`/model`, the picker) or a reload moved the
            // picker.
            SessionEvent::Status { status }
                if (self.session.models(), status.model.clone()) != self.model =>
            {
                self.config_options();
            }
            _ => {}
        }
    }

    /// A reload's outcome: remember a queued one; when a queued reload ran,
    /// tell the client; after every swap, send the commands and models
    /// again.
    fn reloaded(&mut self, outcome: &ReloadOutcome) {
        if *outcome == ReloadOutcome::Queued {
            self.reload_queued = true;
            return;
        }
        if std::mem::take(&mut self.reload_queued) {
            let mut params = match serde_json::to_value(convert::reload_answer(
                outcome,
                self.session.generation().number,
            )) {
                Ok(params) => params,
                Err(error) => return diagnostic(&format!("encoding a reload: {error}")),
            };
            params["sessionId"] = json!(self.id);
            self.notify(vendor::RELOAD_APPLIED, params);
        }
        if matches!(outcome, ReloadOutcome::Swapped(_)) {
            self.commands();
            self.config_options();
        }
    }

    fn update(&self, update: SessionUpdate) {
        let sent = self
            .cx
            .send_notification(SessionNotification::new(self.id.clone(), update));
        if let Err(error) = sent {
            diagnostic(&format!("sending session/update: {}", error.message));
        }
    }

    fn notify(&self, method: &str, params: serde_json::Value) {
        let sent = UntypedMessage::new(method, params)
            .and_then(|message| self.cx.send_notification(message));
        if let Err(error) = sent {
            diagnostic(&format!("sending {method}: {}", error.message));
        }
    }

    /// A piece of the agent's message.
    fn chunk(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.line_start = text.ends_with('\n');
        self.update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
            ContentBlock::from(text.to_string()),
        )));
    }

    /// Whole lines of text in the agent's message (fallbacks, command
    /// output), on lines of their own.
    fn text(&mut self, text: &str) {
        let text = plain_text(text);
        if text.is_empty() {
            return;
        }
        let lead = if self.line_start { "" } else { "\n" };
        let tail = if text.ends_with('\n') { "" } else { "\n" };
        self.chunk(&format!("{lead}{text}{tail}"));
    }

    fn commands(&self) {
        let commands = convert::available_commands(&self.session.commands());
        self.update(SessionUpdate::AvailableCommandsUpdate(
            AvailableCommandsUpdate::new(commands),
        ));
    }

    fn config_options(&mut self) {
        let models = self.session.models();
        let current = self.session.model();
        self.update(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
            convert::config_options(&models, &current),
        )));
        self.model = (models, current);
    }

    fn surface(&mut self, update: &crate::runtime::ui::SurfaceUpdate) {
        if self.surfaces {
            let params = json!({
                "sessionId": self.id,
                "plugin": update.plugin,
                "surfaceId": update.surface_id,
                "generation": update.generation,
                "kind": update.kind,
                "payload": update.payload,
            });
            self.notify(vendor::EXTENSION_SURFACE, params);
        } else {
            self.text(&surface_text(update));
        }
    }

    /// A question: a permission goes to `session/request_permission`; a
    /// form to the client's surface UI, or is answered cancelled with a
    /// note for a client without one.
    fn ask(&mut self, id: String, question: Question) {
        match question {
            Question::Permission {
                call_id,
                tool,
                arguments,
                ..
            } => {
                let request = RequestPermissionRequest::new(
                    self.id.clone(),
                    ToolCallUpdate::new(
                        call_id,
                        ToolCallUpdateFields::new()
                            .title(plain_text(&tool))
                            .kind(convert::tool_kind(&tool))
                            .raw_input(
                                serde_json::from_str::<serde_json::Value>(&arguments)
                                    .unwrap_or_else(|_| json!(arguments)),
                            ),
                    ),
                    vec![
                        PermissionOption::new(ALLOW_ONCE, "Allow", PermissionOptionKind::AllowOnce),
                        PermissionOption::new(
                            ALLOW_ALWAYS,
                            format!("Always allow {}", plain_text(&tool)),
                            PermissionOptionKind::AllowAlways,
                        ),
                        PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
                    ],
                );
                let sent = self.cx.send_request(request);
                let session = self.session.clone();
                tokio::spawn(async move {
                    let answer = match sent.block_task().await {
                        Ok(response) => match response.outcome {
                            RequestPermissionOutcome::Selected(selected) => {
                                match &*selected.option_id.0 {
                                    ALLOW_ONCE => Some((true, false)),
                                    ALLOW_ALWAYS => Some((true, true)),
                                    REJECT => Some((false, false)),
                                    other => {
                                        diagnostic(&format!(
                                            "session/request_permission: unknown option {other:?}; the call is refused"
                                        ));
                                        Some((false, false))
                                    }
                                }
                            }
                            // The client cancelled the prompt turn.
                            _ => None,
                        },
                        Err(error) => {
                            diagnostic(&format!(
                                "session/request_permission failed ({}); the call is refused",
                                error.message
                            ));
                            Some((false, false))
                        }
                    };
                    match answer {
                        Some((allow, always)) => {
                            // A question withdrawn meanwhile (the turn was
                            // cancelled) is not an error.
                            let _ = session.answer(&id, Answer::Permission { allow, always });
                        }
                        None => {
                            session.cancel();
                        }
                    }
                });
            }
            Question::Form {
                plugin,
                surface_id,
                request,
                form,
            } => {
                if !self.surfaces {
                    let mut lines = event_lines(&SessionEvent::Question {
                        id: id.clone(),
                        question: Question::Form {
                            plugin,
                            surface_id,
                            request,
                            form,
                        },
                    });
                    lines.push(
                        "  (this client does not show extension forms: answered as cancelled)"
                            .to_string(),
                    );
                    self.text(&lines.join("\n"));
                    let _ = self.session.answer(&id, Answer::Form { values: None });
                    return;
                }
                let params = json!({
                    "sessionId": self.id,
                    "plugin": plugin,
                    "surfaceId": surface_id,
                    "kind": request,
                    "form": form,
                });
                let sent = match UntypedMessage::new(vendor::SURFACE_REQUEST, params) {
                    Ok(message) => self.cx.send_request(message),
                    Err(error) => {
                        diagnostic(&format!("encoding a form request: {}", error.message));
                        let _ = self.session.answer(&id, Answer::Form { values: None });
                        return;
                    }
                };
                let session = self.session.clone();
                tokio::spawn(async move {
                    let fields: Vec<vendor::FieldRule<'_>> = form
                        .fields
                        .iter()
                        .map(|f| vendor::FieldRule {
                            key: &f.key,
                            required: f.required == Some(true),
                        })
                        .collect();
                    let values = match sent.block_task().await {
                        Ok(answer) => match vendor::decode_form_answer(&answer, &fields) {
                            Ok(values) => values,
                            Err(error) => {
                                diagnostic(&format!(
                                    "{}: the answer does not fit the form ({error}); it is cancelled",
                                    vendor::SURFACE_REQUEST
                                ));
                                None
                            }
                        },
                        Err(error) => {
                            diagnostic(&format!(
                                "{} failed ({}); the form is cancelled",
                                vendor::SURFACE_REQUEST,
                                error.message
                            ));
                            None
                        }
                    };
                    let _ = session.answer(&id, Answer::Form { values });
                });
            }
        }
    }
}
