//! The hub: every declared server, at most one live session per server
//! shared by every call, the schema cache and the enablement choices.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use reasonix_package::mask::McpDisplay;
use reasonix_sidecar::Guard;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, JsonObject, Tool};
use serde::Serialize;

use super::cache;
use super::config::{self, ServerSpec};
use super::connection::{self, ConnectOptions, Connection};
use super::error::McpError;
use super::state::{self, EnablementWatch};
use crate::home::ReasonixHome;
use crate::runtime::redaction::plain_text;

/// Connect (initialize + tools/list) budget.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// One tool call's budget (the tool budget of the session).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(300);
/// Results larger than this (serialized) are refused.
pub const MAX_RESULT_BYTES: usize = 8 << 20;
/// Servers discovered at once.
pub const DISCOVERY_CONCURRENCY: usize = 4;

/// How the hub connects; the defaults are the production values, tests
/// shorten the timeouts.
#[derive(Clone)]
pub struct HubOptions {
    /// How stdio servers are tied to this process (see `reasonix_sidecar::Guard`).
    pub guard: Guard,
    pub connect_timeout: Duration,
    pub call_timeout: Duration,
    pub max_result_bytes: usize,
    /// Values for `${VAR}` references (default: the process environment).
    pub env: super::config::EnvLookup,
}

impl HubOptions {
    pub fn new(guard: Guard) -> HubOptions {
        HubOptions {
            guard,
            connect_timeout: CONNECT_TIMEOUT,
            call_timeout: CALL_TIMEOUT,
            max_result_bytes: MAX_RESULT_BYTES,
            env: Arc::new(config::process_env),
        }
    }
}

/// Where a server stands, as `mcp list` and `/mcp` show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    /// Not enabled and not connected this session.
    Disabled,
    /// Enabled; connects when discovered or called.
    Idle,
    Connected,
    /// The last connect or call lost the server.
    Failed,
    /// Another plugin declared the same id.
    Conflict,
}

impl ServerState {
    pub fn as_str(self) -> &'static str {
        match self {
            ServerState::Disabled => "disabled",
            ServerState::Idle => "idle",
            ServerState::Connected => "connected",
            ServerState::Failed => "failed",
            ServerState::Conflict => "conflict",
        }
    }
}

/// One server in a listing. Only masked values appear here.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    pub id: String,
    pub plugin: String,
    pub transport: String,
    pub state: ServerState,
    pub enabled: bool,
    /// Tools known (live when connected, else cached); `None` when unknown.
    pub tools: Option<usize>,
    pub cached: bool,
    pub serial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    pub server: McpDisplay,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One MCP tool in the capability catalog.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpTool {
    /// `mcp__<server>__<tool>`.
    pub capability: String,
    pub server: String,
    pub plugin: String,
    pub tool: String,
    pub description: String,
    pub input_schema: serde_json::Value,
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    /// From the live session (else from the schema cache).
    pub live: bool,
}

/// The capability name of an MCP tool.
pub fn capability_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

/// What happened to a call whose server was lost mid-call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// Nothing: the call ran on a healthy session.
    None,
    /// The session was rebuilt and the read-only call sent once more.
    Replayed,
    /// The session was rebuilt; the call was not sent again (not read-only).
    NotReplayed,
}

/// A finished call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpCallResult {
    pub content: String,
    pub is_error: bool,
    pub recovery: Recovery,
    /// Serialized size of the result.
    pub bytes: usize,
}

/// A tool about to be dispatched: the live session, the live tool (its
/// hints as the server states them now) and the identity it was checked
/// against.
pub struct Prepared {
    slot: Arc<Slot>,
    connection: Arc<Connection>,
    pub tool: McpTool,
}

struct Slot {
    spec: ServerSpec,
    identity: String,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
    /// Held for a whole call when the server is serial.
    serial: tokio::sync::Mutex<()>,
    last_error: Mutex<Option<String>>,
    /// Connected count of this slot, for listings without awaiting.
    live: Mutex<Option<usize>>,
}

/// The hub of one session.
pub struct McpHub {
    home: ReasonixHome,
    options: HubOptions,
    http: reqwest::Client,
    slots: RwLock<BTreeMap<String, Arc<Slot>>>,
    conflicts: RwLock<Vec<ServerSpec>>,
    /// Connected explicitly this session (active even when not enabled).
    activated: Mutex<BTreeSet<String>>,
    enablement: EnablementWatch,
    cache_dir: PathBuf,
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHub")
            .field("servers", &self.slots().keys().collect::<Vec<_>>())
            .finish()
    }
}

/// Installs rustls' ring provider for this process; every HTTP client of
/// the host (and of its tests) calls it before building one.
pub fn install_crypto() {
    // reqwest is built without a default TLS provider (no aws-lc-sys):
    // rustls on ring serves https servers. Installing twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl McpHub {
    /// A hub over `servers` (from [`config::servers_from_home`] in
    /// production). Nothing connects yet.
    pub fn new(home: &ReasonixHome, servers: Vec<ServerSpec>, options: HubOptions) -> McpHub {
        install_crypto();
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        let hub = McpHub {
            home: home.clone(),
            options,
            http,
            slots: RwLock::new(BTreeMap::new()),
            conflicts: RwLock::new(Vec::new()),
            activated: Mutex::new(BTreeSet::new()),
            enablement: EnablementWatch::new(state::state_path(home)),
            cache_dir: cache::cache_dir(home),
        };
        hub.install(servers);
        hub
    }

    /// A hub over the servers of the enabled installed plugins.
    pub fn from_home(home: &ReasonixHome, options: HubOptions) -> Result<McpHub, McpError> {
        let servers = config::servers_from_home(home).map_err(McpError::State)?;
        Ok(McpHub::new(home, servers, options))
    }

    fn slots(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Arc<Slot>>> {
        self.slots.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Returns the slots whose identity changed or vanished.
    fn install(&self, servers: Vec<ServerSpec>) -> Vec<Arc<Slot>> {
        let mut slots = self.slots.write().unwrap_or_else(|p| p.into_inner());
        let mut next = BTreeMap::new();
        let mut conflicts = Vec::new();
        for spec in servers {
            if spec.conflict.is_some() {
                conflicts.push(spec);
                continue;
            }
            let identity = spec.identity();
            let slot = match slots.get(&spec.id) {
                Some(existing) if existing.identity == identity && existing.spec == spec => {
                    Arc::clone(existing)
                }
                _ => Arc::new(Slot {
                    spec: spec.clone(),
                    identity,
                    connection: tokio::sync::Mutex::new(None),
                    serial: tokio::sync::Mutex::new(()),
                    last_error: Mutex::new(None),
                    live: Mutex::new(None),
                }),
            };
            next.insert(spec.id.clone(), slot);
        }
        let gone: Vec<Arc<Slot>> = slots
            .iter()
            .filter(|(id, slot)| next.get(*id).is_none_or(|n| !Arc::ptr_eq(n, slot)))
            .map(|(_, slot)| Arc::clone(slot))
            .collect();
        *slots = next;
        *self.conflicts.write().unwrap_or_else(|p| p.into_inner()) = conflicts;
        gone
    }

    /// Read the registry again (after a reload): servers that vanished or
    /// whose identity changed are disconnected.
    pub async fn reload(&self) -> Result<(), McpError> {
        let servers = config::servers_from_home(&self.home).map_err(McpError::State)?;
        let gone = self.install(servers);
        for slot in gone {
            shutdown_slot(&slot).await;
        }
        Ok(())
    }

    fn connect_options(&self) -> ConnectOptions {
        ConnectOptions {
            guard: self.options.guard.clone(),
            connect_timeout: self.options.connect_timeout,
            env: Arc::clone(&self.options.env),
            http: self.http.clone(),
        }
    }

    fn slot(&self, id: &str) -> Result<Arc<Slot>, McpError> {
        if let Some(slot) = self.slots().get(id) {
            return Ok(Arc::clone(slot));
        }
        if let Some(spec) = self
            .conflicts
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|s| s.id == id)
        {
            return Err(McpError::Conflict {
                id: id.to_owned(),
                why: spec.conflict.clone().unwrap_or_default(),
            });
        }
        Err(McpError::UnknownServer(id.to_owned()))
    }

    /// Whether the user enabled the server (or its entry auto-starts).
    fn is_enabled(&self, spec: &ServerSpec) -> Result<bool, McpError> {
        let file = self
            .enablement
            .current()
            .map_err(|e| McpError::State(e.to_string()))?;
        Ok(file
            .choice(&spec.plugin, &spec.id)
            .unwrap_or(spec.server.auto_start))
    }

    /// Enabled, or connected explicitly this session.
    fn is_active(&self, spec: &ServerSpec) -> Result<bool, McpError> {
        if self
            .activated
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&spec.id)
        {
            return Ok(true);
        }
        self.is_enabled(spec)
    }

    /// Record `reasonix mcp enable|disable <id>`; returns the plugin.
    pub fn set_enabled(&self, id: &str, enabled: bool) -> Result<String, McpError> {
        let slot = self.slot(id)?;
        state::set(
            &state::state_path(&self.home),
            &slot.spec.plugin,
            id,
            enabled,
        )
        .map_err(|e| McpError::State(e.to_string()))?;
        if !enabled {
            self.activated
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(id);
        }
        Ok(slot.spec.plugin.clone())
    }

    /// The id of the server `plugin` declares as `name` (conflicts left
    /// out: they never connect).
    pub fn id_of(&self, plugin: &str, name: &str) -> Option<String> {
        self.slots()
            .values()
            .find(|slot| slot.spec.plugin == plugin && slot.spec.server.name == name)
            .map(|slot| slot.spec.id.clone())
    }

    /// Every declared server (conflicts included), sorted by id.
    pub fn servers(&self) -> Vec<ServerStatus> {
        let mut out = Vec::new();
        for slot in self.slots().values() {
            let live = *slot.live.lock().unwrap_or_else(|p| p.into_inner());
            let cached = cache::read(&self.cache_dir, &slot.identity);
            let enabled = self.is_enabled(&slot.spec).unwrap_or(false);
            let error = slot
                .last_error
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            let active = self.is_active(&slot.spec).unwrap_or(false);
            let state = if live.is_some() {
                ServerState::Connected
            } else if error.is_some() {
                ServerState::Failed
            } else if active {
                ServerState::Idle
            } else {
                ServerState::Disabled
            };
            out.push(status(
                &slot.spec,
                state,
                enabled,
                live.or(cached.as_ref().map(|c| c.tools.len())),
                cached.is_some(),
                error,
            ));
        }
        for spec in self
            .conflicts
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            out.push(status(
                spec,
                ServerState::Conflict,
                false,
                None,
                false,
                spec.conflict.clone(),
            ));
        }
        out.sort_by(|a, b| a.id.cmp(&b.id).then(a.plugin.cmp(&b.plugin)));
        out
    }

    /// The live session of `slot`, connecting (and caching the discovered
    /// schema) when there is none, it died, or it was made for another
    /// identity.
    async fn session(&self, slot: &Arc<Slot>) -> Result<Arc<Connection>, McpError> {
        let mut guard = slot.connection.lock().await;
        if let Some(existing) = guard.as_ref() {
            if !existing.is_closed() && existing.identity == slot.identity {
                return Ok(Arc::clone(existing));
            }
            let stale = guard.take();
            if let Some(stale) = stale {
                stale.shutdown().await;
            }
        }
        *slot.live.lock().unwrap_or_else(|p| p.into_inner()) = None;
        match connection::connect(&slot.spec, &self.connect_options()).await {
            Ok(conn) => {
                let conn = Arc::new(conn);
                let tools = conn.tools();
                if let Err(e) = cache::write(
                    &self.cache_dir,
                    &slot.identity,
                    &slot.spec.id,
                    &slot.spec.plugin,
                    &tools,
                    conn.prompts,
                    conn.resources,
                ) {
                    tracing::warn!("MCP schema cache for {}: {e}", slot.spec.id);
                }
                *slot.live.lock().unwrap_or_else(|p| p.into_inner()) = Some(tools.len());
                *slot.last_error.lock().unwrap_or_else(|p| p.into_inner()) = None;
                *guard = Some(Arc::clone(&conn));
                Ok(conn)
            }
            Err(e) => {
                *slot.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
                Err(e)
            }
        }
    }

    /// Connect `id` now (even when it is not enabled: an explicit connect
    /// activates it for this session) and list its tools.
    pub async fn connect(&self, id: &str) -> Result<Vec<McpTool>, McpError> {
        let slot = self.slot(id)?;
        let conn = self.session(&slot).await?;
        self.activated
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.to_owned());
        Ok(tools_of(&slot.spec, &conn.tools(), true))
    }

    /// Connect every active server without a usable cached schema (four at
    /// a time); returns the failures. Servers with a cached schema stay
    /// deferred until their first call.
    pub async fn discover(&self) -> Vec<(String, McpError)> {
        let pending: Vec<Arc<Slot>> = self
            .slots()
            .values()
            .filter(|slot| self.is_active(&slot.spec).unwrap_or(false))
            .filter(|slot| {
                slot.live
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .is_none()
            })
            .filter(|slot| cache::read(&self.cache_dir, &slot.identity).is_none())
            .cloned()
            .collect();
        let mut failures = Vec::new();
        for batch in pending.chunks(DISCOVERY_CONCURRENCY) {
            let results =
                futures::future::join_all(batch.iter().map(|slot| self.session(slot))).await;
            for (slot, result) in batch.iter().zip(results) {
                if let Err(e) = result {
                    failures.push((slot.spec.id.clone(), e));
                }
            }
        }
        failures
    }

    /// The tools of every active server: live when connected, else from
    /// the schema cache (a server with neither contributes none until
    /// discovered). Sorted by capability name.
    pub fn catalog(&self) -> Vec<McpTool> {
        let mut out = Vec::new();
        for slot in self.slots().values() {
            if !self.is_active(&slot.spec).unwrap_or(false) {
                continue;
            }
            let live = slot
                .connection
                .try_lock()
                .ok()
                .and_then(|c| c.as_ref().map(|c| c.tools()));
            match live {
                Some(tools) => out.extend(tools_of(&slot.spec, &tools, true)),
                None => {
                    if let Some(cached) = cache::read(&self.cache_dir, &slot.identity) {
                        out.extend(tools_of(&slot.spec, &cached.tools, false));
                    }
                }
            }
        }
        out.sort_by(|a, b| a.capability.cmp(&b.capability));
        out
    }

    /// Resolve `mcp__<server>__<tool>` to its server and tool name.
    pub fn resolve(&self, capability: &str) -> Option<(String, String)> {
        let rest = capability.strip_prefix("mcp__")?;
        // Server ids may contain "__"; try every split, longest id first.
        let slots = self.slots();
        let mut best: Option<(String, String)> = None;
        for (i, _) in rest.match_indices("__") {
            let (server, tool) = (&rest[..i], &rest[i + 2..]);
            if slots.contains_key(server) && !tool.is_empty() {
                best = Some((server.to_owned(), tool.to_owned()));
            }
        }
        best.or_else(|| {
            rest.split_once("__")
                .map(|(s, t)| (s.to_owned(), t.to_owned()))
        })
    }

    /// Everything checked immediately before a dispatch: the server is
    /// still declared and active, the live session is for its current
    /// identity (connecting on demand), and the tool exists now, with the
    /// hints the server states now.
    pub async fn prepare(&self, server: &str, tool: &str) -> Result<Prepared, McpError> {
        let slot = self.slot(server)?;
        if !self.is_active(&slot.spec)? {
            return Err(McpError::Disabled {
                id: server.to_owned(),
            });
        }
        let mut connection = self.session(&slot).await?;
        let tools = match connection.live_tools(self.options.connect_timeout).await {
            Ok(tools) => tools,
            Err(e) if e.is_connection_lost() => {
                // Died while idle: nothing was in flight, so connecting
                // again is not a replay.
                connection = self.session(&slot).await?;
                connection.tools()
            }
            Err(e) => return Err(e),
        };
        let Some(live) = tools.iter().find(|t| t.name == tool) else {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).take(20).collect();
            return Err(McpError::UnknownTool {
                id: server.to_owned(),
                tool: plain_text(tool),
                offered: if names.is_empty() {
                    "no tools".into()
                } else {
                    names.join(", ")
                },
            });
        };
        let tool = tools_of(&slot.spec, std::slice::from_ref(live), true)
            .pop()
            .ok_or_else(|| McpError::UnknownTool {
                id: server.to_owned(),
                tool: plain_text(tool),
                offered: "a tool whose name cannot be shown".into(),
            })?;
        Ok(Prepared {
            slot,
            connection,
            tool,
        })
    }

    /// Send the prepared call. A session that dies (or expires) during the
    /// call is rebuilt once; the call is sent again only when the tool is
    /// `readOnlyHint: true`, and the result says which happened. Dropping
    /// the returned future cancels the call (`notifications/cancelled`).
    pub async fn dispatch(
        &self,
        prepared: Prepared,
        arguments: Option<JsonObject>,
    ) -> Result<McpCallResult, McpError> {
        let Prepared {
            slot,
            connection,
            tool,
        } = prepared;
        let _serial = if slot.spec.server.serial {
            Some(slot.serial.lock().await)
        } else {
            None
        };
        // Kept for a replay, which only a read-only tool gets.
        let replay = if tool.read_only_hint == Some(true) {
            arguments.clone()
        } else {
            None
        };
        let first = self.call_once(&connection, &tool.tool, arguments).await;
        match first {
            Err(e) if e.is_connection_lost() => {
                *slot.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
                let rebuilt = self.session(&slot).await.map_err(|rebuild| {
                    McpError::Connect(format!(
                        "the server was lost during the call to {:?} ({e}) and could not be restarted: {rebuild}",
                        tool.tool
                    ))
                })?;
                if tool.read_only_hint == Some(true) {
                    let mut result = self.call_once(&rebuilt, &tool.tool, replay).await?;
                    result.recovery = Recovery::Replayed;
                    Ok(result)
                } else {
                    Ok(McpCallResult {
                        content: format!(
                            "MCP server {:?} was lost during the call to {:?} and has been restarted. \
                             The call was not sent again because the tool is not marked read-only \
                             (readOnlyHint); check whether it took effect before calling it again.",
                            slot.spec.id, tool.tool
                        ),
                        is_error: true,
                        recovery: Recovery::NotReplayed,
                        bytes: 0,
                    })
                }
            }
            other => other,
        }
    }

    async fn call_once(
        &self,
        connection: &Connection,
        tool: &str,
        arguments: Option<JsonObject>,
    ) -> Result<McpCallResult, McpError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        let budget = self.options.call_timeout;
        let result = match tokio::time::timeout(budget, connection.peer().call_tool(params)).await {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => return Err(McpError::from_service(&e, connection.stderr_tail())),
            // The call future is dropped here, which sends notifications/cancelled.
            Err(_) => {
                return Err(McpError::Timeout {
                    what: format!("the call to {tool:?}"),
                    after: budget,
                });
            }
        };
        let bytes = encoded_len(&result);
        if bytes > self.options.max_result_bytes {
            return Err(McpError::TooLarge {
                tool: tool.to_owned(),
                bytes,
                limit: self.options.max_result_bytes,
            });
        }
        Ok(McpCallResult {
            content: result_text(&result),
            is_error: result.is_error == Some(true),
            recovery: Recovery::None,
            bytes,
        })
    }

    /// The process group of a connected stdio server (for tests and
    /// diagnostics).
    pub async fn process_group(&self, id: &str) -> Option<i32> {
        let slot = self.slot(id).ok()?;
        let guard = slot.connection.lock().await;
        guard.as_ref().and_then(|c| c.process_group())
    }

    /// End every session: transports closed, process groups killed.
    pub async fn close(&self) {
        let slots: Vec<Arc<Slot>> = self.slots().values().cloned().collect();
        for slot in slots {
            shutdown_slot(&slot).await;
        }
    }
}

impl Drop for McpHub {
    fn drop(&mut self) {
        // Without a runtime to await on, the process groups still die: the
        // connections' process guards kill them when dropped.
        let slots = std::mem::take(&mut *self.slots.write().unwrap_or_else(|p| p.into_inner()));
        for slot in slots.into_values() {
            if let Ok(mut guard) = slot.connection.try_lock() {
                guard.take();
            }
        }
    }
}

async fn shutdown_slot(slot: &Slot) {
    let conn = slot.connection.lock().await.take();
    *slot.live.lock().unwrap_or_else(|p| p.into_inner()) = None;
    if let Some(conn) = conn {
        conn.shutdown().await;
    }
}

fn status(
    spec: &ServerSpec,
    state: ServerState,
    enabled: bool,
    tools: Option<usize>,
    cached: bool,
    error: Option<String>,
) -> ServerStatus {
    ServerStatus {
        id: spec.id.clone(),
        plugin: spec.plugin.clone(),
        transport: spec.server.transport.clone(),
        state,
        enabled,
        tools,
        cached,
        serial: spec.server.serial,
        display_name: spec.server.display_name.as_deref().map(plain_text),
        server: spec.server.display(),
        error,
    }
}

/// Tool names the catalog accepts: what MCP recommends, and nothing that
/// could confuse a terminal or the `mcp__<server>__<tool>` form.
fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
}

fn tools_of(spec: &ServerSpec, tools: &[Tool], live: bool) -> Vec<McpTool> {
    tools
        .iter()
        .filter(|t| {
            let ok = valid_tool_name(&t.name);
            if !ok {
                tracing::warn!(
                    "MCP server {}: skipping a tool whose name is not [A-Za-z0-9_./-]{{1,128}}",
                    spec.id
                );
            }
            ok
        })
        .map(|t| McpTool {
            capability: capability_name(&spec.id, &t.name),
            server: spec.id.clone(),
            plugin: spec.plugin.clone(),
            tool: t.name.to_string(),
            description: plain_text(t.description.as_deref().unwrap_or_default()),
            input_schema: serde_json::Value::Object((*t.input_schema).clone()),
            read_only_hint: t.annotations.as_ref().and_then(|a| a.read_only_hint),
            destructive_hint: t.annotations.as_ref().and_then(|a| a.destructive_hint),
            live,
        })
        .collect()
}

/// The size of `value` as JSON, counted without building the text.
fn encoded_len(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => 0,
    }
}

/// A result as text for the model: text blocks verbatim, other blocks
/// described, structured content as JSON when there is no text.
fn result_text(result: &CallToolResult) -> String {
    let mut parts: Vec<String> = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(text) => parts.push(text.text.clone()),
            ContentBlock::Image(image) => parts.push(format!(
                "[image {} ({} bytes of base64)]",
                image.mime_type,
                image.data.len()
            )),
            ContentBlock::Audio(audio) => parts.push(format!(
                "[audio {} ({} bytes of base64)]",
                audio.mime_type,
                audio.data.len()
            )),
            ContentBlock::ResourceLink(link) => parts.push(format!("[resource {}]", link.uri)),
            ContentBlock::Resource(resource) => match &resource.resource {
                rmcp::model::ResourceContents::TextResourceContents { text, .. } => {
                    parts.push(text.clone())
                }
                other => parts.push(format!(
                    "[resource {}]",
                    serde_json::to_value(other)
                        .ok()
                        .and_then(|v| v.get("uri").and_then(|u| u.as_str()).map(str::to_owned))
                        .unwrap_or_default()
                )),
            },
            #[allow(unreachable_patterns)]
            _ => parts.push("[content]".into()),
        }
    }
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    plain_text(&parts.join("\n"))
}
