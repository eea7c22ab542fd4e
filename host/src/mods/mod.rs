//! Claude Code mods: one Node process per mod, a tighten-only extension
//! runtime on budgets.
//!
//! A mod is a Claude plugin whose `hooks/hooks.json` names one ES module
//! (recognised by `reasonix_package::mods`). It runs only while `[mods]
//! enabled = true` in the user file, under the `node` on PATH (22 or
//! newer, never one inside the workspace), through the host script
//! shipped in this binary. The session owns one [`Mods`] and calls it at
//! its points:
//!
//! | point | where in the turn | what a mod may do |
//! | --- | --- | --- |
//! | `session.start` / `session.end` | opening / closing | register tools and commands (start) |
//! | `turn.start` | as a turn begins | observe |
//! | `prompt.submit` | after `input.receive` interceptors, before UserPromptSubmit hooks | rewrite, `{drop}`, context blocks |
//! | `tool.call` | after `tool.before` interceptors, before PreToolUse hooks | `{deny}`, rewrite arguments, `{result}` in place of the tool |
//! | `tool.check` | in the permission step | deny or ask (an allow is ignored) |
//! | `command.run`, `ui.press` | `/<plugin>:<name>` | answer a command, react to a band action |
//! | `ui.render` | after opening, after each turn, on `$.ui.invalidate()` | the AbovePrompt band |
//!
//! Tighten-only: whatever a process writes, the host never takes an allow
//! from it, and nothing it does reaches the cached system prompt or the
//! provider-visible tool list. A hook gets `hook_budget_ms` of its own
//! running time; past it the process is killed and the turn goes on
//! without it. The process restarts at the next reload; after three deaths
//! the mod is disabled for the session and its status says why.

pub mod config;
pub mod node;
pub mod process;

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use reasonix_package::mods::{ModLanguage, ModModule, SERVED_EVENTS};
use reasonix_protocol::types::{ProviderMessage, ProviderUsage};
use reasonix_sidecar::{BoxFuture, Guard};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;

pub use config::ModsConfig;
pub use node::{Node, NodeProblem, TypeStripping};
use process::{CallFailure, ModProcess, ModRejection};

use crate::home::ReasonixHome;
use crate::runtime::dispatcher::{ChainStep, Outcome, StepResult, StepRole};
use crate::runtime::redaction::clean_text;
use crate::runtime::ui::payloads::FormField;
use crate::runtime::ui::{FormPayload, RequestKind};
use crate::session::events::{InputSource, SessionEvent};
use crate::session::report::PointRecord;
use crate::session::{MenuEntry, Session, WeakSession};

/// The receipt gap of every turn during which a mod ran: what a
/// full-trust process did is outside what the host observes.
pub const GAP_UNOBSERVED: &str = "mod_effects_unobserved";
/// The least time starting a mod's process and loading its module get.
pub const LOAD_BUDGET: Duration = Duration::from_secs(30);
/// Deaths after which a mod is disabled for the session.
pub const MAX_DEATHS: u32 = 3;
/// The prefix of a mod tool's name (`mod__<plugin>__<tool>`).
pub const TOOL_PREFIX: &str = "mod__";

/// What the session tells the mods runtime once.
#[derive(Debug, Clone)]
pub struct ModsContext {
    pub session_id: String,
    pub workspace: PathBuf,
    pub home: ReasonixHome,
    /// The session is saved to a file (`$.prompt.submit` needs one).
    pub has_file: bool,
    pub guard: Guard,
}

/// One line of a mod's UI, as a session event carries it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ModUi {
    Toast {
        text: String,
    },
    Status {
        text: String,
    },
    Notice {
        text: String,
    },
    Log {
        text: String,
    },
    /// The AbovePrompt band (`ui.render`); empty lines and no actions
    /// clear it.
    Band {
        lines: Vec<String>,
        actions: Vec<BandAction>,
    },
}

/// A button of the band: `/<plugin>:<id>` presses it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BandAction {
    pub id: String,
    pub label: String,
}

/// A mod as the session status shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModStatus {
    pub plugin: String,
    /// `running`, `stopped`, `dead`, `disabled` or `unavailable`.
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub deaths: u32,
    pub events: Vec<String>,
    /// Events and `$` members it used that this host does not serve.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unserved: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
}

#[derive(Debug, Clone)]
enum Life {
    Stopped,
    Running,
    Dead(String),
    Disabled(String),
    Unavailable(String),
}

#[derive(Debug, Clone)]
struct ToolSpec {
    name: String,
    description: String,
    parameters: Value,
}

#[derive(Debug, Clone)]
struct CommandSpec {
    name: String,
    description: Option<String>,
}

struct Mod {
    version: Option<String>,
    root: PathBuf,
    module: ModModule,
    deaths: u32,
    life: Life,
    process: Option<Arc<ModProcess>>,
    /// event → handler count, from `register`.
    events: BTreeMap<String, usize>,
    unserved: BTreeSet<String>,
    tools: Vec<ToolSpec>,
    commands: Vec<CommandSpec>,
    band_actions: Vec<BandAction>,
    /// `session.start` is running: registration is open, answers are not.
    starting: bool,
}

#[derive(Default)]
struct State {
    node: Option<Result<Node, NodeProblem>>,
    mods: BTreeMap<String, Mod>,
    /// `$.prompt.submit` calls since the last prompt the user wrote.
    submitted: u64,
    queue: VecDeque<(String, String)>,
    usage: Option<ProviderUsage>,
    /// A mod ran since the turn began (for the receipt gap).
    ran: bool,
    next_ask: u64,
}

struct Shared {
    config: ModsConfig,
    context: ModsContext,
    state: Mutex<State>,
    session: OnceLock<WeakSession>,
    /// Open `$.ui.ask` questions by (plugin, id), for `$.ui.resolve`.
    asks: Mutex<HashMap<(String, String), oneshot::Sender<Value>>>,
}

/// The session's mods runtime. Inert unless `[mods] enabled = true`.
pub struct Mods {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Mods {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mods")
            .field("enabled", &self.shared.config.enabled)
            .finish()
    }
}

/// What one hook call came to.
enum HookCall {
    Value(Value),
    /// It threw, or broke the contract: skipped, with why.
    Failed(String),
    /// The process died (killed over budget, or exited).
    Died(String),
}

/// What `prompt.submit` decided.
#[derive(Debug, Default)]
pub struct PromptOutcome {
    /// The prompt after rewrites.
    pub text: String,
    /// Context blocks for the turn's tail: (source header, text).
    pub context: Vec<(String, String)>,
    /// A mod dropped the prompt: (plugin, reason).
    pub dropped: Option<(String, String)>,
    pub records: Vec<PointRecord>,
}

/// What `tool.call` decided.
#[derive(Debug)]
pub enum CallVerdict {
    /// Go on with these arguments (rewritten or not).
    Continue(String),
    Deny {
        plugin: String,
        reason: String,
    },
    /// The mod answered in place of the tool: the tool does not run.
    Answer {
        plugin: String,
        result: String,
    },
}

#[derive(Debug)]
pub struct CallOutcome {
    pub verdict: CallVerdict,
    pub records: Vec<PointRecord>,
}

/// What `tool.check` decided (tighten-only).
#[derive(Debug, PartialEq, Eq)]
pub enum CheckVerdict {
    None,
    Ask { plugin: String, reason: String },
    Deny { plugin: String, reason: String },
}

#[derive(Debug)]
pub struct CheckOutcome {
    pub verdict: CheckVerdict,
    pub records: Vec<PointRecord>,
}

impl Mods {
    pub fn new(config: ModsConfig, context: ModsContext) -> Mods {
        Mods {
            shared: Arc::new(Shared {
                config,
                context,
                state: Mutex::new(State::default()),
                session: OnceLock::new(),
                asks: Mutex::new(HashMap::new()),
            }),
        }
    }

    pub fn enabled(&self) -> bool {
        self.shared.config.enabled
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared.state()
    }

    /// Every mod, for the session status.
    pub fn status(&self) -> Vec<ModStatus> {
        let state = self.state();
        state
            .mods
            .iter()
            .map(|(plugin, m)| {
                let (state, reason) = match &m.life {
                    Life::Stopped => ("stopped", None),
                    Life::Running => ("running", None),
                    Life::Dead(why) => ("dead", Some(why.clone())),
                    Life::Disabled(why) => ("disabled", Some(why.clone())),
                    Life::Unavailable(why) => ("unavailable", Some(why.clone())),
                };
                ModStatus {
                    plugin: plugin.clone(),
                    state,
                    reason,
                    deaths: m.deaths,
                    events: m.events.keys().cloned().collect(),
                    unserved: m.unserved.iter().cloned().collect(),
                    tools: m.tools.iter().map(|t| tool_name(plugin, &t.name)).collect(),
                    commands: m
                        .commands
                        .iter()
                        .map(|c| format!("/{plugin}:{}", c.name))
                        .collect(),
                }
            })
            .collect()
    }

    // ----- lifecycle -----

    /// Opening: start every mod of the enabled packages and run their
    /// `session.start`, then render their bands.
    pub async fn open(&self, session: &Session, resumed: bool) {
        if !self.enabled() {
            return;
        }
        let _ = self.shared.session.set(session.downgrade());
        self.start_all(session, resumed).await;
    }

    /// A reload: stop every process and start the mods of the current
    /// generation again (dead ones too; disabled ones stay disabled).
    pub async fn reload(&self, session: &Session) {
        if !self.enabled() {
            return;
        }
        self.stop_all().await;
        self.start_all(session, true).await;
    }

    /// Closing: `session.end`, then every process ends.
    pub async fn close(&self, session: &Session) {
        if !self.enabled() {
            return;
        }
        self.observe(session, "session.end", json!({ "reason": "exit" }))
            .await;
        self.stop_all().await;
    }

    async fn stop_all(&self) {
        let processes: Vec<Arc<ModProcess>> = {
            let mut state = self.state();
            state
                .mods
                .values_mut()
                .filter_map(|m| {
                    if matches!(m.life, Life::Running) {
                        m.life = Life::Stopped;
                    }
                    m.process.take()
                })
                .collect()
        };
        for process in processes {
            process.shutdown().await;
        }
    }

    async fn start_all(&self, session: &Session, resumed: bool) {
        let packages: Vec<(String, Option<String>, PathBuf, ModModule)> = session
            .inventory()
            .packages
            .iter()
            .filter_map(|p| {
                p.package
                    .inventory
                    .module
                    .clone()
                    .map(|module| (p.name.clone(), p.version.clone(), p.root.clone(), module))
            })
            .collect();
        {
            let mut state = self.state();
            let names: BTreeSet<&String> = packages.iter().map(|p| &p.0).collect();
            // Mods whose package is gone are forgotten (deaths with them).
            state.mods.retain(|name, _| names.contains(name));
        }
        if packages.is_empty() {
            return;
        }
        let node = self.node().await;
        for (plugin, version, root, module) in packages {
            let root = std::path::absolute(&root).unwrap_or(root);
            let unavailable = match (&node, module.language) {
                (Err(problem), _) => Some(problem.to_string()),
                (Ok(node), ModLanguage::TypeScript)
                    if node.type_stripping == TypeStripping::Unavailable =>
                {
                    Some(format!(
                        "{} is TypeScript, and the node on PATH ({} {}) does not strip types; use Node.js 22.18 or newer, or build the module to .js",
                        module.path,
                        node.path.display(),
                        node.version
                    ))
                }
                _ => None,
            };
            {
                let mut state = self.state();
                let entry = state.mods.entry(plugin.clone()).or_insert_with(|| Mod {
                    version: None,
                    root: root.clone(),
                    module: module.clone(),
                    deaths: 0,
                    life: Life::Stopped,
                    process: None,
                    events: BTreeMap::new(),
                    unserved: BTreeSet::new(),
                    tools: Vec::new(),
                    commands: Vec::new(),
                    band_actions: Vec::new(),
                    starting: false,
                });
                entry.version = version;
                entry.root = root.clone();
                entry.module = module.clone();
                entry.events.clear();
                entry.unserved.clear();
                entry.tools.clear();
                entry.commands.clear();
                entry.band_actions.clear();
                if matches!(entry.life, Life::Disabled(_)) {
                    continue;
                }
                if let Some(why) = &unavailable {
                    entry.life = Life::Unavailable(why.clone());
                }
            }
            if let Some(why) = unavailable {
                session.warn(&format!("mod {plugin}"), &why);
                continue;
            }
            if let Ok(node) = &node {
                self.start_one(session, node, &plugin, resumed).await;
            }
        }
        let plugins: Vec<String> = self.state().mods.keys().cloned().collect();
        for plugin in plugins {
            self.render(session, &plugin).await;
        }
    }

    /// The node for this session (probed once; a reload probes again when
    /// there was none).
    async fn node(&self) -> Result<Node, NodeProblem> {
        if let Some(Ok(node)) = &self.state().node {
            return Ok(node.clone());
        }
        let workspace = self.shared.context.workspace.clone();
        let found = tokio::task::spawn_blocking(move || node::find(Some(&workspace)))
            .await
            .unwrap_or_else(|e| {
                Err(NodeProblem::Missing {
                    skipped: vec![PathBuf::from(format!("(probe failed: {e})"))],
                })
            });
        self.state().node = Some(found.clone());
        found
    }

    async fn start_one(&self, session: &Session, node: &Node, plugin: &str, resumed: bool) {
        let (root, module, version) = {
            let state = self.state();
            let Some(m) = state.mods.get(plugin) else {
                return;
            };
            (m.root.clone(), m.module.clone(), m.version.clone())
        };
        let serve = self.serve_for(plugin);
        let process = match ModProcess::start(
            node,
            plugin,
            root.clone(),
            &self.shared.context.guard,
            serve,
        )
        .await
        {
            Ok(p) => Arc::new(p),
            Err(why) => {
                self.died(session, plugin, format!("could not start: {why}"));
                return;
            }
        };
        let store = self
            .shared
            .context
            .home
            .root()
            .join("data/mods")
            .join(plugin)
            .join("store.json");
        let workspace = self.shared.context.workspace.display().to_string();
        let params = json!({
            "module": root.join(&module.path),
            "plugin": { "name": plugin, "version": version, "root": root },
            "session": { "id": self.shared.context.session_id, "cwd": workspace, "root": workspace },
            "store": store,
        });
        {
            let mut state = self.state();
            if let Some(m) = state.mods.get_mut(plugin) {
                m.process = Some(Arc::clone(&process));
                m.life = Life::Running;
            }
        }
        let loaded = process.call("mod/load", params, self.load_budget()).await;
        let events = match loaded {
            Ok(value) => value
                .get("events")
                .and_then(Value::as_object)
                .map(|events| {
                    events
                        .iter()
                        .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0) as usize))
                        .collect::<BTreeMap<_, _>>()
                })
                .unwrap_or_default(),
            Err(failure) => {
                let why = match failure {
                    CallFailure::Threw(message) => {
                        format!("its module failed to load: {}", first_line(&message))
                    }
                    CallFailure::OverBudget(budget) => format!(
                        "killed: loading its module (import and register) ran past {} ms",
                        budget.as_millis()
                    ),
                    other => self.failure_text(&process, "register", other),
                };
                process.kill(&why);
                self.died(session, plugin, why);
                return;
            }
        };
        {
            let mut state = self.state();
            if let Some(m) = state.mods.get_mut(plugin) {
                for event in events.keys() {
                    if !SERVED_EVENTS.contains(&event.as_str()) {
                        m.unserved.insert(format!("event {event}"));
                    }
                }
                m.events = events;
                m.starting = true;
            }
        }
        let payload = json!({
            "sessionId": self.shared.context.session_id,
            "cwd": workspace,
            "root": workspace,
            "resumed": resumed,
        });
        for index in 0..self.handlers(plugin, "session.start") {
            if let HookCall::Died(_) = self
                .call_hook(session, plugin, "session.start", index, payload.clone())
                .await
            {
                break;
            }
        }
        if let Some(m) = self.state().mods.get_mut(plugin) {
            m.starting = false;
        }
    }

    fn budget(&self) -> Option<Duration> {
        config::ceiling(self.shared.config.hook_budget_ms).map(Duration::from_millis)
    }

    /// Starting Node, importing the module and `register` together: the
    /// hook budget, but never less than [`LOAD_BUDGET`] (a cold Node on a
    /// busy machine is not a looping mod).
    fn load_budget(&self) -> Option<Duration> {
        self.budget().map(|b| b.max(LOAD_BUDGET))
    }

    fn handlers(&self, plugin: &str, event: &str) -> usize {
        let state = self.state();
        state
            .mods
            .get(plugin)
            .filter(|m| matches!(m.life, Life::Running))
            .and_then(|m| m.events.get(event).copied())
            .unwrap_or(0)
    }

    /// The running mods with handlers for `event`, in name order.
    fn listeners(&self, event: &str) -> Vec<(String, usize)> {
        let state = self.state();
        state
            .mods
            .iter()
            .filter(|(_, m)| matches!(m.life, Life::Running))
            .filter_map(|(name, m)| m.events.get(event).map(|n| (name.clone(), *n)))
            .collect()
    }

    fn failure_text(&self, process: &ModProcess, what: &str, failure: CallFailure) -> String {
        match failure {
            CallFailure::OverBudget(budget) => format!(
                "killed: its {what} hook ran past hook_budget_ms ({} ms)",
                budget.as_millis()
            ),
            CallFailure::Exited(why) => {
                let tail = process.stderr();
                let last = tail.lines().last().unwrap_or_default();
                if last.is_empty() {
                    format!("its process ended during {what}: {why}")
                } else {
                    format!(
                        "its process ended during {what}: {why}; stderr: {}",
                        clean_text(last)
                    )
                }
            }
            CallFailure::Threw(message) => clean_text(&first_line(&message)),
        }
    }

    /// A death: counted, said, and after [`MAX_DEATHS`] the mod is
    /// disabled for the session.
    fn died(&self, session: &Session, plugin: &str, why: String) {
        let message = {
            let mut state = self.state();
            let Some(m) = state.mods.get_mut(plugin) else {
                return;
            };
            m.process = None;
            m.deaths += 1;
            m.starting = false;
            if m.deaths >= MAX_DEATHS {
                let reason = format!("disabled after {} deaths; the last: {why}", m.deaths);
                m.life = Life::Disabled(reason.clone());
                reason
            } else {
                m.life = Life::Dead(why.clone());
                format!(
                    "{why}; it restarts at the next reload ({} of {MAX_DEATHS} deaths)",
                    m.deaths
                )
            }
        };
        session.warn(&format!("mod {plugin}"), &message);
    }

    /// Call one handler, within the budget.
    async fn call_hook(
        &self,
        session: &Session,
        plugin: &str,
        event: &str,
        index: usize,
        payload: Value,
    ) -> HookCall {
        let process = {
            let mut state = self.state();
            state.ran = true;
            match state.mods.get(plugin).and_then(|m| m.process.clone()) {
                Some(p) => p,
                None => return HookCall::Died("not running".into()),
            }
        };
        let params = json!({ "event": event, "index": index, "payload": payload });
        match process.call("mod/hook", params, self.budget()).await {
            Ok(value) => HookCall::Value(value.get("value").cloned().unwrap_or(Value::Null)),
            Err(CallFailure::Threw(message)) => HookCall::Failed(format!(
                "its {event} hook threw: {}",
                clean_text(&first_line(&message))
            )),
            Err(failure) => {
                let still_running = self
                    .state()
                    .mods
                    .get(plugin)
                    .and_then(|m| m.process.as_ref())
                    .is_some_and(|p| Arc::ptr_eq(p, &process));
                let why = self.failure_text(&process, event, failure);
                if still_running {
                    process.kill(&why);
                    self.died(session, plugin, why.clone());
                }
                HookCall::Died(why)
            }
        }
    }

    /// Call every handler of `event` for its side effects.
    async fn observe(
        &self,
        session: &Session,
        event: &'static str,
        payload: Value,
    ) -> Vec<PointRecord> {
        let mut steps = Vec::new();
        for (plugin, count) in self.listeners(event) {
            for index in 0..count {
                match self
                    .call_hook(session, &plugin, event, index, payload.clone())
                    .await
                {
                    HookCall::Value(_) => steps.push(step(&plugin, StepResult::Continued)),
                    HookCall::Failed(why) => {
                        steps.push(step(&plugin, StepResult::Skipped { why }));
                    }
                    HookCall::Died(why) => {
                        steps.push(step(&plugin, StepResult::Skipped { why }));
                        break;
                    }
                }
            }
        }
        record(event, None, steps, false, Outcome::Continue, None)
    }

    // ----- the turn's points -----

    /// `turn.start`. A turn from the user opens a new `$.prompt.submit`
    /// allowance.
    pub async fn turn_start(
        &self,
        session: &Session,
        turn: u64,
        source: InputSource,
        model: &str,
    ) -> Vec<PointRecord> {
        if !self.enabled() {
            return Vec::new();
        }
        {
            let mut state = self.state();
            state.ran = state.mods.values().any(|m| m.process.is_some());
            if source != InputSource::Mod {
                state.submitted = 0;
            }
        }
        self.observe(
            session,
            "turn.start",
            json!({ "turn": turn, "source": source, "model": model }),
        )
        .await
    }

    /// `prompt.submit`: rewrites chain through the mods in name order; the
    /// first `{drop}` stops the prompt; context blocks are cut at
    /// `context_bytes` and the turn keeps `context_blocks` of them.
    pub async fn prompt_submit(
        &self,
        session: &Session,
        text: String,
        source: InputSource,
    ) -> PromptOutcome {
        let mut outcome = PromptOutcome {
            text,
            ..PromptOutcome::default()
        };
        if !self.enabled() {
            return outcome;
        }
        let mut steps = Vec::new();
        let mut replaced = false;
        let mut notes = Vec::new();
        let mut blocks: Vec<(String, String)> = Vec::new();
        'mods: for (plugin, count) in self.listeners("prompt.submit") {
            for index in 0..count {
                let payload = json!({ "text": outcome.text, "source": source });
                let value = match self
                    .call_hook(session, &plugin, "prompt.submit", index, payload)
                    .await
                {
                    HookCall::Value(v) => v,
                    HookCall::Failed(why) => {
                        steps.push(step(&plugin, StepResult::Skipped { why }));
                        continue;
                    }
                    HookCall::Died(why) => {
                        steps.push(step(&plugin, StepResult::Skipped { why }));
                        continue 'mods;
                    }
                };
                if let Some(reason) = reason_of(&value, "drop") {
                    let reason = reason.unwrap_or_else(|| format!("dropped by mod {plugin}"));
                    steps.push(step(
                        &plugin,
                        StepResult::Blocked {
                            reason: reason.clone(),
                        },
                    ));
                    outcome.dropped = Some((plugin.clone(), reason.clone()));
                    outcome.records = record(
                        "prompt.submit",
                        None,
                        steps,
                        replaced,
                        Outcome::Blocked { plugin, reason },
                        None,
                    );
                    return outcome;
                }
                let mut changed = false;
                if let Some(text) = value.get("text").and_then(Value::as_str)
                    && text != outcome.text
                {
                    outcome.text = text.to_string();
                    changed = true;
                }
                if let Some(list) = value.get("context").and_then(Value::as_array) {
                    for block in list {
                        let (label, text) = match block {
                            Value::String(text) => (None, text.clone()),
                            Value::Object(o) => (
                                o.get("label").and_then(Value::as_str).map(str::to_string),
                                o.get("text")
                                    .and_then(Value::as_str)
                                    .unwrap_or_default()
                                    .to_string(),
                            ),
                            _ => continue,
                        };
                        if text.is_empty() {
                            continue;
                        }
                        blocks.push((context_source(&plugin, label.as_deref()), text));
                        changed = true;
                    }
                }
                replaced |= changed;
                steps.push(step(
                    &plugin,
                    if changed {
                        StepResult::Replaced
                    } else {
                        StepResult::Continued
                    },
                ));
            }
        }
        if let Some(max) = config::ceiling(self.shared.config.context_blocks)
            && blocks.len() as u64 > max
        {
            let over = blocks.len() as u64 - max;
            blocks.truncate(max as usize);
            notes.push(format!(
                "{over} context block(s) over context_blocks ({max}) left out"
            ));
        }
        if let Some(max) = config::ceiling(self.shared.config.context_bytes) {
            for (source, text) in &mut blocks {
                if text.len() as u64 > max {
                    notes.push(format!("a block of {source} cut at context_bytes ({max})"));
                    truncate_at(text, max as usize);
                }
            }
        }
        outcome.context = blocks;
        if !steps.is_empty() {
            outcome.records = record(
                "prompt.submit",
                None,
                steps,
                replaced,
                Outcome::Continue,
                (!notes.is_empty()).then(|| notes.join("; ")),
            );
        }
        outcome
    }

    /// `tool.call`: the first `{deny}` or `{result}` wins; argument
    /// rewrites chain.
    pub async fn tool_call(&self, session: &Session, tool: &str, arguments: &str) -> CallOutcome {
        let mut arguments = arguments.to_string();
        if !self.enabled() {
            return CallOutcome {
                verdict: CallVerdict::Continue(arguments),
                records: Vec::new(),
            };
        }
        let mut steps = Vec::new();
        let mut replaced = false;
        'mods: for (plugin, count) in self.listeners("tool.call") {
            for index in 0..count {
                let payload = json!({ "name": tool, "arguments": args_value(&arguments) });
                let value = match self
                    .call_hook(session, &plugin, "tool.call", index, payload)
                    .await
                {
                    HookCall::Value(v) => v,
                    HookCall::Failed(why) => {
                        steps.push(step(&plugin, StepResult::Skipped { why }));
                        continue;
                    }
                    HookCall::Died(why) => {
                        steps.push(step(&plugin, StepResult::Skipped { why }));
                        continue 'mods;
                    }
                };
                if let Some(reason) = reason_of(&value, "deny") {
                    let reason = reason.unwrap_or_else(|| format!("denied by mod {plugin}"));
                    steps.push(step(
                        &plugin,
                        StepResult::Blocked {
                            reason: reason.clone(),
                        },
                    ));
                    return CallOutcome {
                        records: record(
                            "tool.call",
                            Some(tool),
                            steps,
                            replaced,
                            Outcome::Blocked {
                                plugin: plugin.clone(),
                                reason: reason.clone(),
                            },
                            None,
                        ),
                        verdict: CallVerdict::Deny { plugin, reason },
                    };
                }
                if let Some(result) = value.get("result").filter(|v| !v.is_null()) {
                    let text = match result {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    let result = format!(
                        "[answered by mod {plugin} in place of `{tool}`; the tool did not run]\n{}",
                        clean_text(&text)
                    );
                    steps.push(step(&plugin, StepResult::Replaced));
                    return CallOutcome {
                        records: record(
                            "tool.call",
                            Some(tool),
                            steps,
                            true,
                            Outcome::Continue,
                            Some(format!("answered by mod {plugin} in place of the tool")),
                        ),
                        verdict: CallVerdict::Answer { plugin, result },
                    };
                }
                match value.get("arguments") {
                    Some(Value::String(s)) => {
                        arguments = s.clone();
                        replaced = true;
                        steps.push(step(&plugin, StepResult::Replaced));
                    }
                    Some(v @ Value::Object(_)) => {
                        arguments = v.to_string();
                        replaced = true;
                        steps.push(step(&plugin, StepResult::Replaced));
                    }
                    _ => steps.push(step(&plugin, StepResult::Continued)),
                }
            }
        }
        let note = replaced.then(|| format!("arguments → {}", short(&arguments)));
        let records = if steps.is_empty() {
            Vec::new()
        } else {
            record(
                "tool.call",
                Some(tool),
                steps,
                replaced,
                Outcome::Continue,
                note,
            )
        };
        CallOutcome {
            verdict: CallVerdict::Continue(arguments),
            records,
        }
    }

    /// `tool.check` (the permission step): deny and ask only. An allow, or
    /// anything else a mod writes, is ignored: it can only tighten.
    pub async fn tool_check(
        &self,
        session: &Session,
        tool: &str,
        arguments: &str,
        read_only: bool,
    ) -> CheckOutcome {
        let mut verdict = CheckVerdict::None;
        if !self.enabled() {
            return CheckOutcome {
                verdict,
                records: Vec::new(),
            };
        }
        let mut steps = Vec::new();
        'mods: for (plugin, count) in self.listeners("tool.check") {
            for index in 0..count {
                let payload = json!({
                    "name": tool,
                    "arguments": args_value(arguments),
                    "readOnly": read_only,
                });
                let value = match self
                    .call_hook(session, &plugin, "tool.check", index, payload)
                    .await
                {
                    HookCall::Value(v) => v,
                    HookCall::Failed(why) => {
                        steps.push(step(&plugin, StepResult::Skipped { why }));
                        continue;
                    }
                    HookCall::Died(why) => {
                        steps.push(step(&plugin, StepResult::Skipped { why }));
                        continue 'mods;
                    }
                };
                let decision = check_decision(&value);
                match decision {
                    Decision::Deny(reason) => {
                        let reason = reason.unwrap_or_else(|| format!("denied by mod {plugin}"));
                        steps.push(step(
                            &plugin,
                            StepResult::Blocked {
                                reason: reason.clone(),
                            },
                        ));
                        verdict = CheckVerdict::Deny {
                            plugin: plugin.clone(),
                            reason,
                        };
                        break 'mods;
                    }
                    Decision::Ask(reason) => {
                        steps.push(step(&plugin, StepResult::Continued));
                        if verdict == CheckVerdict::None {
                            verdict = CheckVerdict::Ask {
                                plugin: plugin.clone(),
                                reason: reason.unwrap_or_else(|| format!("mod {plugin} asks")),
                            };
                        }
                    }
                    Decision::Ignored(what) => steps.push(step(
                        &plugin,
                        StepResult::Refused {
                            why: format!("{what} ignored: a mod can only deny or ask"),
                        },
                    )),
                    Decision::Nothing => steps.push(step(&plugin, StepResult::Continued)),
                }
            }
        }
        let (outcome, note) = match &verdict {
            CheckVerdict::Deny { plugin, reason } => (
                Outcome::Blocked {
                    plugin: plugin.clone(),
                    reason: reason.clone(),
                },
                None,
            ),
            CheckVerdict::Ask { plugin, reason } => (
                Outcome::Continue,
                Some(format!("mod {plugin} asks the user: {reason}")),
            ),
            CheckVerdict::None => (Outcome::Continue, None),
        };
        let records = if steps.is_empty() {
            Vec::new()
        } else {
            record("tool.check", Some(tool), steps, false, outcome, note)
        };
        CheckOutcome { verdict, records }
    }

    /// Record the last response's token counts (`$.session.usage()`).
    pub fn note_usage(&self, usage: Option<&ProviderUsage>) {
        if self.enabled() && usage.is_some() {
            self.state().usage = usage.cloned();
        }
    }

    /// The end of a turn: the bands render again; the receipt's gaps.
    pub async fn turn_end(&self, session: &Session) -> Vec<String> {
        if !self.enabled() {
            return Vec::new();
        }
        let plugins: Vec<String> = self.state().mods.keys().cloned().collect();
        for plugin in plugins {
            self.render(session, &plugin).await;
        }
        let mut state = self.state();
        let ran = state.ran || state.mods.values().any(|m| m.process.is_some());
        state.ran = false;
        if ran {
            vec![GAP_UNOBSERVED.to_string()]
        } else {
            Vec::new()
        }
    }

    /// The next prompt a mod queued with `$.prompt.submit`, under the
    /// host's header.
    pub fn next_prompt(&self) -> Option<String> {
        let (plugin, text) = self.state().queue.pop_front()?;
        Some(format!(
            "<mod-prompt source=\"mod {plugin}\" note=\"written by the mod, not by the user\">\n{text}\n</mod-prompt>"
        ))
    }

    // ----- UI -----

    async fn render(&self, session: &Session, plugin: &str) {
        let count = self.handlers(plugin, "ui.render");
        let mut lines = Vec::new();
        let mut actions = Vec::new();
        for index in 0..count {
            match self
                .call_hook(session, plugin, "ui.render", index, json!({}))
                .await
            {
                HookCall::Value(value) => band_of(&value, &mut lines, &mut actions),
                HookCall::Failed(why) => session.warn(&format!("mod {plugin}"), &why),
                HookCall::Died(_) => break,
            }
        }
        if count == 0 {
            return;
        }
        if let Some(m) = self.state().mods.get_mut(plugin) {
            m.band_actions = actions.clone();
        }
        session.emit(SessionEvent::Mod {
            plugin: plugin.to_string(),
            ui: ModUi::Band { lines, actions },
        });
    }

    fn render_later(&self, plugin: &str) {
        let Some(session) = self.shared.session.get().and_then(WeakSession::upgrade) else {
            return;
        };
        let mods = Mods {
            shared: Arc::clone(&self.shared),
        };
        let plugin = plugin.to_string();
        tokio::spawn(async move { mods.render(&session, &plugin).await });
    }

    // ----- slash commands -----

    /// `/<plugin>:<name>` of a mod: a registered command (`command.run`)
    /// or a band action (`ui.press`). `None` when no mod owns it.
    pub async fn slash(
        &self,
        session: &Session,
        word: &str,
        rest: &str,
    ) -> Option<Result<(String, String), crate::session::SessionError>> {
        if !self.enabled() {
            return None;
        }
        let (plugin, name) = word.split_once(':')?;
        let (is_command, is_action) = {
            let state = self.state();
            let m = state.mods.get(plugin)?;
            (
                m.commands.iter().any(|c| c.name == name),
                m.band_actions.iter().any(|a| a.id == name),
            )
        };
        let command = format!("/{plugin}:{name}");
        if is_command {
            return Some(
                self.run_command(session, plugin, name, rest)
                    .await
                    .map(|text| (command, text))
                    .map_err(crate::session::SessionError::Action),
            );
        }
        if is_action {
            let records = self.press(session, plugin, name).await;
            let failed = records
                .iter()
                .flat_map(|r| &r.steps)
                .find_map(|s| match &s.result {
                    StepResult::Skipped { why } => Some(why.clone()),
                    _ => None,
                });
            self.render(session, plugin).await;
            return Some(match failed {
                Some(why) => Err(crate::session::SessionError::Action(format!(
                    "{command}: {why}"
                ))),
                None => Ok((command.clone(), format!("{command}: pressed"))),
            });
        }
        None
    }

    async fn press(&self, session: &Session, plugin: &str, id: &str) -> Vec<PointRecord> {
        let mut steps = Vec::new();
        for index in 0..self.handlers(plugin, "ui.press") {
            match self
                .call_hook(session, plugin, "ui.press", index, json!({ "id": id }))
                .await
            {
                HookCall::Value(_) => steps.push(step(plugin, StepResult::Continued)),
                HookCall::Failed(why) | HookCall::Died(why) => {
                    steps.push(step(plugin, StepResult::Skipped { why }));
                }
            }
        }
        record("ui.press", None, steps, false, Outcome::Continue, None)
    }

    async fn run_command(
        &self,
        session: &Session,
        plugin: &str,
        name: &str,
        args: &str,
    ) -> Result<String, String> {
        let command = format!("/{plugin}:{name}");
        let count = self.handlers(plugin, "command.run");
        if count == 0 {
            return Err(format!(
                "{command}: mod {plugin} registered it but handles no command.run (or is not running)"
            ));
        }
        let mut out = Vec::new();
        for index in 0..count {
            match self
                .call_hook(
                    session,
                    plugin,
                    "command.run",
                    index,
                    json!({ "name": name, "args": args }),
                )
                .await
            {
                HookCall::Value(Value::String(s)) => out.push(clean_text(&s)),
                HookCall::Value(v) => {
                    if let Some(text) = v.get("text").and_then(Value::as_str) {
                        out.push(clean_text(text));
                    }
                }
                HookCall::Failed(why) | HookCall::Died(why) => {
                    return Err(format!("{command}: {why}"));
                }
            }
        }
        Ok(if out.is_empty() {
            format!("{command}: done")
        } else {
            out.join("\n")
        })
    }

    /// The mods' commands for the slash menu.
    pub fn menu(&self) -> Vec<MenuEntry> {
        let state = self.state();
        let mut out = Vec::new();
        for (plugin, m) in &state.mods {
            for c in &m.commands {
                out.push(MenuEntry {
                    command: format!("/{plugin}:{}", c.name),
                    kind: "mod",
                    description: c.description.clone(),
                    argument_hint: None,
                    plugin: Some(plugin.clone()),
                });
            }
            for a in &m.band_actions {
                out.push(MenuEntry {
                    command: format!("/{plugin}:{}", a.id),
                    kind: "mod",
                    description: Some(a.label.clone()),
                    argument_hint: None,
                    plugin: Some(plugin.clone()),
                });
            }
        }
        out
    }

    // ----- tools -----

    /// Run a mod tool (`mod__<plugin>__<tool>`), reached through
    /// `use_capability`; `None` when `name` is not one.
    pub async fn call_tool(&self, name: &str, arguments: &str) -> Option<(String, bool)> {
        if !self.enabled() {
            return None;
        }
        let (plugin, tool) = name.strip_prefix(TOOL_PREFIX)?.split_once("__")?;
        let process = {
            let state = self.state();
            let m = state.mods.get(plugin)?;
            if !m.tools.iter().any(|t| t.name == tool) {
                return None;
            }
            m.process.clone()
        };
        let Some(process) = process else {
            return Some((format!("mod {plugin} is not running"), true));
        };
        let params = json!({ "name": tool, "arguments": args_value(arguments) });
        Some(
            match process.call("mod/tool", params, self.budget()).await {
                Ok(value) => {
                    let value = value.get("value").cloned().unwrap_or(Value::Null);
                    let text = match value {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (
                        format!("[from mod {plugin}'s tool `{tool}`]\n{}", clean_text(&text)),
                        false,
                    )
                }
                Err(failure) => {
                    let why = self.failure_text(&process, "tool", failure.clone());
                    if !matches!(failure, CallFailure::Threw(_))
                        && let Some(session) =
                            self.shared.session.get().and_then(WeakSession::upgrade)
                    {
                        process.kill(&why);
                        self.died(&session, plugin, why.clone());
                    }
                    (format!("mod {plugin}'s tool `{tool}` failed: {why}"), true)
                }
            },
        )
    }

    /// The mod tools, for `use_capability {"list": true}`.
    pub fn extend_listing(&self, listing: &mut Value) {
        let Value::Array(list) = listing else {
            return;
        };
        let state = self.state();
        for (plugin, m) in &state.mods {
            if !matches!(m.life, Life::Running) {
                continue;
            }
            for t in &m.tools {
                list.push(json!({
                    "name": tool_name(plugin, &t.name),
                    "description": format!("[mod {plugin}] {}", t.description),
                    "parameters": t.parameters,
                }));
            }
        }
    }

    // ----- serving `$` -----

    fn serve_for(&self, plugin: &str) -> process::Serve {
        let shared = Arc::downgrade(&self.shared);
        let plugin = plugin.to_string();
        Arc::new(
            move |member: String, args: Value| -> BoxFuture<Result<Value, ModRejection>> {
                let shared = Weak::clone(&shared);
                let plugin = plugin.clone();
                Box::pin(async move {
                    let Some(shared) = shared.upgrade() else {
                        return Err(ModRejection::new("mod.not_ready", "the session is closed"));
                    };
                    let mods = Mods { shared };
                    mods.serve(&plugin, &member, args).await
                })
            },
        )
    }

    async fn serve(&self, plugin: &str, member: &str, args: Value) -> Result<Value, ModRejection> {
        let args = match args {
            Value::Array(a) => a,
            other => vec![other],
        };
        let arg = |i: usize| args.get(i).cloned().unwrap_or(Value::Null);
        let starting = self.state().mods.get(plugin).is_some_and(|m| m.starting);
        const NEEDS_ANSWER: &[&str] = &[
            "session.messages",
            "session.usage",
            "prompt.submit",
            "tool.call",
            "tool.list",
            "command.run",
            "command.list",
            "ui.ask",
        ];
        if starting && NEEDS_ANSWER.contains(&member) {
            return Err(ModRejection::new(
                "mod.not_ready",
                format!(
                    "$.{member} needs an answer, and session.start runs before the session is ready; call it from a later event"
                ),
            ));
        }
        let session = || {
            self.shared
                .session
                .get()
                .and_then(WeakSession::upgrade)
                .ok_or_else(|| ModRejection::new("mod.not_ready", "the session is closed"))
        };
        match member {
            "session.messages" => {
                let max = config::ceiling(self.shared.config.messages_max);
                let asked = arg(0).get("limit").and_then(Value::as_u64);
                let limit = match (asked, max) {
                    (Some(a), Some(m)) => a.min(m),
                    (Some(a), None) => a,
                    (None, Some(m)) => m,
                    (None, None) => u64::MAX,
                } as usize;
                let transcript = session()?.transcript();
                let start = transcript.len().saturating_sub(limit);
                Ok(Value::Array(
                    transcript[start..].iter().map(message_json).collect(),
                ))
            }
            "session.usage" => Ok(self
                .state()
                .usage
                .as_ref()
                .map(|u| serde_json::to_value(u).unwrap_or(Value::Null))
                .unwrap_or(Value::Null)),
            "prompt.submit" => self.submit(plugin, &arg(0), &arg(1)),
            "tool.register" => self.register_tool(plugin, starting, &arg(0)),
            "command.register" => self.register_command(plugin, starting, &arg(0)),
            "tool.list" => {
                let mut list = Value::Array(Vec::new());
                self.extend_listing(&mut list);
                Ok(list)
            }
            "tool.call" => {
                let name = arg(0).as_str().unwrap_or_default().to_string();
                let full = if name.starts_with(TOOL_PREFIX) {
                    name.clone()
                } else {
                    tool_name(plugin, &name)
                };
                let arguments = arg(1).to_string();
                match Box::pin(self.call_tool(&full, &arguments)).await {
                    Some((text, false)) => Ok(Value::String(text)),
                    Some((text, true)) => Err(ModRejection::new("mod.tool_failed", text)),
                    None => Err(ModRejection::new(
                        "mod.unsupported",
                        format!(
                            "no mod tool `{name}`: $.tool.call reaches tools mods registered ($.tool.list)"
                        ),
                    )),
                }
            }
            "command.list" => Ok(serde_json::to_value(session()?.commands()).unwrap_or_default()),
            "command.run" => {
                let name = arg(0)
                    .as_str()
                    .unwrap_or_default()
                    .trim_start_matches('/')
                    .to_string();
                let args = arg(1).as_str().unwrap_or_default().to_string();
                let (owner, short) = name.split_once(':').unwrap_or((plugin, name.as_str()));
                let known = self
                    .state()
                    .mods
                    .get(owner)
                    .is_some_and(|m| m.commands.iter().any(|c| c.name == short));
                if !known {
                    return Err(ModRejection::new(
                        "mod.unsupported",
                        format!(
                            "no mod command `/{owner}:{short}`: $.command.run runs commands mods registered"
                        ),
                    ));
                }
                let session = session()?;
                Box::pin(self.run_command(&session, owner, short, &args))
                    .await
                    .map(Value::String)
                    .map_err(|e| ModRejection::new("mod.command_failed", e))
            }
            "ui.toast" | "ui.status" | "ui.notice" | "ui.log" => {
                let text = match arg(0) {
                    Value::String(s) => s,
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                let text = clean_text(&text);
                let ui = match member {
                    "ui.toast" => ModUi::Toast { text },
                    "ui.status" => ModUi::Status { text },
                    "ui.notice" => ModUi::Notice { text },
                    _ => ModUi::Log { text },
                };
                session()?.emit(SessionEvent::Mod {
                    plugin: plugin.to_string(),
                    ui,
                });
                Ok(Value::Bool(true))
            }
            "ui.invalidate" => {
                self.render_later(plugin);
                Ok(Value::Bool(true))
            }
            "ui.ask" => self.ask(plugin, &arg(0), session()?).await,
            "ui.resolve" => {
                let id = arg(0).as_str().unwrap_or_default().to_string();
                let waiting = self
                    .shared
                    .asks
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&(plugin.to_string(), id));
                Ok(Value::Bool(
                    waiting.is_some_and(|tx| tx.send(arg(1)).is_ok()),
                ))
            }
            other => {
                if let Some(m) = self.state().mods.get_mut(plugin) {
                    m.unserved.insert(format!("$.{other}"));
                }
                Err(ModRejection::new(
                    "mod.unsupported",
                    format!("$.{other} is not served by this host"),
                ))
            }
        }
    }

    fn submit(&self, plugin: &str, text: &Value, options: &Value) -> Result<Value, ModRejection> {
        if options
            .get("asUser")
            .is_some_and(|v| !v.is_null() && v != &Value::Bool(false))
        {
            return Err(ModRejection::new(
                "mod.unsupported",
                "asUser is not served: a mod's prompt is always its own words",
            ));
        }
        let Some(text) = text.as_str() else {
            return Err(ModRejection::new(
                "mod.unsupported",
                "prompt.submit(text) takes a string",
            ));
        };
        if !self.shared.context.has_file {
            return Err(ModRejection::new(
                "mod.submit_refused",
                "the session has no saved file, so a queued prompt could not be traced; open the session with a session file",
            ));
        }
        if let Some(max) = config::ceiling(self.shared.config.submit_bytes)
            && text.len() as u64 > max
        {
            return Err(ModRejection::new(
                "mod.submit_too_long",
                format!("the prompt is {} bytes; submit_bytes is {max}", text.len()),
            ));
        }
        let mut state = self.state();
        if let Some(max) = config::ceiling(self.shared.config.submit_per_turn)
            && state.submitted >= max
        {
            return Err(ModRejection::new(
                "mod.submit_rate",
                format!(
                    "{max} prompts were already queued since the user's last prompt (submit_per_turn)"
                ),
            ));
        }
        state.submitted += 1;
        state
            .queue
            .push_back((plugin.to_string(), clean_text(text)));
        Ok(json!({ "queued": state.queue.len() }))
    }

    fn register_tool(
        &self,
        plugin: &str,
        starting: bool,
        spec: &Value,
    ) -> Result<Value, ModRejection> {
        if !starting {
            return Err(ModRejection::new(
                "mod.unsupported",
                "tool.register is served while session.start runs",
            ));
        }
        let name = spec.get("name").and_then(Value::as_str).unwrap_or_default();
        if !valid_name(name) {
            return Err(ModRejection::new(
                "mod.unsupported",
                format!(
                    "tool.register: the name {:?} must be 1-64 of a-z 0-9 - _",
                    clean_text(name)
                ),
            ));
        }
        let mut state = self.state();
        let Some(m) = state.mods.get_mut(plugin) else {
            return Err(ModRejection::new("mod.not_ready", "the mod is not running"));
        };
        m.tools.retain(|t| t.name != name);
        m.tools.push(ToolSpec {
            name: name.to_string(),
            description: clean_text(
                spec.get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            ),
            parameters: spec
                .get("parameters")
                .filter(|p| p.is_object())
                .cloned()
                .unwrap_or_else(|| json!({ "type": "object" })),
        });
        Ok(json!({ "name": tool_name(plugin, name) }))
    }

    fn register_command(
        &self,
        plugin: &str,
        starting: bool,
        spec: &Value,
    ) -> Result<Value, ModRejection> {
        if !starting {
            return Err(ModRejection::new(
                "mod.unsupported",
                "command.register is served while session.start runs",
            ));
        }
        let name = match spec {
            Value::String(s) => s.as_str(),
            other => other
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        };
        if !valid_name(name) {
            return Err(ModRejection::new(
                "mod.unsupported",
                format!(
                    "command.register: the name {:?} must be 1-64 of a-z 0-9 - _",
                    clean_text(name)
                ),
            ));
        }
        let mut state = self.state();
        let Some(m) = state.mods.get_mut(plugin) else {
            return Err(ModRejection::new("mod.not_ready", "the mod is not running"));
        };
        m.commands.retain(|c| c.name != name);
        m.commands.push(CommandSpec {
            name: name.to_string(),
            description: spec
                .get("description")
                .and_then(Value::as_str)
                .map(clean_text),
        });
        Ok(json!({ "command": format!("/{plugin}:{name}") }))
    }

    /// `$.ui.ask`: a question from the mod, shown with its name. Its answer
    /// goes back to the mod only: it can never approve a tool call or a
    /// permission (those answers come from the session's own dialog).
    async fn ask(
        &self,
        plugin: &str,
        question: &Value,
        session: Session,
    ) -> Result<Value, ModRejection> {
        let (message, options, id) = match question {
            Value::String(s) => (s.clone(), Vec::new(), None),
            Value::Object(o) => (
                o.get("message")
                    .or_else(|| o.get("title"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                o.get("options")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).map(clean_text).collect())
                    .unwrap_or_default(),
                o.get("id").and_then(Value::as_str).map(str::to_string),
            ),
            _ => (String::new(), Vec::new(), None),
        };
        let id = id.unwrap_or_else(|| {
            let mut state = self.state();
            state.next_ask += 1;
            format!("ask-{}", state.next_ask)
        });
        let form = FormPayload {
            title: Some(format!("A question from mod {plugin}")),
            message: Some(clean_text(&message)),
            fields: vec![FormField {
                key: "answer".to_string(),
                label: Some(clean_text(&message)),
                kind: if options.is_empty() {
                    RequestKind::Input
                } else {
                    RequestKind::Select
                },
                options: (!options.is_empty()).then_some(options),
                default: None,
                required: Some(true),
            }],
        };
        let (tx, rx) = oneshot::channel();
        self.shared
            .asks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((plugin.to_string(), id.clone()), tx);
        let asked = session.ask_form(&format!("mod {plugin}"), &id, form);
        let answer = tokio::select! {
            answer = asked => answer
                .values
                .and_then(|v| v.get("answer").cloned())
                .unwrap_or(Value::Null),
            resolved = rx => resolved.unwrap_or(Value::Null),
        };
        self.shared
            .asks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(plugin.to_string(), id));
        Ok(answer)
    }
}

impl Shared {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `mod__<plugin>__<tool>`.
pub fn tool_name(plugin: &str, tool: &str) -> String {
    format!("{TOOL_PREFIX}{plugin}__{tool}")
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

fn step(plugin: &str, result: StepResult) -> ChainStep {
    ChainStep {
        plugin: plugin.to_string(),
        role: StepRole::Chain,
        result,
    }
}

fn record(
    point: &'static str,
    tool: Option<&str>,
    steps: Vec<ChainStep>,
    replaced: bool,
    outcome: Outcome,
    note: Option<String>,
) -> Vec<PointRecord> {
    if steps.is_empty() {
        return Vec::new();
    }
    vec![PointRecord {
        point,
        tool: tool.map(str::to_string),
        steps,
        replaced,
        outcome,
        note,
    }]
}

/// `{key: reason}` (a string), `{key: true}`, or the bare string `key`:
/// `Some(reason)`; anything else `None`.
fn reason_of(value: &Value, key: &str) -> Option<Option<String>> {
    match value {
        Value::String(s) if s == key => Some(None),
        Value::Object(o) => match o.get(key) {
            Some(Value::String(reason)) if !reason.trim().is_empty() => {
                Some(Some(clean_text(reason)))
            }
            Some(Value::Bool(true)) | Some(Value::String(_)) => Some(None),
            _ => None,
        },
        _ => None,
    }
}

enum Decision {
    Deny(Option<String>),
    Ask(Option<String>),
    /// An allow (or any other verdict): refused.
    Ignored(String),
    Nothing,
}

fn check_decision(value: &Value) -> Decision {
    if let Some(reason) = reason_of(value, "deny") {
        return Decision::Deny(reason);
    }
    if let Some(reason) = reason_of(value, "ask") {
        return Decision::Ask(reason);
    }
    match value {
        Value::Null => Decision::Nothing,
        Value::String(s) => Decision::Ignored(format!("{:?}", clean_text(s))),
        Value::Object(o) if o.is_empty() => Decision::Nothing,
        Value::Object(o) => Decision::Ignored(
            o.keys()
                .map(|k| format!("`{}`", clean_text(k)))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        other => Decision::Ignored(clean_text(&other.to_string())),
    }
}

fn args_value(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_string()))
}

fn context_source(plugin: &str, label: Option<&str>) -> String {
    let label = label
        .map(|l| clean_text(l).replace(['"', '\n', '\t'], " "))
        .filter(|l| !l.trim().is_empty());
    match label {
        Some(label) => format!("mod {plugin}: {}", label.trim()),
        None => format!("mod {plugin}"),
    }
}

/// Cut `text` to at most `max` bytes on a character boundary.
fn truncate_at(text: &mut String, max: usize) {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
}

fn band_of(value: &Value, lines: &mut Vec<String>, actions: &mut Vec<BandAction>) {
    let mut push_line = |v: &Value| {
        if let Some(s) = v.as_str() {
            lines.extend(clean_text(s).lines().map(str::to_string));
        }
    };
    match value {
        Value::String(_) => push_line(value),
        Value::Array(items) => items.iter().for_each(push_line),
        Value::Object(o) => {
            match o.get("lines") {
                Some(Value::Array(items)) => items.iter().for_each(&mut push_line),
                Some(v) => push_line(v),
                None => {
                    if let Some(v) = o.get("text") {
                        push_line(v);
                    }
                }
            }
            for a in o
                .get("actions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let id = a.get("id").and_then(Value::as_str).unwrap_or_default();
                if crate::runtime::ui::is_valid_action_id(id) {
                    actions.push(BandAction {
                        id: id.to_string(),
                        label: clean_text(a.get("label").and_then(Value::as_str).unwrap_or(id)),
                    });
                }
            }
        }
        _ => {}
    }
}

fn message_json(message: &ProviderMessage) -> Value {
    let mut out = json!({
        "role": message.role,
        "content": clean_text(message.content.as_deref().unwrap_or_default()),
    });
    if let Some(name) = &message.name {
        out["name"] = Value::String(clean_text(name));
    }
    if !message.tool_calls.is_empty() {
        out["toolCalls"] = message
            .tool_calls
            .iter()
            .map(|c| json!({ "name": c.name, "arguments": clean_text(&c.arguments) }))
            .collect();
    }
    out
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

fn short(text: &str) -> String {
    let cleaned = clean_text(text);
    let mut out: String = cleaned.chars().take(60).collect();
    if cleaned.chars().count() > 60 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_are_tighten_only() {
        assert!(
            matches!(check_decision(&json!({"deny": "no"})), Decision::Deny(Some(r)) if r == "no")
        );
        assert!(matches!(
            check_decision(&json!("deny")),
            Decision::Deny(None)
        ));
        assert!(matches!(
            check_decision(&json!({"ask": true})),
            Decision::Ask(None)
        ));
        assert!(
            matches!(check_decision(&json!({"allow": true})), Decision::Ignored(w) if w == "`allow`")
        );
        assert!(matches!(
            check_decision(&json!("allow")),
            Decision::Ignored(_)
        ));
        assert!(matches!(
            check_decision(&json!({"decision": "allow", "deny": false})),
            Decision::Ignored(_)
        ));
        assert!(matches!(check_decision(&Value::Null), Decision::Nothing));
    }

    #[test]
    fn context_blocks_are_cut_on_char_boundaries() {
        let mut text = "ééé".to_string();
        truncate_at(&mut text, 3);
        assert_eq!(text, "é");
        assert_eq!(context_source("m", Some("a \"b\"\nc")), "mod m: a  b  c");
        assert_eq!(context_source("m", Some("  ")), "mod m");
    }

    #[test]
    fn bands_take_strings_lists_and_objects() {
        let (mut lines, mut actions) = (Vec::new(), Vec::new());
        band_of(
            &json!({"lines": ["a\u{1b}[2J", "b\nc"], "actions": [{"id": "go", "label": "Go"}, {"id": "Bad Id"}]}),
            &mut lines,
            &mut actions,
        );
        assert_eq!(lines, ["a[2J", "b", "c"]);
        assert_eq!(
            actions,
            [BandAction {
                id: "go".into(),
                label: "Go".into()
            }]
        );
    }
}
