//! One live MCP session: the transport (a stdio child in its own process
//! group, Streamable HTTP, or legacy SSE), the rmcp client service on it,
//! and what `initialize` → `tools/list` (→ `prompts/list`,
//! `resources/list` when offered) found.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reasonix_sidecar::Guard;
use reasonix_sidecar::launch::{ProcessTree, REAP_TIMEOUT, ResolvedCommand};
use reasonix_sidecar::stderr_tail::StderrTail;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, Tool};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};

use super::config::{Expander, MissingVar, ServerSpec};
use super::error::McpError;
use super::sse::SseTransport;

/// The client side of the session: announces Reasonix and notices
/// `notifications/tools/list_changed` so the tool list (and its hints) is
/// read again before the next dispatch.
#[derive(Clone)]
pub(crate) struct HubClient {
    tools_changed: Arc<AtomicBool>,
}

impl ClientHandler for HubClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("reasonix", env!("CARGO_PKG_VERSION")),
        )
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.tools_changed.store(true, Ordering::SeqCst);
        std::future::ready(())
    }
}

/// A stdio server's process group: killed (every member, grandchildren
/// included) when the connection goes.
struct ProcessGroup {
    tree: ProcessTree,
    child: tokio::process::Child,
    stderr: StderrTail,
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        // Guarded: the guard ends every descendant (setsid daemons too)
        // and exits; unguarded: the group is killed.
        self.tree.end();
    }
}

/// What connecting needs besides the spec.
#[derive(Clone)]
pub(crate) struct ConnectOptions {
    pub guard: Guard,
    pub connect_timeout: Duration,
    pub env: super::config::EnvLookup,
    pub http: reqwest::Client,
}

/// A live session with one server.
pub(crate) struct Connection {
    pub identity: String,
    service: RunningService<RoleClient, HubClient>,
    process: std::sync::Mutex<Option<ProcessGroup>>,
    tools: std::sync::Mutex<Arc<Vec<Tool>>>,
    tools_changed: Arc<AtomicBool>,
    pub prompts: usize,
    pub resources: usize,
}

impl Connection {
    pub fn peer(&self) -> &rmcp::service::Peer<RoleClient> {
        self.service.peer()
    }

    /// Whether the transport is gone (process died, stream ended).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }

    pub fn tools(&self) -> Arc<Vec<Tool>> {
        Arc::clone(&self.tools.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The live tool list, read again if the server announced a change.
    pub async fn live_tools(&self, timeout: Duration) -> Result<Arc<Vec<Tool>>, McpError> {
        if self.tools_changed.swap(false, Ordering::SeqCst) {
            let tools = tokio::time::timeout(timeout, self.service.peer().list_all_tools())
                .await
                .map_err(|_| McpError::Timeout {
                    what: "tools/list".into(),
                    after: timeout,
                })?
                .map_err(|e| McpError::from_service(&e, self.stderr_tail()))?;
            *self.tools.lock().unwrap_or_else(|p| p.into_inner()) = Arc::new(tools);
        }
        Ok(self.tools())
    }

    /// The last lines the server wrote to stderr (redacted), for errors.
    pub fn stderr_tail(&self) -> Option<String> {
        self.process
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|p| p.stderr.text())
            .filter(|t| !t.is_empty())
    }

    /// The server's process group, if it runs one (stdio).
    pub fn process_group(&self) -> Option<i32> {
        self.process
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|p| p.tree.group().as_raw_nonzero().get())
    }

    /// End the session: the transport closes (a stdio server sees EOF),
    /// then after a short grace the process group is killed whatever
    /// happened. Idempotent.
    pub async fn shutdown(&self) {
        self.service.cancellation_token().cancel();
        let process = self
            .process
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(mut process) = process {
            let _ = tokio::time::timeout(Duration::from_millis(500), process.child.wait()).await;
            // End the tree and wait for its leader (a guard kills every
            // descendant before it exits), so nothing outlives the return.
            process.tree.end();
            if tokio::time::timeout(REAP_TIMEOUT, process.child.wait())
                .await
                .is_err()
            {
                process.tree.kill_group();
                let _ = tokio::time::timeout(REAP_TIMEOUT, process.child.wait()).await;
            }
        }
    }
}

/// Connect to `spec` and discover its tools, within the connect timeout.
pub(crate) async fn connect(
    spec: &ServerSpec,
    options: &ConnectOptions,
) -> Result<Connection, McpError> {
    let env = Arc::clone(&options.env);
    let lookup = move |name: &str| env(name);
    let expander = Expander {
        env: &lookup,
        plugin_root: &spec.plugin_root,
    };
    let tools_changed = Arc::new(AtomicBool::new(false));
    let client = HubClient {
        tools_changed: Arc::clone(&tools_changed),
    };
    let timeout = options.connect_timeout;
    let identity = spec.identity();
    let attempt = async {
        let (service, process) = match spec.server.transport.as_str() {
            "stdio" => {
                let (transport, process) = spawn_stdio(spec, &expander, &options.guard).await?;
                let service = client.serve(transport).await.map_err(|e| {
                    McpError::from_init(&e.to_string(), Some(process.stderr.text()))
                })?;
                (service, Some(process))
            }
            "http" => {
                let (url, headers) = http_target(spec, &expander)?;
                let config = StreamableHttpClientTransportConfig::with_uri(url)
                    .custom_headers(to_header_map_hash(&headers)?)
                    .reinit_on_expired_session(false);
                let transport =
                    StreamableHttpClientTransport::with_client(options.http.clone(), config);
                let service = client
                    .serve(transport)
                    .await
                    .map_err(|e| McpError::from_init(&e.to_string(), None))?;
                (service, None)
            }
            "sse" => {
                let (url, headers) = http_target(spec, &expander)?;
                let transport = SseTransport::connect(options.http.clone(), &url, headers, timeout)
                    .await
                    .map_err(|e| McpError::Connect(e.to_string()))?;
                let service = client
                    .serve(transport)
                    .await
                    .map_err(|e| McpError::from_init(&e.to_string(), None))?;
                (service, None)
            }
            other => {
                return Err(McpError::Connect(format!(
                    "unsupported transport {other:?}"
                )));
            }
        };
        let peer = service.peer().clone();
        let tools = peer
            .list_all_tools()
            .await
            .map_err(|e| McpError::from_service(&e, process.as_ref().map(|p| p.stderr.text())))?;
        let info = peer.peer_info();
        let offers = |f: fn(&rmcp::model::ServerCapabilities) -> bool| {
            info.as_ref().is_some_and(|i| f(&i.capabilities))
        };
        // Prompts and resources are counted when offered; a server that
        // offers them and then fails to list them is still usable for tools.
        let prompts = if offers(|c| c.prompts.is_some()) {
            peer.list_all_prompts().await.map(|p| p.len()).unwrap_or(0)
        } else {
            0
        };
        let resources = if offers(|c| c.resources.is_some()) {
            peer.list_all_resources()
                .await
                .map(|r| r.len())
                .unwrap_or(0)
        } else {
            0
        };
        Ok::<_, McpError>(Connection {
            identity: identity.clone(),
            service,
            process: std::sync::Mutex::new(process),
            tools: std::sync::Mutex::new(Arc::new(tools)),
            tools_changed: Arc::clone(&tools_changed),
            prompts,
            resources,
        })
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(result) => result,
        // Dropping the attempt drops a half-started child: its group dies.
        Err(_) => Err(McpError::Timeout {
            what: "connecting (initialize and tools/list)".into(),
            after: timeout,
        }),
    }
}

type StdioTransport = rmcp::transport::async_rw::AsyncRwTransport<
    RoleClient,
    tokio::process::ChildStdout,
    tokio::process::ChildStdin,
>;

async fn spawn_stdio(
    spec: &ServerSpec,
    expander: &Expander<'_>,
    guard: &Guard,
) -> Result<(StdioTransport, ProcessGroup), McpError> {
    let server = &spec.server;
    let missing = |e: MissingVar| McpError::Config(e.to_string());
    let command = expander
        .expand(
            server.command.as_deref().unwrap_or_default().trim(),
            "command",
        )
        .map_err(missing)?;
    if command.is_empty() {
        return Err(McpError::Config("a stdio server needs a command".into()));
    }
    // A relative path is inside the plugin root; a bare name is looked up
    // on PATH by the process that executes it.
    let program = if command.contains('/') && !std::path::Path::new(&command).is_absolute() {
        spec.plugin_root.join(&command)
    } else {
        PathBuf::from(&command)
    };
    let args = server
        .args
        .iter()
        .enumerate()
        .map(|(i, a)| expander.expand(a, &format!("args[{i}]")))
        .collect::<Result<Vec<_>, _>>()
        .map_err(missing)?;
    let mut env: Vec<(String, String)> = expander
        .expand_map(&server.env, "env")
        .map_err(missing)?
        .into_iter()
        .collect();
    let root = spec.plugin_root.to_string_lossy().into_owned();
    env.push(("CLAUDE_PLUGIN_ROOT".into(), root.clone()));
    env.push(("REASONIX_PLUGIN_ROOT".into(), root));
    env.push(("REASONIX_PLUGIN_NAME".into(), spec.plugin.clone()));
    let resolved = ResolvedCommand { program, args, env };
    let (mut child, tree) = reasonix_sidecar::launch::spawn_tree(&resolved, guard)
        .await
        .map_err(|e| McpError::Connect(reasonix_package::mask::mask_url(&e.to_string())))?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        tree.end();
        return Err(McpError::Connect(
            "the server's stdio pipes are missing".into(),
        ));
    };
    let (tail, _task) = StderrTail::spawn(&spec.id, stderr);
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(stdout, stdin);
    Ok((
        transport,
        ProcessGroup {
            tree,
            child,
            stderr: tail,
        },
    ))
}

fn http_target(
    spec: &ServerSpec,
    expander: &Expander<'_>,
) -> Result<(String, HeaderMap), McpError> {
    let missing = |e: MissingVar| McpError::Config(e.to_string());
    let url = expander
        .expand(spec.server.url.as_deref().unwrap_or_default().trim(), "url")
        .map_err(missing)?;
    let headers = expander
        .expand_map(&spec.server.headers, "headers")
        .map_err(missing)?;
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| McpError::Config(format!("header name {name:?} is not valid")))?;
        let value = HeaderValue::from_str(value.trim()).map_err(|_| {
            McpError::Config(format!(
                "the value of header {name:?} is not a valid header value"
            ))
        })?;
        map.insert(header, value);
    }
    Ok((url, map))
}

fn to_header_map_hash(headers: &HeaderMap) -> Result<HashMap<HeaderName, HeaderValue>, McpError> {
    Ok(headers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect())
}
