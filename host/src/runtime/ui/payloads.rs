//! Strict payload DTOs of `host/ui/publish` and `host/ui/request` by kind
//! (spec §10). The schema types `payload` as "any"; the host decodes it
//! strictly by kind and answers `invalid_params` on a mismatch.
//!
//! Panel and view field names are the camelCase forms of upstream's Go names
//! (upstream does not publish them); the view limits below are this host's.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// Deepest nesting a `view` body may have (the root is depth 1).
pub const VIEW_MAX_DEPTH: usize = 8;
/// Most nodes a `view` body may have in total.
pub const VIEW_MAX_NODES: usize = 256;

/// `host/ui/publish` kinds (generation B).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PublishKind {
    Status,
    Card,
    Form,
    Notification,
    Panel,
    View,
}

/// `host/ui/request` kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RequestKind {
    Confirm,
    Input,
    Select,
    Multiselect,
}

impl PublishKind {
    pub fn parse(kind: &str) -> Option<PublishKind> {
        Some(match kind {
            "status" => PublishKind::Status,
            "card" => PublishKind::Card,
            "form" => PublishKind::Form,
            "notification" => PublishKind::Notification,
            "panel" => PublishKind::Panel,
            "view" => PublishKind::View,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PublishKind::Status => "status",
            PublishKind::Card => "card",
            PublishKind::Form => "form",
            PublishKind::Notification => "notification",
            PublishKind::Panel => "panel",
            PublishKind::View => "view",
        }
    }
}

impl RequestKind {
    pub fn parse(kind: &str) -> Option<RequestKind> {
        Some(match kind {
            "confirm" => RequestKind::Confirm,
            "input" => RequestKind::Input,
            "select" => RequestKind::Select,
            "multiselect" => RequestKind::Multiselect,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warn,
    Error,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StatusPayload {
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CardField {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CardAction {
    pub action_id: String,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CardPayload {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<CardField>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<CardAction>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FormField {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub kind: RequestKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FormPayload {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub fields: Vec<FormField>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NotificationPayload {
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PanelPayload {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<CardField>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<CardAction>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ViewNode {
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub children: Option<Vec<ViewNode>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ViewPayload {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
    pub body: ViewNode,
}

/// A decoded publish payload.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum UiPayload {
    Status(StatusPayload),
    Card(CardPayload),
    Form(FormPayload),
    Notification(NotificationPayload),
    Panel(PanelPayload),
    View(ViewPayload),
}

/// Strictly decode `raw` as the payload of `kind`. The error names the field
/// path where decoding stopped.
pub fn decode_publish(kind: PublishKind, raw: &RawValue) -> Result<UiPayload, String> {
    let payload = match kind {
        PublishKind::Status => {
            let status: StatusPayload = strict(raw)?;
            nonblank("label", &status.label)?;
            progress_in_range("progress", status.progress)?;
            UiPayload::Status(status)
        }
        PublishKind::Card => {
            let card: CardPayload = strict(raw)?;
            progress_in_range("progress", card.progress)?;
            check_fields_and_actions(card.fields.as_deref(), card.actions.as_deref())?;
            UiPayload::Card(card)
        }
        PublishKind::Form => {
            let form: FormPayload = strict(raw)?;
            check_form(&form)?;
            UiPayload::Form(form)
        }
        PublishKind::Notification => {
            let note: NotificationPayload = strict(raw)?;
            nonblank("title", &note.title)?;
            UiPayload::Notification(note)
        }
        PublishKind::Panel => {
            let panel: PanelPayload = strict(raw)?;
            progress_in_range("progress", panel.progress)?;
            check_fields_and_actions(panel.fields.as_deref(), panel.actions.as_deref())?;
            UiPayload::Panel(panel)
        }
        PublishKind::View => {
            let view: ViewPayload = strict(raw)?;
            let mut nodes = 0;
            check_view_node(&view.body, "body", 1, &mut nodes)?;
            UiPayload::View(view)
        }
    };
    Ok(payload)
}

/// Strictly decode the form carried by a `host/ui/request`.
pub fn decode_request(raw: &RawValue) -> Result<FormPayload, String> {
    let form: FormPayload = strict(raw)?;
    check_form(&form)?;
    Ok(form)
}

fn strict<T: serde::de::DeserializeOwned>(raw: &RawValue) -> Result<T, String> {
    let mut deserializer = serde_json::Deserializer::from_str(raw.get());
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        if path == "." {
            error.inner().to_string()
        } else {
            format!("{path}: {}", error.inner())
        }
    })?;
    deserializer
        .end()
        .map_err(|error| format!("trailing data: {error}"))?;
    Ok(value)
}

fn nonblank(path: &str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        Err(format!("{path}: must not be blank"))
    } else {
        Ok(())
    }
}

fn progress_in_range(path: &str, progress: Option<f64>) -> Result<(), String> {
    match progress {
        Some(p) if !(0.0..=1.0).contains(&p) => {
            Err(format!("{path}: must be between 0 and 1, got {p}"))
        }
        _ => Ok(()),
    }
}

fn check_fields_and_actions(
    fields: Option<&[CardField]>,
    actions: Option<&[CardAction]>,
) -> Result<(), String> {
    for (i, field) in fields.unwrap_or_default().iter().enumerate() {
        nonblank(&format!("fields[{i}].key"), &field.key)?;
    }
    for (i, action) in actions.unwrap_or_default().iter().enumerate() {
        if !super::is_valid_action_id(&action.action_id) {
            return Err(format!(
                "actions[{i}].actionId: {:?} must match ^[a-z0-9-]+$",
                action.action_id
            ));
        }
        nonblank(&format!("actions[{i}].label"), &action.label)?;
    }
    Ok(())
}

fn check_form(form: &FormPayload) -> Result<(), String> {
    if form.fields.is_empty() {
        return Err("fields: a form needs at least one field".to_string());
    }
    for (i, field) in form.fields.iter().enumerate() {
        nonblank(&format!("fields[{i}].key"), &field.key)?;
        let needs_options = matches!(field.kind, RequestKind::Select | RequestKind::Multiselect);
        let has_options = field.options.as_ref().is_some_and(|o| !o.is_empty());
        if needs_options && !has_options {
            return Err(format!("fields[{i}].options: a select field needs options"));
        }
    }
    Ok(())
}

fn check_view_node(
    node: &ViewNode,
    path: &str,
    depth: usize,
    nodes: &mut usize,
) -> Result<(), String> {
    *nodes += 1;
    if *nodes > VIEW_MAX_NODES {
        return Err(format!(
            "{path}: a view may hold at most {VIEW_MAX_NODES} nodes"
        ));
    }
    if depth > VIEW_MAX_DEPTH {
        return Err(format!(
            "{path}: a view may nest at most {VIEW_MAX_DEPTH} levels"
        ));
    }
    nonblank(&format!("{path}.kind"), &node.kind)?;
    progress_in_range(&format!("{path}.progress"), node.progress)?;
    if let Some(action) = &node.action_id
        && !super::is_valid_action_id(action)
    {
        return Err(format!(
            "{path}.actionId: {action:?} must match ^[a-z0-9-]+$"
        ));
    }
    for (i, child) in node.children.iter().flatten().enumerate() {
        check_view_node(child, &format!("{path}.children[{i}]"), depth + 1, nodes)?;
    }
    Ok(())
}

/// Apply `clean` to every string an extension supplied in a payload.
pub(super) fn clean_payload(payload: &mut UiPayload, clean: &dyn Fn(&str) -> String) {
    let opt = |s: &mut Option<String>| {
        if let Some(s) = s {
            *s = clean(s);
        }
    };
    let fields = |f: &mut Option<Vec<CardField>>| {
        for field in f.iter_mut().flatten() {
            field.key = clean(&field.key);
            if let Some(v) = &mut field.value {
                *v = clean(v);
            }
        }
    };
    let actions = |a: &mut Option<Vec<CardAction>>| {
        for action in a.iter_mut().flatten() {
            action.label = clean(&action.label);
        }
    };
    match payload {
        UiPayload::Status(s) => {
            s.label = clean(&s.label);
            opt(&mut s.detail);
        }
        UiPayload::Card(c) => {
            opt(&mut c.title);
            opt(&mut c.markdown);
            opt(&mut c.text);
            fields(&mut c.fields);
            actions(&mut c.actions);
        }
        UiPayload::Form(f) => clean_form(f, clean),
        UiPayload::Notification(n) => {
            n.title = clean(&n.title);
            opt(&mut n.body);
        }
        UiPayload::Panel(p) => {
            opt(&mut p.title);
            opt(&mut p.text);
            fields(&mut p.fields);
            actions(&mut p.actions);
        }
        UiPayload::View(v) => {
            opt(&mut v.slot);
            opt(&mut v.anchor);
            clean_view_node(&mut v.body, clean);
        }
    }
}

pub(super) fn clean_form(form: &mut FormPayload, clean: &dyn Fn(&str) -> String) {
    if let Some(t) = &mut form.title {
        *t = clean(t);
    }
    if let Some(m) = &mut form.message {
        *m = clean(m);
    }
    for field in &mut form.fields {
        if let Some(l) = &mut field.label {
            *l = clean(l);
        }
        for option in field.options.iter_mut().flatten() {
            *option = clean(option);
        }
        if let Some(default) = &mut field.default {
            clean_value(default, clean);
        }
    }
}

pub(super) fn clean_value(value: &mut Value, clean: &dyn Fn(&str) -> String) {
    match value {
        Value::String(s) => *s = clean(s),
        Value::Array(items) => items.iter_mut().for_each(|v| clean_value(v, clean)),
        Value::Object(map) => map.values_mut().for_each(|v| clean_value(v, clean)),
        _ => {}
    }
}

fn clean_view_node(node: &mut ViewNode, clean: &dyn Fn(&str) -> String) {
    for s in [
        &mut node.value,
        &mut node.label,
        &mut node.key,
        &mut node.tone,
    ]
    .into_iter()
    .flatten()
    {
        *s = clean(s);
    }
    for child in node.children.iter_mut().flatten() {
        clean_view_node(child, clean);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_string()).unwrap()
    }

    #[test]
    fn every_kind_decodes_its_own_payload() {
        let cases = [
            (
                PublishKind::Status,
                r#"{"label":"indexing","severity":"info","progress":0.5}"#,
            ),
            (
                PublishKind::Card,
                r#"{"title":"t","fields":[{"key":"k","value":"v"}],"actions":[{"actionId":"open-it","label":"Open"}]}"#,
            ),
            (
                PublishKind::Form,
                r#"{"fields":[{"key":"value","kind":"confirm"}]}"#,
            ),
            (
                PublishKind::Notification,
                r#"{"title":"done","severity":"warn"}"#,
            ),
            (PublishKind::Panel, r#"{"title":"p","text":"x"}"#),
            (
                PublishKind::View,
                r#"{"body":{"kind":"stack","children":[{"kind":"text","value":"hi"}]}}"#,
            ),
        ];
        for (kind, json) in cases {
            decode_publish(kind, &raw(json)).unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        }
    }

    #[test]
    fn mismatches_are_rejected_with_a_path() {
        let cases = [
            (
                PublishKind::Status,
                r#"{"title":"a status has a label"}"#,
                "title",
            ),
            (PublishKind::Status, r#"{"label":"  "}"#, "label"),
            (
                PublishKind::Status,
                r#"{"label":"x","severity":"fatal"}"#,
                "severity",
            ),
            (
                PublishKind::Status,
                r#"{"label":"x","progress":2}"#,
                "progress",
            ),
            (PublishKind::Card, r#"{"html":"<b>x</b>"}"#, "html"),
            (
                PublishKind::Card,
                r#"{"actions":[{"actionId":"Bad Id","label":"x"}]}"#,
                "actions[0]",
            ),
            (PublishKind::Form, r#"{"fields":[]}"#, "fields"),
            (
                PublishKind::Form,
                r#"{"fields":[{"key":"k","kind":"select"}]}"#,
                "options",
            ),
            (PublishKind::Notification, r#"{"body":"no title"}"#, "title"),
            (
                PublishKind::View,
                r#"{"body":{"kind":"x","script":"alert(1)"}}"#,
                "script",
            ),
        ];
        for (kind, json, needle) in cases {
            let error = decode_publish(kind, &raw(json)).expect_err(json);
            assert!(error.contains(needle), "{json}: {error}");
        }
    }

    #[test]
    fn view_limits_are_enforced() {
        let mut node = ViewNode {
            kind: "leaf".into(),
            value: None,
            key: None,
            label: None,
            tone: None,
            progress: None,
            action_id: None,
            children: None,
        };
        for _ in 0..VIEW_MAX_DEPTH {
            let template = node.clone();
            node = ViewNode {
                kind: "box".into(),
                children: Some(vec![node]),
                ..template
            };
        }
        let json = serde_json::to_string(&serde_json::json!({ "body": node })).unwrap();
        let error = decode_publish(PublishKind::View, &raw(&json)).unwrap_err();
        assert!(error.contains("nest at most"), "{error}");

        let wide: Vec<_> = (0..VIEW_MAX_NODES)
            .map(|_| serde_json::json!({"kind": "text"}))
            .collect();
        let json = serde_json::json!({"body": {"kind": "list", "children": wide}}).to_string();
        let error = decode_publish(PublishKind::View, &raw(&json)).unwrap_err();
        assert!(error.contains("at most 256 nodes"), "{error}");
    }
}
