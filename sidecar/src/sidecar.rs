//! One running sidecar: start (launch + handshake), the host→extension
//! calls, and the lifecycle (shutdown, crash, kill on drop).

use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use reasonix_protocol::HookPoint;
use reasonix_protocol::error::ErrorReason;
use reasonix_protocol::methods as m;
use reasonix_protocol::types::{
    Decision, EventParams, InitializeResult, InitializedParams, InterceptParams, InterceptResult,
    ProviderCatalogParams, ProviderCatalogResult, RawJson, ResourcesChangedParams, SessionContext,
    ShutdownParams, ShutdownResult, StreamCancelParams, StreamCancelResult, StreamOpenParams,
    StreamOpenResult, ToolCallParams, ToolCallResult, UIActionParams, UIActionResult,
    UISubmitParams, UISubmitResult, UiHost,
};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::connection::{CrashCallback, Enqueued, Shared, StreamEvent, Wiring};
use crate::content::{externalize, internalize};
use crate::errors::{CallError, Failure, FailureKind, StartError, StartStage, Status};
use crate::handshake::{
    Declaration, ManifestCeiling, check_declaration, check_protocol_version, initialize_params,
};
use crate::launch::{self, Guard, LaunchSpec};
use crate::services::{HostServices, NoHostServices};
use crate::stderr_tail::StderrTail;

/// Handshake bound (§4.3 rule 1).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// Host write-stall bound (§2).
pub const WRITE_STALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Default `extension/shutdown` bound (§13).
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);
/// Wait for exit after stdin is closed.
pub const EXIT_GRACE: Duration = Duration::from_millis(750);
pub use crate::launch::REAP_TIMEOUT;
/// `extension/provider/stream/cancel` bound (best effort).
pub const STREAM_CANCEL_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a failed start waits for stderr to drain into the tail.
const STDERR_DRAIN: Duration = Duration::from_millis(500);

/// Options of [`Sidecar::start`].
#[derive(Clone)]
pub struct StartOptions {
    pub session: SessionContext,
    pub ui_host: UiHost,
    pub guard: Guard,
    pub handshake_timeout: Duration,
    pub write_stall_timeout: Duration,
    /// Serves `host/ui/publish` / `host/ui/request`.
    pub host_services: Arc<dyn HostServices>,
    /// Called once if a ready sidecar's connection ends without an orderly
    /// shutdown.
    pub on_crash: Option<CrashCallback>,
}

impl StartOptions {
    /// Defaults: headless UI host, `Guard::CurrentExe`, 30 s handshake, 10 s
    /// write-stall bound, no UI services, no crash callback.
    pub fn new(session: SessionContext) -> Self {
        StartOptions {
            session,
            ui_host: UiHost::Headless,
            guard: Guard::CurrentExe,
            handshake_timeout: HANDSHAKE_TIMEOUT,
            write_stall_timeout: WRITE_STALL_TIMEOUT,
            host_services: Arc::new(NoHostServices),
            on_crash: None,
        }
    }
}

/// A sidecar's ruling on one intercept, with an externalised replacement
/// already paged in and verified. Point-specific checks (allow/deny only at
/// `permission.decision`, strict decoding of the replacement into the
/// point's DTO) are the dispatcher's.
#[derive(Debug, Clone)]
pub struct InterceptOutcome {
    pub decision: Decision,
    /// As sent; redact before showing it.
    pub reason: Option<String>,
    pub replacement: Option<RawJson>,
}

/// An open provider stream: chunk/end params in arrival order.
pub struct ProviderStream {
    pub stream_id: String,
    pub events: mpsc::Receiver<StreamEvent>,
    shared: Arc<Shared>,
}

impl Drop for ProviderStream {
    fn drop(&mut self) {
        self.shared.unregister_stream(&self.stream_id);
    }
}

/// What `shutdown` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShutdownReport {
    /// `Some(accepted)` when `extension/shutdown` was answered.
    pub accepted: Option<bool>,
    /// The process exited on its own within the grace.
    pub exited_in_grace: bool,
    /// The process was reaped within the reap budget.
    pub reaped: bool,
    /// The exit status, when reaped.
    pub exit_status: Option<String>,
}

/// A running, handshaken sidecar. Dropping it kills its process group.
pub struct Sidecar {
    shared: Arc<Shared>,
    declaration: InitializeResult,
    stderr: StderrTail,
    exit: watch::Receiver<Option<ExitStatus>>,
    tasks: Vec<JoinHandle<()>>,
    shutdown: tokio::sync::OnceCell<ShutdownReport>,
}

/// A spawned sidecar whose handshake has not run yet (see
/// [`Sidecar::launch`]). Dropping it kills the process group.
pub struct Launched {
    sidecar: Sidecar,
    stderr_task: JoinHandle<()>,
    started: Instant,
}

impl Sidecar {
    /// Launches the sidecar and runs the handshake. On failure the process
    /// group is killed and reaped before the error is returned.
    pub async fn start(
        spec: LaunchSpec,
        ceiling: ManifestCeiling,
        options: StartOptions,
    ) -> Result<Sidecar, StartError> {
        Sidecar::launch(spec, &options)
            .await?
            .handshake(&ceiling, &options)
            .await
    }

    /// The first half of [`Sidecar::start`]: spawn the process and wire its
    /// stdio, without waiting for it. A host starting several sidecars
    /// launches them all first so their process start-ups overlap, then runs
    /// the handshakes.
    pub async fn launch(spec: LaunchSpec, options: &StartOptions) -> Result<Launched, StartError> {
        let started = Instant::now();
        let plugin = spec.name.clone();
        let fail = |stage, detail: String| StartError {
            plugin: plugin.clone(),
            stage,
            elapsed: started.elapsed(),
            reason: None,
            detail: crate::redact(&detail).into_owned(),
            stderr_tail: String::new(),
        };
        let resolved =
            launch::resolve(&spec).map_err(|e| fail(StartStage::Launch, e.to_string()))?;
        let (mut child, tree) = launch::spawn_tree(&resolved, &options.guard)
            .await
            .map_err(|e| fail(StartStage::Spawn, e.to_string()))?;

        let (stdin, stdout, stderr) =
            match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
                (Some(i), Some(o), Some(e)) => (i, o, e),
                _ => {
                    tree.end();
                    return Err(fail(StartStage::Spawn, "child stdio was not piped".into()));
                }
            };
        let (stderr_tail, stderr_task) = StderrTail::spawn(&plugin, stderr);
        let (shared, mut tasks) = Shared::start(Wiring {
            plugin: plugin.as_str().into(),
            tree,
            stdin,
            stdout,
            stall: options.write_stall_timeout,
            services: options.host_services.clone(),
            on_crash: options.on_crash.clone(),
        });
        let (exit_tx, exit) = watch::channel(None);
        let watcher_shared = shared.clone();
        tasks.push(tokio::spawn(async move {
            let status = child.wait().await;
            if let Ok(status) = status {
                let _ = exit_tx.send(Some(status));
            }
            watcher_shared.fail(Failure::new(
                FailureKind::Exited,
                match status {
                    Ok(s) => format!("the sidecar exited ({s})"),
                    Err(e) => format!("waiting for the sidecar failed: {e}"),
                },
            ));
        }));

        Ok(Launched {
            sidecar: Sidecar {
                shared,
                declaration: placeholder_declaration(),
                stderr: stderr_tail,
                exit,
                tasks,
                shutdown: tokio::sync::OnceCell::new(),
            },
            stderr_task,
            started,
        })
    }
}

impl Launched {
    /// The second half of [`Sidecar::start`]: `initialize`, the §4.3
    /// checks, `initialized`. On failure the process group is killed and
    /// reaped before the error is returned.
    pub async fn handshake(
        self,
        ceiling: &ManifestCeiling,
        options: &StartOptions,
    ) -> Result<Sidecar, StartError> {
        let Launched {
            mut sidecar,
            stderr_task,
            started,
        } = self;
        match sidecar.handshake(ceiling, options).await {
            Ok(declaration) => {
                sidecar.declaration = declaration;
                Ok(sidecar)
            }
            Err((stage, reason, detail)) => {
                sidecar
                    .shared
                    .fail(Failure::new(FailureKind::StartFailed, &detail));
                sidecar.shared.kill();
                if !sidecar.wait_exit(REAP_TIMEOUT).await {
                    sidecar.shared.tree.kill_group();
                    sidecar.wait_exit(REAP_TIMEOUT).await;
                }
                let _ = tokio::time::timeout(STDERR_DRAIN, stderr_task).await;
                Err(StartError {
                    plugin: sidecar.plugin().to_owned(),
                    stage,
                    elapsed: started.elapsed(),
                    reason,
                    detail: crate::redact(&detail).into_owned(),
                    stderr_tail: sidecar.stderr.text(),
                })
            }
        }
    }
}

impl Sidecar {
    async fn handshake(
        &self,
        ceiling: &ManifestCeiling,
        options: &StartOptions,
    ) -> Result<InitializeResult, (StartStage, Option<ErrorReason>, String)> {
        let params = initialize_params(ceiling, &options.session, options.ui_host);
        let result: InitializeResult = match self
            .shared
            .call(m::EXTENSION_INITIALIZE, &params, options.handshake_timeout)
            .await
        {
            Ok(result) => result,
            Err(e @ CallError::InvalidResult { .. }) => {
                return Err((
                    StartStage::Initialize,
                    Some(ErrorReason::ProtocolError),
                    format!("invalid initialize result: {}", e.message()),
                ));
            }
            Err(e) => {
                let reason = e.reason();
                return Err((StartStage::Initialize, reason, e.message()));
            }
        };
        if let Err(e) = check_protocol_version(&result.protocol_version) {
            return Err((StartStage::Validate, Some(e.reason()), e.to_string()));
        }
        if let Err(e) = check_declaration(ceiling, &Declaration::from(&result)) {
            return Err((StartStage::Validate, Some(e.reason()), e.to_string()));
        }
        self.shared.mark_ready();
        // Written directly (not queued) so no request can overtake it.
        let frame = reasonix_protocol::frame::encode_notification(
            m::EXTENSION_INITIALIZED,
            &InitializedParams {},
        )
        .map_err(|e| (StartStage::Initialized, None, e.to_string()))?;
        self.shared
            .write_frame(&frame)
            .await
            .map_err(|e| (StartStage::Initialized, e.reason(), e.message()))?;
        Ok(result)
    }

    /// The plugin name this sidecar runs.
    pub fn plugin(&self) -> &str {
        &self.shared.plugin
    }

    /// What the handshake accepted.
    pub fn declaration(&self) -> &InitializeResult {
        &self.declaration
    }

    /// Current lifecycle status.
    pub fn status(&self) -> Status {
        self.shared.status.borrow().clone()
    }

    /// A receiver that sees every status change (crash observation).
    pub fn watch_status(&self) -> watch::Receiver<Status> {
        self.shared.status.subscribe()
    }

    /// The redacted stderr tail.
    pub fn stderr_tail(&self) -> String {
        self.stderr.text()
    }

    /// The process group id (the guard's or the sidecar's pid).
    pub fn process_group(&self) -> i32 {
        self.shared.tree.group().as_raw_nonzero().get()
    }

    /// `extension/intercept`: payloads over 64 KiB go through the content
    /// store; `timeout` is both the wire budget and the local bound
    /// (`intercept_timeout` on expiry).
    pub async fn intercept(
        &self,
        point: HookPoint,
        payload: RawJson,
        timeout: Duration,
    ) -> Result<InterceptOutcome, CallError> {
        let outgoing = externalize(
            &mut crate::connection::lock(&self.shared.content),
            "/payload",
            payload,
        )?;
        let params = InterceptParams {
            event: point,
            seq: self.shared.intercept_seq.fetch_add(1, Ordering::Relaxed),
            payload: outgoing.value,
            timeout_millis: timeout.as_millis().min(u128::from(u64::MAX)) as u64,
            externalized: outgoing.externalized,
        };
        let result: InterceptResult = self
            .shared
            .call(m::EXTENSION_INTERCEPT, &params, timeout)
            .await?;
        let replacement = internalize(
            &crate::connection::lock(&self.shared.content),
            "/replacement",
            result.replacement,
            &result.externalized,
        )
        .map_err(CallError::Replacement)?;
        Ok(InterceptOutcome {
            decision: result.decision,
            reason: result.reason,
            replacement,
        })
    }

    /// `extension/event`, never blocking: `Dropped` when the queue is full
    /// (one warning per connection).
    pub fn event(&self, point: HookPoint, payload: RawJson) -> Result<Enqueued, CallError> {
        if !self.shared.is_ready() {
            return Err(CallError::NotReady);
        }
        let outgoing = externalize(
            &mut crate::connection::lock(&self.shared.content),
            "/payload",
            payload,
        )?;
        let params = EventParams {
            event: point,
            payload: outgoing.value,
            externalized: outgoing.externalized,
        };
        self.shared.notify(m::EXTENSION_EVENT, &params)
    }

    /// `extension/resources/changed` (queued; a full queue fails the
    /// connection).
    pub fn resources_changed(&self, paths: Vec<String>) -> Result<(), CallError> {
        self.shared
            .notify(
                m::EXTENSION_RESOURCES_CHANGED,
                &ResourcesChangedParams { paths },
            )
            .map(|_| ())
    }

    /// `extension/tool/call` (generation B).
    pub async fn tool_call(
        &self,
        name: &str,
        arguments: RawJson,
        timeout: Duration,
    ) -> Result<ToolCallResult, CallError> {
        let params = ToolCallParams {
            name: name.to_owned(),
            arguments,
            timeout_millis: timeout.as_millis().min(u128::from(u64::MAX)) as u64,
        };
        self.shared
            .call(m::EXTENSION_TOOL_CALL, &params, timeout)
            .await
    }

    /// `extension/provider/catalog`.
    pub async fn provider_catalog(
        &self,
        timeout: Duration,
    ) -> Result<ProviderCatalogResult, CallError> {
        self.shared
            .call(
                m::EXTENSION_PROVIDER_CATALOG,
                &ProviderCatalogParams {},
                timeout,
            )
            .await
    }

    /// `extension/provider/stream/open`. The host mints the stream id
    /// (`es_` + 24 hex) and sends `seqBase: 1`, whatever `params` says. The
    /// receiver is registered before the request goes out. `accepted:false`
    /// is returned as an error after a best-effort cancel.
    pub async fn stream_open(
        &self,
        mut params: StreamOpenParams,
        timeout: Duration,
    ) -> Result<ProviderStream, CallError> {
        params.stream_id = mint_stream_id();
        params.seq_base = 1;
        let events = self.shared.register_stream(&params.stream_id);
        let stream = ProviderStream {
            stream_id: params.stream_id.clone(),
            events,
            shared: self.shared.clone(),
        };
        let result: StreamOpenResult = self
            .shared
            .call(m::EXTENSION_PROVIDER_STREAM_OPEN, &params, timeout)
            .await?;
        if !result.accepted {
            let _ = self.stream_cancel(&stream.stream_id).await;
            return Err(CallError::Remote {
                method: m::EXTENSION_PROVIDER_STREAM_OPEN,
                error: reasonix_protocol::error::RpcError::with_message(
                    ErrorReason::ProviderFailed,
                    "the extension did not accept the stream",
                ),
            });
        }
        Ok(stream)
    }

    /// `extension/provider/stream/cancel` (2 s, best effort). The stream's
    /// receiver stays registered until its `ProviderStream` is dropped.
    pub async fn stream_cancel(&self, stream_id: &str) -> Result<bool, CallError> {
        let result: StreamCancelResult = self
            .shared
            .call(
                m::EXTENSION_PROVIDER_STREAM_CANCEL,
                &StreamCancelParams {
                    stream_id: stream_id.to_owned(),
                },
                STREAM_CANCEL_TIMEOUT,
            )
            .await?;
        Ok(result.cancelled)
    }

    /// `extension/ui/action`.
    pub async fn ui_action(
        &self,
        params: UIActionParams,
        timeout: Duration,
    ) -> Result<UIActionResult, CallError> {
        self.shared
            .call(m::EXTENSION_UI_ACTION, &params, timeout)
            .await
    }

    /// `extension/ui/submit`.
    pub async fn ui_submit(
        &self,
        params: UISubmitParams,
        timeout: Duration,
    ) -> Result<UISubmitResult, CallError> {
        self.shared
            .call(m::EXTENSION_UI_SUBMIT, &params, timeout)
            .await
    }

    /// §13 shutdown with the default 5 s request bound.
    pub async fn shutdown(&self) -> ShutdownReport {
        self.shutdown_within(SHUTDOWN_TIMEOUT).await
    }

    /// §13: `extension/shutdown` (only when ready and not crashed) bounded
    /// by `timeout`, close stdin, 750 ms grace, kill the group, reap (5 s).
    /// Idempotent: later calls return the first report.
    pub async fn shutdown_within(&self, timeout: Duration) -> ShutdownReport {
        self.shutdown
            .get_or_init(|| self.run_shutdown(timeout))
            .await
            .clone()
    }

    async fn run_shutdown(&self, timeout: Duration) -> ShutdownReport {
        let healthy = self.shared.is_ready() && !self.shared.is_down();
        if !matches!(self.status(), Status::Crashed(_)) {
            self.shared.status.send_replace(Status::ShuttingDown);
        }
        let mut accepted = None;
        if healthy {
            let params = ShutdownParams {
                timeout_millis: timeout.as_millis().min(u128::from(u64::MAX)) as u64,
            };
            if let Ok(result) = self
                .shared
                .call::<_, ShutdownResult>(m::EXTENSION_SHUTDOWN, &params, timeout)
                .await
            {
                accepted = Some(result.accepted);
            }
        }
        self.shared.close_stdin(EXIT_GRACE).await;
        let exited_in_grace = self.wait_exit(EXIT_GRACE).await;
        self.shared.kill();
        let mut reaped = self.wait_exit(REAP_TIMEOUT).await;
        if !reaped {
            // A guard that did not finish its cleanup: take the group.
            self.shared.tree.kill_group();
            reaped = self.wait_exit(REAP_TIMEOUT).await;
        }
        self.shared.close_orderly();
        if !matches!(self.status(), Status::Crashed(_)) {
            self.shared.status.send_replace(Status::Stopped);
        }
        ShutdownReport {
            accepted,
            exited_in_grace,
            reaped,
            exit_status: self.exit.borrow().map(|s| s.to_string()),
        }
    }

    async fn wait_exit(&self, bound: Duration) -> bool {
        let mut exit = self.exit.clone();
        tokio::time::timeout(bound, exit.wait_for(Option::is_some))
            .await
            .is_ok_and(|r| r.is_ok())
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        self.shared.kill();
        for task in &self.tasks {
            task.abort();
        }
    }
}

fn placeholder_declaration() -> InitializeResult {
    InitializeResult {
        protocol_version: String::new(),
        name: String::new(),
        version: String::new(),
        component_id: None,
        subscriptions: Vec::new(),
        replaces: Vec::new(),
        providers: Vec::new(),
        ui_actions: Vec::new(),
        requires: Vec::new(),
        provides: Vec::new(),
        state_schema_version: 0,
        tools: Vec::new(),
    }
}

fn mint_stream_id() -> String {
    use sha2::{Digest, Sha256};
    use std::sync::atomic::AtomicU64;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = Sha256::new();
    h.update(std::process::id().to_le_bytes());
    h.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    h.update(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
            .to_le_bytes(),
    );
    format!("es_{}", hex::encode(&h.finalize()[..12]))
}
