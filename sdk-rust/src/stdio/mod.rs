//! The native transport: JSON-RPC 2.0 over NDJSON on stdin/stdout.
//!
//! Threads, no async runtime: one reader (frames, the handshake barrier,
//! response routing), one writer draining the notification FIFO, and one
//! thread per handler with at most [`MAX_IN_FLIGHT`] running; a request
//! beyond that is answered `-32099 server busy`, a notification dropped.

mod reader;
mod wire;

use crate::core::Core;
use crate::error::Error;
use crate::extension::Extension;
use crate::host::{HostLink, LogLevel, Shared};
use crate::stream::{CancelToken, EmitError, Step, pump};
use reader::{Line, read_line};
use reasonix_protocol::methods::{EXTENSION_PROVIDER_STREAM_CHUNK, EXTENSION_PROVIDER_STREAM_END};
use reasonix_protocol::types::{
    InitializeResult, ShutdownResult, StreamCancelResult, StreamOpenParams, StreamOpenResult,
};
use reasonix_protocol::{
    EncodeError, ErrorReason, FRAME_BYTES, Frame, Id, Method, Notification, Params, Request,
    RpcError, decode_frame, encode_error, encode_notification, encode_result, trim_line,
};
use serde::Serialize;
use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::thread;
use std::time::Duration;
use wire::{Queued, StdioLink, Wire, lock};

pub use wire::NOTIFICATION_QUEUE;

/// Inbound handlers that may run at once.
pub const MAX_IN_FLIGHT: usize = 32;

/// Why [`serve`] stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("I/O on the host connection: {0}")]
    Io(#[from] std::io::Error),
    #[error("inbound frame is {size} bytes; limit is {limit}")]
    FrameTooLarge { size: usize, limit: usize },
    #[error("the host speaks an unsupported protocol: {0}")]
    UnsupportedVersion(String),
}

/// Serves `ext` on this process's stdin/stdout until the host shuts it
/// down or closes stdin. Returns the exit code a sidecar's `main` should
/// return: 0 after an orderly end, 1 (with the reason on stderr) otherwise.
pub fn run_stdio<E: Extension>(ext: E) -> ExitCode {
    match serve(ext, std::io::stdin(), std::io::stdout()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Serves `ext` over any byte streams (the host's side of a pipe pair).
pub fn serve<E, R, W>(ext: E, input: R, output: W) -> Result<(), ServeError>
where
    E: Extension,
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let (wire, queue) = Wire::new(Box::new(output));
    let wire = Arc::new(wire);
    let link: Arc<dyn HostLink> = Arc::new(StdioLink(wire.clone()));
    let (finish_tx, finish_rx) = mpsc::channel();
    let server = Arc::new(Server {
        core: Core::new(Box::new(ext), Shared::new(link)),
        wire: wire.clone(),
        phase: Mutex::new(Phase::New),
        in_flight: InFlight::default(),
        streams: Mutex::new(HashMap::new()),
        finish: Mutex::new(finish_tx),
    });

    let writer = {
        let server = server.clone();
        thread::Builder::new()
            .name("reasonix-ext-writer".into())
            .spawn(move || server.drain(queue))?
    };
    {
        let server = server.clone();
        thread::Builder::new()
            .name("reasonix-ext-reader".into())
            .spawn(move || server.read_loop(input))?;
    }

    let finish = finish_rx.recv().unwrap_or(Finish::Eof);
    if let Finish::Eof = finish {
        // The host closed stdin: no answer to a host call can come, but the
        // handlers still running may finish and answer (stdout is open).
        wire.close();
        server.stop_streams();
        server.in_flight.wait_idle();
    }
    // Everything already queued still goes out (stream ends, say), then the
    // connection is closed for every call still waiting on it.
    wire.flush_queue();
    wire.close();
    drop(server);
    drop(writer); // the writer ends when the last queue sender goes
    match finish {
        Finish::Eof | Finish::Shutdown => Ok(()),
        Finish::Fatal(e) => Err(e),
    }
}

enum Finish {
    Eof,
    Shutdown,
    Fatal(ServeError),
}

/// The handshake barrier (§16.3, without upstream's defects: a malformed
/// `initialize` does not burn the attempt, and `initialized` opens the
/// barrier only after a successful `initialize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Only `initialize` and `shutdown` are served.
    New,
    /// `initialize` is running.
    Initializing,
    /// `initialize` answered; waiting for `initialized`.
    Initialized,
    /// Everything is served.
    Ready,
    /// `shutdown` arrived: everything else is refused.
    ShuttingDown,
}

struct StreamHandle {
    cancel: CancelToken,
    steps: mpsc::Sender<Option<Step>>,
    done: Arc<Done>,
}

/// Set once a stream's end is queued.
#[derive(Default)]
struct Done {
    flag: Mutex<bool>,
    cond: Condvar,
}

impl Done {
    fn set(&self) {
        *lock(&self.flag) = true;
        self.cond.notify_all();
    }
    fn wait(&self) {
        let mut done = lock(&self.flag);
        while !*done {
            done = self.cond.wait(done).unwrap_or_else(|p| p.into_inner());
        }
    }
}

struct Server {
    core: Core,
    wire: Arc<Wire>,
    phase: Mutex<Phase>,
    in_flight: InFlight,
    streams: Mutex<HashMap<String, StreamHandle>>,
    finish: Mutex<mpsc::Sender<Finish>>,
}

/// The number of running handlers, bounded by [`MAX_IN_FLIGHT`].
#[derive(Default)]
struct InFlight {
    count: Mutex<usize>,
    idle: Condvar,
}

impl InFlight {
    /// Takes a slot if one is free; give it back with [`InFlight::release`]
    /// (or a [`Slot`] guard).
    fn try_acquire(&self) -> bool {
        let mut count = lock(&self.count);
        if *count >= MAX_IN_FLIGHT {
            return false;
        }
        *count += 1;
        true
    }

    fn release(&self) {
        let mut count = lock(&self.count);
        *count -= 1;
        if *count == 0 {
            self.idle.notify_all();
        }
    }

    /// Waits until no handler runs.
    fn wait_idle(&self) {
        let mut count = lock(&self.count);
        while *count > 0 {
            count = self.idle.wait(count).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// Releases a taken in-flight slot when a handler ends, even by panic.
struct Slot<'a>(&'a InFlight);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}

impl Server {
    fn log(&self, level: LogLevel, message: &str) {
        self.wire.log_line(level, message);
    }

    fn finish(&self, how: Finish) {
        let _ = lock(&self.finish).send(how);
    }

    fn phase(&self) -> Phase {
        *lock(&self.phase)
    }

    fn set_phase(&self, phase: Phase) {
        *lock(&self.phase) = phase;
    }

    fn drain(&self, queue: mpsc::Receiver<Queued>) {
        for item in queue {
            match item {
                Queued::Frame(frame) => {
                    if let Err(e) = self.wire.write_frame(&frame) {
                        self.wire.close();
                        self.finish(Finish::Fatal(e.into()));
                        return;
                    }
                }
                Queued::Flush(ack) => {
                    let _ = ack.send(());
                }
            }
        }
    }

    fn read_loop(self: Arc<Self>, input: impl Read) {
        let mut input = BufReader::with_capacity(64 * 1024, input);
        loop {
            let line = match read_line(&mut input, FRAME_BYTES) {
                Ok(Line::Frame(line)) => line,
                Ok(Line::Eof) => return self.finish(Finish::Eof),
                Ok(Line::TooLarge { size }) => {
                    // Unlike upstream, the host learns why the connection ends.
                    let rpc = RpcError::with_message(
                        ErrorReason::FrameTooLarge,
                        format!("inbound frame is at least {size} bytes; limit is {FRAME_BYTES}"),
                    );
                    self.write_error(Id::Null, &rpc);
                    self.log(
                        LogLevel::Error,
                        &format!("inbound frame is at least {size} bytes; limit is {FRAME_BYTES}"),
                    );
                    return self.finish(Finish::Fatal(ServeError::FrameTooLarge {
                        size,
                        limit: FRAME_BYTES,
                    }));
                }
                Err(e) => return self.finish(Finish::Fatal(e.into())),
            };
            let Some(line) = trim_line(&line) else {
                continue;
            };
            match decode_frame(line) {
                Ok(Frame::Request(req)) => self.on_request(req),
                Ok(Frame::Notification(n)) => self.on_notification(n),
                Ok(Frame::Response(resp)) => {
                    if !self.wire.complete(resp.id, resp.outcome) {
                        self.log(
                            LogLevel::Warn,
                            &format!("dropped a response to unknown request id {}", resp.id),
                        );
                    }
                }
                Err(rejection) => {
                    self.log(LogLevel::Warn, &format!("rejected a frame: {rejection}"));
                    self.write_error(rejection.id, &rejection.error());
                }
            }
            if self.phase() == Phase::ShuttingDown && self.wire.is_closed() {
                return;
            }
        }
    }

    fn write_error(&self, id: Id, rpc: &RpcError) {
        if let Ok(frame) = encode_error(id, rpc) {
            let _ = self.wire.write_frame(&frame);
        }
    }

    /// Answers a request; a result over the frame cap becomes a
    /// `frame_too_large` error (only this message fails).
    fn respond<T: Serialize>(&self, id: Id, result: Result<T, Error>) {
        let frame = match result {
            Ok(value) => match encode_result(id, &value) {
                Ok(frame) => frame,
                Err(EncodeError::FrameTooLarge { size, limit }) => {
                    self.log(
                        LogLevel::Error,
                        &format!("the answer to request {id} is {size} bytes; limit is {limit}"),
                    );
                    return self
                        .write_error(id, &RpcError::from_reason(ErrorReason::FrameTooLarge));
                }
                Err(EncodeError::Json(e)) => {
                    self.log(LogLevel::Error, &format!("could not encode an answer: {e}"));
                    return self.write_error(id, &RpcError::from_reason(ErrorReason::Internal));
                }
            },
            Err(e) => return self.write_error(id, &e.to_rpc()),
        };
        let _ = self.wire.write_frame(&frame);
    }

    /// Runs `work` on a handler thread if a slot is free.
    fn spawn_counted(self: &Arc<Self>, work: impl FnOnce(&Arc<Server>) + Send + 'static) -> bool {
        if !self.in_flight.try_acquire() {
            return false;
        }
        let started = self.spawn_free(move |server| {
            let _slot = Slot(&server.in_flight);
            work(server);
        });
        if !started {
            self.in_flight.release();
        }
        started
    }

    /// Runs `work` on a thread of its own, outside the in-flight bound.
    fn spawn_free(self: &Arc<Self>, work: impl FnOnce(&Arc<Server>) + Send + 'static) -> bool {
        let server = self.clone();
        let spawned = thread::Builder::new()
            .name("reasonix-ext-handler".into())
            .spawn(move || work(&server));
        match spawned {
            Ok(_) => true,
            Err(e) => {
                self.log(
                    LogLevel::Error,
                    &format!("could not start a handler thread: {e}"),
                );
                false
            }
        }
    }

    /// Runs a request handler with panics turned into `internal`.
    fn answer<T: Serialize>(&self, id: Id, what: &str, handler: impl FnOnce() -> Result<T, Error>) {
        let result = catch_unwind(AssertUnwindSafe(handler)).unwrap_or_else(|_| {
            self.log(LogLevel::Error, &format!("the {what} handler panicked"));
            Err(Error::reason(ErrorReason::Internal))
        });
        self.respond(id, result);
    }

    fn on_request(self: &Arc<Self>, req: Request) {
        let method = Method::from_name(&req.method);
        let phase = self.phase();
        if phase == Phase::ShuttingDown {
            return self.respond::<()>(
                req.id,
                Err(Error::protocol(
                    ErrorReason::ProtocolError,
                    "the extension is shutting down",
                )),
            );
        }
        let lifecycle = matches!(method, Some(Method::Initialize | Method::Shutdown));
        if !lifecycle && phase != Phase::Ready {
            return self.respond::<()>(req.id, Err(not_ready(&req.method)));
        }
        let params = match method {
            Some(m)
                if m.direction() == reasonix_protocol::Direction::HostToExtension
                    && !m.is_notification() =>
            {
                m.decode_params(Some(&req.params))
            }
            _ => {
                return self.respond::<()>(
                    req.id,
                    Err(Error::protocol(
                        ErrorReason::UnknownMethod,
                        format!("method not found: {}", req.method),
                    )),
                );
            }
        };
        let params = match params {
            Ok(p) => p,
            Err(e) => {
                self.log(
                    LogLevel::Warn,
                    &format!("invalid params of {}: {e}", req.method),
                );
                return self.respond::<()>(
                    req.id,
                    Err(Error::invalid_params(format!("{}: {e}", req.method))),
                );
            }
        };
        let id = req.id;
        match params {
            Params::Shutdown(p) => {
                self.set_phase(Phase::ShuttingDown);
                self.spawn_free(move |s| s.shutdown(id, p.timeout_millis));
            }
            Params::Initialize(p) => {
                if phase != Phase::New {
                    return self.respond::<()>(
                        id,
                        Err(Error::protocol(
                            ErrorReason::ProtocolError,
                            "extension/initialize was already received",
                        )),
                    );
                }
                // Inline on the reader: nothing but shutdown may be served
                // before it answers, and an `initialized` sent right behind
                // it (a script piping frames) is read only afterwards.
                self.set_phase(Phase::Initializing);
                self.initialize(id, p);
            }
            Params::Intercept(p) => self.dispatch(id, move |s| {
                s.answer(id, "intercept", || s.core.intercept(p))
            }),
            Params::ToolCall(p) => self.dispatch(id, move |s| {
                s.answer(id, "tool call", || s.core.tool_call(p))
            }),
            Params::ProviderCatalog(_) => self.dispatch(id, move |s| {
                s.answer(id, "provider catalog", || s.core.provider_catalog())
            }),
            Params::ProviderStreamOpen(p) => self.dispatch(id, move |s| s.open_stream(id, p)),
            Params::ProviderStreamCancel(p) => {
                self.dispatch(id, move |s| s.cancel_stream(id, &p.stream_id))
            }
            Params::UiAction(p) => self.dispatch(id, move |s| {
                s.answer(id, "UI action", || s.core.ui_action(p))
            }),
            Params::UiSubmit(p) => self.dispatch(id, move |s| {
                s.answer(id, "UI submit", || s.core.ui_submit(p))
            }),
            _ => self.respond::<()>(
                id,
                Err(Error::protocol(
                    ErrorReason::UnknownMethod,
                    format!("method not found: {}", req.method),
                )),
            ),
        }
    }

    /// Spawns a bounded request handler or answers `server busy`.
    fn dispatch(self: &Arc<Self>, id: Id, work: impl FnOnce(&Arc<Server>) + Send + 'static) {
        if !self.spawn_counted(work) {
            self.write_error(id, &RpcError::server_busy());
        }
    }

    fn on_notification(self: &Arc<Self>, n: Notification) {
        let Some(method) = Method::from_name(&n.method) else {
            return self.log(
                LogLevel::Debug,
                &format!("dropped notification {}", n.method),
            );
        };
        let phase = self.phase();
        if method == Method::Initialized {
            if phase == Phase::Initialized {
                self.open_barrier();
            } else {
                self.log(
                    LogLevel::Warn,
                    "dropped extension/initialized: no successful extension/initialize before it",
                );
            }
            return;
        }
        if phase != Phase::Ready {
            return self.log(
                LogLevel::Debug,
                &format!("dropped {} before the handshake", n.method),
            );
        }
        let params = match method.decode_params(Some(&n.params)) {
            Ok(p) => p,
            Err(e) => {
                return self.log(
                    LogLevel::Warn,
                    &format!("dropped {}: invalid params: {e}", n.method),
                );
            }
        };
        let accepted = match params {
            Params::Event(p) => self.spawn_counted(move |s| {
                let _ = catch_unwind(AssertUnwindSafe(|| s.core.event(p)));
            }),
            Params::ResourcesChanged(p) => self.spawn_counted(move |s| {
                let _ = catch_unwind(AssertUnwindSafe(|| s.core.resources_changed(p)));
            }),
            _ => {
                self.log(
                    LogLevel::Debug,
                    &format!("dropped notification {}", n.method),
                );
                true
            }
        };
        if !accepted {
            self.log(
                LogLevel::Warn,
                &format!("dropped {}: too many handlers", n.method),
            );
        }
    }

    fn open_barrier(self: &Arc<Self>) {
        self.set_phase(Phase::Ready);
        self.core.shared.ready.store(true, Ordering::Release);
        // A lifecycle hook: outside the in-flight bound, like shutdown.
        self.spawn_free(|s| {
            let _ = catch_unwind(AssertUnwindSafe(|| s.core.initialized()));
        });
    }

    fn initialize(self: &Arc<Self>, id: Id, params: reasonix_protocol::types::InitializeParams) {
        let result = catch_unwind(AssertUnwindSafe(|| self.core.initialize(params)))
            .unwrap_or_else(|_| {
                self.log(LogLevel::Error, "the initialize handler panicked");
                Err(Error::reason(ErrorReason::Internal))
            });
        match result {
            Ok(declared) => {
                // The barrier moves before the answer goes out, so the host's
                // `initialized` cannot overtake it.
                self.set_phase_if(Phase::Initializing, Phase::Initialized);
                self.respond::<InitializeResult>(id, Ok(declared));
            }
            Err(e) if e.wire_reason() == ErrorReason::UnsupportedVersion => {
                let detail = e.to_string();
                self.respond::<()>(id, Err(e));
                self.finish(Finish::Fatal(ServeError::UnsupportedVersion(detail)));
            }
            Err(e) => {
                self.set_phase_if(Phase::Initializing, Phase::New);
                self.respond::<()>(id, Err(e));
            }
        }
    }

    fn set_phase_if(&self, from: Phase, to: Phase) {
        let mut phase = lock(&self.phase);
        if *phase == from {
            *phase = to;
        }
    }

    fn open_stream(self: &Arc<Self>, id: Id, params: StreamOpenParams) {
        let stream_id = params.stream_id.clone();
        let seq_base = params.seq_base;
        let cancel = CancelToken::new();
        let (steps_tx, steps_rx) = mpsc::channel::<Option<Step>>();
        let done = Arc::new(Done::default());
        {
            let mut streams = lock(&self.streams);
            if streams.contains_key(&stream_id) {
                drop(streams);
                return self.respond::<()>(
                    id,
                    Err(Error::protocol(
                        ErrorReason::ProtocolError,
                        format!("stream {stream_id} is already open"),
                    )),
                );
            }
            streams.insert(
                stream_id.clone(),
                StreamHandle {
                    cancel: cancel.clone(),
                    steps: steps_tx.clone(),
                    done: done.clone(),
                },
            );
        }
        let opened = catch_unwind(AssertUnwindSafe(|| {
            self.core.open_stream(params, cancel.clone())
        }))
        .unwrap_or_else(|_| {
            self.log(LogLevel::Error, "the provider stream handler panicked");
            Err(Error::reason(ErrorReason::ProviderFailed))
        });
        let chunks = match opened {
            Ok(chunks) => chunks,
            Err(e) => {
                lock(&self.streams).remove(&stream_id);
                return self.respond::<()>(id, Err(e));
            }
        };
        // The pump starts only after the ack is written.
        self.respond(id, Ok(StreamOpenResult { accepted: true }));
        let producer_cancel = cancel;
        self.spawn_free(move |_| {
            let mut chunks = chunks;
            loop {
                if producer_cancel.is_cancelled() {
                    break;
                }
                let next = catch_unwind(AssertUnwindSafe(|| chunks.next()));
                match next {
                    Ok(Some(chunk)) => {
                        if steps_tx.send(Some(Step::Chunk(Box::new(chunk)))).is_err() {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(_) => {
                        let _ = steps_tx.send(Some(Step::Chunk(Box::new(
                            crate::stream::chunk::error(ErrorReason::ProviderFailed.message()),
                        ))));
                        break;
                    }
                }
            }
            let _ = steps_tx.send(None);
        });
        self.spawn_free(move |s| {
            pump(
                &stream_id,
                seq_base,
                steps_rx.iter().map_while(|step| step),
                |params| {
                    let frame = encode_notification(EXTENSION_PROVIDER_STREAM_CHUNK, &params)
                        .map_err(|e| match e {
                            EncodeError::FrameTooLarge { .. } => EmitError::TooLarge,
                            EncodeError::Json(_) => EmitError::TooLarge,
                        })?;
                    if s.wire.enqueue(frame) {
                        Ok(())
                    } else {
                        Err(EmitError::Closed)
                    }
                },
                |end| match encode_notification(EXTENSION_PROVIDER_STREAM_END, &end) {
                    Ok(frame) => {
                        s.wire.enqueue(frame);
                    }
                    Err(e) => s.log(
                        LogLevel::Error,
                        &format!("could not encode a stream end: {e}"),
                    ),
                },
                |line| s.log(LogLevel::Warn, line),
            );
            lock(&s.streams).remove(&stream_id);
            done.set();
        });
    }

    /// Cancels a stream; its interrupted end reaches the host before the
    /// answer.
    fn cancel_stream(&self, id: Id, stream_id: &str) {
        let handle = lock(&self.streams)
            .get(stream_id)
            .map(|h| (h.cancel.clone(), h.steps.clone(), h.done.clone()));
        let cancelled = match handle {
            None => false,
            Some((cancel, steps, done)) => {
                cancel.cancel();
                let delivered = steps.send(Some(Step::Cancelled)).is_ok();
                done.wait();
                // The end is written, not just queued, before the answer.
                self.wire.flush_queue();
                delivered
            }
        };
        self.respond(id, Ok(StreamCancelResult { cancelled }));
    }

    fn stop_streams(&self) {
        let handles: Vec<_> = lock(&self.streams)
            .values()
            .map(|h| (h.cancel.clone(), h.steps.clone(), h.done.clone()))
            .collect();
        for (cancel, steps, _) in &handles {
            cancel.cancel();
            let _ = steps.send(Some(Step::Cancelled));
        }
        for (_, _, done) in &handles {
            done.wait();
        }
    }

    fn shutdown(self: &Arc<Self>, id: Id, timeout_millis: u64) {
        let (tx, rx) = mpsc::channel();
        let hook = self.clone();
        let started = thread::Builder::new()
            .name("reasonix-ext-shutdown".into())
            .spawn(move || {
                let _ = catch_unwind(AssertUnwindSafe(|| hook.core.shutdown(timeout_millis)));
                let _ = tx.send(());
            });
        if started.is_ok() {
            let finished = if timeout_millis == 0 {
                rx.recv().is_ok()
            } else {
                rx.recv_timeout(Duration::from_millis(timeout_millis))
                    .is_ok()
            };
            if !finished {
                self.log(
                    LogLevel::Warn,
                    &format!("the shutdown hook did not return within {timeout_millis} ms"),
                );
            }
        }
        // Open streams end interrupted, and their ends reach the host before
        // the shutdown answer.
        self.stop_streams();
        self.wire.flush_queue();
        self.respond(id, Ok(ShutdownResult { accepted: true }));
        self.finish(Finish::Shutdown);
    }
}

fn not_ready(method: &str) -> Error {
    Error::protocol(
        ErrorReason::ProtocolError,
        format!("{method} before the handshake completed"),
    )
}
