//! The session routes: a thin frontend over [`Session`], as `reasonix chat`
//! is in the terminal. A browser (or any client with the token) opens a
//! session, streams its events as Server-Sent Events, submits lines, and
//! answers the questions the session asks (tool permissions, extension
//! forms); nothing here reaches past the `Session` API.
//!
//! What a client may open: a workspace inside the directory `serve` runs in
//! (symlinks resolved), and a session file by name only, kept in
//! `$REASONIX_HOME/sessions/<name>.json`, so no request can make the server
//! read or write a file elsewhere.
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::error::{ApiError, json_body};
use super::kernel::{MAX_SESSIONS, OpenRefused};
use super::{AppState, blocking};
use crate::registry::is_valid_name;
use crate::runtime::host::ReloadOutcome;
use crate::runtime::redaction::clean_text;
use crate::runtime::ui::SurfaceUpdate;
use crate::session::{
    Answer, Interaction, MenuEntry, ScriptedCall, Session, SessionError, SessionEvent,
    SessionOptions, Status, Submitted, TurnStatus,
};

/// Most tool calls a session's echo model may be scripted to make.
pub const MAX_ECHO_CALLS: usize = 8;

pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/sessions", get(list).post(create))
        .route("/sessions/{id}", get(show).delete(close))
        .route("/sessions/{id}/events", get(events))
        .route("/sessions/{id}/input", post(input))
        .route("/sessions/{id}/answer", post(answer))
        .route("/sessions/{id}/actions", post(action))
        .route("/sessions/{id}/forms", post(form))
        .route("/sessions/{id}/cancel", post(cancel))
}

/// An open session as the routes show it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    #[serde(flatten)]
    status: Status,
    workspace: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_file: Option<String>,
}

fn view(session: &Session, file: Option<String>) -> SessionView {
    SessionView {
        status: session.status(),
        workspace: session.workspace().to_path_buf(),
        session_file: file,
    }
}

/// `GET /sessions/{id}`: the view, plus what a client renders on arrival.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionDetail {
    #[serde(flatten)]
    view: SessionView,
    models: Vec<String>,
    commands: Vec<MenuEntry>,
    /// The UI surfaces published so far (latest per surface).
    surfaces: Vec<SurfaceUpdate>,
}

// ----- ids and refusals -----

/// Session ids are `rs-…` (or what a session file recorded): checked
/// against a conservative rule before any lookup.
fn is_valid_id(id: &str, max: usize) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && id.len() <= max
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':'))
}

fn session_of(state: &AppState, id: &str) -> Result<Session, ApiError> {
    if !is_valid_id(id, 128) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "session.bad_id",
            "that is not a session id",
        )
        .detail(format!("{:?} is not a session id", clean_text(id))));
    }
    state.kernel.session(id).ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "session.not_found",
            "no open session has that id",
        )
        .detail(format!(
            "session {id} is not open here (GET /sessions lists the open ones)"
        ))
    })
}

/// A required string field: present, not blank, trimmed.
fn required(value: Option<String>, field: &str) -> Result<String, ApiError> {
    value
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| ApiError::missing_field(field))
}

/// A plugin name field, checked with the plugin name rule.
fn plugin_field(value: Option<String>) -> Result<String, ApiError> {
    let name = required(value, "plugin")?;
    if is_valid_name(&name) {
        Ok(name)
    } else {
        Err(ApiError::bad_name(&name))
    }
}

/// An action or surface id field.
fn id_field(value: Option<String>, field: &str) -> Result<String, ApiError> {
    let id = required(value, field)?;
    if is_valid_id(&id, 128) {
        Ok(id)
    } else {
        Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "request.bad_id",
            format!("{field} is not a valid id"),
        )
        .detail(format!(
            "{field} {:?} must be letters, digits, '.', '_', '-' or ':' (at most 128)",
            clean_text(&id)
        ))
        .param("field", field))
    }
}

/// A session's refusal: `code` is the session's own.
fn refusal(error: SessionError) -> ApiError {
    let status = match &error {
        SessionError::Busy | SessionError::Closed => StatusCode::CONFLICT,
        SessionError::UnknownQuestion(_) => StatusCode::NOT_FOUND,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    };
    let summary = match &error {
        SessionError::Busy => "a turn is running in this session",
        SessionError::Closed => "the session is closed",
        SessionError::UnknownQuestion(_) => "no such question is waiting",
        SessionError::UnknownCommand { .. } | SessionError::Ambiguous { .. } => {
            "the command is not known"
        }
        SessionError::Usage(_) => "the command cannot run like that",
        SessionError::UnknownModel { .. } => "that model is not available",
        SessionError::Action(_) => "the action failed",
        SessionError::Form(_) => "the form was not accepted",
        SessionError::Config(_) => "the configuration is invalid",
        SessionError::Workspace(_) => "the workspace is not a directory",
        SessionError::SessionFile(_) => "the session file cannot be read",
        SessionError::Runtime(_) => "the code-extension runtime did not start",
    };
    let mut api =
        ApiError::new(status, error.code(), summary).detail(clean_text(&error.to_string()));
    if error == SessionError::Busy {
        api = api.param(
            "next",
            "retry once the turn ends (its turn_ended event on GET /sessions/{id}/events), or cancel it with POST /sessions/{id}/cancel",
        );
    }
    api
}

// ----- create, list, show, close -----

/// The body of `POST /sessions`; every field is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateBody {
    /// A directory inside the one `serve` runs in (relative to it, or
    /// absolute); default: that directory.
    workspace: Option<String>,
    /// A session file name (the plugin name rule): continued if it exists
    /// in `$REASONIX_HOME/sessions/`, written after every turn.
    session_file: Option<String>,
    /// `echo` or `plugin/<plugin>/<provider>/<model>`.
    model: Option<String>,
    read_only: Option<bool>,
    /// Tool calls the built-in echo model makes in every turn (as
    /// `reasonix chat --call`); each is still subject to permissions.
    echo_calls: Option<Vec<EchoCall>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EchoCall {
    name: Option<String>,
    arguments: Option<Map<String, Value>>,
}

/// The workspace a request names, or why it may not be opened.
fn workspace_of(root: &Path, requested: Option<&str>) -> Result<PathBuf, ApiError> {
    let missing = |path: &Path, why: String| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "session.workspace_missing",
            "the workspace is not a directory",
        )
        .detail(format!("{}: {why}", path.display()))
    };
    let root = std::fs::canonicalize(root).map_err(|e| missing(root, e.to_string()))?;
    let wanted = match requested.map(str::trim).filter(|w| !w.is_empty()) {
        None => root.clone(),
        Some(w) if w.chars().any(char::is_control) => {
            return Err(ApiError::bad_body("workspace: control characters"));
        }
        Some(w) => root.join(w),
    };
    let resolved = std::fs::canonicalize(&wanted).map_err(|e| missing(&wanted, e.to_string()))?;
    if !resolved.starts_with(&root) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "session.workspace_not_allowed",
            "that workspace is outside the directory reasonix serve runs in",
        )
        .detail(format!(
            "{} is not inside {} (start `reasonix serve` in a directory that contains it)",
            resolved.display(),
            root.display()
        )));
    }
    if !resolved.is_dir() {
        return Err(missing(&resolved, "not a directory".into()));
    }
    Ok(resolved)
}

fn echo_calls(calls: Option<Vec<EchoCall>>) -> Result<Vec<ScriptedCall>, ApiError> {
    let calls = calls.unwrap_or_default();
    if calls.len() > MAX_ECHO_CALLS {
        return Err(
            ApiError::bad_body(format!("echoCalls: at most {MAX_ECHO_CALLS} calls"))
                .param("limit", MAX_ECHO_CALLS),
        );
    }
    calls
        .into_iter()
        .enumerate()
        .map(|(i, call)| {
            Ok(ScriptedCall {
                name: required(call.name, &format!("echoCalls[{i}].name"))?,
                arguments: Value::Object(call.arguments.unwrap_or_default()).to_string(),
            })
        })
        .collect()
}

/// `POST /sessions` → 201 with the session's view.
async fn create(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, Json<SessionView>), ApiError> {
    let body: CreateBody = json_body(&headers, body).await?;
    let file = match body.session_file.map(|f| f.trim().to_string()) {
        Some(name) if !is_valid_name(&name) => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "session.bad_file_name",
                "a session file is named like a plugin",
            )
            .detail(format!(
                "{:?} does not match ^[a-zA-Z0-9][a-zA-Z0-9._-]{{0,63}}$; it is stored as $REASONIX_HOME/sessions/<name>.json",
                clean_text(&name)
            )));
        }
        other => other,
    };
    let model = body
        .model
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty());
    let calls = echo_calls(body.echo_calls)?;
    let root = state.sources.workspace.clone();
    let requested = body.workspace.clone();
    let workspace = blocking(move || workspace_of(&root, requested.as_deref())).await??;
    let home = state.kernel.home().clone();
    let session_file = match &file {
        Some(name) => {
            let dir = home.root().join("sessions");
            let made = dir.clone();
            blocking(move || std::fs::create_dir_all(&made))
                .await?
                .map_err(|e| {
                    ApiError::new(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "session.io",
                        "the sessions directory cannot be made",
                    )
                    .detail(format!("{}: {e}", dir.display()))
                })?;
            Some(dir.join(format!("{name}.json")))
        }
        None => None,
    };
    let mut options = SessionOptions::new(home, workspace);
    options.session_file = session_file;
    options.model = model.clone();
    options.read_only = body.read_only.unwrap_or(false);
    options.scripted_calls = calls;
    options.interaction = Interaction::Interactive;
    let session = state
        .kernel
        .open(options, file.clone())
        .await
        .map_err(|refused| match refused {
            OpenRefused::Limit => ApiError::new(
                StatusCode::CONFLICT,
                "session.limit",
                format!("{MAX_SESSIONS} sessions are open already"),
            )
            .detail(format!(
                "at most {MAX_SESSIONS} sessions are open at once; close one (DELETE /sessions/{{id}}) first"
            ))
            .param("limit", MAX_SESSIONS),
            OpenRefused::FileInUse(name) => ApiError::new(
                StatusCode::CONFLICT,
                "session.file_in_use",
                "another open session uses that session file",
            )
            .detail(format!("session file {name:?} is open in another session")),
            OpenRefused::Stopping => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "server.stopping",
                "the server is stopping",
            ),
            OpenRefused::Session(error) => refusal(error),
        })?;
    // A model the session cannot serve is refused now, not at the first turn.
    if let Some(model) = model
        && let Err(error) = session.switch_model(&model)
    {
        let _write = state.writes.lock().await;
        state.kernel.close(&session.session_id()).await;
        return Err(refusal(error));
    }
    Ok((StatusCode::CREATED, Json(view(&session, file))))
}

#[derive(Debug, Serialize)]
pub struct SessionList {
    sessions: Vec<SessionView>,
}

/// `GET /sessions` → `{sessions: [...]}`.
async fn list(State(state): State<Arc<AppState>>) -> Json<SessionList> {
    Json(SessionList {
        sessions: state
            .kernel
            .list()
            .into_iter()
            .map(|(session, file)| view(&session, file))
            .collect(),
    })
}

/// `GET /sessions/{id}`.
async fn show(
    State(state): State<Arc<AppState>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<SessionDetail>, ApiError> {
    let session = session_of(&state, &id)?;
    Ok(Json(SessionDetail {
        view: view(&session, state.kernel.file_of(&id)),
        models: session.models(),
        commands: session.commands(),
        surfaces: session.surfaces(),
    }))
}

/// `DELETE /sessions/{id}`: cancel its turn, run SessionEnd, shut its
/// sidecars down, forget it.
async fn close(
    State(state): State<Arc<AppState>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Value>, ApiError> {
    session_of(&state, &id)?;
    // Never while a reload of it runs.
    let _write = state.writes.lock().await;
    if !state.kernel.close(&id).await {
        return Err(session_of(&state, &id)
            .err()
            .unwrap_or_else(|| ApiError::internal("the session could not be closed")));
    }
    Ok(Json(json!({ "sessionId": id, "closed": true })))
}

// ----- events -----

/// One event as SSE: its `type` is the event name, the event (with its
/// `type` first, fields in their declared order) the data, on one line.
fn sse_event(event: &SessionEvent) -> Event {
    #[derive(Deserialize)]
    struct Tag<'a> {
        #[serde(rename = "type", borrow)]
        kind: &'a str,
    }
    let data = serde_json::to_string(event).unwrap_or_else(|e| {
        json!({"type": "warning", "source": "serve", "message": format!("an event could not be encoded: {e}")})
            .to_string()
    });
    let name = serde_json::from_str::<Tag>(&data)
        .map(|t| t.kind.to_string())
        .unwrap_or_else(|_| "warning".into());
    Event::default().event(name).data(data)
}

/// `GET /sessions/{id}/events`: every event from now on, the first being
/// `opened`; the stream ends after `closed`, or when the server stops.
async fn events(
    State(state): State<Arc<AppState>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let session = session_of(&state, &id)?;
    let receiver = session.subscribe();
    let stopping = state.kernel.stopping();
    let stream = futures::stream::unfold(
        (receiver, stopping, false),
        |(mut receiver, stopping, done)| async move {
            if done {
                return None;
            }
            // Biased: events already sent (a stopping server closes its
            // sessions first, so `closed` is among them) go out before the
            // stop ends the stream.
            let event = tokio::select! {
                biased;
                event = receiver.recv() => event?,
                () = stopping.cancelled() => return None,
            };
            let closed = matches!(event, SessionEvent::Closed);
            Some((Ok(sse_event(&event)), (receiver, stopping, closed)))
        },
    );
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

// ----- input, answers, actions, forms, cancel -----

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputBody {
    line: Option<String>,
}

/// What one input did.
#[derive(Debug, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
enum InputAnswer {
    /// A turn ran (its events went to the stream): how it ended.
    Turn {
        status: TurnStatus,
        generation: u64,
        model: String,
        #[serde(rename = "prefixHash")]
        prefix_hash: String,
    },
    /// A slash command that is not a turn.
    Command {
        command: String,
        text: String,
    },
    Reload {
        outcome: ReloadOutcome,
    },
}

/// `POST /sessions/{id}/input` `{line}`: a line or a slash command. Answers
/// when it is done (a turn's events stream meanwhile); 409 `session.busy`
/// while a turn runs.
async fn input(
    State(state): State<Arc<AppState>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<InputAnswer>, ApiError> {
    let session = session_of(&state, &id)?;
    let body: InputBody = json_body(&headers, body).await?;
    let line = body
        .line
        .filter(|l| !l.trim().is_empty())
        .ok_or_else(|| ApiError::missing_field("line"))?;
    // A slash command waits for no turn gate: refuse it here, as a turn is.
    if session.status().busy {
        return Err(refusal(SessionError::Busy));
    }
    let answer = match session.submit(&line).await.map_err(refusal)? {
        Submitted::Turn { report } => InputAnswer::Turn {
            status: report.status,
            generation: report.generation,
            model: report.model,
            prefix_hash: report.prefix_hash,
        },
        Submitted::Command { command, text } => InputAnswer::Command { command, text },
        Submitted::Reload { outcome } => InputAnswer::Reload { outcome },
    };
    Ok(Json(answer))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerBody {
    question: Option<String>,
    /// A permission: allow or deny.
    allow: Option<bool>,
    /// With `allow`: for the rest of the session.
    always: Option<bool>,
    /// A form: its values.
    values: Option<BTreeMap<String, Value>>,
    /// A form: dismissed.
    cancel: Option<bool>,
}

/// `POST /sessions/{id}/answer`: answer a `question` event.
/// `{question, allow, always?}` for a permission, `{question, values}` or
/// `{question, cancel: true}` for a form.
async fn answer(
    State(state): State<Arc<AppState>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let session = session_of(&state, &id)?;
    let body: AnswerBody = json_body(&headers, body).await?;
    let question = required(body.question, "question")?;
    let well_formed = question.len() <= 21
        && question
            .strip_prefix('q')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if !well_formed {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "question.bad_id",
            "that is not a question id",
        )
        .detail(format!(
            "{:?} is not a question id (q1, q2, … from a question event)",
            clean_text(&question)
        )));
    }
    let reply = match (body.allow, body.values, body.cancel) {
        (Some(allow), None, None) => Answer::Permission {
            allow,
            always: allow && body.always.unwrap_or(false),
        },
        (None, Some(values), None) if body.always.is_none() => Answer::Form {
            values: Some(values),
        },
        (None, None, Some(true)) if body.always.is_none() => Answer::Form { values: None },
        _ => {
            return Err(ApiError::bad_body(
                "answer with exactly one of: allow (a permission, with always?), values (a form) or cancel: true (a form)",
            ));
        }
    };
    session.answer(&question, reply).map_err(refusal)?;
    Ok(Json(json!({ "question": question, "answered": true })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionBody {
    plugin: Option<String>,
    action: Option<String>,
    args: Option<BTreeMap<String, String>>,
}

/// `POST /sessions/{id}/actions` `{plugin, action, args?}`: a UI action
/// (a card's button) → `{plugin, action, message?}`.
async fn action(
    State(state): State<Arc<AppState>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let session = session_of(&state, &id)?;
    let body: ActionBody = json_body(&headers, body).await?;
    let plugin = plugin_field(body.plugin)?;
    let action = id_field(body.action, "action")?;
    let message = session
        .invoke_action(&plugin, &action, body.args.unwrap_or_default())
        .await
        .map_err(refusal)?;
    let mut answer = json!({ "plugin": plugin, "action": action });
    if let Some(message) = message {
        answer["message"] = Value::String(clean_text(&message));
    }
    Ok(Json(answer))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FormBody {
    plugin: Option<String>,
    surface_id: Option<String>,
    values: Option<BTreeMap<String, Value>>,
}

/// `POST /sessions/{id}/forms` `{plugin, surfaceId, values}`: submit a
/// published form.
async fn form(
    State(state): State<Arc<AppState>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let session = session_of(&state, &id)?;
    let body: FormBody = json_body(&headers, body).await?;
    let plugin = plugin_field(body.plugin)?;
    let surface = id_field(body.surface_id, "surfaceId")?;
    let values = body
        .values
        .ok_or_else(|| ApiError::missing_field("values"))?;
    session
        .submit_form(&plugin, &surface, values)
        .await
        .map_err(refusal)?;
    Ok(Json(
        json!({ "plugin": plugin, "surfaceId": surface, "submitted": true }),
    ))
}

/// `POST /sessions/{id}/cancel` → `{cancelled}` (false: no turn ran).
async fn cancel(
    State(state): State<Arc<AppState>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Value>, ApiError> {
    let session = session_of(&state, &id)?;
    Ok(Json(json!({ "cancelled": session.cancel() })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        for ok in ["rs-1a2b", "q1", "status-ui.card", "a:b", &"x".repeat(128)] {
            assert!(is_valid_id(ok, 128), "{ok}");
        }
        for bad in [
            "",
            "-x",
            ".x",
            "a b",
            "a/b",
            "../x",
            "a\u{1b}",
            &"x".repeat(129),
        ] {
            assert!(!is_valid_id(bad, 128), "{bad:?}");
        }
    }

    #[test]
    fn workspaces_stay_inside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("proj/sub")).unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        std::fs::write(root.join("file.txt"), "x").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.path().join("outside"), root.join("escape")).unwrap();
        let canon = std::fs::canonicalize(&root).unwrap();
        assert_eq!(workspace_of(&root, None).unwrap(), canon);
        assert_eq!(workspace_of(&root, Some("  ")).unwrap(), canon);
        assert_eq!(
            workspace_of(&root, Some("proj/sub")).unwrap(),
            canon.join("proj/sub")
        );
        assert_eq!(
            workspace_of(&root, Some(canon.join("proj").to_str().unwrap())).unwrap(),
            canon.join("proj")
        );
        for outside in ["..", "../outside", "escape", "/"] {
            assert_eq!(
                workspace_of(&root, Some(outside)).unwrap_err().code,
                "session.workspace_not_allowed",
                "{outside}"
            );
        }
        for missing in ["nope", "file.txt"] {
            assert_eq!(
                workspace_of(&root, Some(missing)).unwrap_err().code,
                "session.workspace_missing",
                "{missing}"
            );
        }
    }
}
