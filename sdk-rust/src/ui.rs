//! Structured UI on the host: the payload DTOs of §10 and the publish /
//! request helpers (`host/ui/publish`, `host/ui/request`).

use crate::error::Error;
use crate::host::Context;
use reasonix_protocol::types::{
    RawJson, UIPublishParams, UIRequestKind, UIRequestParams, UISurfaceKind, UiValues,
};
use serde::{Deserialize, Serialize};

/// Severity of a status or notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warn,
    Error,
}

/// `status` payload: a one-line indicator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Status {
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<f64>,
}

impl Status {
    pub fn new(label: impl Into<String>) -> Self {
        Status {
            label: label.into(),
            ..Status::default()
        }
    }
    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = Some(severity);
        self
    }
    pub fn progress(mut self, progress: f64) -> Self {
        self.progress = Some(progress);
        self
    }
}

/// A key/value line of a card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardField {
    pub key: String,
    #[serde(default)]
    pub value: String,
}

/// A button on a card that invokes one of the extension's UI actions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CardAction {
    pub action_id: String,
    pub label: String,
}

/// `card` payload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Card {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<CardField>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<CardAction>,
}

impl Card {
    pub fn new(title: impl Into<String>) -> Self {
        Card {
            title: Some(title.into()),
            ..Card::default()
        }
    }
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }
    pub fn markdown(mut self, markdown: impl Into<String>) -> Self {
        self.markdown = Some(markdown.into());
        self
    }
    pub fn field(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.fields.push(CardField {
            key: key.into(),
            value: value.into(),
        });
        self
    }
    pub fn progress(mut self, progress: f64) -> Self {
        self.progress = Some(progress);
        self
    }
    pub fn action(mut self, action_id: impl Into<String>, label: impl Into<String>) -> Self {
        self.actions.push(CardAction {
            action_id: action_id.into(),
            label: label.into(),
        });
        self
    }
}

/// The kind of a form field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldKind {
    Confirm,
    Input,
    Select,
    Multiselect,
}

/// One question of a form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FormField {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub kind: FieldKind,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
}

impl FormField {
    pub fn new(key: impl Into<String>, kind: FieldKind) -> Self {
        FormField {
            key: key.into(),
            label: None,
            kind,
            options: Vec::new(),
            default: None,
            required: false,
        }
    }
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }
    pub fn options<S: Into<String>>(mut self, options: impl IntoIterator<Item = S>) -> Self {
        self.options = options.into_iter().map(Into::into).collect();
        self
    }
    pub fn default_value(mut self, value: serde_json::Value) -> Self {
        self.default = Some(value);
        self
    }
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }
}

/// `form` payload (published, or asked with [`HostUi::request_form`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Form {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub fields: Vec<FormField>,
}

impl Form {
    pub fn new(title: impl Into<String>) -> Self {
        Form {
            title: Some(title.into()),
            ..Form::default()
        }
    }
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
    pub fn field(mut self, field: FormField) -> Self {
        self.fields.push(field);
        self
    }
}

/// `notification` payload.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Notification {
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
}

impl Notification {
    pub fn new(title: impl Into<String>) -> Self {
        Notification {
            title: title.into(),
            ..Notification::default()
        }
    }
    pub fn body(mut self, body: impl Into<String>) -> Self {
        self.body = Some(body.into());
        self
    }
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = Some(severity);
        self
    }
}

/// The key under which single-question requests carry their answer.
pub const ANSWER_KEY: &str = "value";

fn local(message: String) -> Error {
    Error::Failed(message)
}

fn check_form(form: &Form) -> Result<(), Error> {
    for (i, f) in form.fields.iter().enumerate() {
        if f.key.trim().is_empty() {
            return Err(local(format!("form field {i} needs a key")));
        }
        if matches!(f.kind, FieldKind::Select | FieldKind::Multiselect) && f.options.is_empty() {
            return Err(local(format!("form field {:?} needs options", f.key)));
        }
    }
    Ok(())
}

/// UI calls for the current session and generation. Get one with
/// [`Context::ui`]. A publish the host does not accept (stale session or
/// generation) returns `Ok(false)`; a request the user dismisses returns
/// `Ok(None)`.
pub struct HostUi<'a> {
    ctx: &'a Context,
}

impl<'a> HostUi<'a> {
    pub(crate) fn new(ctx: &'a Context) -> Self {
        HostUi { ctx }
    }

    /// Publishes any surface kind with a payload of your own.
    pub fn publish<T: Serialize + ?Sized>(
        &self,
        surface_id: &str,
        kind: UISurfaceKind,
        payload: &T,
    ) -> Result<bool, Error> {
        self.ctx.shared.check_ready()?;
        if surface_id.trim().is_empty() {
            return Err(local("a surface needs a non-empty id".into()));
        }
        let payload: RawJson = serde_json::value::to_raw_value(payload)?;
        let result = self.ctx.link().ui_publish(UIPublishParams {
            surface_id: surface_id.to_owned(),
            session_id: self.ctx.session_id().to_owned(),
            generation: self.ctx.generation(),
            kind,
            payload,
        })?;
        Ok(result.accepted)
    }

    pub fn publish_status(&self, surface_id: &str, status: &Status) -> Result<bool, Error> {
        if status.label.trim().is_empty() {
            return Err(local("a status needs a label".into()));
        }
        self.publish(surface_id, UISurfaceKind::Status, status)
    }

    pub fn publish_card(&self, surface_id: &str, card: &Card) -> Result<bool, Error> {
        for (i, f) in card.fields.iter().enumerate() {
            if f.key.trim().is_empty() {
                return Err(local(format!("card field {i} needs a key")));
            }
        }
        for (i, a) in card.actions.iter().enumerate() {
            if a.action_id.trim().is_empty() || a.label.trim().is_empty() {
                return Err(local(format!(
                    "card action {i} needs an actionId and a label"
                )));
            }
        }
        self.publish(surface_id, UISurfaceKind::Card, card)
    }

    pub fn publish_form(&self, surface_id: &str, form: &Form) -> Result<bool, Error> {
        check_form(form)?;
        self.publish(surface_id, UISurfaceKind::Form, form)
    }

    pub fn publish_notification(
        &self,
        surface_id: &str,
        notification: &Notification,
    ) -> Result<bool, Error> {
        if notification.title.trim().is_empty() {
            return Err(local("a notification needs a title".into()));
        }
        self.publish(surface_id, UISurfaceKind::Notification, notification)
    }

    /// Asks a form; `None` when the user dismissed it.
    pub fn request(
        &self,
        surface_id: &str,
        kind: UIRequestKind,
        form: &Form,
    ) -> Result<Option<UiValues>, Error> {
        self.ctx.shared.check_ready()?;
        check_form(form)?;
        if surface_id.trim().is_empty() {
            return Err(local("a surface needs a non-empty id".into()));
        }
        let result = self.ctx.link().ui_request(UIRequestParams {
            surface_id: surface_id.to_owned(),
            session_id: self.ctx.session_id().to_owned(),
            generation: self.ctx.generation(),
            kind,
            payload: serde_json::value::to_raw_value(form)?,
        })?;
        Ok((!result.cancelled).then_some(result.values))
    }

    pub fn request_form(&self, surface_id: &str, form: &Form) -> Result<Option<UiValues>, Error> {
        self.request(surface_id, UIRequestKind::Input, form)
    }

    /// A yes/no question; `None` when dismissed.
    pub fn request_confirm(&self, surface_id: &str, message: &str) -> Result<Option<bool>, Error> {
        let form = Form {
            title: None,
            message: Some(message.to_owned()),
            fields: vec![FormField::new(ANSWER_KEY, FieldKind::Confirm).label(message)],
        };
        self.single(surface_id, UIRequestKind::Confirm, &form, "confirm")
    }

    /// A text question; `None` when dismissed.
    pub fn request_input(&self, surface_id: &str, label: &str) -> Result<Option<String>, Error> {
        let form = Form {
            title: None,
            message: None,
            fields: vec![FormField::new(ANSWER_KEY, FieldKind::Input).label(label)],
        };
        self.single(surface_id, UIRequestKind::Input, &form, "input")
    }

    /// One choice out of `options`; `None` when dismissed.
    pub fn request_select(
        &self,
        surface_id: &str,
        label: &str,
        options: &[&str],
    ) -> Result<Option<String>, Error> {
        let form = Form {
            title: None,
            message: None,
            fields: vec![
                FormField::new(ANSWER_KEY, FieldKind::Select)
                    .label(label)
                    .options(options.iter().copied()),
            ],
        };
        self.single(surface_id, UIRequestKind::Select, &form, "select")
    }

    /// Any choices out of `options`; `None` when dismissed.
    pub fn request_multiselect(
        &self,
        surface_id: &str,
        label: &str,
        options: &[&str],
    ) -> Result<Option<Vec<String>>, Error> {
        let form = Form {
            title: None,
            message: None,
            fields: vec![
                FormField::new(ANSWER_KEY, FieldKind::Multiselect)
                    .label(label)
                    .options(options.iter().copied()),
            ],
        };
        self.single(surface_id, UIRequestKind::Multiselect, &form, "multiselect")
    }

    fn single<T: serde::de::DeserializeOwned + Default>(
        &self,
        surface_id: &str,
        kind: UIRequestKind,
        form: &Form,
        what: &str,
    ) -> Result<Option<T>, Error> {
        let Some(values) = self.request(surface_id, kind, form)? else {
            return Ok(None);
        };
        match values.get(ANSWER_KEY) {
            None => Ok(Some(T::default())),
            Some(raw) if raw.get() == "null" => Ok(Some(T::default())),
            Some(raw) => serde_json::from_str(raw.get()).map(Some).map_err(|_| {
                Error::protocol(
                    reasonix_protocol::ErrorReason::ProtocolError,
                    format!("host/ui/request {what} answer has the wrong type"),
                )
            }),
        }
    }
}
