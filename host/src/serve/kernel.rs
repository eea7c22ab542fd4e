//! The seam between the routes and the live runtime.
//!
//! The routes see only [`Kernel`]: whether work is running, a reload that
//! refuses (never queues) while it is, a status, and shutdown. Today
//! [`RuntimeKernel`] implements it over one [`RuntimeHost`] built from the
//! registry; the live `Session` implements the same trait and replaces it
//! without a route changing.
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::home::ReasonixHome;
use crate::runtime::BoxFuture;
use crate::runtime::generation::Degraded;
use crate::runtime::host::{ReloadOutcome, ReloadReport, RuntimeHost, SessionCarry};
use crate::runtime::registry_source::RegistrySource;
use crate::runtime::ui::{UiAnswers, UiHub};

/// Why a reload did not swap in a new runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReloadRefused {
    /// A turn or background work is running: retry once idle.
    Busy,
    /// The new runtime could not be built; the old one keeps serving.
    Failed { kept: u64, why: String },
}

impl std::fmt::Display for ReloadRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReloadRefused::Busy => f.write_str(
                "a turn is running; the runtime was not reloaded (retry once the turn ends)",
            ),
            ReloadRefused::Failed { kept, why } => write!(
                f,
                "the runtime could not be rebuilt, generation {kept} keeps running: {why}"
            ),
        }
    }
}

/// One started runtime.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeEntry {
    pub plugin: String,
    pub version: String,
    /// `full_trust` or `sandboxed`.
    pub trust: crate::runtime::TrustLabel,
}

/// What the kernel runs now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KernelStatus {
    /// The serving generation (0 when none could be built yet).
    pub generation: u64,
    pub busy: bool,
    pub runtimes: Vec<RuntimeEntry>,
    pub degraded: Vec<Degraded>,
    /// Why the first runtime could not be built, until a reload succeeds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boot_error: Option<String>,
}

/// What the routes need of the live runtime.
pub trait Kernel: Send + Sync {
    /// A turn, a reload or background work is running.
    fn is_busy(&self) -> bool;
    /// Rebuild the runtime from what is on disk now; refuse while busy.
    fn reload(&self) -> BoxFuture<'_, Result<ReloadReport, ReloadRefused>>;
    fn status(&self) -> KernelStatus;
    /// Retire every runtime (process exit).
    fn shutdown(&self) -> BoxFuture<'_, ()>;
}

enum Slot {
    Running(Arc<RuntimeHost>),
    /// The first build failed; a reload tries again.
    Failed(String),
    Stopped,
}

/// The kernel of phase 1: one [`RuntimeHost`] over the enabled plugins.
pub struct RuntimeKernel {
    home: ReasonixHome,
    guard: reasonix_sidecar::Guard,
    workspace: String,
    hub: Arc<UiHub>,
    slot: Mutex<Slot>,
}

const SESSION_ID: &str = "serve";

impl RuntimeKernel {
    /// Build the first generation. A failure does not stop the server (the
    /// plugins page is where it gets fixed): it is reported as `bootError`
    /// and the next reload tries again.
    pub async fn start(
        home: ReasonixHome,
        guard: reasonix_sidecar::Guard,
        workspace: PathBuf,
    ) -> RuntimeKernel {
        let kernel = RuntimeKernel {
            home,
            guard,
            workspace: workspace.display().to_string(),
            hub: Arc::new(UiHub::new(UiAnswers::Headless)),
            slot: Mutex::new(Slot::Stopped),
        };
        let slot = match kernel.build().await {
            Ok(host) => Slot::Running(Arc::new(host)),
            Err(why) => Slot::Failed(why),
        };
        *kernel.lock() = slot;
        kernel
    }

    async fn build(&self) -> Result<RuntimeHost, String> {
        let source = Arc::new(RegistrySource::new(
            self.home.clone(),
            self.guard.clone(),
            Arc::clone(&self.hub),
        ));
        RuntimeHost::start(
            source,
            SESSION_ID,
            &self.workspace,
            Arc::clone(&self.hub),
            SessionCarry::default(),
        )
        .await
        .map_err(|e| e.to_string())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The runtime host, while one runs (tests pin a turn through it).
    pub fn host(&self) -> Option<Arc<RuntimeHost>> {
        match &*self.lock() {
            Slot::Running(host) => Some(Arc::clone(host)),
            _ => None,
        }
    }
}

impl Kernel for RuntimeKernel {
    fn is_busy(&self) -> bool {
        self.host().is_some_and(|h| h.is_busy())
    }

    fn reload(&self) -> BoxFuture<'_, Result<ReloadReport, ReloadRefused>> {
        Box::pin(async move {
            let Some(host) = self.host() else {
                // No runtime yet: build the first one.
                return match self.build().await {
                    Ok(host) => {
                        let generation = host.current();
                        let report = ReloadReport {
                            from_generation: 0,
                            to_generation: generation.number,
                            added: generation
                                .runtimes
                                .iter()
                                .map(|r| r.plugin_id.clone())
                                .collect(),
                            removed: Vec::new(),
                            changed: Vec::new(),
                            unchanged: Vec::new(),
                            degraded: generation.degraded.clone(),
                            swap_time: std::time::Duration::ZERO,
                        };
                        *self.lock() = Slot::Running(Arc::new(host));
                        Ok(report)
                    }
                    Err(why) => {
                        *self.lock() = Slot::Failed(why.clone());
                        Err(ReloadRefused::Failed { kept: 0, why })
                    }
                };
            };
            // Serve refuses rather than queues (seed "Runtime reload").
            if host.is_busy() {
                return Err(ReloadRefused::Busy);
            }
            match host.reload().await {
                ReloadOutcome::Swapped(report) => Ok(report),
                // A turn began between the check and the reload: it will
                // run the queued reload when it ends, but this request is
                // still refused so the caller knows nothing changed yet.
                ReloadOutcome::Queued => Err(ReloadRefused::Busy),
                ReloadOutcome::Failed { kept, why } => Err(ReloadRefused::Failed { kept, why }),
            }
        })
    }

    fn status(&self) -> KernelStatus {
        match &*self.lock() {
            Slot::Running(host) => {
                let generation = host.current();
                KernelStatus {
                    generation: generation.number,
                    busy: host.is_busy(),
                    runtimes: generation
                        .runtimes
                        .iter()
                        .map(|r| RuntimeEntry {
                            plugin: r.plugin_id.clone(),
                            version: r.version.clone(),
                            trust: r.runtime.trust(),
                        })
                        .collect(),
                    degraded: generation.degraded.clone(),
                    boot_error: None,
                }
            }
            Slot::Failed(why) => KernelStatus {
                generation: 0,
                busy: false,
                runtimes: Vec::new(),
                degraded: Vec::new(),
                boot_error: Some(why.clone()),
            },
            Slot::Stopped => KernelStatus {
                generation: 0,
                busy: false,
                runtimes: Vec::new(),
                degraded: Vec::new(),
                boot_error: None,
            },
        }
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let slot = std::mem::replace(&mut *self.lock(), Slot::Stopped);
            if let Slot::Running(host) = slot {
                host.shutdown().await;
            }
        })
    }
}
