//! The JSON-RPC peer over a sidecar's stdio: request ids from 1, a pending
//! table, concurrent requests both ways, the notification queue, the
//! write-stall bound, strict inbound validation and the failure fan-out.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use reasonix_protocol::error::{ErrorReason, RpcError};
use reasonix_protocol::frame::{
    EncodeError, Frame, Id, Notification, Outcome, Request, decode_frame, encode_error,
    encode_notification, encode_request, encode_request_into, encode_result,
};
use reasonix_protocol::methods as m;
use reasonix_protocol::types::{
    ContentReadParams, RawJson, StreamChunkParams, StreamEndParams, UIPublishParams,
    UIRequestParams,
};
use reasonix_protocol::validate::decode_params;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{Notify, Semaphore, mpsc, oneshot, watch};

use crate::content::{ContentError, ContentStore};
use crate::errors::{CallError, Failure, FailureKind, Status};
use crate::frame::{FrameReader, ReadError};
use crate::launch::ProcessTree;
use crate::services::HostServices;

/// Notifications queued for the single writer (upstream: 256).
pub const NOTIFICATION_QUEUE: usize = 256;
/// Inbound extension→host requests served at once (upstream SDK: 32).
pub const INBOUND_CONCURRENCY: usize = 32;
/// Stream events buffered per stream before it is cut (the dispatcher's
/// reorder window is 256).
pub const STREAM_BUFFER: usize = 1024;
/// How long a courtesy error frame may take before a fatal close.
const COURTESY_WRITE: Duration = Duration::from_secs(1);

/// What a stream's receiver gets, in arrival order.
#[derive(Debug, Clone)]
pub enum StreamEvent {
    Chunk(Box<StreamChunkParams>),
    End(StreamEndParams),
    /// A chunk or end for this stream that failed strict decoding.
    Invalid(String),
    /// The connection went down; nothing more will arrive.
    Interrupted(Failure),
}

type Reply = Result<RawJson, CallError>;

struct Pending {
    /// Set once the connection is down; later calls fail with it.
    closed: Option<Closed>,
    calls: HashMap<i64, oneshot::Sender<Reply>>,
}

#[derive(Clone)]
enum Closed {
    Orderly,
    Failed(Failure),
}

impl Closed {
    fn error(&self) -> CallError {
        match self {
            Closed::Orderly => CallError::Closed,
            Closed::Failed(f) => CallError::Interrupted(f.clone()),
        }
    }
}

/// Called once when a ready sidecar's connection ends without an orderly
/// shutdown.
pub type CrashCallback = Arc<dyn Fn(&Failure) + Send + Sync>;

pub(crate) struct Shared {
    pub plugin: Arc<str>,
    pub tree: ProcessTree,
    /// Frames written ahead of queued notifications (requests, responses,
    /// lifecycle), concatenated so concurrent calls share one write.
    outbox: Mutex<Outbox>,
    outbox_ready: Notify,
    /// Direct bytes written so far, and whether the writer has stopped.
    written: watch::Sender<Progress>,
    queue: mpsc::Sender<Queued>,
    event_drop_warned: AtomicBool,
    pending: Mutex<Pending>,
    next_id: AtomicI64,
    ready: AtomicBool,
    poisoned: AtomicBool,
    pub status: watch::Sender<Status>,
    pub content: Mutex<ContentStore>,
    streams: Mutex<HashMap<String, mpsc::Sender<StreamEvent>>>,
    services: Arc<dyn HostServices>,
    inbound: Arc<Semaphore>,
    on_crash: Option<CrashCallback>,
    pub intercept_seq: AtomicU64,
    /// Frames that broke the protocol in a way that may have been meant as
    /// an answer (unreadable, or an id never sent): a call that then times
    /// out is reported as `protocol_error` naming the last one.
    violations: AtomicU64,
    last_violation: Mutex<String>,
}

struct Queued {
    frame: Vec<u8>,
}

#[derive(Default)]
struct Outbox {
    bytes: Vec<u8>,
    /// Total direct bytes ever appended (the sequence callers wait for).
    appended: u64,
    /// Close stdin once everything before this point is written.
    close: bool,
    /// The writer holds bytes taken from here that are not all written yet:
    /// nothing may be written past them.
    writing: bool,
    /// A second handle on the write end of the sidecar's stdin (the same
    /// non-blocking pipe), so that callers write requests themselves while
    /// the writer task is idle: a request sent while nothing else is in
    /// flight goes at once, and requests sent while others are in flight
    /// go a page at a time, so the sidecar starts on a burst while the host
    /// is still encoding its tail. Writing every frame at once measured
    /// twice as slow with host and sidecar on one CPU (every write woke the
    /// sidecar). Dropped together with the writer's own handle, or the
    /// sidecar would never see EOF.
    direct: Option<OwnedFd>,
}

/// What callers have gathered is written by them only up to this size:
/// what the pipe does not take is moved to the front of the buffer, so
/// this bounds the bytes moved; a larger burst goes to the writer, which
/// writes it without moving bytes.
const WRITE_THROUGH_MAX: usize = 256 * 1024;

/// While other calls are in flight, a caller writes what has gathered once
/// it reaches a page (one pipe buffer slot): one wake-up of the sidecar per
/// page of work rather than per frame. Measured at 32 in flight, 100 B:
/// unpinned 0.52-0.64x of the echo floor without it, 0.75-0.80x with it;
/// with host and sidecar pinned to one CPU it costs (1.0x to 0.9x), as
/// each page's write wakes the sidecar there; smaller pages cost more.
const WRITE_THROUGH_PAGE: usize = 4096;

impl Outbox {
    /// Writes what is waiting straight to the pipe when the writer is idle.
    /// Returns the bytes written; what the pipe does not take (full, or
    /// gone) stays for the writer, which waits, bounds the stall and
    /// reports the failure.
    fn write_through(&mut self) -> usize {
        if self.writing || self.close || self.bytes.len() > WRITE_THROUGH_MAX {
            return 0;
        }
        let Some(fd) = &self.direct else {
            return 0;
        };
        match rustix::io::write(fd, &self.bytes) {
            Ok(n) if n == self.bytes.len() => {
                self.bytes.clear();
                n
            }
            Ok(n) => {
                self.bytes.drain(..n);
                n
            }
            Err(_) => 0,
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    written: u64,
    stopped: bool,
}

/// Whether a notification was queued or, for events only, dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enqueued {
    Queued,
    Dropped,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) struct Wiring {
    pub plugin: Arc<str>,
    pub tree: ProcessTree,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stall: Duration,
    pub services: Arc<dyn HostServices>,
    pub on_crash: Option<CrashCallback>,
}

impl Shared {
    /// Builds the connection and starts its reader and writer tasks.
    pub fn start(w: Wiring) -> (Arc<Shared>, Vec<tokio::task::JoinHandle<()>>) {
        let (queue, rx) = mpsc::channel(NOTIFICATION_QUEUE);
        let (status, _) = watch::channel(Status::Starting);
        let shared = Arc::new(Shared {
            plugin: w.plugin,
            tree: w.tree,
            outbox: Mutex::new(Outbox {
                direct: direct_handle(&w.stdin),
                ..Outbox::default()
            }),
            outbox_ready: Notify::new(),
            written: watch::channel(Progress::default()).0,
            queue,
            event_drop_warned: AtomicBool::new(false),
            pending: Mutex::new(Pending {
                closed: None,
                calls: HashMap::new(),
            }),
            next_id: AtomicI64::new(1),
            ready: AtomicBool::new(false),
            poisoned: AtomicBool::new(false),
            status,
            content: Mutex::new(ContentStore::new()),
            streams: Mutex::new(HashMap::new()),
            services: w.services,
            inbound: Arc::new(Semaphore::new(INBOUND_CONCURRENCY)),
            on_crash: w.on_crash,
            intercept_seq: AtomicU64::new(1),
            violations: AtomicU64::new(0),
            last_violation: Mutex::new(String::new()),
        });
        let reader = tokio::spawn(run_reader(shared.clone(), w.stdout));
        let writer = tokio::spawn(run_writer(shared.clone(), w.stdin, rx, w.stall));
        (shared, vec![reader, writer])
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// Opens the barrier: from now on extension traffic is served.
    pub fn mark_ready(&self) {
        self.ready.store(true, Ordering::Release);
        self.status.send_replace(Status::Ready);
    }

    pub fn is_down(&self) -> bool {
        lock(&self.pending).closed.is_some()
    }

    /// Ends the process tree once (the guard kills every descendant).
    pub fn kill(&self) {
        self.tree.end();
    }

    fn orderly(&self) -> bool {
        matches!(
            *self.status.borrow(),
            Status::ShuttingDown | Status::Stopped
        )
    }

    /// The connection is down: kill the group (unless shutting down in
    /// order, where the shutdown sequence kills after its grace), fail every
    /// pending call at once, interrupt every stream, report the crash once.
    pub fn fail(&self, failure: Failure) {
        let orderly = self.orderly();
        let calls = {
            let mut pending = lock(&self.pending);
            if pending.closed.is_some() {
                return;
            }
            pending.closed = Some(Closed::Failed(failure.clone()));
            std::mem::take(&mut pending.calls)
        };
        if orderly {
            tracing::debug!(plugin = %self.plugin, "sidecar connection closed during shutdown: {failure}");
        } else {
            self.kill();
            // Before the handshake completed the start error reports it.
            if self.is_ready() {
                tracing::warn!(plugin = %self.plugin, "sidecar connection failed: {failure}");
            } else {
                tracing::debug!(plugin = %self.plugin, "sidecar connection failed during start: {failure}");
            }
        }
        // Status and callback first: whoever sees a failed call can rely on
        // the crash being observable already.
        if !orderly {
            let was_ready = self.is_ready();
            self.status.send_replace(Status::Crashed(failure.clone()));
            if was_ready && let Some(callback) = &self.on_crash {
                callback(&failure);
            }
        }
        for (_, call) in calls {
            let _ = call.send(Err(CallError::Interrupted(failure.clone())));
        }
        self.interrupt_streams(&failure);
        self.outbox_ready.notify_one();
    }

    /// Orderly end after shutdown: pending calls fail with `Closed`.
    pub fn close_orderly(&self) {
        let calls = {
            let mut pending = lock(&self.pending);
            if pending.closed.is_none() {
                pending.closed = Some(Closed::Orderly);
            }
            std::mem::take(&mut pending.calls)
        };
        for (_, call) in calls {
            let _ = call.send(Err(CallError::Closed));
        }
        self.interrupt_streams(&Failure::new(FailureKind::Exited, "sidecar shut down"));
    }

    fn interrupt_streams(&self, failure: &Failure) {
        let streams = std::mem::take(&mut *lock(&self.streams));
        for (_, tx) in streams {
            let _ = tx.try_send(StreamEvent::Interrupted(failure.clone()));
        }
    }

    /// Hands one encoded frame to the writer ahead of queued notifications
    /// and returns at once. Frames of concurrent calls are written together.
    pub fn send_frame(&self, frame: &[u8]) -> Result<u64, CallError> {
        if let Some(closed) = &lock(&self.pending).closed {
            return Err(closed.error());
        }
        let seq = {
            let mut outbox = lock(&self.outbox);
            if outbox.close {
                return Err(CallError::Closed);
            }
            outbox.bytes.extend_from_slice(frame);
            outbox.appended += frame.len() as u64;
            outbox.appended
        };
        self.outbox_ready.notify_one();
        Ok(seq)
    }

    /// Counts bytes written. Only someone waiting for a frame to be written
    /// (a response, closing stdin) subscribes; with nobody subscribed the
    /// count changes without waking anyone (a wake-up of every waiter list
    /// per write cost more than the rest of the write bookkeeping). A
    /// subscriber arriving meanwhile reads the count under the same lock,
    /// so it sees the new value either way.
    fn advance_written(&self, bytes: u64) {
        self.written.send_if_modified(|p| {
            p.written += bytes;
            self.written.receiver_count() > 0
        });
    }

    /// Counts what a caller wrote itself and wakes the writer for the rest.
    fn after_append(&self, written: usize, drained: bool) {
        if written > 0 {
            self.advance_written(written as u64);
        }
        if !drained {
            self.outbox_ready.notify_one();
        }
    }

    /// Encodes a request straight into the writer's buffer (a reused one:
    /// a large payload is copied once, into memory already mapped) and
    /// hands it to the writer, ahead of queued notifications. When the
    /// writer is idle the caller writes it through itself: at once when
    /// `alone` (no other call in flight), else once a page has gathered.
    fn send_request<P: Serialize + ?Sized>(
        &self,
        id: i64,
        method: &'static str,
        params: &P,
        alone: bool,
    ) -> Result<(), CallError> {
        let (written, drained) = {
            let mut outbox = lock(&self.outbox);
            if outbox.close {
                return Err(CallError::Closed);
            }
            let len = encode_request_into(&mut outbox.bytes, Id::Number(id), method, params)
                .map_err(|e| encode_failed(method, e))?;
            outbox.appended += len as u64;
            let written = if alone || outbox.bytes.len() >= WRITE_THROUGH_PAGE {
                outbox.write_through()
            } else {
                0
            };
            (written, outbox.bytes.is_empty())
        };
        self.after_append(written, drained);
        Ok(())
    }

    /// [`Shared::send_frame`], then waits until the frame is written.
    pub async fn write_frame(&self, frame: &[u8]) -> Result<(), CallError> {
        let seq = self.send_frame(frame)?;
        let mut progress = self.written.subscribe();
        let reached = progress
            .wait_for(|p| p.written >= seq || p.stopped)
            .await
            .map(|p| p.written >= seq)
            .unwrap_or(false);
        if reached {
            Ok(())
        } else {
            Err(self.down_error().unwrap_or(CallError::Closed))
        }
    }

    /// Queues a notification for the writer task. When the queue is full,
    /// `extension/event` is dropped (one warning per connection); any other
    /// notification fails the connection (§2).
    pub fn enqueue(&self, method: &'static str, frame: Vec<u8>) -> Result<Enqueued, CallError> {
        if let Some(closed) = &lock(&self.pending).closed {
            return Err(closed.error());
        }
        match self.queue.try_send(Queued { frame }) {
            Ok(()) => Ok(Enqueued::Queued),
            Err(mpsc::error::TrySendError::Full(_)) if method == m::EXTENSION_EVENT => {
                if !self.event_drop_warned.swap(true, Ordering::Relaxed) {
                    tracing::warn!(plugin = %self.plugin, "sidecar event queue is full; dropping observation events");
                }
                Ok(Enqueued::Dropped)
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                let failure = Failure::new(
                    FailureKind::QueueFull,
                    format!("notification queue full while sending {method}"),
                );
                self.fail(failure.clone());
                Err(CallError::Interrupted(failure))
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Err(CallError::Closed),
        }
    }

    /// Sends a request and waits for its response within `timeout`.
    pub async fn call_raw<P: Serialize + ?Sized>(
        &self,
        method: &'static str,
        params: &P,
        timeout: Duration,
    ) -> Result<RawJson, CallError> {
        let lifecycle = method == m::EXTENSION_INITIALIZE || method == m::EXTENSION_SHUTDOWN;
        if !lifecycle && !self.is_ready() {
            return Err(self.down_error().unwrap_or(CallError::NotReady));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let alone = {
            let mut pending = lock(&self.pending);
            if let Some(closed) = &pending.closed {
                return Err(closed.error());
            }
            pending.calls.insert(id, tx);
            pending.calls.len() == 1
        };
        let remove = RemoveOnDrop { shared: self, id };
        let violations = self.violations.load(Ordering::Acquire);
        // `extension/shutdown` goes behind the notifications already queued
        // (same FIFO, same writer), so no event is written after it.
        let queued = if method == m::EXTENSION_SHUTDOWN {
            Some(
                encode_request(Id::Number(id), method, params)
                    .map_err(|e| encode_failed(method, e))?,
            )
        } else {
            self.send_request(id, method, params, alone)?;
            None
        };
        let outcome = tokio::time::timeout(timeout, async {
            if let Some(frame) = queued
                && self.queue.send(Queued { frame }).await.is_err()
            {
                return Err(CallError::Closed);
            }
            rx.await.unwrap_or(Err(CallError::Closed))
        })
        .await;
        drop(remove);
        match outcome {
            Ok(Err(CallError::Remote { error, .. })) => Err(CallError::Remote { method, error }),
            Ok(reply) => reply,
            // No answer, but the sidecar did send something that was not a
            // valid answer meanwhile: that, not the clock, is the fault.
            Err(_) if self.violations.load(Ordering::Acquire) != violations => {
                Err(CallError::Protocol {
                    method,
                    detail: format!(
                        "no valid answer within {timeout:?}; the sidecar sent {}",
                        lock(&self.last_violation)
                    ),
                })
            }
            Err(_) => Err(CallError::Timeout {
                method,
                after: timeout,
            }),
        }
    }

    /// Sends a request and strictly decodes its result.
    pub async fn call<P, R>(
        &self,
        method: &'static str,
        params: &P,
        timeout: Duration,
    ) -> Result<R, CallError>
    where
        P: Serialize + ?Sized,
        R: DeserializeOwned + reasonix_protocol::validate::Validate,
    {
        let raw = self.call_raw(method, params, timeout).await?;
        reasonix_protocol::validate::decode_result(&raw).map_err(|e| CallError::InvalidResult {
            method,
            detail: e.to_string(),
        })
    }

    /// Encodes and queues a notification.
    pub fn notify<P: Serialize + ?Sized>(
        &self,
        method: &'static str,
        params: &P,
    ) -> Result<Enqueued, CallError> {
        if !self.is_ready() {
            return Err(self.down_error().unwrap_or(CallError::NotReady));
        }
        let frame = encode_notification(method, params).map_err(|e| encode_failed(method, e))?;
        self.enqueue(method, frame)
    }

    fn down_error(&self) -> Option<CallError> {
        lock(&self.pending).closed.as_ref().map(Closed::error)
    }

    /// Registers a stream receiver before the open request goes out (chunks
    /// may overtake the open response).
    pub fn register_stream(&self, stream_id: &str) -> mpsc::Receiver<StreamEvent> {
        let (tx, rx) = mpsc::channel(STREAM_BUFFER);
        lock(&self.streams).insert(stream_id.to_owned(), tx);
        rx
    }

    pub fn unregister_stream(&self, stream_id: &str) {
        lock(&self.streams).remove(stream_id);
    }

    /// Closes stdin (EOF for the sidecar) after what is already handed to
    /// the writer; waits at most `bound` for that.
    pub async fn close_stdin(&self, bound: Duration) {
        lock(&self.outbox).close = true;
        self.outbox_ready.notify_one();
        let mut progress = self.written.subscribe();
        let _ = tokio::time::timeout(bound, progress.wait_for(|p| p.stopped)).await;
    }

    // ----- inbound -----

    fn on_line(self: &Arc<Self>, line: &[u8]) {
        if self.poisoned.load(Ordering::Relaxed) {
            return;
        }
        match decode_frame(line) {
            Err(rejection) => {
                tracing::warn!(plugin = %self.plugin, "rejected frame from sidecar: {}", crate::redact(&rejection.detail));
                if may_be_a_response(line) {
                    self.note_violation(format!(
                        "a frame the host rejected ({})",
                        crate::redact(&rejection.detail)
                    ));
                }
                self.respond_later(rejection.id, Err(rejection.error()));
            }
            Ok(Frame::Response(response)) => {
                let Id::Number(id) = response.id else {
                    if let Outcome::Error(e) = &response.outcome {
                        tracing::warn!(plugin = %self.plugin, "sidecar reported an error with id null: {}", crate::redact(&e.to_string()));
                    }
                    return;
                };
                let waiter = lock(&self.pending).calls.remove(&id);
                let Some(waiter) = waiter else {
                    if id < 1 || id >= self.next_id.load(Ordering::Relaxed) {
                        tracing::warn!(plugin = %self.plugin, id, "response to an id the host never sent");
                        self.note_violation(format!(
                            "a response to id {id}, which the host never sent"
                        ));
                    } else {
                        tracing::debug!(plugin = %self.plugin, id, "late response for a request that is no longer pending");
                    }
                    return;
                };
                let reply = match response.outcome {
                    Outcome::Result(raw) => Ok(raw),
                    Outcome::Error(error) => Err(CallError::Remote {
                        method: "request",
                        error,
                    }),
                };
                let _ = waiter.send(reply);
            }
            Ok(Frame::Request(request)) => {
                if !self.is_ready() {
                    self.poison(Some(request.id), &request.method);
                } else {
                    let shared = self.clone();
                    tokio::spawn(async move { shared.serve_request(request).await });
                }
            }
            Ok(Frame::Notification(notification)) => {
                if !self.is_ready() {
                    self.poison(None, &notification.method);
                } else {
                    self.on_notification(notification);
                }
            }
        }
    }

    fn note_violation(&self, what: String) {
        *lock(&self.last_violation) = what;
        self.violations.fetch_add(1, Ordering::AcqRel);
    }

    /// Traffic before `extension/initialized`: answer `protocol_error`, then
    /// kill and fail the connection (§4.3 rule 11).
    fn poison(self: &Arc<Self>, id: Option<Id>, method: &str) {
        self.poisoned.store(true, Ordering::Relaxed);
        let failure = Failure::new(
            FailureKind::Poisoned,
            format!("the sidecar sent {method:?} before the handshake completed"),
        );
        let shared = self.clone();
        tokio::spawn(async move {
            if let Some(id) = id
                && let Ok(frame) = encode_error(
                    id,
                    &RpcError::with_message(
                        ErrorReason::ProtocolError,
                        "request before extension/initialized",
                    ),
                )
            {
                let _ = tokio::time::timeout(COURTESY_WRITE, shared.write_frame(&frame)).await;
            }
            shared.fail(failure);
        });
    }

    fn respond_later(self: &Arc<Self>, id: Id, outcome: Result<RawJson, RpcError>) {
        let shared = self.clone();
        tokio::spawn(async move { shared.respond(id, outcome).await });
    }

    async fn respond(&self, id: Id, outcome: Result<RawJson, RpcError>) {
        let frame = match &outcome {
            Ok(result) => encode_result(id, &**result),
            Err(error) => encode_error(id, error),
        };
        let frame = match frame {
            Ok(frame) => frame,
            Err(EncodeError::FrameTooLarge { .. }) => {
                match encode_error(id, &RpcError::from_reason(ErrorReason::FrameTooLarge)) {
                    Ok(frame) => frame,
                    Err(_) => return,
                }
            }
            Err(_) => match encode_error(id, &RpcError::from_reason(ErrorReason::Internal)) {
                Ok(frame) => frame,
                Err(_) => return,
            },
        };
        let _ = self.send_frame(&frame);
    }

    async fn serve_request(self: Arc<Self>, request: Request) {
        let Ok(_permit) = self.inbound.clone().try_acquire_owned() else {
            self.respond(request.id, Err(RpcError::server_busy())).await;
            return;
        };
        let outcome = self.route_request(&request).await;
        self.respond(request.id, outcome).await;
    }

    async fn route_request(&self, request: &Request) -> Result<RawJson, RpcError> {
        match request.method.as_str() {
            m::HOST_CONTENT_READ => {
                let params: ContentReadParams = decode(&request.params)?;
                let chunk = lock(&self.content)
                    .read(&params.content_ref, params.offset)
                    .map_err(|e| match e {
                        ContentError::TooLarge { .. } => {
                            RpcError::from_reason(ErrorReason::FrameTooLarge)
                        }
                        _ => RpcError::from_reason(ErrorReason::ContentRefExpired),
                    })?;
                to_raw(&chunk)
            }
            m::HOST_UI_PUBLISH => {
                let params: UIPublishParams = decode(&request.params)?;
                let result = self.services.ui_publish(&self.plugin, params).await?;
                to_raw(&result)
            }
            m::HOST_UI_REQUEST => {
                let params: UIRequestParams = decode(&request.params)?;
                let result = self.services.ui_request(&self.plugin, params).await?;
                to_raw(&result)
            }
            // Generation B has no browser; `unknown_method` is one of the two
            // answers the spec allows (browser_unavailable is generation A).
            _ => Err(RpcError::from_reason(ErrorReason::UnknownMethod)),
        }
    }

    fn on_notification(&self, notification: Notification) {
        let method = notification.method.as_str();
        let event = match method {
            m::EXTENSION_PROVIDER_STREAM_CHUNK => decode::<StreamChunkParams>(&notification.params)
                .map(|p| (p.stream_id.clone(), StreamEvent::Chunk(Box::new(p)))),
            m::EXTENSION_PROVIDER_STREAM_END => decode::<StreamEndParams>(&notification.params)
                .map(|p| (p.stream_id.clone(), StreamEvent::End(p))),
            _ => {
                tracing::warn!(plugin = %self.plugin, method = %crate::redact(method), "ignoring unknown notification from sidecar");
                return;
            }
        };
        let (stream_id, event) = match event {
            Ok(pair) => pair,
            Err(error) => {
                let Some(stream_id) = loose_stream_id(&notification.params) else {
                    tracing::warn!(plugin = %self.plugin, "invalid {method} without a stream id: {}", crate::redact(&error.message));
                    return;
                };
                (
                    stream_id,
                    StreamEvent::Invalid(crate::redact(&error.message).into_owned()),
                )
            }
        };
        let mut streams = lock(&self.streams);
        let Some(tx) = streams.get(&stream_id) else {
            tracing::debug!(plugin = %self.plugin, "{method} for unknown stream {stream_id:?}");
            return;
        };
        if tx.try_send(event).is_err() {
            // A receiver that is gone or hopelessly behind: cut the stream so
            // it sees the end of the channel as an interruption.
            tracing::warn!(plugin = %self.plugin, "stream {stream_id:?} receiver is not keeping up; interrupting it");
            streams.remove(&stream_id);
        }
    }
}

struct RemoveOnDrop<'a> {
    shared: &'a Shared,
    id: i64,
}

impl Drop for RemoveOnDrop<'_> {
    fn drop(&mut self) {
        lock(&self.shared.pending).calls.remove(&self.id);
    }
}

fn encode_failed(method: &'static str, error: EncodeError) -> CallError {
    match error {
        EncodeError::FrameTooLarge { .. } => CallError::FrameTooLarge {
            method,
            detail: error.to_string(),
        },
        EncodeError::Json(e) => CallError::InvalidResult {
            method,
            detail: format!("could not encode params: {e}"),
        },
    }
}

struct DecodeFailure {
    message: String,
}

impl From<DecodeFailure> for RpcError {
    fn from(f: DecodeFailure) -> Self {
        RpcError::with_message(ErrorReason::InvalidParams, crate::redact(&f.message))
    }
}

fn decode<T>(params: &RawJson) -> Result<T, DecodeFailure>
where
    T: DeserializeOwned + reasonix_protocol::validate::Validate,
{
    decode_params(Some(params)).map_err(|e| DecodeFailure {
        message: e.to_string(),
    })
}

fn to_raw<T: Serialize>(value: &T) -> Result<RawJson, RpcError> {
    serde_json::value::to_raw_value(value).map_err(|_| RpcError::from_reason(ErrorReason::Internal))
}

/// Whether a rejected line could have been meant as a response: it is not
/// JSON at all, or an object without a `method`.
fn may_be_a_response(line: &[u8]) -> bool {
    match serde_json::from_slice::<serde_json::Value>(line) {
        Ok(serde_json::Value::Object(object)) => !object.contains_key("method"),
        Ok(_) | Err(_) => true,
    }
}

fn loose_stream_id(params: &RawJson) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Loose {
        #[serde(rename = "streamId")]
        stream_id: String,
    }
    serde_json::from_str::<Loose>(params.get())
        .ok()
        .map(|l| l.stream_id)
}

async fn run_reader(shared: Arc<Shared>, stdout: ChildStdout) {
    let mut reader = FrameReader::new(BufReader::with_capacity(64 * 1024, stdout));
    loop {
        match reader.next_frame().await {
            Ok(Some(line)) => shared.on_line(line),
            Ok(None) => {
                shared.fail(Failure::new(
                    FailureKind::Exited,
                    "the sidecar closed its stdout (exited)",
                ));
                return;
            }
            Err(ReadError::TooLarge { bytes, limit }) => {
                let failure = Failure::new(
                    FailureKind::FrameTooLarge,
                    format!("inbound frame is at least {bytes} bytes; limit is {limit}"),
                );
                if let Ok(frame) =
                    encode_error(Id::Null, &RpcError::from_reason(ErrorReason::FrameTooLarge))
                {
                    let _ = tokio::time::timeout(COURTESY_WRITE, shared.write_frame(&frame)).await;
                }
                shared.fail(failure);
                return;
            }
            Err(ReadError::Io(e)) => {
                shared.fail(Failure::new(
                    FailureKind::Transport,
                    format!("reading the sidecar's stdout failed: {e}"),
                ));
                return;
            }
        }
    }
}

/// The single writer: direct frames first, then queued notifications, as
/// few write calls as possible. A write that makes no progress for `stall`
/// fails the connection (which kills the process).
async fn run_writer(
    shared: Arc<Shared>,
    mut stdin: ChildStdin,
    mut queue: mpsc::Receiver<Queued>,
    stall: Duration,
) {
    const BATCH: usize = 1 << 20;
    let _direct = DropDirectHandle(Arc::clone(&shared));
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let (direct, close) = {
            let mut outbox = lock(&shared.outbox);
            outbox.writing = true;
            let direct = outbox.bytes.len() as u64;
            if buf.is_empty() {
                // The two buffers trade places: no copy, and the outbox
                // keeps capacity that is already mapped.
                std::mem::swap(&mut buf, &mut outbox.bytes);
            } else {
                buf.append(&mut outbox.bytes);
            }
            (direct, outbox.close)
        };
        while buf.len() < BATCH {
            match queue.try_recv() {
                Ok(item) => buf.extend_from_slice(&item.frame),
                Err(_) => break,
            }
        }
        if buf.is_empty() {
            lock(&shared.outbox).writing = false;
            if close || shared.is_down() {
                break;
            }
            tokio::select! {
                _ = shared.outbox_ready.notified() => {}
                item = queue.recv() => match item {
                    Some(item) => buf.extend_from_slice(&item.frame),
                    None => break,
                },
            }
            continue;
        }
        if let Err(failure) = write_all_bounded(&mut stdin, &buf, stall).await {
            shared.fail(failure);
            break;
        }
        buf.clear();
        if buf.capacity() > BATCH * 8 {
            // A burst of huge frames: give the memory back.
            buf = Vec::new();
        }
        if direct > 0 {
            shared.advance_written(direct);
        }
        lock(&shared.outbox).writing = false;
    }
    lock(&shared.outbox).direct = None;
    drop(stdin);
    shared.written.send_modify(|p| p.stopped = true);
}

/// The callers' handle on stdin, made non-blocking (it shares the pipe's
/// flags with the writer's handle, which tokio made non-blocking already);
/// without one every frame goes through the writer.
fn direct_handle(stdin: &ChildStdin) -> Option<OwnedFd> {
    let fd = rustix::io::dup(stdin).ok()?;
    rustix::io::ioctl_fionbio(&fd, true).ok()?;
    Some(fd)
}

/// Drops the callers' stdin handle however the writer ends (aborted
/// included), so that closing the writer's handle is the sidecar's EOF.
struct DropDirectHandle(Arc<Shared>);

impl Drop for DropDirectHandle {
    fn drop(&mut self) {
        lock(&self.0.outbox).direct = None;
    }
}

async fn write_all_bounded(
    stdin: &mut ChildStdin,
    mut bytes: &[u8],
    stall: Duration,
) -> Result<(), Failure> {
    while !bytes.is_empty() {
        match tokio::time::timeout(stall, stdin.write(bytes)).await {
            Err(_) => {
                return Err(Failure::new(
                    FailureKind::WriteStalled,
                    format!(
                        "writing to the sidecar stalled for {stall:?} (it stopped reading stdin)"
                    ),
                ));
            }
            Ok(Ok(0)) | Ok(Err(_)) => {
                return Err(Failure::new(
                    FailureKind::Transport,
                    "the sidecar's stdin is closed",
                ));
            }
            Ok(Ok(n)) => bytes = &bytes[n..],
        }
    }
    Ok(())
}
