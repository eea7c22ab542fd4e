//! The runtime host: owns the current generation and performs fail-atomic
//! reloads (seed "Runtime reload").
//!
//! - A turn pins one generation for its whole duration ([`TurnPin`]).
//! - A reload requested while a turn runs is queued; exactly one is kept, and
//!   it runs when the turn ends.
//! - When idle a new generation is built; on success it is swapped in under
//!   one lock together with the carried session state, and only then are the
//!   old runtimes retired. On failure the old generation keeps working
//!   untouched and the report says why.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reasonix_protocol::types::ProviderMessage;
use serde::Serialize;

use super::generation::{BuildError, Degraded, Generation, RuntimeCandidate};
use super::ui::{UiBinding, UiHub, UiMember};

/// Where the enabled plugins come from: read anew at every (re)build. Only
/// the plugin registry implements this in production, so only installed,
/// enabled plugins can start a runtime.
pub trait CandidateSource: Send + Sync {
    fn candidates(&self) -> Result<Vec<RuntimeCandidate>, String>;

    /// The candidates and, from the same read, what the caller keeps beside
    /// the generation (stored as [`Generation::attachment`]).
    fn read(&self) -> Result<SourceRead, String> {
        Ok(SourceRead {
            candidates: self.candidates()?,
            attachment: None,
        })
    }
}

/// One read of a [`CandidateSource`].
pub struct SourceRead {
    pub candidates: Vec<RuntimeCandidate>,
    pub attachment: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

/// Session state a swap carries over unchanged.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCarry {
    pub session_path: Option<PathBuf>,
    pub transcript: Vec<ProviderMessage>,
    /// Tools the user approved for the session.
    pub approval_grants: BTreeSet<String>,
    pub goal: Option<String>,
    pub recovery: Option<serde_json::Value>,
}

/// What a finished reload changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReloadReport {
    pub from_generation: u64,
    pub to_generation: u64,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Plugins whose manifest or content changed.
    pub changed: Vec<String>,
    /// Plugins restarted with identical content.
    pub unchanged: Vec<String>,
    pub degraded: Vec<Degraded>,
    /// Time the swap itself held the lock.
    #[serde(skip)]
    pub swap_time: Duration,
}

impl ReloadReport {
    pub fn is_noop(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// The result of asking for a reload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum ReloadOutcome {
    /// A turn (or another reload) is running: the reload will run when it ends.
    Queued,
    Swapped(ReloadReport),
    /// The build failed; generation `kept` is still serving.
    Failed {
        kept: u64,
        why: String,
    },
}

/// A turn is already running.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a turn is already running on generation {0}")]
pub struct Busy(pub u64);

/// The generation a running turn uses; hold it for the whole turn.
#[derive(Debug)]
pub struct TurnPin {
    pub generation: Arc<Generation>,
}

struct HostState {
    current: Arc<Generation>,
    carry: SessionCarry,
    turn_running: bool,
    reloading: bool,
    reload_queued: bool,
}

/// The runtime host of one session.
pub struct RuntimeHost {
    source: Arc<dyn CandidateSource>,
    session_id: String,
    workspace_root: String,
    ui: Arc<UiHub>,
    state: Mutex<HostState>,
}

impl RuntimeHost {
    /// Build generation 1. A failure here is a boot failure.
    pub async fn start(
        source: Arc<dyn CandidateSource>,
        session_id: &str,
        workspace_root: &str,
        ui: Arc<UiHub>,
        carry: SessionCarry,
    ) -> Result<RuntimeHost, BuildError> {
        Self::start_at(1, source, session_id, workspace_root, ui, carry).await
    }

    /// Build the first generation with the given number (a restarted
    /// process continues the numbering it recorded).
    pub async fn start_at(
        number: u64,
        source: Arc<dyn CandidateSource>,
        session_id: &str,
        workspace_root: &str,
        ui: Arc<UiHub>,
        carry: SessionCarry,
    ) -> Result<RuntimeHost, BuildError> {
        let read = source.read().map_err(BuildError::Sources)?;
        let mut generation =
            Generation::build(number.max(1), read.candidates, session_id, workspace_root).await?;
        generation.attachment = read.attachment;
        let host = RuntimeHost {
            source,
            session_id: session_id.to_string(),
            workspace_root: workspace_root.to_string(),
            ui,
            state: Mutex::new(HostState {
                current: Arc::new(generation),
                carry,
                turn_running: false,
                reloading: false,
                reload_queued: false,
            }),
        };
        let current = host.current();
        host.bind_ui(&current);
        Ok(host)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HostState> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn bind_ui(&self, generation: &Generation) {
        let plugins: Vec<UiMember> = generation
            .runtimes
            .iter()
            .map(|r| UiMember {
                plugin: r.plugin_id.clone(),
                actions: r.runtime.declaration().ui_actions.clone(),
            })
            .collect();
        self.ui.bind(
            UiBinding {
                session_id: self.session_id.clone(),
                generation: generation.number,
            },
            &plugins,
        );
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    pub fn ui(&self) -> &Arc<UiHub> {
        &self.ui
    }

    /// The generation new work would use.
    pub fn current(&self) -> Arc<Generation> {
        Arc::clone(&self.lock().current)
    }

    pub fn carry(&self) -> SessionCarry {
        self.lock().carry.clone()
    }

    pub fn update_carry(&self, update: impl FnOnce(&mut SessionCarry)) {
        update(&mut self.lock().carry);
    }

    /// Whether a reload waits for the running turn.
    pub fn reload_queued(&self) -> bool {
        self.lock().reload_queued
    }

    /// Start a turn: pin the current generation.
    pub fn begin_turn(&self) -> Result<TurnPin, Busy> {
        let mut state = self.lock();
        if state.turn_running {
            return Err(Busy(state.current.number));
        }
        state.turn_running = true;
        Ok(TurnPin {
            generation: Arc::clone(&state.current),
        })
    }

    /// End a turn; runs the queued reload, if any, and returns its outcome.
    pub async fn end_turn(&self, pin: TurnPin) -> Option<ReloadOutcome> {
        drop(pin);
        let queued = {
            let mut state = self.lock();
            state.turn_running = false;
            std::mem::take(&mut state.reload_queued)
        };
        if queued {
            Some(self.reload().await)
        } else {
            None
        }
    }

    /// Reload now if idle, else queue exactly one reload.
    pub async fn reload(&self) -> ReloadOutcome {
        let (old, number) = {
            let mut state = self.lock();
            if state.turn_running || state.reloading {
                state.reload_queued = true;
                return ReloadOutcome::Queued;
            }
            state.reloading = true;
            (Arc::clone(&state.current), state.current.number + 1)
        };
        let built = match self.source.read() {
            Ok(read) => Generation::build(
                number,
                read.candidates,
                &self.session_id,
                &self.workspace_root,
            )
            .await
            .map(|mut generation| {
                generation.attachment = read.attachment;
                generation
            })
            .map_err(|e| e.to_string()),
            Err(why) => Err(format!("could not read the enabled plugins: {why}")),
        };
        let outcome = match built {
            Err(why) => {
                self.lock().reloading = false;
                ReloadOutcome::Failed {
                    kept: old.number,
                    why,
                }
            }
            Ok(generation) => {
                let generation = Arc::new(generation);
                let started = std::time::Instant::now();
                {
                    let mut state = self.lock();
                    // The carried session state stays in `state.carry`; only
                    // the generation pointer changes under the lock.
                    state.current = Arc::clone(&generation);
                    state.reloading = false;
                }
                let swap_time = started.elapsed();
                self.bind_ui(&generation);
                let report = diff(&old, &generation, swap_time);
                // Retire the old runtimes only after the swap.
                old.retire().await;
                ReloadOutcome::Swapped(report)
            }
        };
        // A reload asked for while this one was building runs now.
        let again = {
            let mut state = self.lock();
            !state.turn_running && std::mem::take(&mut state.reload_queued)
        };
        if again {
            return Box::pin(self.reload()).await;
        }
        outcome
    }

    /// Retire the current generation (process exit).
    pub async fn shutdown(&self) {
        let current = self.current();
        current.retire().await;
    }
}

fn diff(old: &Generation, new: &Generation, swap_time: Duration) -> ReloadReport {
    let mut report = ReloadReport {
        from_generation: old.number,
        to_generation: new.number,
        added: Vec::new(),
        removed: Vec::new(),
        changed: Vec::new(),
        unchanged: Vec::new(),
        degraded: new.degraded.clone(),
        swap_time,
    };
    for runtime in &new.runtimes {
        match old
            .runtimes
            .iter()
            .find(|o| o.plugin_id == runtime.plugin_id)
        {
            None => report.added.push(runtime.plugin_id.clone()),
            Some(o) if o.fingerprint != runtime.fingerprint => {
                report.changed.push(runtime.plugin_id.clone())
            }
            Some(_) => report.unchanged.push(runtime.plugin_id.clone()),
        }
    }
    for runtime in &old.runtimes {
        if !new
            .runtimes
            .iter()
            .any(|n| n.plugin_id == runtime.plugin_id)
        {
            report.removed.push(runtime.plugin_id.clone());
        }
    }
    report
}
