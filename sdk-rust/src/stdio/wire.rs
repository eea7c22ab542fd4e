//! The outbound side of a stdio connection: one write lock for responses,
//! one bounded FIFO drained by one writer thread for notifications (so
//! chunk order is preserved), and extension→host calls.

use crate::error::Error;
use crate::host::{HostLink, LogLevel};
use reasonix_protocol::methods::{HOST_CONTENT_READ, HOST_UI_PUBLISH, HOST_UI_REQUEST};
use reasonix_protocol::types::{
    ContentReadParams, ContentReadResult, UIPublishParams, UIPublishResult, UIRequestParams,
    UIRequestResult,
};
use reasonix_protocol::{EncodeError, ErrorReason, Id, Outcome, Validate, decode_result};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Mutex, MutexGuard, mpsc};

/// Capacity of the notification FIFO.
pub const NOTIFICATION_QUEUE: usize = 256;

pub(crate) enum Queued {
    Frame(Vec<u8>),
    /// Answered once every earlier notification is written.
    Flush(mpsc::Sender<()>),
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(crate) struct Wire {
    out: Mutex<Box<dyn Write + Send>>,
    queue: mpsc::SyncSender<Queued>,
    pending: Mutex<HashMap<i64, mpsc::Sender<Outcome>>>,
    next_id: AtomicI64,
    closed: AtomicBool,
    /// Serialises stderr lines of concurrent handlers.
    log_lock: Mutex<()>,
}

impl Wire {
    pub fn new(out: Box<dyn Write + Send>) -> (Wire, mpsc::Receiver<Queued>) {
        let (queue, rx) = mpsc::sync_channel(NOTIFICATION_QUEUE);
        let wire = Wire {
            out: Mutex::new(out),
            queue,
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            closed: AtomicBool::new(false),
            log_lock: Mutex::new(()),
        };
        (wire, rx)
    }

    /// Writes one encoded frame (it ends in `\n`) and flushes.
    pub fn write_frame(&self, frame: &[u8]) -> std::io::Result<()> {
        let mut out = lock(&self.out);
        out.write_all(frame)?;
        out.flush()
    }

    /// Queues a notification behind the earlier ones; blocks while the FIFO
    /// is full (backpressure for stream chunks). `false` once closed.
    pub fn enqueue(&self, frame: Vec<u8>) -> bool {
        !self.closed.load(Ordering::Acquire) && self.queue.send(Queued::Frame(frame)).is_ok()
    }

    /// Waits until every notification queued so far is written.
    pub fn flush_queue(&self) {
        let (tx, rx) = mpsc::channel();
        if self.queue.send(Queued::Flush(tx)).is_ok() {
            let _ = rx.recv();
        }
    }

    /// Marks the connection closed and fails every call in flight.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        lock(&self.pending).clear();
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Delivers a response to the call waiting for it.
    pub fn complete(&self, id: Id, outcome: Outcome) -> bool {
        let Id::Number(n) = id else { return false };
        match lock(&self.pending).remove(&n) {
            Some(waiter) => waiter.send(outcome).is_ok(),
            None => false,
        }
    }

    /// One extension→host request; waits for its answer.
    pub fn call<P: Serialize, R: DeserializeOwned + Validate>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<R, Error> {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        let frame = reasonix_protocol::encode_request(Id::Number(n), method, params).map_err(
            |e| match e {
                EncodeError::FrameTooLarge { .. } => Error::protocol(
                    ErrorReason::FrameTooLarge,
                    format!("the {method} request is over the frame cap"),
                ),
                EncodeError::Json(e) => Error::from(e),
            },
        )?;
        let (tx, rx) = mpsc::channel();
        {
            let mut pending = lock(&self.pending);
            if self.is_closed() {
                return Err(Error::Disconnected);
            }
            pending.insert(n, tx);
        }
        if self.write_frame(&frame).is_err() {
            lock(&self.pending).remove(&n);
            return Err(Error::Disconnected);
        }
        match rx.recv() {
            Ok(Outcome::Result(raw)) => decode_result(&raw).map_err(|e| {
                Error::protocol(
                    ErrorReason::ProtocolError,
                    format!("invalid {method} result: {e}"),
                )
            }),
            Ok(Outcome::Error(rpc)) => Err(Error::Host(rpc)),
            Err(_) => Err(Error::Disconnected),
        }
    }

    pub fn log_line(&self, level: LogLevel, message: &str) {
        let _guard = lock(&self.log_lock);
        let mut err = std::io::stderr().lock();
        for line in message.lines() {
            let _ = writeln!(err, "{}: {line}", level.as_str());
        }
    }
}

/// [`HostLink`] over JSON-RPC.
pub(crate) struct StdioLink(pub std::sync::Arc<Wire>);

impl HostLink for StdioLink {
    fn content_read(&self, params: ContentReadParams) -> Result<ContentReadResult, Error> {
        self.0.call(HOST_CONTENT_READ, &params)
    }
    fn ui_publish(&self, params: UIPublishParams) -> Result<UIPublishResult, Error> {
        self.0.call(HOST_UI_PUBLISH, &params)
    }
    fn ui_request(&self, params: UIRequestParams) -> Result<UIRequestResult, Error> {
        self.0.call(HOST_UI_REQUEST, &params)
    }
    fn log(&self, level: LogLevel, message: &str) {
        self.0.log_line(level, message);
    }
}
