//! The seam between the routes and what runs: [`ServeKernel`].
//!
//! It holds the server's own runtime ([`RuntimeKernel`]: one generation
//! built from the registry exactly as a new session would get it, so the
//! page can show what runs, what is degraded and why a runtime cannot start
//! even before any chat is open) and the open [`Session`]s the session
//! routes drive. A reload is refused (never queued) while any turn runs;
//! otherwise the server's runtime and every open session reload, each
//! fail-atomic on its own.
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::home::ReasonixHome;
use crate::runtime::generation::Degraded;
use crate::runtime::host::{ReloadOutcome, ReloadReport, RuntimeHost, SessionCarry};
use crate::runtime::registry_source::RegistrySource;
use crate::runtime::ui::{UiAnswers, UiHub};
use crate::session::{Session, SessionError, SessionOptions};

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

/// What runs now: the server's runtime, and the open sessions.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KernelStatus {
    /// The server runtime's generation (0 when none could be built yet).
    pub generation: u64,
    /// A turn (or a reload) is running somewhere: a reload is refused.
    pub busy: bool,
    pub runtimes: Vec<RuntimeEntry>,
    pub degraded: Vec<Degraded>,
    /// Why the first runtime could not be built, until a reload succeeds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boot_error: Option<String>,
    /// Each open session's own status (its generation, runtimes, busy).
    pub sessions: Vec<crate::session::Status>,
}

enum Slot {
    Running(Arc<RuntimeHost>),
    /// The first build failed; a reload tries again.
    Failed(String),
    Stopped,
}

/// The server's own runtime: one [`RuntimeHost`] over the enabled plugins,
/// where no turn ever runs.
struct RuntimeKernel {
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
    async fn start(
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

    fn host(&self) -> Option<Arc<RuntimeHost>> {
        match &*self.lock() {
            Slot::Running(host) => Some(Arc::clone(host)),
            _ => None,
        }
    }
}

impl RuntimeKernel {
    fn is_busy(&self) -> bool {
        self.host().is_some_and(|h| h.is_busy())
    }

    async fn reload(&self) -> Result<ReloadReport, ReloadRefused> {
        {
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
        }
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
                    sessions: Vec::new(),
                }
            }
            Slot::Failed(why) => KernelStatus {
                generation: 0,
                busy: false,
                runtimes: Vec::new(),
                degraded: Vec::new(),
                boot_error: Some(why.clone()),
                sessions: Vec::new(),
            },
            Slot::Stopped => KernelStatus {
                generation: 0,
                busy: false,
                runtimes: Vec::new(),
                degraded: Vec::new(),
                boot_error: None,
                sessions: Vec::new(),
            },
        }
    }

    async fn shutdown(&self) {
        let slot = std::mem::replace(&mut *self.lock(), Slot::Stopped);
        if let Slot::Running(host) = slot {
            host.shutdown().await;
        }
    }
}

/// At most this many sessions are open at once (each runs its own
/// code-extension sidecars).
pub const MAX_SESSIONS: usize = 8;

/// One open session and the session file name it was opened with.
struct Open {
    session: Session,
    file: Option<String>,
}

#[derive(Default)]
struct Registry {
    open: BTreeMap<String, Open>,
    /// Sessions being opened now (their session file names, if any): they
    /// count against the limit and hold their file.
    opening: Vec<Option<String>>,
    /// The server is stopping: no session opens any more.
    stopping: bool,
}

/// Why a session could not be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenRefused {
    /// [`MAX_SESSIONS`] are open.
    Limit,
    /// The session file is open in another session of this server.
    FileInUse(String),
    /// The server is shutting down.
    Stopping,
    /// The session itself refused (workspace, config, runtime, model…).
    Session(SessionError),
}

/// One session's part of a reload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionReload {
    pub session_id: String,
    /// `swapped` (what changed), `failed` (the generation kept, why) or
    /// `queued` (a turn began meanwhile; it runs when the turn ends).
    #[serde(flatten)]
    pub outcome: ReloadOutcome,
}

/// A reload that went through: the server runtime's report, and each open
/// session's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelReload {
    #[serde(flatten)]
    pub report: ReloadReport,
    pub sessions: Vec<SessionReload>,
}

impl KernelReload {
    /// The sessions whose reload was refused, as one line (`None` if none).
    pub fn refusals(&self) -> Option<String> {
        let failed: Vec<String> = self
            .sessions
            .iter()
            .filter_map(|s| match &s.outcome {
                ReloadOutcome::Failed { kept, why } => Some(format!(
                    "session {}: generation {kept} keeps running: {why}",
                    s.session_id
                )),
                _ => None,
            })
            .collect();
        (!failed.is_empty()).then(|| failed.join("; "))
    }
}

/// The server's runtime and its open sessions.
pub struct ServeKernel {
    runtime: RuntimeKernel,
    home: ReasonixHome,
    guard: reasonix_sidecar::Guard,
    registry: Mutex<Registry>,
    /// Cancelled once the open sessions are closed at shutdown: event
    /// streams still open end.
    stopping: CancellationToken,
}

/// Holds a place among the sessions being opened; gives it back on drop.
struct Reservation<'a> {
    kernel: &'a ServeKernel,
    file: Option<String>,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut registry = self.kernel.lock();
        if let Some(i) = registry.opening.iter().position(|f| *f == self.file) {
            registry.opening.remove(i);
        }
    }
}

impl ServeKernel {
    /// Start the server's runtime (a failure is `bootError`, not fatal).
    /// `workspace` is where the server runtime's extensions see themselves
    /// run (the directory `serve` runs in).
    pub async fn start(
        home: ReasonixHome,
        guard: reasonix_sidecar::Guard,
        workspace: PathBuf,
    ) -> ServeKernel {
        ServeKernel {
            runtime: RuntimeKernel::start(home.clone(), guard.clone(), workspace).await,
            home,
            guard,
            registry: Mutex::new(Registry::default()),
            stopping: CancellationToken::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn home(&self) -> &ReasonixHome {
        &self.home
    }

    /// Cancelled at shutdown once the open sessions are closed.
    pub fn stopping(&self) -> CancellationToken {
        self.stopping.clone()
    }

    fn sessions(&self) -> Vec<Session> {
        self.lock()
            .open
            .values()
            .map(|o| o.session.clone())
            .collect()
    }

    /// A turn or a reload runs somewhere.
    pub fn is_busy(&self) -> bool {
        self.runtime.is_busy() || self.sessions().iter().any(|s| s.status().busy)
    }

    pub fn status(&self) -> KernelStatus {
        let mut status = self.runtime.status();
        status.sessions = self.sessions().iter().map(Session::status).collect();
        status.busy |= status.sessions.iter().any(|s| s.busy);
        status
    }

    /// Rebuild the server runtime and every open session from what is on
    /// disk; refused while any turn runs (Serve rejects, the caller retries
    /// once idle). A server runtime that cannot be rebuilt keeps serving,
    /// and the sessions are left as they are (they would read the same
    /// registry); a session whose own rebuild fails keeps its generation
    /// and is reported in [`KernelReload::sessions`].
    pub async fn reload(&self) -> Result<KernelReload, ReloadRefused> {
        if self.is_busy() {
            return Err(ReloadRefused::Busy);
        }
        let report = self.runtime.reload().await?;
        let mut sessions = Vec::new();
        for session in self.sessions() {
            sessions.push(SessionReload {
                session_id: session.session_id(),
                outcome: session.reload().await,
            });
        }
        Ok(KernelReload { report, sessions })
    }

    /// Open a session (`options.interaction` is the caller's) and keep it.
    /// `file` names its session file, which one session at a time may use.
    pub async fn open(
        &self,
        options: SessionOptions,
        file: Option<String>,
    ) -> Result<Session, OpenRefused> {
        let _reservation = {
            let mut registry = self.lock();
            if registry.stopping {
                return Err(OpenRefused::Stopping);
            }
            if registry.open.len() + registry.opening.len() >= MAX_SESSIONS {
                return Err(OpenRefused::Limit);
            }
            if let Some(name) = &file {
                let in_use = registry
                    .open
                    .values()
                    .any(|o| o.file.as_ref() == Some(name))
                    || registry.opening.iter().any(|f| f.as_ref() == Some(name));
                if in_use {
                    return Err(OpenRefused::FileInUse(name.clone()));
                }
            }
            registry.opening.push(file.clone());
            Reservation {
                kernel: self,
                file: file.clone(),
            }
        };
        let options = SessionOptions {
            guard: self.guard.clone(),
            ..options
        };
        let session = Session::open(options).await.map_err(OpenRefused::Session)?;
        let refused = {
            let mut registry = self.lock();
            if registry.stopping {
                Some(OpenRefused::Stopping)
            } else {
                match registry.open.entry(session.session_id()) {
                    // Two session files carrying the same id (a copied file).
                    std::collections::btree_map::Entry::Occupied(_) => {
                        Some(OpenRefused::FileInUse(file.clone().unwrap_or_default()))
                    }
                    std::collections::btree_map::Entry::Vacant(slot) => {
                        slot.insert(Open {
                            session: session.clone(),
                            file,
                        });
                        None
                    }
                }
            }
        };
        if let Some(refused) = refused {
            session.close().await;
            return Err(refused);
        }
        Ok(session)
    }

    /// An open session by id.
    pub fn session(&self, id: &str) -> Option<Session> {
        self.lock().open.get(id).map(|o| o.session.clone())
    }

    /// Every open session with its session file name, by id.
    pub fn list(&self) -> Vec<(Session, Option<String>)> {
        self.lock()
            .open
            .values()
            .map(|o| (o.session.clone(), o.file.clone()))
            .collect()
    }

    /// The session file name `id` was opened with.
    pub fn file_of(&self, id: &str) -> Option<String> {
        self.lock().open.get(id).and_then(|o| o.file.clone())
    }

    /// Close a session (its running turn is cancelled, SessionEnd hooks
    /// run, its sidecars shut down) and forget it. `false` if it is not open.
    pub async fn close(&self, id: &str) -> bool {
        let open = self.lock().open.remove(id);
        match open {
            Some(open) => {
                open.session.close().await;
                true
            }
            None => false,
        }
    }

    /// Begin to stop: refuse new sessions, close every open one (running
    /// turns are cancelled, SessionEnd hooks run, sidecars shut down; each
    /// stream gets its `closed` event), then end the event streams that
    /// are still open.
    pub async fn stop_sessions(&self) {
        let open: Vec<Open> = {
            let mut registry = self.lock();
            registry.stopping = true;
            std::mem::take(&mut registry.open).into_values().collect()
        };
        futures::future::join_all(open.iter().map(|o| o.session.close())).await;
        self.stopping.cancel();
    }

    /// Stop everything: the sessions, then the server's runtime.
    pub async fn shutdown(&self) {
        self.stop_sessions().await;
        self.runtime.shutdown().await;
    }
}
