//! A runtime generation: the started runtimes, their slot table, chain,
//! provider catalog and capability catalog, built from the enabled plugins.
//!
//! Starts run at most four at once inside one shared 30 s budget (spec §4.3),
//! so a stalled runtime cannot multiply build time by the number of plugins.
//! Every start begins at once and takes one of the four places for the part
//! that waits on the runtime (a sidecar's handshake, a component's compile
//! and handshake): sidecar processes are all spawned up front, so their
//! start-ups overlap while the handshakes take turns.
//! An optional runtime that fails or runs out of budget degrades with a
//! warning; a required one fails the build. A failed build shuts down what it
//! had started and leaves nothing running.

use std::sync::Arc;
use std::time::Duration;

use reasonix_protocol::points::Slot;
use serde::Serialize;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use super::diagnostics::Diagnostics;
use super::dispatcher::{ChainMember, Dispatcher};
use super::join::join_all;
use super::provider::{CatalogEntry, catalog_entry};
use super::redaction::clean_text;
use super::slots::{SlotCollision, SlotTable};
use super::tools::{CapabilityCatalog, ToolSpec};
use super::{BoxFuture, ExtensionRuntime, TrustLabel};

/// The shared startup budget of one generation.
pub const STARTUP_BUDGET: Duration = Duration::from_secs(30);
/// How many runtimes start at once.
pub const CONCURRENT_STARTS: usize = 4;

/// What a runtime start needs to know about the session it joins.
#[derive(Debug, Clone)]
pub struct StartContext {
    pub session_id: String,
    pub workspace_root: String,
    pub generation: u64,
    /// The remaining share of the startup budget.
    pub deadline: Instant,
    /// The generation's [`CONCURRENT_STARTS`] places.
    pub gate: StartGate,
}

/// The four-at-once rule of one generation build: a starter holds a place
/// while it waits on its runtime (handshake, compile).
#[derive(Debug, Clone)]
pub struct StartGate(Arc<Semaphore>);

impl StartGate {
    pub fn new(places: usize) -> StartGate {
        StartGate(Arc::new(Semaphore::new(places)))
    }

    /// Wait for a place; it is given back when the permit is dropped.
    pub async fn enter(&self) -> Result<OwnedSemaphorePermit, String> {
        Arc::clone(&self.0)
            .acquire_owned()
            .await
            .map_err(|e| e.to_string())
    }
}

/// Starts one kind of runtime for one enabled plugin (native sidecars and
/// wasm components). A start takes a place of `context.gate` for the part
/// that waits on the runtime and may do cheap, non-waiting work (spawning a
/// process) before it.
pub trait RuntimeStarter: Send + Sync {
    fn start(
        &self,
        context: StartContext,
    ) -> BoxFuture<'_, Result<Arc<dyn ExtensionRuntime>, String>>;
}

/// One enabled plugin with a runtime block, ready to start.
pub struct RuntimeCandidate {
    pub plugin_id: String,
    pub version: String,
    pub required: bool,
    pub priority: i32,
    pub timeout_millis: Option<u64>,
    /// The manifest's `runtime.tools`.
    pub tools: Vec<ToolSpec>,
    /// The manifest's `runtime.replaces`: the slots it may claim. Two
    /// declarations of one slot fail the build before anything starts,
    /// whatever the sidecars later announce.
    pub replaces: Vec<Slot>,
    /// A fingerprint of everything that, if changed, makes a reload restart
    /// the runtime (manifest + tree digest). Used to report what changed.
    pub fingerprint: String,
    pub starter: Box<dyn RuntimeStarter>,
}

/// Why a generation could not be built. The old generation is untouched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error("required runtime `{plugin}` did not start: {why}")]
    RequiredStartFailed { plugin: String, why: String },
    #[error(transparent)]
    SlotCollision(#[from] SlotCollision),
    #[error("required runtime `{plugin}` has an unusable provider catalog: {why}")]
    RequiredCatalogFailed { plugin: String, why: String },
    #[error("could not read the enabled plugins: {0}")]
    Sources(String),
}

/// A runtime that is part of a generation, with its manifest settings.
#[derive(Clone)]
pub struct StartedRuntime {
    pub plugin_id: String,
    pub version: String,
    pub required: bool,
    pub fingerprint: String,
    pub runtime: Arc<dyn ExtensionRuntime>,
}

/// A runtime that was left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Degraded {
    pub plugin: String,
    pub why: String,
}

/// A built generation. Immutable: a reload builds a new one.
pub struct Generation {
    pub number: u64,
    pub runtimes: Vec<StartedRuntime>,
    pub degraded: Vec<Degraded>,
    pub dispatcher: Dispatcher,
    pub providers: Vec<CatalogEntry>,
    pub capabilities: CapabilityCatalog,
    pub diagnostics: Arc<Diagnostics>,
    /// What the source read beside the runtimes in the same pass (a
    /// session's declarative inventory), so the two always swap together.
    pub attachment: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

impl std::fmt::Debug for Generation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generation")
            .field("number", &self.number)
            .field(
                "runtimes",
                &self
                    .runtimes
                    .iter()
                    .map(|r| &r.plugin_id)
                    .collect::<Vec<_>>(),
            )
            .field("degraded", &self.degraded)
            .finish()
    }
}

impl Generation {
    /// The generation with no code runtime: the nil path everywhere.
    pub fn empty(number: u64) -> Generation {
        let diagnostics = Arc::new(Diagnostics::new());
        Generation {
            number,
            runtimes: Vec::new(),
            degraded: Vec::new(),
            dispatcher: Dispatcher::new(Vec::new(), SlotTable::default(), Arc::clone(&diagnostics)),
            providers: Vec::new(),
            capabilities: CapabilityCatalog::default(),
            diagnostics,
            attachment: None,
        }
    }

    /// Start every candidate and assemble the generation.
    pub async fn build(
        number: u64,
        candidates: Vec<RuntimeCandidate>,
        session_id: &str,
        workspace_root: &str,
    ) -> Result<Generation, BuildError> {
        Self::build_with_budget(
            number,
            candidates,
            session_id,
            workspace_root,
            STARTUP_BUDGET,
        )
        .await
    }

    /// [`Generation::build`] with an explicit shared budget.
    pub async fn build_with_budget(
        number: u64,
        candidates: Vec<RuntimeCandidate>,
        session_id: &str,
        workspace_root: &str,
        budget: Duration,
    ) -> Result<Generation, BuildError> {
        // Collisions are between declarations: refuse them before starting
        // (and paying for) any runtime.
        SlotTable::build(
            candidates
                .iter()
                .map(|c| (c.plugin_id.as_str(), c.replaces.iter())),
        )?;
        let diagnostics = Arc::new(Diagnostics::new());
        let deadline = Instant::now() + budget;
        let context = StartContext {
            session_id: session_id.to_string(),
            workspace_root: workspace_root.to_string(),
            generation: number,
            deadline,
            gate: StartGate::new(CONCURRENT_STARTS),
        };
        let starts = candidates.iter().map(|candidate| {
            let context = context.clone();
            async move {
                let started =
                    tokio::time::timeout_at(deadline, candidate.starter.start(context)).await;
                match started {
                    Ok(result) => result,
                    Err(_) => Err(format!(
                        "did not start within the shared {} s generation budget",
                        budget.as_secs()
                    )),
                }
            }
        });
        let results = join_all(starts).await;

        let mut runtimes: Vec<StartedRuntime> = Vec::new();
        let mut degraded = Vec::new();
        let mut failure = None;
        for (candidate, result) in candidates.iter().zip(results) {
            match result {
                Ok(runtime) => runtimes.push(StartedRuntime {
                    plugin_id: candidate.plugin_id.clone(),
                    version: candidate.version.clone(),
                    required: candidate.required,
                    fingerprint: candidate.fingerprint.clone(),
                    runtime,
                }),
                Err(why) => {
                    let why = clean_text(&why);
                    if candidate.required {
                        failure.get_or_insert(BuildError::RequiredStartFailed {
                            plugin: candidate.plugin_id.clone(),
                            why,
                        });
                    } else {
                        diagnostics.warn(
                            &candidate.plugin_id,
                            "start_failed",
                            &format!(
                                "optional runtime `{}` was skipped: {why}",
                                candidate.plugin_id
                            ),
                        );
                        degraded.push(Degraded {
                            plugin: candidate.plugin_id.clone(),
                            why,
                        });
                    }
                }
            }
        }
        if let Some(error) = failure {
            retire(&runtimes).await;
            return Err(error);
        }

        let slots = match SlotTable::build(runtimes.iter().map(|r| {
            (
                r.plugin_id.as_str(),
                r.runtime.declaration().replaces.iter(),
            )
        })) {
            Ok(slots) => slots,
            Err(collision) => {
                retire(&runtimes).await;
                return Err(collision.into());
            }
        };

        let mut providers = Vec::new();
        for started in &runtimes {
            if started.runtime.declaration().providers.is_empty() {
                continue;
            }
            let required = started.required || slots.owns_any(&started.plugin_id);
            let remaining = deadline
                .saturating_duration_since(Instant::now())
                .max(Duration::from_secs(1));
            let catalog =
                match tokio::time::timeout(remaining, started.runtime.provider_catalog()).await {
                    Ok(Ok(list)) => Ok(list),
                    Ok(Err(error)) => Err(error.message),
                    Err(_) => Err("the provider catalog did not answer in time".to_string()),
                };
            match catalog {
                Ok(list) => {
                    for descriptor in list {
                        match catalog_entry(&started.plugin_id, descriptor) {
                            Ok(entry) => providers.push(entry),
                            Err(rejection) => diagnostics.warn(
                                &started.plugin_id,
                                "provider_rejected",
                                &rejection.to_string(),
                            ),
                        }
                    }
                }
                Err(why) if required => {
                    retire(&runtimes).await;
                    return Err(BuildError::RequiredCatalogFailed {
                        plugin: started.plugin_id.clone(),
                        why: clean_text(&why),
                    });
                }
                Err(why) => diagnostics.warn(
                    &started.plugin_id,
                    "catalog_failed",
                    &format!("provider catalog unavailable: {why}"),
                ),
            }
        }
        providers.sort_by(|a, b| a.model_ref.cmp(&b.model_ref));
        providers.dedup_by(|a, b| a.model_ref == b.model_ref);

        let mut capabilities = CapabilityCatalog::default();
        for (started, candidate) in runtimes.iter().filter_map(|r| {
            candidates
                .iter()
                .find(|c| c.plugin_id == r.plugin_id)
                .map(|c| (r, c))
        }) {
            capabilities.add_runtime(&started.runtime, &candidate.tools);
        }

        let members = runtimes
            .iter()
            .filter_map(|r| {
                candidates
                    .iter()
                    .find(|c| c.plugin_id == r.plugin_id)
                    .map(|c| ChainMember {
                        runtime: Arc::clone(&r.runtime),
                        priority: c.priority,
                        required: c.required,
                        timeout_millis: c.timeout_millis,
                    })
            })
            .collect();
        let dispatcher = Dispatcher::new(members, slots, Arc::clone(&diagnostics));
        Ok(Generation {
            number,
            runtimes,
            degraded,
            dispatcher,
            providers,
            capabilities,
            diagnostics,
            attachment: None,
        })
    }

    /// Find a provider model by its `plugin/<plugin>/<provider>/<model>` ref.
    pub fn provider(&self, model_ref: &str) -> Option<&CatalogEntry> {
        self.providers.iter().find(|p| p.model_ref == model_ref)
    }

    /// The runtime of `plugin`.
    pub fn runtime(&self, plugin: &str) -> Option<&Arc<dyn ExtensionRuntime>> {
        self.runtimes
            .iter()
            .find(|r| r.plugin_id == plugin)
            .map(|r| &r.runtime)
    }

    /// Plugin ids with their trust labels.
    pub fn members(&self) -> Vec<(String, TrustLabel)> {
        self.runtimes
            .iter()
            .map(|r| (r.plugin_id.clone(), r.runtime.trust()))
            .collect()
    }

    /// Shut every runtime of this generation down.
    pub async fn retire(&self) {
        retire(&self.runtimes).await;
    }
}

async fn retire(runtimes: &[StartedRuntime]) {
    join_all(runtimes.iter().map(|r| r.runtime.shutdown())).await;
}
