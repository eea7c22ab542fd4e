//! The live session: one [`Session`] that an agent embeds and every
//! frontend drives (`reasonix chat`, `reasonix serve`, `reasonix acp`,
//! `reasonix dev turn`).
//!
//! A session is opened on a home, a workspace and an optional session file.
//! It owns the [`RuntimeHost`] (one generation pinned per turn, at most one
//! queued reload), the inventory of the enabled packages (read together with
//! each generation and swapped with it), the UI hub and the capability
//! catalog. Its operations are what a frontend needs: submit input (a turn
//! or a slash command), answer a question (a permission or a form), invoke a
//! UI action, submit a form, switch model, reload, cancel the running turn,
//! close. Everything it produces flows out as [`SessionEvent`]s on
//! [`Session::subscribe`]; it prints nothing.
//!
//! Hooks and interceptors at the same point (the order is documented in
//! `docs/session.md`): extension interceptors rule first and may rewrite,
//! then the declarative hooks judge the final payload; a refusal from either
//! side wins.

mod echo;
pub mod events;
pub mod file;
mod hooks;
pub mod inventory;
pub mod report;
mod slash;
mod source;
pub mod text;
pub mod tools;
mod turn;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use reasonix_protocol::types::ProviderMessage;
use reasonix_sidecar::Guard;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::home::ReasonixHome;
use crate::runtime::generation::Generation;
use crate::runtime::host::{ReloadOutcome, RuntimeHost, SessionCarry};
use crate::runtime::registry_source::RegistrySource;
use crate::runtime::ui::{
    AnswerFuture, FormPayload, RequestKind, SurfaceUpdate, UiAnswers, UiFrontend, UiHub,
    UiRequestAnswer,
};

pub use events::{Answer, InputSource, Question, SessionEvent, Status};
pub use inventory::{EntryKind, Inventory, SlashEntry};
pub use report::{HookRecord, PointRecord, ToolRecord, TurnReport, TurnStatus};
pub use slash::MenuEntry;
pub use turn::{ECHO_MODEL, ScriptedCall, prefix_hash, provider_tools};

/// How questions (tool permissions, extension forms) are answered.
#[derive(Debug, Clone)]
pub enum Interaction {
    /// A person answers: questions go out as [`SessionEvent::Question`] and
    /// wait for [`Session::answer`].
    Interactive,
    /// No person: tool calls are approved unless `deny` names the tool (or
    /// the user config denies it); forms are answered from `ui_answers`
    /// (a form naming a key the map lacks is cancelled), or, without a map,
    /// `host/ui/request` answers `unknown_method`.
    Scripted {
        deny: BTreeSet<String>,
        ui_answers: Option<BTreeMap<String, Value>>,
    },
}

/// What to open.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    pub home: ReasonixHome,
    pub workspace: PathBuf,
    /// Loaded when it exists, written after every completed turn.
    pub session_file: Option<PathBuf>,
    /// Overrides the configured `default_model`.
    pub model: Option<String>,
    pub interaction: Interaction,
    /// Tool calls the built-in echo model makes in the first round of every
    /// turn.
    pub scripted_calls: Vec<ScriptedCall>,
    /// Refuse tools that can change something.
    pub read_only: bool,
    /// How sidecars are tied to this process.
    pub guard: Guard,
    /// The number of the first generation (a restarted process continues
    /// the numbering it recorded).
    pub first_generation: u64,
}

impl SessionOptions {
    pub fn new(home: ReasonixHome, workspace: PathBuf) -> SessionOptions {
        SessionOptions {
            home,
            workspace,
            session_file: None,
            model: None,
            interaction: Interaction::Interactive,
            scripted_calls: Vec::new(),
            read_only: false,
            guard: Guard::CurrentExe,
            first_generation: 1,
        }
    }
}

/// Why a session operation failed. `code()` is stable for frontends.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("{0}")]
    Config(String),
    #[error("workspace {0}: not a directory")]
    Workspace(PathBuf),
    #[error("{0}")]
    SessionFile(String),
    #[error(
        "the extension runtime did not start: {0}\nhint: `reasonix plugin doctor <name>` checks a plugin; `reasonix plugin disable <name>` takes it out"
    )]
    Runtime(String),
    #[error("a turn is already running; wait for it or cancel it")]
    Busy,
    #[error("the session is closed")]
    Closed,
    #[error("unknown command `{command}`{}", closest_hint(.closest))]
    UnknownCommand {
        command: String,
        closest: Vec<String>,
    },
    #[error("`{alias}` is ambiguous: use one of {}", .candidates.join(", "))]
    Ambiguous {
        alias: String,
        candidates: Vec<String>,
    },
    #[error("{0}")]
    Usage(String),
    #[error("unknown model `{model}` ({available}); there is no fallback to another model")]
    UnknownModel { model: String, available: String },
    #[error("{0}")]
    Action(String),
    #[error("no question `{0}` is waiting for an answer")]
    UnknownQuestion(String),
    #[error("{0}")]
    Form(String),
}

fn closest_hint(closest: &[String]) -> String {
    if closest.is_empty() {
        "; /help lists the commands".to_string()
    } else {
        format!("; did you mean {}?", closest.join(", "))
    }
}

impl SessionError {
    pub fn code(&self) -> &'static str {
        match self {
            SessionError::Config(_) => "config.invalid",
            SessionError::Workspace(_) => "session.workspace_missing",
            SessionError::SessionFile(_) => "session.file_unreadable",
            SessionError::Runtime(_) => "runtime.start_failed",
            SessionError::Busy => "session.busy",
            SessionError::Closed => "session.closed",
            SessionError::UnknownCommand { .. } => "command.unknown",
            SessionError::Ambiguous { .. } => "command.ambiguous",
            SessionError::Usage(_) => "command.usage",
            SessionError::UnknownModel { .. } => "model.unknown",
            SessionError::Action(_) => "action.failed",
            SessionError::UnknownQuestion(_) => "question.unknown",
            SessionError::Form(_) => "form.failed",
        }
    }
}

/// What one [`Session::submit`] did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Submitted {
    Turn { report: Box<TurnReport> },
    Command { command: String, text: String },
    Reload { outcome: ReloadOutcome },
}

/// Per-turn options.
#[derive(Debug, Clone, Default)]
pub struct TurnOptions {
    /// Run compaction (PreCompact hooks, compaction.prepare/complete) after
    /// the turn.
    pub compact: bool,
    /// The turn runs a plugin agent (`/<plugin>:agent:<name>`): it ends
    /// with SubagentStop hooks instead of Stop hooks.
    pub subagent: bool,
}

/// Questions waiting for a frontend.
#[derive(Default)]
struct Questions {
    next: Mutex<u64>,
    waiting: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
}

impl Questions {
    fn ask(
        &self,
        bus: &events::EventBus,
        question: Question,
    ) -> (String, oneshot::Receiver<Answer>) {
        let id = {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            *next += 1;
            format!("q{}", *next)
        };
        let (tx, rx) = oneshot::channel();
        self.waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.clone(), tx);
        bus.emit(SessionEvent::Question {
            id: id.clone(),
            question,
        });
        (id, rx)
    }

    fn answer(&self, id: &str, answer: Answer) -> bool {
        let sender = self
            .waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
        sender.is_some_and(|tx| tx.send(answer).is_ok())
    }

    fn forget(&self, id: &str) {
        self.waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }
}

/// The session's side of the UI hub: surfaces become events, forms become
/// questions.
struct SessionUi {
    bus: Arc<events::EventBus>,
    questions: Arc<Questions>,
}

impl UiFrontend for SessionUi {
    fn surface(&self, update: &SurfaceUpdate) {
        self.bus.emit(SessionEvent::Surface {
            update: update.clone(),
        });
    }

    fn ask(
        &self,
        plugin: &str,
        surface_id: &str,
        kind: RequestKind,
        form: FormPayload,
    ) -> AnswerFuture {
        let (id, rx) = self.questions.ask(
            &self.bus,
            Question::Form {
                plugin: plugin.to_string(),
                surface_id: surface_id.to_string(),
                request: kind,
                form,
            },
        );
        let bus = Arc::clone(&self.bus);
        Box::pin(async move {
            let answer = rx.await;
            bus.emit(SessionEvent::QuestionClosed { id });
            match answer {
                Ok(Answer::Form {
                    values: Some(values),
                }) => UiRequestAnswer {
                    cancelled: false,
                    values: Some(values),
                },
                _ => UiRequestAnswer {
                    cancelled: true,
                    values: None,
                },
            }
        })
    }
}

struct State {
    session_id: String,
    model: String,
    turns: u64,
    /// SessionStart context not yet given to a turn.
    pending_context: Vec<(String, String)>,
    closed: bool,
    /// What opening the session recorded (for `dev turn`'s report).
    opening: Vec<PointRecord>,
    opening_hooks: Vec<HookRecord>,
}

struct Inner {
    options: SessionOptions,
    config: Config,
    tool_env: tools::ToolEnv,
    host: RuntimeHost,
    bus: Arc<events::EventBus>,
    questions: Arc<Questions>,
    state: Mutex<State>,
    /// The running turn's cancel token.
    cancel: Mutex<Option<CancellationToken>>,
    /// One turn at a time.
    turn_gate: tokio::sync::Mutex<()>,
}

/// A live session. Cheap to clone; every clone drives the same session.
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.session_id())
            .finish()
    }
}

impl Session {
    /// Open a session: read the configuration and the session file, start
    /// the runtimes of the enabled packages (generation 1), run the
    /// `session.start`/`session.load` point and the SessionStart hooks.
    pub async fn open(options: SessionOptions) -> Result<Session, SessionError> {
        if !options.workspace.is_dir() {
            return Err(SessionError::Workspace(options.workspace.clone()));
        }
        let workspace =
            std::path::absolute(&options.workspace).unwrap_or_else(|_| options.workspace.clone());
        let options = SessionOptions {
            workspace,
            ..options
        };
        let config = Config::load(&options.home, &options.workspace)
            .map_err(|e| SessionError::Config(e.to_string()))?;
        let existing = match &options.session_file {
            Some(path) => file::read(path).map_err(SessionError::SessionFile)?,
            None => None,
        };
        let session_id = existing
            .as_ref()
            .map(|f| f.session_id.clone())
            .unwrap_or_else(turn::new_session_id);
        let bus = Arc::new(events::EventBus::default());
        let questions = Arc::new(Questions::default());
        let answers = match &options.interaction {
            Interaction::Interactive => UiAnswers::Frontend,
            Interaction::Scripted {
                ui_answers: Some(map),
                ..
            } => UiAnswers::Scripted(map.clone()),
            Interaction::Scripted { .. } => UiAnswers::Headless,
        };
        let hub = Arc::new(UiHub::with_frontend(
            answers,
            Arc::new(SessionUi {
                bus: Arc::clone(&bus),
                questions: Arc::clone(&questions),
            }),
        ));
        let source = Arc::new(source::SessionSource::new(
            RegistrySource::new(
                options.home.clone(),
                options.guard.clone(),
                Arc::clone(&hub),
            ),
            options.workspace.clone(),
            config.shell.path.clone(),
        ));
        let carry = SessionCarry {
            session_path: options.session_file.clone(),
            transcript: existing
                .as_ref()
                .map(|f| f.messages.clone())
                .unwrap_or_default(),
            ..SessionCarry::default()
        };
        let host = RuntimeHost::start_at(
            options.first_generation,
            source,
            &session_id,
            &options.workspace.display().to_string(),
            hub,
            carry,
        )
        .await
        .map_err(|e| SessionError::Runtime(e.to_string()))?;
        let model = options
            .model
            .clone()
            .or_else(|| existing.as_ref().and_then(|f| f.model.clone()))
            .or_else(|| config.default_model.clone())
            .unwrap_or_else(|| ECHO_MODEL.to_string());
        let tool_env = tools::ToolEnv::new(options.workspace.clone(), &config.shell);
        let session = Session {
            inner: Arc::new(Inner {
                options,
                config,
                tool_env,
                host,
                bus,
                questions,
                state: Mutex::new(State {
                    session_id,
                    model,
                    turns: 0,
                    pending_context: Vec::new(),
                    closed: false,
                    opening: Vec::new(),
                    opening_hooks: Vec::new(),
                }),
                cancel: Mutex::new(None),
                turn_gate: tokio::sync::Mutex::new(()),
            }),
        };
        for warning in session.inner.config.warnings.clone() {
            session.warn("config", &warning.to_string());
        }
        for (name, why) in &session.inventory().unreadable {
            session.warn(
                "plugins",
                &format!("plugin {name} is enabled but does not read ({why}); it is left out"),
            );
        }
        let loaded = existing.is_some();
        if let Err(error) = turn::open_session(&session, loaded).await {
            session.inner.host.shutdown().await;
            return Err(error);
        }
        Ok(session)
    }

    /// Every event from now on. The first is always [`SessionEvent::Opened`]
    /// with the current status.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<SessionEvent> {
        self.inner.bus.subscribe_with(SessionEvent::Opened {
            status: self.status(),
        })
    }

    pub fn session_id(&self) -> String {
        self.state().session_id.clone()
    }

    pub fn workspace(&self) -> &std::path::Path {
        &self.inner.options.workspace
    }

    pub fn home(&self) -> &ReasonixHome {
        &self.inner.options.home
    }

    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The model the next turn uses.
    pub fn model(&self) -> String {
        self.state().model.clone()
    }

    /// The generation new work would use.
    pub fn generation(&self) -> Arc<Generation> {
        self.inner.host.current()
    }

    /// The inventory of the enabled packages (of the current generation).
    pub fn inventory(&self) -> Arc<Inventory> {
        source::inventory_of(&self.inner.host.current())
    }

    /// The transcript so far.
    pub fn transcript(&self) -> Vec<ProviderMessage> {
        self.inner.host.carry().transcript
    }

    /// The session's status.
    pub fn status(&self) -> Status {
        let generation = self.inner.host.current();
        let state = self.state();
        Status {
            session_id: state.session_id.clone(),
            generation: generation.number,
            model: state.model.clone(),
            busy: self
                .inner
                .cancel
                .lock()
                .map(|c| c.is_some())
                .unwrap_or(false),
            reload_queued: self.inner.host.reload_queued(),
            runtimes: generation
                .runtimes
                .iter()
                .map(|r| r.plugin_id.clone())
                .collect(),
            degraded: generation.degraded.clone(),
            plugins: source::inventory_of(&generation).packages.len(),
        }
    }

    /// Every model the session can switch to: the built-in echo model and
    /// the `plugin/<plugin>/<provider>/<model>` refs of the generation.
    pub fn models(&self) -> Vec<String> {
        let mut models = vec![ECHO_MODEL.to_string()];
        models.extend(
            self.inner
                .host
                .current()
                .providers
                .iter()
                .map(|p| p.model_ref.clone()),
        );
        models
    }

    /// Every slash command the menu offers: built-ins, then the plugins'
    /// `/<plugin>:<name>` entries and UI actions, sorted.
    pub fn commands(&self) -> Vec<MenuEntry> {
        slash::menu(self)
    }

    /// Submit one line: a slash command, or the input of a turn.
    pub async fn submit(&self, line: &str) -> Result<Submitted, SessionError> {
        self.ensure_open()?;
        if let Some(command) = line.trim_start().strip_prefix('/') {
            return slash::run(self, command.trim_end()).await;
        }
        let report = self
            .run_turn(line.to_string(), InputSource::User, TurnOptions::default())
            .await?;
        Ok(Submitted::Turn {
            report: Box::new(report),
        })
    }

    /// Run one turn with `input` (no slash-command interpretation).
    pub async fn run_turn(
        &self,
        input: String,
        source: InputSource,
        options: TurnOptions,
    ) -> Result<TurnReport, SessionError> {
        self.ensure_open()?;
        let Ok(_gate) = self.inner.turn_gate.try_lock() else {
            return Err(SessionError::Busy);
        };
        let token = CancellationToken::new();
        *self.cancel_slot() = Some(token.clone());
        let report = turn::run(self, input, source, options, token).await;
        *self.cancel_slot() = None;
        // A reload queued during the turn ran when it ended.
        if let Some(outcome) = &report.reload {
            self.announce_reload(outcome);
        }
        self.emit_status();
        Ok(report)
    }

    /// Cancel the running turn (its provider stream, tool and questions).
    /// `false` when no turn runs.
    pub fn cancel(&self) -> bool {
        match self.cancel_slot().as_ref() {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Answer a question the session asked.
    pub fn answer(&self, id: &str, answer: Answer) -> Result<(), SessionError> {
        if self.inner.questions.answer(id, answer) {
            Ok(())
        } else {
            Err(SessionError::UnknownQuestion(id.to_string()))
        }
    }

    /// Reload the runtime from what is on disk: now if idle, else queued
    /// (exactly one) until the running turn ends. A failed build keeps the
    /// current generation serving.
    pub async fn reload(&self) -> ReloadOutcome {
        let outcome = self.inner.host.reload().await;
        self.announce_reload(&outcome);
        self.emit_status();
        outcome
    }

    /// Switch model: `echo` or a `plugin/<plugin>/<provider>/<model>` ref
    /// of the current generation.
    pub fn switch_model(&self, model: &str) -> Result<String, SessionError> {
        let models = self.models();
        if !models.iter().any(|m| m == model) {
            let available = if models.len() == 1 {
                format!("available: {ECHO_MODEL}; no enabled plugin provides a model")
            } else {
                format!("available: {}", models.join(", "))
            };
            return Err(SessionError::UnknownModel {
                model: model.to_string(),
                available,
            });
        }
        self.state().model = model.to_string();
        self.emit_status();
        Ok(model.to_string())
    }

    /// Invoke `/<plugin>:<action>`: `extension/ui/action` on the current
    /// generation. Returns the extension's message, if any.
    pub async fn invoke_action(
        &self,
        plugin: &str,
        action: &str,
        args: BTreeMap<String, String>,
    ) -> Result<Option<String>, SessionError> {
        self.ensure_open()?;
        let generation = self.inner.host.current();
        let command = format!("/{plugin}:{action}");
        if self.inner.host.ui().resolve_action(&command).is_none() {
            return Err(SessionError::Action(format!(
                "{command}: no such action in generation {}",
                generation.number
            )));
        }
        let runtime = generation.runtime(plugin).ok_or_else(|| {
            SessionError::Action(format!(
                "{command}: the runtime of `{plugin}` is not running"
            ))
        })?;
        let session_id = self.session_id();
        match runtime
            .ui_action(action, &session_id, generation.number, &args)
            .await
        {
            Ok((true, message)) => Ok(message),
            Ok((false, message)) => Err(SessionError::Action(format!(
                "{command} was not accepted{}",
                message.map(|m| format!(": {m}")).unwrap_or_default()
            ))),
            Err(error) => Err(SessionError::Action(format!(
                "{command} failed{}: {}",
                error.reason.map(|r| format!(" [{r}]")).unwrap_or_default(),
                error.message
            ))),
        }
    }

    /// Submit a published form: `extension/ui/submit` to the plugin that
    /// published `surface_id` in the current generation.
    pub async fn submit_form(
        &self,
        plugin: &str,
        surface_id: &str,
        values: BTreeMap<String, Value>,
    ) -> Result<(), SessionError> {
        self.ensure_open()?;
        let generation = self.inner.host.current();
        let published = self.inner.host.ui().surfaces().into_iter().find(|s| {
            s.plugin == plugin
                && s.surface_id == surface_id
                && s.generation == generation.number
                && s.kind == crate::runtime::ui::PublishKind::Form
        });
        let Some(form) = published else {
            return Err(SessionError::Form(format!(
                "{plugin} has no form `{surface_id}` in generation {}",
                generation.number
            )));
        };
        if let crate::runtime::ui::UiPayload::Form(payload) = &form.payload {
            for field in &payload.fields {
                if field.required == Some(true) && !values.contains_key(&field.key) {
                    return Err(SessionError::Form(format!(
                        "{plugin}/{surface_id}: field `{}` is required",
                        field.key
                    )));
                }
            }
            if let Some(unknown) = values
                .keys()
                .find(|k| !payload.fields.iter().any(|f| &f.key == *k))
            {
                return Err(SessionError::Form(format!(
                    "{plugin}/{surface_id}: the form has no field `{unknown}`"
                )));
            }
        }
        let runtime = generation.runtime(plugin).ok_or_else(|| {
            SessionError::Form(format!("the runtime of `{plugin}` is not running"))
        })?;
        let session_id = self.session_id();
        match runtime
            .ui_submit(surface_id, &session_id, generation.number, &values)
            .await
        {
            Ok(true) => Ok(()),
            Ok(false) => Err(SessionError::Form(format!(
                "{plugin} did not accept the form `{surface_id}`"
            ))),
            Err(error) => Err(SessionError::Form(format!(
                "{plugin}/{surface_id}: submit failed{}: {}",
                error.reason.map(|r| format!(" [{r}]")).unwrap_or_default(),
                error.message
            ))),
        }
    }

    /// The UI surfaces a frontend shows now (latest per surface).
    pub fn surfaces(&self) -> Vec<SurfaceUpdate> {
        self.inner.host.ui().surfaces()
    }

    /// Close: cancel a running turn, run `session.end` and the SessionEnd
    /// hooks, shut the runtimes down. Idempotent.
    pub async fn close(&self) -> Vec<PointRecord> {
        {
            let mut state = self.state();
            if state.closed {
                return Vec::new();
            }
            state.closed = true;
        }
        self.cancel();
        // Wait for a running turn to notice the cancel.
        let _gate = self.inner.turn_gate.lock().await;
        let records = turn::close_session(self).await;
        self.inner.host.shutdown().await;
        self.inner.bus.emit(SessionEvent::Closed);
        records
    }

    /// The points and hooks recorded while opening.
    pub fn opening(&self) -> (Vec<PointRecord>, Vec<HookRecord>) {
        let state = self.state();
        (state.opening.clone(), state.opening_hooks.clone())
    }

    // ----- crate-internal helpers -----

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn cancel_slot(&self) -> std::sync::MutexGuard<'_, Option<CancellationToken>> {
        self.inner
            .cancel
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn ensure_open(&self) -> Result<(), SessionError> {
        if self.state().closed {
            Err(SessionError::Closed)
        } else {
            Ok(())
        }
    }

    pub(crate) fn emit(&self, event: SessionEvent) {
        self.inner.bus.emit(event);
    }

    pub(crate) fn warn(&self, source: &str, message: &str) {
        self.emit(SessionEvent::Warning {
            source: source.to_string(),
            message: crate::runtime::redaction::clean_text(message),
        });
    }

    fn emit_status(&self) {
        self.emit(SessionEvent::Status {
            status: self.status(),
        });
    }

    fn announce_reload(&self, outcome: &ReloadOutcome) {
        self.emit(SessionEvent::Reload {
            outcome: outcome.clone(),
        });
        if let ReloadOutcome::Swapped(_) = outcome {
            // The model may have gone with its plugin: say so now rather
            // than at the next turn.
            let model = self.model();
            if !self.models().contains(&model) {
                self.warn(
                    "session",
                    &format!(
                        "model `{model}` is no longer provided after the reload; /model picks another"
                    ),
                );
            }
        }
    }
}
