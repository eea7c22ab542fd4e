//! The structured-UI hub (spec §10): the host side of `host/ui/publish` and
//! `host/ui/request`, and the registry of `/<plugin>:<action>` actions.
//!
//! Every update is tagged with plugin, surface, session and generation. Only
//! the current binding (the published generation and the live session) is
//! accepted; anything else is dropped as stale. Every string an extension
//! supplies is credential-redacted and reduced to plain text (control
//! characters removed) before the hub stores it, so no renderer ever sees
//! markup it could interpret: frontends render these strings as text.

pub mod payloads;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

pub use payloads::{FormPayload, PublishKind, RequestKind, UiPayload};

use super::UiActionDeclaration;
use super::redaction::clean_text;

/// `^[a-z0-9-]+$`, the shape of a UI action id.
pub fn is_valid_action_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// The generation and session UI traffic must name to be accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiBinding {
    pub session_id: String,
    pub generation: u64,
}

/// Why the hub refused a call; maps one-to-one onto protocol error reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UiRejectReason {
    /// The plugin is not part of the current generation.
    Internal,
    /// The plugin's runtime crashed.
    ProviderInterrupted,
    /// The payload does not decode as its kind.
    InvalidParams,
    /// This host has no interactive UI to ask.
    UnknownMethod,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct UiRejection {
    pub reason: UiRejectReason,
    pub message: String,
}

/// The params of `host/ui/publish` / `host/ui/request` as the hub needs them.
#[derive(Debug, Clone, Copy)]
pub struct UiCall<'a> {
    pub surface_id: &'a str,
    pub session_id: &'a str,
    pub generation: u64,
    pub kind: &'a str,
    pub payload: &'a RawValue,
}

/// One accepted update, as frontends receive it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SurfaceUpdate {
    pub plugin: String,
    pub surface_id: String,
    pub session_id: String,
    pub generation: u64,
    pub kind: PublishKind,
    pub payload: UiPayload,
}

/// A `host/ui/request` the hub saw, and how it was answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiRequestRecord {
    pub plugin: String,
    pub surface_id: String,
    pub kind: RequestKind,
    pub form: FormPayload,
    pub answer: UiRequestAnswer,
}

/// The result of `host/ui/request`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiRequestAnswer {
    pub cancelled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<BTreeMap<String, Value>>,
}

/// A UI action as the slash menu shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiActionEntry {
    /// `/<plugin>:<action>`.
    pub command: String,
    pub plugin: String,
    pub action_id: String,
    pub label: Option<String>,
}

/// A plugin of the generation being bound, with its declared actions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UiMember {
    pub plugin: String,
    pub actions: Vec<UiActionDeclaration>,
}

/// How the host answers `host/ui/request`.
#[derive(Debug, Clone)]
pub enum UiAnswers {
    /// No interactive UI: requests answer `unknown_method` (spec §10).
    Headless,
    /// Answer every field from this map (key → value); a form with a field
    /// the map lacks is answered `cancelled:true`. Used by scripted turns.
    Scripted(BTreeMap<String, Value>),
    /// The attached [`UiFrontend`] asks its user (a live session).
    Frontend,
}

/// A future answer from a frontend.
pub type AnswerFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = UiRequestAnswer> + Send>>;

/// The live side of the hub: told about every accepted surface update, and
/// asked the forms of `host/ui/request` when the hub answers through it.
pub trait UiFrontend: Send + Sync {
    fn surface(&self, update: &SurfaceUpdate);
    fn ask(
        &self,
        plugin: &str,
        surface_id: &str,
        kind: RequestKind,
        form: FormPayload,
    ) -> AnswerFuture;
}

#[derive(Debug, Default)]
struct PluginUi {
    crashed: bool,
}

#[derive(Debug)]
struct HubState {
    binding: Option<UiBinding>,
    plugins: BTreeMap<String, PluginUi>,
    actions: Vec<UiActionEntry>,
    updates: Vec<SurfaceUpdate>,
    requests: Vec<UiRequestRecord>,
    dropped_stale: u64,
}

/// The hub. One per host; it is re-bound at every generation swap.
pub struct UiHub {
    answers: UiAnswers,
    frontend: Option<Arc<dyn UiFrontend>>,
    state: Mutex<HubState>,
}

impl std::fmt::Debug for UiHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UiHub")
            .field("answers", &self.answers)
            .field("frontend", &self.frontend.is_some())
            .finish()
    }
}

/// What a gated, decoded request still needs.
enum Pending {
    Answered(UiRequestAnswer),
    Ask {
        frontend: Arc<dyn UiFrontend>,
        record: UiRequestRecord,
    },
}

impl UiHub {
    pub fn new(answers: UiAnswers) -> UiHub {
        UiHub {
            answers,
            frontend: None,
            state: Mutex::new(HubState {
                binding: None,
                plugins: BTreeMap::new(),
                actions: Vec::new(),
                updates: Vec::new(),
                requests: Vec::new(),
                dropped_stale: 0,
            }),
        }
    }

    /// A hub that tells `frontend` about every accepted update (and, with
    /// [`UiAnswers::Frontend`], asks it the forms of `host/ui/request`).
    pub fn with_frontend(answers: UiAnswers, frontend: Arc<dyn UiFrontend>) -> UiHub {
        UiHub {
            frontend: Some(frontend),
            ..UiHub::new(answers)
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, HubState> {
        // A panic while holding the lock leaves plain data behind; keep going.
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Make `binding` current with these plugins (and their declared actions)
    /// as the only members. Called when a generation is published.
    pub fn bind(&self, binding: UiBinding, plugins: &[UiMember]) {
        let mut state = self.state();
        state.binding = Some(binding);
        state.plugins = plugins
            .iter()
            .map(|member| (member.plugin.clone(), PluginUi::default()))
            .collect();
        state.actions = plugins
            .iter()
            .flat_map(|member| {
                member
                    .actions
                    .iter()
                    .filter(|action| is_valid_action_id(&action.action_id))
                    .map(move |action| UiActionEntry {
                        command: format!("/{}:{}", member.plugin, action.action_id),
                        plugin: member.plugin.clone(),
                        action_id: action.action_id.clone(),
                        label: action.label.as_deref().map(clean_text),
                    })
            })
            .collect();
        state.actions.sort_by(|a, b| a.command.cmp(&b.command));
    }

    /// The current binding, if a generation is published.
    pub fn binding(&self) -> Option<UiBinding> {
        self.state().binding.clone()
    }

    /// Record that `plugin`'s runtime crashed: its UI calls now fail.
    pub fn mark_crashed(&self, plugin: &str) {
        if let Some(entry) = self.state().plugins.get_mut(plugin) {
            entry.crashed = true;
        }
    }

    /// The actions of the current generation, sorted by command.
    pub fn actions(&self) -> Vec<UiActionEntry> {
        self.state().actions.clone()
    }

    /// Find the action behind `/<plugin>:<action>`.
    pub fn resolve_action(&self, command: &str) -> Option<UiActionEntry> {
        self.state()
            .actions
            .iter()
            .find(|entry| entry.command == command)
            .cloned()
    }

    /// Every accepted update, in arrival order.
    pub fn updates(&self) -> Vec<SurfaceUpdate> {
        self.state().updates.clone()
    }

    /// Every request the hub answered, in arrival order.
    pub fn requests(&self) -> Vec<UiRequestRecord> {
        self.state().requests.clone()
    }

    /// How many stale publishes/requests were dropped.
    pub fn dropped_stale(&self) -> u64 {
        self.state().dropped_stale
    }

    /// The latest update per (plugin, surface), in first-seen order: what a
    /// frontend shows now.
    pub fn surfaces(&self) -> Vec<SurfaceUpdate> {
        let state = self.state();
        let mut latest: Vec<SurfaceUpdate> = Vec::new();
        for update in &state.updates {
            match latest
                .iter_mut()
                .find(|u| u.plugin == update.plugin && u.surface_id == update.surface_id)
            {
                Some(slot) => *slot = update.clone(),
                None => latest.push(update.clone()),
            }
        }
        latest
    }

    /// Gate order of spec §10: unknown plugin, crashed plugin, stale binding,
    /// then the payload. `Ok(false)` = dropped as stale.
    fn gate(
        &self,
        state: &mut HubState,
        plugin: &str,
        call: &UiCall<'_>,
    ) -> Result<bool, UiRejection> {
        // UI from a staged generation (built, not yet published) is stale
        // even when its plugin is new to the hub; before the first publish
        // every generation is staged.
        let staged = state
            .binding
            .as_ref()
            .is_none_or(|binding| call.generation > binding.generation);
        if staged {
            state.dropped_stale += 1;
            return Ok(false);
        }
        let Some(entry) = state.plugins.get(plugin) else {
            return Err(UiRejection {
                reason: UiRejectReason::Internal,
                message: format!("plugin {plugin:?} is not part of the running generation"),
            });
        };
        if entry.crashed {
            return Err(UiRejection {
                reason: UiRejectReason::ProviderInterrupted,
                message: format!("plugin {plugin:?} crashed"),
            });
        }
        let current = state.binding.as_ref().is_some_and(|binding| {
            binding.generation == call.generation && binding.session_id == call.session_id
        });
        if !current {
            state.dropped_stale += 1;
        }
        Ok(current)
    }

    /// `host/ui/publish`: `Ok(true)` accepted, `Ok(false)` stale (dropped).
    pub fn publish(&self, plugin: &str, call: UiCall<'_>) -> Result<bool, UiRejection> {
        let mut state = self.state();
        if !self.gate(&mut state, plugin, &call)? {
            return Ok(false);
        }
        let kind = PublishKind::parse(call.kind).ok_or_else(|| {
            invalid(format!(
                "kind: {:?} is not one of status, card, form, notification, panel, view",
                clean_text(call.kind)
            ))
        })?;
        let mut payload = payloads::decode_publish(kind, call.payload)
            .map_err(|e| invalid(format!("payload ({}): {}", kind.as_str(), clean_text(&e))))?;
        payloads::clean_payload(&mut payload, &clean_text);
        let update = SurfaceUpdate {
            plugin: plugin.to_string(),
            surface_id: clean_text(call.surface_id),
            session_id: call.session_id.to_string(),
            generation: call.generation,
            kind,
            payload,
        };
        state.updates.push(update.clone());
        drop(state);
        if let Some(frontend) = &self.frontend {
            frontend.surface(&update);
        }
        Ok(true)
    }

    /// `host/ui/request`. A stale binding answers `cancelled:true`. With a
    /// live frontend this waits for the user's answer.
    pub async fn request_async(
        &self,
        plugin: &str,
        call: UiCall<'_>,
    ) -> Result<UiRequestAnswer, UiRejection> {
        match self.prepare(plugin, call)? {
            Pending::Answered(answer) => Ok(answer),
            Pending::Ask { frontend, record } => {
                let answer = frontend
                    .ask(
                        &record.plugin,
                        &record.surface_id,
                        record.kind,
                        record.form.clone(),
                    )
                    .await;
                Ok(self.answered(record, answer))
            }
        }
    }

    /// [`UiHub::request_async`] for callers that cannot await (a wasm
    /// guest's synchronous import): blocks this thread for the answer.
    pub fn request(&self, plugin: &str, call: UiCall<'_>) -> Result<UiRequestAnswer, UiRejection> {
        match self.prepare(plugin, call)? {
            Pending::Answered(answer) => Ok(answer),
            Pending::Ask { frontend, record } => {
                let answer = block_on(frontend.ask(
                    &record.plugin,
                    &record.surface_id,
                    record.kind,
                    record.form.clone(),
                ));
                Ok(self.answered(record, answer))
            }
        }
    }

    fn answered(&self, mut record: UiRequestRecord, answer: UiRequestAnswer) -> UiRequestAnswer {
        record.answer = answer.clone();
        self.state().requests.push(record);
        answer
    }

    fn prepare(&self, plugin: &str, call: UiCall<'_>) -> Result<Pending, UiRejection> {
        let mut state = self.state();
        if !self.gate(&mut state, plugin, &call)? {
            return Ok(Pending::Answered(UiRequestAnswer {
                cancelled: true,
                values: None,
            }));
        }
        let kind = RequestKind::parse(call.kind).ok_or_else(|| {
            invalid(format!(
                "kind: {:?} is not one of confirm, input, select, multiselect",
                clean_text(call.kind)
            ))
        })?;
        let mut form = payloads::decode_request(call.payload)
            .map_err(|e| invalid(format!("payload (form): {}", clean_text(&e))))?;
        payloads::clean_form(&mut form, &clean_text);
        let mut record = UiRequestRecord {
            plugin: plugin.to_string(),
            surface_id: clean_text(call.surface_id),
            kind,
            form,
            answer: UiRequestAnswer {
                cancelled: true,
                values: None,
            },
        };
        let answer = match &self.answers {
            UiAnswers::Headless => {
                return Err(UiRejection {
                    reason: UiRejectReason::UnknownMethod,
                    message: "this host has no interactive UI".to_string(),
                });
            }
            UiAnswers::Frontend => {
                let Some(frontend) = &self.frontend else {
                    return Err(UiRejection {
                        reason: UiRejectReason::UnknownMethod,
                        message: "this host has no interactive UI".to_string(),
                    });
                };
                return Ok(Pending::Ask {
                    frontend: Arc::clone(frontend),
                    record,
                });
            }
            UiAnswers::Scripted(values) => {
                let picked: Option<BTreeMap<String, Value>> = record
                    .form
                    .fields
                    .iter()
                    .map(|field| {
                        values
                            .get(&field.key)
                            .map(|v| (field.key.clone(), v.clone()))
                    })
                    .collect();
                match picked {
                    Some(values) => UiRequestAnswer {
                        cancelled: false,
                        values: Some(values),
                    },
                    None => UiRequestAnswer {
                        cancelled: true,
                        values: None,
                    },
                }
            }
        };
        record.answer = answer.clone();
        state.requests.push(record);
        Ok(Pending::Answered(answer))
    }
}

/// Drive `future` to completion on this thread (no runtime needed: the
/// answer arrives from another thread through a channel).
fn block_on<T>(future: std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>) -> T {
    struct ThreadWaker(std::thread::Thread);
    impl std::task::Wake for ThreadWaker {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut context = std::task::Context::from_waker(&waker);
    let mut future = future;
    loop {
        if let std::task::Poll::Ready(value) = future.as_mut().poll(&mut context) {
            return value;
        }
        std::thread::park();
    }
}

fn invalid(message: String) -> UiRejection {
    UiRejection {
        reason: UiRejectReason::InvalidParams,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_string()).unwrap()
    }

    fn hub(answers: UiAnswers) -> UiHub {
        let hub = UiHub::new(answers);
        hub.bind(
            UiBinding {
                session_id: "s1".into(),
                generation: 2,
            },
            &[UiMember {
                plugin: "status-ui".into(),
                actions: vec![
                    UiActionDeclaration {
                        action_id: "refresh".into(),
                        label: Some("Refresh".into()),
                    },
                    UiActionDeclaration {
                        action_id: "Not Valid".into(),
                        label: None,
                    },
                ],
            }],
        );
        hub
    }

    fn call<'a>(
        generation: u64,
        session: &'a str,
        kind: &'a str,
        payload: &'a RawValue,
    ) -> UiCall<'a> {
        UiCall {
            surface_id: "main",
            session_id: session,
            generation,
            kind,
            payload,
        }
    }

    #[test]
    fn accepted_update_is_tagged_and_stale_ones_are_dropped() {
        let hub = hub(UiAnswers::Headless);
        let payload = raw(r#"{"label":"indexing"}"#);
        assert_eq!(
            hub.publish("status-ui", call(2, "s1", "status", &payload)),
            Ok(true)
        );
        assert_eq!(
            hub.publish("status-ui", call(1, "s1", "status", &payload)),
            Ok(false)
        );
        assert_eq!(
            hub.publish("status-ui", call(2, "other", "status", &payload)),
            Ok(false)
        );
        assert_eq!(hub.dropped_stale(), 2);
        let updates = hub.updates();
        assert_eq!(updates.len(), 1);
        assert_eq!(updates[0].plugin, "status-ui");
        assert_eq!(updates[0].surface_id, "main");
        assert_eq!(updates[0].session_id, "s1");
        assert_eq!(updates[0].generation, 2);
    }

    #[test]
    fn gate_order_unknown_then_crashed_then_payload() {
        let hub = hub(UiAnswers::Headless);
        let bad = raw(r#"{"nope":1}"#);
        let unknown = hub
            .publish("ghost", call(2, "s1", "status", &bad))
            .unwrap_err();
        assert_eq!(unknown.reason, UiRejectReason::Internal);
        // A plugin of a staged generation is not known yet: dropped as stale.
        assert_eq!(
            hub.publish("ghost", call(3, "s1", "status", &bad)),
            Ok(false)
        );
        let invalid = hub
            .publish("status-ui", call(2, "s1", "status", &bad))
            .unwrap_err();
        assert_eq!(invalid.reason, UiRejectReason::InvalidParams);
        let bad_kind = hub
            .publish("status-ui", call(2, "s1", "html", &bad))
            .unwrap_err();
        assert_eq!(bad_kind.reason, UiRejectReason::InvalidParams);
        hub.mark_crashed("status-ui");
        let crashed = hub
            .publish("status-ui", call(2, "s1", "status", &bad))
            .unwrap_err();
        assert_eq!(crashed.reason, UiRejectReason::ProviderInterrupted);
    }

    #[test]
    fn stale_request_is_cancelled_and_headless_request_is_unknown_method() {
        let hub = hub(UiAnswers::Headless);
        let form = raw(r#"{"fields":[{"key":"value","kind":"confirm"}]}"#);
        let stale = hub
            .request("status-ui", call(9, "s1", "confirm", &form))
            .unwrap();
        assert!(stale.cancelled);
        let headless = hub
            .request("status-ui", call(2, "s1", "confirm", &form))
            .unwrap_err();
        assert_eq!(headless.reason, UiRejectReason::UnknownMethod);
    }

    #[test]
    fn scripted_answers_fill_every_field_or_cancel() {
        let mut answers = BTreeMap::new();
        answers.insert("value".to_string(), Value::Bool(true));
        let hub = hub(UiAnswers::Scripted(answers));
        let form = raw(r#"{"fields":[{"key":"value","kind":"confirm"}]}"#);
        let answer = hub
            .request("status-ui", call(2, "s1", "confirm", &form))
            .unwrap();
        assert!(!answer.cancelled);
        assert_eq!(answer.values.unwrap()["value"], Value::Bool(true));
        let form = raw(r#"{"fields":[{"key":"name","kind":"input"}]}"#);
        let answer = hub
            .request("status-ui", call(2, "s1", "input", &form))
            .unwrap();
        assert!(answer.cancelled);
        assert_eq!(hub.requests().len(), 2);
    }

    #[test]
    fn actions_are_namespaced_and_invalid_ids_are_not_exposed() {
        let hub = hub(UiAnswers::Headless);
        let actions = hub.actions();
        assert_eq!(actions.len(), 1);
        assert_eq!(actions[0].command, "/status-ui:refresh");
        assert!(hub.resolve_action("/status-ui:refresh").is_some());
        assert!(hub.resolve_action("/status-ui:Not Valid").is_none());
        assert!(is_valid_action_id("a-1"));
        for bad in ["", "A", "a_b", "a b", "é"] {
            assert!(!is_valid_action_id(bad), "{bad}");
        }
    }

    #[test]
    fn text_is_redacted_and_control_characters_removed() {
        let hub = hub(UiAnswers::Headless);
        let payload = raw(
            r#"{"title":"\u001b[31mred\u001b[0m","body":"key sk-abcdefghijklmnopqrstuvwxyz0123456789 <script>x</script>"}"#,
        );
        assert_eq!(
            hub.publish("status-ui", call(2, "s1", "notification", &payload)),
            Ok(true)
        );
        let UiPayload::Notification(note) = &hub.updates()[0].payload else {
            panic!("not a notification")
        };
        assert!(!note.title.contains('\u{1b}'), "{:?}", note.title);
        let body = note.body.as_deref().unwrap();
        assert!(
            !body.contains("sk-abcdefghijklmnopqrstuvwxyz0123456789"),
            "{body}"
        );
        // Markup stays as inert text: frontends render strings as text.
        assert!(body.contains("<script>x</script>"), "{body}");
    }

    #[test]
    fn surfaces_keep_the_latest_update_per_surface() {
        let hub = hub(UiAnswers::Headless);
        for label in ["one", "two"] {
            let payload = raw(&format!(r#"{{"label":"{label}"}}"#));
            hub.publish("status-ui", call(2, "s1", "status", &payload))
                .unwrap();
        }
        let surfaces = hub.surfaces();
        assert_eq!(surfaces.len(), 1);
        assert_eq!(
            surfaces[0].payload,
            UiPayload::Status(payloads::StatusPayload {
                label: "two".into(),
                detail: None,
                severity: None,
                progress: None
            })
        );
    }
}
