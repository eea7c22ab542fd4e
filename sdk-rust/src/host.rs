//! The handler's view of the connection: the session, the deadline, and
//! the calls an extension makes to the host (content reads, UI, log). The
//! transport behind it is either JSON-RPC over stdio or the component's
//! WIT imports.

use crate::error::Error;
use crate::ui::HostUi;
use reasonix_protocol::types::{
    ContentReadParams, ContentReadResult, ExternalizedField, InitializeParams, InitializeResult,
    UIPublishParams, UIPublishResult, UIRequestParams, UIRequestResult,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Severity of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

impl LogLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Trace => "trace",
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error => "error",
        }
    }
}

/// The extension→host calls a transport carries. Params arrive validated
/// by the SDK; results come back strictly decoded.
pub(crate) trait HostLink: Send + Sync {
    fn content_read(&self, params: ContentReadParams) -> Result<ContentReadResult, Error>;
    fn ui_publish(&self, params: UIPublishParams) -> Result<UIPublishResult, Error>;
    fn ui_request(&self, params: UIRequestParams) -> Result<UIRequestResult, Error>;
    fn log(&self, level: LogLevel, message: &str);
}

/// State shared by every handler of one connection.
pub(crate) struct Shared {
    pub link: Arc<dyn HostLink>,
    /// The host's `extension/initialize` params, once the handshake ran.
    pub init: OnceLock<InitializeParams>,
    /// What the extension declared.
    pub declaration: OnceLock<InitializeResult>,
    /// Set by `extension/initialized`: host calls are allowed from then on.
    pub ready: AtomicBool,
}

impl Shared {
    pub fn new(link: Arc<dyn HostLink>) -> Arc<Self> {
        Arc::new(Shared {
            link,
            init: OnceLock::new(),
            declaration: OnceLock::new(),
            ready: AtomicBool::new(false),
        })
    }

    pub fn check_ready(&self) -> Result<(), Error> {
        if self.ready.load(Ordering::Acquire) {
            Ok(())
        } else {
            Err(Error::NotReady)
        }
    }
}

/// What a handler gets besides its params: the session, the deadline the
/// host enforces, and the host calls.
#[derive(Clone)]
pub struct Context {
    pub(crate) shared: Arc<Shared>,
    deadline: Option<Instant>,
}

impl Context {
    pub(crate) fn new(shared: Arc<Shared>, timeout_millis: Option<u64>) -> Self {
        let deadline = timeout_millis
            .filter(|ms| *ms > 0)
            .and_then(|ms| Instant::now().checked_add(Duration::from_millis(ms)));
        Context { shared, deadline }
    }

    /// The session id (empty before the handshake).
    pub fn session_id(&self) -> &str {
        self.init().map_or("", |i| i.session.session_id.as_str())
    }

    /// The runtime generation this connection belongs to.
    pub fn generation(&self) -> u64 {
        self.init().map_or(0, |i| i.session.generation)
    }

    /// The absolute workspace root (empty before the handshake).
    pub fn workspace_root(&self) -> &str {
        self.init()
            .map_or("", |i| i.session.workspace_root.as_str())
    }

    /// The host's `extension/initialize` params.
    pub fn init(&self) -> Option<&InitializeParams> {
        self.shared.init.get()
    }

    /// What this extension declared at the handshake.
    pub fn declaration(&self) -> Option<&InitializeResult> {
        self.shared.declaration.get()
    }

    /// The host's deadline for this call (`timeoutMillis`), if it set one.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// True once the deadline has passed.
    pub fn is_past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// True once the host sent `extension/initialized` (host calls work).
    pub fn is_ready(&self) -> bool {
        self.shared.ready.load(Ordering::Acquire)
    }

    /// Structured UI on the host (status, card, form, notification; confirm,
    /// input, select, multiselect, form requests) for this session.
    pub fn ui(&self) -> HostUi<'_> {
        HostUi::new(self)
    }

    /// Reads an externalised value out of the host's content store and
    /// checks its size and digest.
    pub fn read_content(&self, field: &ExternalizedField) -> Result<Vec<u8>, Error> {
        self.shared.check_ready()?;
        crate::content::read_all(&*self.shared.link, field)
    }

    /// Appends a line to the host's log for this extension (stderr for a
    /// native sidecar, the `log` import for a component).
    pub fn log(&self, level: LogLevel, message: impl AsRef<str>) {
        self.shared.link.log(level, message.as_ref());
    }

    pub(crate) fn link(&self) -> &dyn HostLink {
        &*self.shared.link
    }
}
