//! `reasonix serve`: the Studio kernel routes over HTTP, and a plugins page.
//!
//! - [`auth`]: Host, Origin and bearer-token checks (read it for the
//!   security model), the token file.
//! - [`kernel`]: the seam to the live runtime (reload, busy, shutdown).
//! - `plugins`, `skills`, `extensions`: one module per route family, each
//!   calling the same library backends as the CLI (`crate::install`,
//!   `crate::skills`), never the CLI itself.
//! - `page`: the static page at `/`, embedded in the binary.
//! - `error`: refusal bodies and bounded JSON decoding.
//!
//! Every successful write (install, enable/disable, remove, skill switch)
//! ends with a runtime reload; a reload the kernel refused is reported as
//! `reloadError` beside the result, because the state on disk did change.
//! Writes and reloads run one at a time.
//!
//! The session routes (phase 2) slot in as one more route family over the
//! `Session` that then implements [`kernel::Kernel`].
pub mod auth;
mod error;
mod extensions;
pub mod kernel;
mod page;
mod plugins;
mod skills;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::{delete, get, post};

use crate::home::ReasonixHome;
use crate::install::source::SourceContext;
use error::ApiError;
use kernel::Kernel;

/// What the routes share.
pub(crate) struct AppState {
    pub home: ReasonixHome,
    pub sources: SourceContext,
    pub kernel: Arc<dyn Kernel>,
    /// Writes and reloads, one at a time.
    pub writes: tokio::sync::Mutex<()>,
}

impl AppState {
    /// Reload after a write: `None` when it swapped, else why not.
    pub async fn reload_after_write(&self) -> Option<String> {
        self.kernel.reload().await.err().map(|e| e.to_string())
    }
}

/// An answer with `reloadError` beside its own fields, which keep their
/// order (the install_source JSON reads as upstream writes it).
#[derive(serde::Serialize)]
pub(crate) struct WithReload<T: serde::Serialize> {
    #[serde(flatten)]
    pub answer: T,
    #[serde(rename = "reloadError", skip_serializing_if = "Option::is_none")]
    pub reload_error: Option<String>,
}

/// Run blocking backend work (file system, git) off the async workers.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::internal(format!("the worker stopped: {e}")))
}

/// Everything the server needs.
pub struct ServeOptions {
    pub home: ReasonixHome,
    /// Where relative sources and `~` resolve (the CLI's current directory).
    pub sources: SourceContext,
    pub listen: SocketAddr,
    /// The bearer token (a fresh one per launch from [`auth::generate_token`]).
    pub token: String,
}

/// A bound, not yet serving, server.
pub struct Server {
    listener: tokio::net::TcpListener,
    router: Router,
    addr: SocketAddr,
    token: String,
}

fn routes(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/", get(page::index))
        .route("/assets/{file}", get(page::asset))
        .route("/plugins", get(plugins::list))
        .route("/plugins/plan", post(plugins::plan))
        .route("/plugins/install", post(plugins::install))
        .route("/plugins/enabled", post(plugins::enabled))
        .route("/plugins/{name}", delete(plugins::remove))
        .route("/plugins/{name}/export", get(plugins::export))
        .route("/extensions", get(extensions::status))
        .route("/extensions/reload", post(extensions::reload))
        .route("/skills", get(skills::list))
        .route("/skills/enabled", post(skills::enabled))
        // Phase 2: `.merge(sessions::routes())` over the live Session.
        .fallback(|| async {
            ApiError::new(StatusCode::NOT_FOUND, "request.not_found", "no such route")
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "request.method_not_allowed",
                "this route does not take that method",
            )
        })
        .with_state(state)
}

impl Server {
    /// Bind the listener and assemble the routes.
    pub async fn bind(options: ServeOptions, kernel: Arc<dyn Kernel>) -> std::io::Result<Server> {
        let listener = tokio::net::TcpListener::bind(options.listen).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(AppState {
            home: options.home,
            sources: options.sources,
            kernel,
            writes: tokio::sync::Mutex::new(()),
        });
        let gate = Arc::new(auth::Gate::new(
            options.token.clone(),
            auth::HostRule::for_listener(addr),
        ));
        let router = routes(state).layer(axum::middleware::from_fn_with_state(gate, auth::guard));
        Ok(Server {
            listener,
            router,
            addr,
            token: options.token,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    /// The page's address, token in the fragment.
    pub fn page_url(&self) -> String {
        format!("http://{}/#token={}", self.addr, self.token)
    }

    /// Serve until `shutdown` resolves, then finish the requests in flight
    /// (a write that started completes) and return.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        axum::serve(self.listener, self.router)
            .with_graceful_shutdown(shutdown)
            .await
    }
}
