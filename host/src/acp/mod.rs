//! `reasonix acp`: the session as an Agent Client Protocol agent over stdio
//! (editors such as Zed drive it). A thin frontend of [`Session`]: each ACP
//! session is one interactive `Session`, and everything here goes through
//! its public API.
//!
//! - `initialize`: `loadSession`, `session/close`, text and embedded-text
//!   prompts; a client that sets `clientCapabilities._meta`
//!   `"reasonix.extensionSurface": true` gets extension UI as
//!   `_reasonix.io/extensionSurface` notifications, any other client gets it
//!   as text in the agent's message stream.
//! - `session/new`, `session/load` (a session file under
//!   `$REASONIX_HOME/sessions/`, its transcript replayed as updates),
//!   `session/prompt` (a line for `Session::submit`: text or a slash
//!   command), `session/cancel`, `session/set_config_option` (the model),
//!   `session/close`.
//! - The vendor method `_reasonix.io/session/reloadExtensions` and the
//!   vendor messages of [`vendor`] (shapes in `docs/acp.md`).
//!
//! Nothing but ACP frames goes to stdout; diagnostics go to stderr,
//! redacted. The connection's end (stdin closed) closes every session.

mod convert;
mod live;
pub mod vendor;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, CloseSessionRequest, CloseSessionResponse,
    Implementation, InitializeRequest, InitializeResponse, LoadSessionRequest, LoadSessionResponse,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, SessionCapabilities,
    SessionCloseCapabilities, SessionId, SessionNotification, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{
    Agent, Client, ConnectTo, Error, ErrorCode, JsonRpcMessage, JsonRpcRequest, UntypedMessage,
};
use serde_json::json;

use crate::home::ReasonixHome;
use crate::session::{Interaction, Session, SessionOptions};
use live::Live;

/// Where `reasonix acp` keeps its sessions, and how sidecars are tied to it.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    pub home: ReasonixHome,
    pub guard: reasonix_sidecar::Guard,
    /// Tool calls the echo model makes in every turn (`--call`).
    pub scripted_calls: Vec<crate::session::ScriptedCall>,
}

/// Write a diagnostic line to stderr, redacted and without control
/// characters (stdout carries only ACP frames).
pub(crate) fn diagnostic(message: &str) {
    eprintln!(
        "reasonix acp: {}",
        crate::runtime::redaction::clean_text(message)
    );
}

/// The agent's state: the client's capabilities and the live sessions.
struct Server {
    options: AgentOptions,
    surfaces: AtomicBool,
    sessions: Mutex<HashMap<String, Arc<Live>>>,
}

fn not_found(id: &str) -> Error {
    Error::new(
        ErrorCode::RESOURCE_NOT_FOUND,
        format!(
            "no session `{id}` is open on this connection; session/new or session/load opens one"
        ),
    )
    .data(json!({"errorCode": "session.unknown", "sessionId": id}))
}

fn invalid_params(message: String) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message)
}

impl Server {
    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Live>>> {
        self.sessions
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn live(&self, id: &SessionId) -> Result<Arc<Live>, Error> {
        let id: &str = &id.0;
        self.sessions()
            .get(id)
            .cloned()
            .ok_or_else(|| not_found(id))
    }

    /// `$REASONIX_HOME/sessions/<id>.json`.
    fn session_file(&self, id: &str) -> PathBuf {
        self.options
            .home
            .root()
            .join("sessions")
            .join(format!("{id}.json"))
    }

    fn initialize(&self, request: InitializeRequest) -> InitializeResponse {
        let surfaces = match vendor::surface_capability(request.client_capabilities.meta.as_ref()) {
            Ok(on) => on,
            Err(error) => {
                diagnostic(&format!("{error}; extension UI goes out as text"));
                false
            }
        };
        self.surfaces.store(surfaces, Ordering::SeqCst);
        let mut meta = serde_json::Map::new();
        meta.insert(vendor::SURFACE_CAPABILITY.into(), json!(true));
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(
                AgentCapabilities::new()
                    .load_session(true)
                    .prompt_capabilities(PromptCapabilities::new().embedded_context(true))
                    .session_capabilities(
                        SessionCapabilities::new().close(SessionCloseCapabilities::new()),
                    )
                    .meta(meta),
            )
            .agent_info(
                Implementation::new("reasonix", env!("CARGO_PKG_VERSION")).title("Reasonix"),
            )
    }

    fn session_options(&self, cwd: PathBuf, id: &str) -> SessionOptions {
        let mut options = SessionOptions::new(self.options.home.clone(), cwd);
        options.guard = self.options.guard.clone();
        options.interaction = Interaction::Interactive;
        options.scripted_calls = self.options.scripted_calls.clone();
        options.session_file = Some(self.session_file(id));
        options.session_id = Some(id.to_string());
        options
    }

    /// Open a session, register it, answer, then start forwarding its
    /// events (so no update precedes the answer that names the session).
    async fn new_session(
        self: Arc<Self>,
        request: NewSessionRequest,
        responder: Responder<NewSessionResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        if !request.mcp_servers.is_empty() {
            diagnostic("session/new: the client's mcpServers are not used (not supported yet)");
        }
        let id = crate::session::new_session_id();
        let dir = self.options.home.root().join("sessions");
        if let Err(error) = std::fs::create_dir_all(&dir) {
            return responder.respond_with_error(Error::new(
                ErrorCode::INTERNAL_ERROR,
                format!("cannot create {}: {error}", dir.display()),
            ));
        }
        let session = match Session::open(self.session_options(request.cwd, &id)).await {
            Ok(session) => session,
            Err(error) => return responder.respond_with_error(convert::session_error(&error)),
        };
        let (live, forwarder) = Live::new(&id, session, cx, self.surfaces.load(Ordering::SeqCst));
        let options = live.config_options();
        self.sessions().insert(id.clone(), live);
        responder.respond(NewSessionResponse::new(id).config_options(options))?;
        forwarder.start();
        Ok(())
    }

    /// Open a saved session: replay its transcript as updates, then answer.
    async fn load_session(
        self: Arc<Self>,
        request: LoadSessionRequest,
        responder: Responder<LoadSessionResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let id = request.session_id.0.to_string();
        if let Err(why) = vendor::check_session_id(&id) {
            return responder.respond_with_error(invalid_params(format!("sessionId: {why}")));
        }
        if self.sessions().contains_key(&id) {
            return responder.respond_with_error(Error::new(
                ErrorCode::INVALID_REQUEST,
                format!("session `{id}` is already open on this connection"),
            ));
        }
        let file = self.session_file(&id);
        if !file.is_file() {
            return responder.respond_with_error(
                Error::new(
                    ErrorCode::RESOURCE_NOT_FOUND,
                    format!(
                        "no saved session `{id}` ({} does not exist)",
                        file.display()
                    ),
                )
                .data(json!({"errorCode": "session.unknown", "sessionId": id})),
            );
        }
        let session = match Session::open(self.session_options(request.cwd, &id)).await {
            Ok(session) => session,
            Err(error) => return responder.respond_with_error(convert::session_error(&error)),
        };
        for update in convert::replay(&session.transcript(), session.workspace()) {
            cx.send_notification(SessionNotification::new(id.clone(), update))?;
        }
        let (live, forwarder) = Live::new(&id, session, cx, self.surfaces.load(Ordering::SeqCst));
        let options = live.config_options();
        self.sessions().insert(id.clone(), live);
        responder.respond(LoadSessionResponse::new().config_options(options))?;
        forwarder.start();
        Ok(())
    }

    fn set_config_option(
        &self,
        request: SetSessionConfigOptionRequest,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        let live = self.live(&request.session_id)?;
        if &*request.config_id.0 != convert::MODEL_OPTION {
            return Err(invalid_params(format!(
                "configId: unknown option `{}` (this agent has `{}`)",
                request.config_id.0,
                convert::MODEL_OPTION
            )));
        }
        let Some(model) = request.value.as_value_id() else {
            return Err(invalid_params(
                "value: the model option takes a model ref".to_string(),
            ));
        };
        live.session
            .switch_model(&model.0)
            .map_err(|e| convert::session_error(&e))?;
        Ok(SetSessionConfigOptionResponse::new(live.config_options()))
    }

    async fn close_session(self: Arc<Self>, id: &str) -> Result<(), Error> {
        let live = self.sessions().remove(id).ok_or_else(|| not_found(id))?;
        live.session.close().await;
        Ok(())
    }

    async fn reload(
        self: Arc<Self>,
        params: vendor::SessionParams,
    ) -> Result<serde_json::Value, Error> {
        let live = self.live(&SessionId::new(params.session_id.as_str()))?;
        let outcome = live.session.reload().await;
        let answer = convert::reload_answer(&outcome, live.session.generation().number);
        serde_json::to_value(answer).map_err(Error::into_internal_error)
    }

    /// The end of the connection: close every session (their turns are
    /// cancelled, their runtimes shut down).
    async fn close_all(&self) {
        let all: Vec<Arc<Live>> = self.sessions().drain().map(|(_, live)| live).collect();
        for live in all {
            live.session.close().await;
        }
    }
}

/// `_reasonix.io/session/reloadExtensions`, decoded by [`vendor`].
#[derive(Debug, Clone)]
struct ReloadExtensions(vendor::SessionParams);

impl JsonRpcMessage for ReloadExtensions {
    fn matches_method(method: &str) -> bool {
        method == vendor::RELOAD_EXTENSIONS
    }

    fn method(&self) -> &str {
        vendor::RELOAD_EXTENSIONS
    }

    fn to_untyped_message(&self) -> Result<UntypedMessage, Error> {
        UntypedMessage::new(
            vendor::RELOAD_EXTENSIONS,
            json!({"sessionId": self.0.session_id}),
        )
    }

    fn parse_message(method: &str, params: &serde_json::Value) -> Result<Self, Error> {
        if method != vendor::RELOAD_EXTENSIONS {
            return Err(Error::method_not_found());
        }
        vendor::decode_session_params(params)
            .map(ReloadExtensions)
            .map_err(|e| {
                invalid_params(format!("{method}: {e}"))
                    .data(json!({"path": e.path, "message": e.message}))
            })
    }
}

impl JsonRpcRequest for ReloadExtensions {
    type Response = serde_json::Value;
}

/// Serve ACP on `transport` until the client hangs up; then close every
/// session.
pub async fn serve(
    options: AgentOptions,
    transport: impl ConnectTo<Agent> + 'static,
) -> Result<(), Error> {
    let server = Arc::new(Server {
        options,
        surfaces: AtomicBool::new(false),
        sessions: Mutex::new(HashMap::new()),
    });
    // Each handler owns a handle on the server.
    let [
        s_init,
        s_new,
        s_load,
        s_prompt,
        s_cancel,
        s_config,
        s_close,
        s_reload,
    ] = std::array::from_fn(|_| Arc::clone(&server));
    let result = Agent
        .v1()
        .name("reasonix")
        .on_receive_request(
            async move |request: InitializeRequest,
                        responder: Responder<InitializeResponse>,
                        _cx| { responder.respond(s_init.initialize(request)) },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest,
                        responder: Responder<NewSessionResponse>,
                        cx: ConnectionTo<Client>| {
                // Opening starts sidecars: off the dispatch loop.
                tokio::spawn(Arc::clone(&s_new).new_session(request, responder, cx));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest,
                        responder: Responder<LoadSessionResponse>,
                        cx: ConnectionTo<Client>| {
                tokio::spawn(Arc::clone(&s_load).load_session(request, responder, cx));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, _cx| {
                let live = match s_prompt.live(&request.session_id) {
                    Ok(live) => live,
                    Err(error) => return responder.respond_with_error(error),
                };
                match convert::prompt_text(&request.prompt) {
                    Ok(text) => live.prompt(text, responder),
                    Err(why) => responder.respond_with_error(invalid_params(why)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx| {
                match s_cancel.live(&notification.session_id) {
                    Ok(live) => {
                        live.session.cancel();
                    }
                    Err(error) => diagnostic(&format!("session/cancel: {}", error.message)),
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: SetSessionConfigOptionRequest, responder, _cx| {
                responder.respond_with_result(s_config.set_config_option(request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: CloseSessionRequest,
                        responder: Responder<CloseSessionResponse>,
                        _cx| {
                let server = Arc::clone(&s_close);
                tokio::spawn(async move {
                    let id = request.session_id.0.to_string();
                    let result = server.close_session(&id).await;
                    responder.respond_with_result(result.map(|()| CloseSessionResponse::new()))
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReloadExtensions, responder, _cx| {
                // A reload while idle builds a generation: off the loop.
                let server = Arc::clone(&s_reload);
                tokio::spawn(async move {
                    responder.respond_with_result(server.reload(request.0).await)
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_to(transport)
        .await;
    server.close_all().await;
    result
}
