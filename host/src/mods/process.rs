//! One mod's Node process: launched like a sidecar (own process group,
//! through the guard, so it and everything it starts die with the host),
//! NDJSON JSON-RPC over its stdio with the protocol crate's frame codec,
//! and calls bounded by the hook budget.
//!
//! The budget counts the hook's own running time: while the host is
//! answering one of the mod's `$` calls (a question to the user, say) the
//! clock stops. A call that runs past it kills the process group.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use reasonix_protocol::error::{DOMAIN_ERROR_CODE, RpcError};
use reasonix_protocol::frame::{
    Frame, Id, Outcome, decode_frame, encode_error, encode_request, encode_result,
};
use reasonix_sidecar::frame::FrameReader;
use reasonix_sidecar::launch::{ProcessTree, ResolvedCommand, spawn_tree};
use reasonix_sidecar::stderr_tail::StderrTail;
use reasonix_sidecar::{BoxFuture, Guard};
use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};

use super::node::Node;

/// The host script, shipped in the binary.
pub const HOST_SCRIPT: &str = include_str!("host.mjs");

/// A typed rejection of a `$` call (`mod.submit_rate`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModRejection {
    pub code: &'static str,
    pub message: String,
}

impl ModRejection {
    pub fn new(code: &'static str, message: impl Into<String>) -> ModRejection {
        ModRejection {
            code,
            message: message.into(),
        }
    }

    fn to_rpc(&self) -> RpcError {
        RpcError {
            code: DOMAIN_ERROR_CODE,
            message: format!("[{}] {}", self.code, self.message),
            data: serde_json::value::to_raw_value(&serde_json::json!({ "code": self.code })).ok(),
        }
    }
}

/// Serves the mod's `$` calls: (member, args) → result or rejection.
pub type Serve = Arc<dyn Fn(String, Value) -> BoxFuture<Result<Value, ModRejection>> + Send + Sync>;

/// Why a call to the mod did not return a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallFailure {
    /// The mod threw (its message, redacted later).
    Threw(String),
    /// The process is gone.
    Exited(String),
    /// It ran past its budget; the process was killed.
    OverBudget(Duration),
}

type Reply = Result<Value, CallFailure>;

struct Shared {
    tree: ProcessTree,
    pending: Mutex<HashMap<i64, oneshot::Sender<Reply>>>,
    /// `$` calls being answered by the host right now (the budget clock
    /// stops while any is).
    serving: watch::Sender<usize>,
    exited: watch::Sender<Option<String>>,
    killed: AtomicBool,
    /// Frames for the writer; taken (closing stdin) at shutdown.
    outbox: Mutex<Option<mpsc::UnboundedSender<Vec<u8>>>>,
    stderr: StderrTail,
}

impl Shared {
    fn send(&self, frame: Vec<u8>) -> bool {
        self.outbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|tx| tx.send(frame).is_ok())
    }

    fn kill(&self) {
        if !self.killed.swap(true, Ordering::AcqRel) {
            self.tree.end();
        }
    }

    fn exit(&self, reason: String) {
        self.exited.send_if_modified(|current| {
            if current.is_none() {
                *current = Some(reason.clone());
                true
            } else {
                false
            }
        });
        let waiting: Vec<_> = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .collect();
        for (_, tx) in waiting {
            let _ = tx.send(Err(CallFailure::Exited(reason.clone())));
        }
    }
}

/// A running mod process.
pub struct ModProcess {
    shared: Arc<Shared>,
    next_id: AtomicI64,
}

impl std::fmt::Debug for ModProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModProcess")
            .field("group", &self.shared.tree.group())
            .finish()
    }
}

impl ModProcess {
    /// Start `node <flags> --input-type=module -e <host script>` for
    /// `plugin`, its `$` calls answered by `serve`.
    pub async fn start(
        node: &Node,
        plugin: &str,
        plugin_root: PathBuf,
        guard: &Guard,
        serve: Serve,
    ) -> Result<ModProcess, String> {
        let mut args = node.flags();
        args.extend([
            "--input-type=module".to_string(),
            "-e".to_string(),
            HOST_SCRIPT.to_string(),
        ]);
        let command = ResolvedCommand {
            program: node.path.clone(),
            args,
            env: vec![
                (
                    "REASONIX_PLUGIN_ROOT".to_string(),
                    plugin_root.display().to_string(),
                ),
                ("REASONIX_PLUGIN_NAME".to_string(), plugin.to_string()),
                (
                    "CLAUDE_PLUGIN_ROOT".to_string(),
                    plugin_root.display().to_string(),
                ),
            ],
        };
        let (mut child, tree) = spawn_tree(&command, guard)
            .await
            .map_err(|e| format!("starting node: {e}"))?;
        let stdin = child.stdin.take().ok_or("node has no stdin")?;
        let stdout = child.stdout.take().ok_or("node has no stdout")?;
        let stderr = child.stderr.take().ok_or("node has no stderr")?;
        let (stderr, _) = StderrTail::spawn(plugin, stderr);
        let (outbox, mut outgoing) = mpsc::unbounded_channel::<Vec<u8>>();
        let shared = Arc::new(Shared {
            tree,
            pending: Mutex::new(HashMap::new()),
            serving: watch::channel(0).0,
            exited: watch::channel(None).0,
            killed: AtomicBool::new(false),
            outbox: Mutex::new(Some(outbox)),
            stderr,
        });
        // The writer: one frame after the other; a closed stdin ends it.
        tokio::spawn(async move {
            let mut stdin = stdin;
            while let Some(frame) = outgoing.recv().await {
                if stdin.write_all(&frame).await.is_err() {
                    break;
                }
            }
        });
        // The reaper: the guard (or node) exiting ends the process.
        let reaper = Arc::clone(&shared);
        tokio::spawn(async move {
            let status = child.wait().await;
            // Take what it started with it.
            reaper.kill();
            let why = match status {
                Ok(status) => format!("node exited ({status})"),
                Err(e) => format!("node could not be waited for: {e}"),
            };
            reaper.exit(why);
        });
        let reader = Arc::clone(&shared);
        tokio::spawn(async move {
            let mut frames = FrameReader::new(BufReader::new(stdout));
            loop {
                match frames.next_frame().await {
                    Ok(Some(line)) => on_frame(&reader, line, &serve),
                    Ok(None) => break,
                    Err(e) => {
                        reader.kill();
                        reader.exit(format!("the mod broke the protocol: {e}"));
                        break;
                    }
                }
            }
        });
        Ok(ModProcess {
            shared,
            next_id: AtomicI64::new(1),
        })
    }

    /// Whether the process is gone, and why.
    pub fn exited(&self) -> Option<String> {
        self.shared.exited.borrow().clone()
    }

    /// The redacted tail of its stderr.
    pub fn stderr(&self) -> String {
        self.shared.stderr.text()
    }

    /// Kill the process group (idempotent).
    pub fn kill(&self, why: &str) {
        self.shared.kill();
        self.shared.exit(why.to_string());
    }

    /// End it: close stdin (the host script exits), then take the group.
    pub async fn shutdown(&self) {
        // Dropping the sender closes stdin once queued frames are out.
        self.shared
            .outbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let mut exited = self.shared.exited.subscribe();
        let _ =
            tokio::time::timeout(Duration::from_secs(2), exited.wait_for(|e| e.is_some())).await;
        self.kill("the session closed");
    }

    /// Call `method` and wait for its result within `budget` of the mod's
    /// own running time (`None`: no ceiling). Over budget, the process
    /// group is killed.
    pub async fn call(&self, method: &str, params: Value, budget: Option<Duration>) -> Reply {
        if let Some(why) = self.exited() {
            return Err(CallFailure::Exited(why));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let frame = encode_request(Id::Number(id), method, &params)
            .map_err(|e| CallFailure::Threw(format!("cannot send {method}: {e}")))?;
        let (tx, mut rx) = oneshot::channel();
        self.shared
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, tx);
        if let Some(why) = self.exited() {
            self.shared
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
            return Err(CallFailure::Exited(why));
        }
        if !self.shared.send(frame) {
            return Err(CallFailure::Exited("its stdin is closed".into()));
        }
        let Some(budget) = budget else {
            return rx
                .await
                .unwrap_or_else(|_| Err(CallFailure::Exited("gone".into())));
        };
        let mut serving = self.shared.serving.subscribe();
        let mut left = budget;
        loop {
            if *serving.borrow_and_update() > 0 {
                // The host is answering one of its calls: the clock stops.
                tokio::select! {
                    reply = &mut rx => return reply.unwrap_or_else(|_| Err(CallFailure::Exited("gone".into()))),
                    _ = serving.changed() => continue,
                }
            }
            let started = Instant::now();
            tokio::select! {
                reply = &mut rx => return reply.unwrap_or_else(|_| Err(CallFailure::Exited("gone".into()))),
                _ = tokio::time::sleep(left) => {
                    self.shared.pending.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
                    self.kill(&format!("a call ran past its budget of {} ms", budget.as_millis()));
                    return Err(CallFailure::OverBudget(budget));
                }
                _ = serving.changed() => {
                    left = left.saturating_sub(started.elapsed());
                }
            }
        }
    }
}

impl Drop for ModProcess {
    fn drop(&mut self) {
        self.shared.kill();
    }
}

fn respond(shared: &Shared, id: Id, outcome: Result<Value, ModRejection>) {
    let frame = match outcome {
        Ok(value) => encode_result(id, &value),
        Err(rejection) => encode_error(id, &rejection.to_rpc()),
    };
    if let Ok(frame) = frame {
        shared.send(frame);
    }
}

fn on_frame(shared: &Arc<Shared>, line: &[u8], serve: &Serve) {
    let frame = match decode_frame(line) {
        Ok(frame) => frame,
        Err(rejection) => {
            tracing::debug!("mod sent a bad frame: {}", rejection.detail);
            return;
        }
    };
    match frame {
        Frame::Response(response) => {
            let Id::Number(id) = response.id else { return };
            let waiter = shared
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
            if let Some(waiter) = waiter {
                let reply = match response.outcome {
                    Outcome::Result(raw) => {
                        Ok(serde_json::from_str(raw.get()).unwrap_or(Value::Null))
                    }
                    Outcome::Error(error) => Err(CallFailure::Threw(error.message)),
                };
                let _ = waiter.send(reply);
            }
        }
        Frame::Request(request) => {
            let member = request
                .method
                .strip_prefix("$/")
                .unwrap_or(&request.method)
                .to_string();
            let args = serde_json::from_str::<Value>(request.params.get())
                .ok()
                .and_then(|p| p.get("args").cloned())
                .unwrap_or(Value::Array(Vec::new()));
            let mut serving = serve(member, args);
            // What the host answers at once (UI lines, registrations) is
            // answered here, in the order the mod wrote it; what waits
            // (a question to the user) goes on by itself.
            if let Some(outcome) = (&mut serving).now_or_never() {
                respond(shared, request.id, outcome);
                return;
            }
            let shared = Arc::clone(shared);
            shared.serving.send_modify(|n| *n += 1);
            tokio::spawn(async move {
                let outcome = serving.await;
                shared.serving.send_modify(|n| *n = n.saturating_sub(1));
                respond(&shared, request.id, outcome);
            });
        }
        Frame::Notification(_) => {}
    }
}
