//! WIT records ↔ protocol types. Inbound conversions fail with
//! `invalid_params` naming the field (a `json` field that is not JSON, a
//! negative generation); outbound ones cannot fail.

use super::bindings::exports::reasonix::extension::{
    intercept, lifecycle, observation, provider, tool, ui,
};
use super::bindings::reasonix::extension::types as wt;
use super::bindings::reasonix::extension::{
    host_content, host_provider, host_ui, provider_types as wp,
};
use crate::error::Error;
use reasonix_protocol::types as pt;
use reasonix_protocol::{ErrorReason, HookPoint, RpcError};

fn json(field: &str, text: String) -> Result<pt::RawJson, Error> {
    pt::raw_json(&text).map_err(|e| Error::invalid_params(format!("{field}: not JSON: {e}")))
}

fn generation(field: &str, value: i64) -> Result<u64, Error> {
    u64::try_from(value)
        .map_err(|_| Error::invalid_params(format!("{field}: negative generation {value}")))
}

fn generation_out(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

macro_rules! same_enum {
    ($in_fn:ident, $out_fn:ident, $wit:ty, $proto:ty, [$($v:ident),* $(,)?]) => {
        #[allow(dead_code)]
        pub(super) fn $in_fn(value: $wit) -> $proto {
            match value { $(<$wit>::$v => <$proto>::$v,)* }
        }
        #[allow(dead_code)]
        pub(super) fn $out_fn(value: $proto) -> $wit {
            match value { $(<$proto>::$v => <$wit>::$v,)* }
        }
    };
}

same_enum!(
    point_in,
    point_out,
    wt::HookPoint,
    HookPoint,
    [
        SessionStart,
        SessionEnd,
        SessionLoad,
        SessionSave,
        SessionRotate,
        InputReceive,
        AgentBeforeStart,
        SystemPromptBuild,
        ContextPrepare,
        ProviderRequest,
        ProviderResponse,
        ToolBefore,
        ToolAfter,
        PermissionDecision,
        CompactionPrepare,
        CompactionComplete,
        FrontendEvent,
    ]
);

same_enum!(
    reason_in,
    reason_out,
    wt::ErrorReason,
    ErrorReason,
    [
        ActivationFailed,
        CapabilityNotDeclared,
        CleanupFailed,
        ContentRefExpired,
        DependencyCycle,
        DependencyUnsatisfied,
        FrameTooLarge,
        InterceptTimeout,
        Internal,
        InvalidParams,
        ProtocolError,
        ProviderFailed,
        ProviderInterrupted,
        SchemaMismatch,
        ShutdownTimeout,
        StaleGeneration,
        StreamCancelled,
        StreamGap,
        UnknownMethod,
        UnsupportedVersion,
    ]
);

same_enum!(
    decision_in,
    decision_out,
    wt::Decision,
    pt::Decision,
    [Continue, Block, Replace, Allow, Deny,]
);

same_enum!(
    role_in,
    role_out,
    wp::ProviderRole,
    pt::ProviderRole,
    [Assistant, System, Tool, User,]
);

same_enum!(
    chunk_type_in,
    chunk_type_out,
    wp::ChunkType,
    pt::ChunkType,
    [
        Text,
        Reasoning,
        ToolCallStart,
        ToolCallArgsDelta,
        ToolCall,
        Usage,
        Done,
        Error,
    ]
);

same_enum!(
    error_code_in,
    error_code_out,
    wp::ProviderErrorCode,
    pt::ProviderErrorCode,
    [ProviderFailed, ProviderInterrupted,]
);

/// The WIT error of an SDK error: the same reason and message rule as the
/// JSON-RPC transport.
pub(super) fn error_out(error: &Error) -> wt::ExtensionError {
    let message = match error {
        Error::Protocol {
            message: Some(m), ..
        } => Some(m.clone()),
        _ => None,
    };
    wt::ExtensionError {
        reason: reason_out(error.wire_reason()),
        message,
    }
}

/// A host import's error, as the stdio transport would see it.
pub(super) fn error_in(error: wt::ExtensionError) -> Error {
    let reason = reason_in(error.reason);
    Error::Host(match error.message {
        Some(m) => RpcError::with_message(reason, m),
        None => RpcError::from_reason(reason),
    })
}

fn slot_in(slot: wt::ReplacementSlot) -> String {
    use wt::ReplacementSlot as S;
    match slot {
        S::SystemPrompt => "system_prompt".into(),
        S::Context => "context".into(),
        S::ProviderRequest => "provider_request".into(),
        S::ProviderResponse => "provider_response".into(),
        S::Compaction => "compaction".into(),
        S::SessionPolicy => "session_policy".into(),
        S::Permission => "permission".into(),
        S::FrontendEvents => "frontend_events".into(),
        S::Tool(name) => format!("tool:{name}"),
        S::Provider(reference) => format!("provider:{reference}"),
    }
}

fn slot_out(wire: &str) -> Option<wt::ReplacementSlot> {
    use reasonix_protocol::Slot;
    use wt::ReplacementSlot as S;
    Some(match Slot::parse(wire).ok()? {
        Slot::SystemPrompt => S::SystemPrompt,
        Slot::Context => S::Context,
        Slot::ProviderRequest => S::ProviderRequest,
        Slot::ProviderResponse => S::ProviderResponse,
        Slot::Compaction => S::Compaction,
        Slot::SessionPolicy => S::SessionPolicy,
        Slot::Permission => S::Permission,
        Slot::FrontendEvents => S::FrontendEvents,
        Slot::Tool(name) => S::Tool(name),
        Slot::Provider(reference) => S::Provider(reference),
    })
}

fn capability_in(c: wt::CapabilityWire) -> pt::CapabilityWire {
    pt::CapabilityWire {
        namespace: c.namespace,
        kind: c.kind,
        id: c.id,
        version: c.version,
        schema_hash: c.schema_hash,
    }
}

fn capability_out(c: pt::CapabilityWire) -> wt::CapabilityWire {
    wt::CapabilityWire {
        namespace: c.namespace,
        kind: c.kind,
        id: c.id,
        version: c.version,
        schema_hash: c.schema_hash,
    }
}

fn requirement_in(r: wt::RequirementWire) -> pt::RequirementWire {
    pt::RequirementWire {
        namespace: r.namespace,
        kind: r.kind,
        id: r.id,
        version: r.version,
        schema_hash: r.schema_hash,
        version_range: r.version_range,
        optional: r.optional,
    }
}

fn requirement_out(r: pt::RequirementWire) -> wt::RequirementWire {
    wt::RequirementWire {
        namespace: r.namespace,
        kind: r.kind,
        id: r.id,
        version: r.version,
        version_range: r.version_range,
        schema_hash: r.schema_hash,
        optional: r.optional,
    }
}

pub(super) fn initialize_params(
    p: lifecycle::InitializeParams,
) -> Result<pt::InitializeParams, Error> {
    let m = p.manifest;
    let ui_host = match p.capabilities.ui_host {
        lifecycle::UiHost::Acp => pt::UiHost::Acp,
        lifecycle::UiHost::Desktop => pt::UiHost::Desktop,
        lifecycle::UiHost::Headless => pt::UiHost::Headless,
        lifecycle::UiHost::Tui => pt::UiHost::Tui,
    };
    let params = pt::InitializeParams {
        protocol_version: p.protocol_version,
        protocol_id: p.protocol_id,
        manifest: pt::ManifestExpectation {
            intercepts: m
                .intercepts
                .unwrap_or_default()
                .into_iter()
                .map(|x| point_in(x).as_str().to_owned())
                .collect(),
            replaces: m
                .replaces
                .unwrap_or_default()
                .into_iter()
                .map(slot_in)
                .collect(),
            providers: m.providers.unwrap_or_default(),
            ui_actions: m.ui_actions.unwrap_or_default(),
            capabilities: m.capabilities.unwrap_or_default(),
            requires: m
                .requires
                .unwrap_or_default()
                .into_iter()
                .map(requirement_in)
                .collect(),
            provides: m
                .provides
                .unwrap_or_default()
                .into_iter()
                .map(capability_in)
                .collect(),
            tools: m.tools.unwrap_or_default(),
        },
        session: pt::SessionContext {
            session_id: p.session.session_id,
            workspace_root: p.session.workspace_root,
            generation: generation("session.generation", p.session.generation)?,
            epoch: p.session.epoch,
        },
        capabilities: pt::HostCapabilities {
            content_refs: p.capabilities.content_refs,
            ui_host,
            protocol_version: p.capabilities.protocol_version,
            dependency_schema_version: p.capabilities.dependency_schema_version,
        },
        dependency_schema_version: p.dependency_schema_version,
    };
    reasonix_protocol::Validate::validate(&params)
        .map_err(|e| Error::invalid_params(format!("extension/initialize: {e}")))?;
    Ok(params)
}

fn non_empty<T>(v: Vec<T>) -> Option<Vec<T>> {
    (!v.is_empty()).then_some(v)
}

pub(super) fn descriptor_out(d: pt::ProviderDescriptor) -> wp::ProviderDescriptor {
    wp::ProviderDescriptor {
        ref_: d.reference,
        display_name: d.display_name,
        model: d.model,
        context_window: d.context_window,
        pricing_currency: d.pricing_currency,
        cache_hit_per_million: d.cache_hit_per_million,
        input_per_million: d.input_per_million,
        output_per_million: d.output_per_million,
        vision: d.vision,
        tools: d.tools,
        reasoning: d.reasoning,
        efforts: non_empty(d.efforts),
        default_effort: d.default_effort,
        tool_call_reasoning: d.tool_call_reasoning,
        reasoning_round_trip: d.reasoning_round_trip,
        warn_on_missing_tool_call_reasoning: d.warn_on_missing_tool_call_reasoning,
    }
}

pub(super) fn initialize_result(r: pt::InitializeResult) -> lifecycle::InitializeResult {
    let subscriptions: Vec<wt::HookPoint> = r
        .subscriptions
        .iter()
        .filter_map(|s| HookPoint::from_name(s))
        .map(point_out)
        .collect();
    let replaces: Vec<wt::ReplacementSlot> =
        r.replaces.iter().filter_map(|s| slot_out(s)).collect();
    lifecycle::InitializeResult {
        protocol_version: r.protocol_version,
        name: r.name,
        version: r.version,
        state_schema_version: r.state_schema_version,
        component_id: r.component_id,
        subscriptions: non_empty(subscriptions),
        replaces: non_empty(replaces),
        providers: non_empty(r.providers.into_iter().map(descriptor_out).collect()),
        ui_actions: non_empty(
            r.ui_actions
                .into_iter()
                .map(|a| lifecycle::UiActionDecl {
                    action_id: a.action_id,
                    label: a.label,
                })
                .collect(),
        ),
        requires: non_empty(r.requires.into_iter().map(requirement_out).collect()),
        provides: non_empty(r.provides.into_iter().map(capability_out).collect()),
        tools: non_empty(r.tools),
    }
}

fn externalized_in(list: Option<Vec<wt::ExternalizedField>>) -> Vec<pt::ExternalizedField> {
    list.unwrap_or_default()
        .into_iter()
        .map(|f| pt::ExternalizedField {
            json_pointer: f.json_pointer,
            content_ref: f.content_ref,
            total_bytes: f.total_bytes,
            sha256: f.sha256,
        })
        .collect()
}

fn externalized_out(list: Vec<pt::ExternalizedField>) -> Option<Vec<wt::ExternalizedField>> {
    non_empty(
        list.into_iter()
            .map(|f| wt::ExternalizedField {
                json_pointer: f.json_pointer,
                content_ref: f.content_ref,
                total_bytes: f.total_bytes,
                sha256: f.sha256,
            })
            .collect(),
    )
}

pub(super) fn intercept_params(
    p: intercept::InterceptParams,
) -> Result<pt::InterceptParams, Error> {
    Ok(pt::InterceptParams {
        event: point_in(p.event),
        seq: p.seq,
        payload: json("payload", p.payload)?,
        timeout_millis: p.timeout_millis,
        externalized: externalized_in(p.externalized),
    })
}

pub(super) fn intercept_result(r: pt::InterceptResult) -> intercept::InterceptResult {
    intercept::InterceptResult {
        decision: decision_out(r.decision),
        reason: r.reason,
        replacement: r.replacement.map(|raw| raw.get().to_owned()),
        externalized: externalized_out(r.externalized),
    }
}

pub(super) fn event_params(p: observation::EventParams) -> Result<pt::EventParams, Error> {
    Ok(pt::EventParams {
        event: point_in(p.event),
        payload: json("payload", p.payload)?,
        externalized: externalized_in(p.externalized),
    })
}

fn tool_call_in(c: wp::ProviderToolCall) -> pt::ProviderToolCall {
    pt::ProviderToolCall {
        id: c.id,
        name: c.name,
        arguments: c.arguments,
        thought_signature: c.thought_signature,
    }
}

fn tool_call_out(c: pt::ProviderToolCall) -> wp::ProviderToolCall {
    wp::ProviderToolCall {
        id: c.id,
        name: c.name,
        arguments: c.arguments,
        thought_signature: c.thought_signature,
    }
}

fn request_in(r: wp::ProviderRequest) -> Result<pt::ProviderRequest, Error> {
    let messages = r
        .messages
        .into_iter()
        .map(|m| pt::ProviderMessage {
            role: m.role.map(role_in),
            content: m.content,
            images: m.images.unwrap_or_default(),
            reasoning_content: m.reasoning_content,
            reasoning_signature: m.reasoning_signature,
            tool_calls: m
                .tool_calls
                .unwrap_or_default()
                .into_iter()
                .map(tool_call_in)
                .collect(),
            tool_call_id: m.tool_call_id,
            name: m.name,
        })
        .collect();
    let tools = r
        .tools
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            Ok(pt::ProviderToolSchema {
                name: t.name,
                description: t.description,
                parameters: json(&format!("request.tools[{i}].parameters"), t.parameters)?,
            })
        })
        .collect::<Result<_, Error>>()?;
    Ok(pt::ProviderRequest {
        messages,
        tools,
        temperature: r.temperature,
        max_tokens: r.max_tokens,
        response_format: r.response_format.map(|f| pt::ProviderResponseFormat {
            format_type: f.type_,
        }),
    })
}

pub(super) fn stream_open_params(
    p: provider::StreamOpenParams,
) -> Result<pt::StreamOpenParams, Error> {
    Ok(pt::StreamOpenParams {
        stream_id: p.stream_id,
        provider_ref: p.provider_ref,
        model: p.model,
        effort: p.effort,
        request: request_in(p.request)?,
        seq_base: p.seq_base,
        generation: p
            .generation
            .map(|g| generation("generation", g))
            .transpose()?,
        epoch: p.epoch,
    })
}

fn chunk_out(c: pt::ProviderChunk) -> wp::ProviderChunk {
    wp::ProviderChunk {
        type_: chunk_type_out(c.chunk_type),
        text: c.text,
        signature: c.signature,
        tool_call: c.tool_call.map(tool_call_out),
        arg_chars: c.arg_chars,
        usage: c.usage.map(|u| wp::ProviderUsage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            total_tokens: u.total_tokens,
            cache_hit_tokens: u.cache_hit_tokens,
            cache_miss_tokens: u.cache_miss_tokens,
            reasoning_tokens: u.reasoning_tokens,
            finish_reason: u.finish_reason,
        }),
        error: c.error.map(|e| wp::ProviderError {
            code: error_code_out(e.code),
            message: e.message,
        }),
        generation: c.generation.map(generation_out),
        epoch: c.epoch,
    }
}

pub(super) fn chunk_params_out(p: pt::StreamChunkParams) -> host_provider::StreamChunkParams {
    host_provider::StreamChunkParams {
        stream_id: p.stream_id,
        seq: p.seq,
        chunk: chunk_out(p.chunk),
        generation: p.generation.map(generation_out),
        epoch: p.epoch,
    }
}

pub(super) fn end_params_out(p: pt::StreamEndParams) -> host_provider::StreamEndParams {
    host_provider::StreamEndParams {
        stream_id: p.stream_id,
        last_seq: p.last_seq,
        error: p.error,
        interrupted: p.interrupted,
    }
}

pub(super) fn tool_call_params(p: tool::ToolCallParams) -> Result<pt::ToolCallParams, Error> {
    Ok(pt::ToolCallParams {
        name: p.name,
        arguments: json("arguments", p.arguments)?,
        timeout_millis: p.timeout_millis,
    })
}

pub(super) fn ui_action_params(p: ui::UiActionParams) -> Result<pt::UIActionParams, Error> {
    Ok(pt::UIActionParams {
        action_id: p.action_id,
        session_id: p.session_id,
        generation: generation("generation", p.generation)?,
        args: p.args.unwrap_or_default().into_iter().collect(),
    })
}

fn values_in(field: &str, text: &str) -> Result<pt::UiValues, Error> {
    serde_json::from_str(text)
        .map_err(|e| Error::invalid_params(format!("{field}: not a JSON object: {e}")))
}

pub(super) fn ui_submit_params(p: ui::UiSubmitParams) -> Result<pt::UISubmitParams, Error> {
    Ok(pt::UISubmitParams {
        surface_id: p.surface_id,
        session_id: p.session_id,
        generation: generation("generation", p.generation)?,
        values: values_in("values", &p.values)?,
    })
}

pub(super) fn content_result_in(r: host_content::ContentReadResult) -> pt::ContentReadResult {
    pt::ContentReadResult {
        content_ref: r.content_ref,
        offset: r.offset,
        data_base64: r.data_base64,
        next_offset: r.next_offset,
        total_bytes: r.total_bytes,
        sha256: r.sha256,
        encoding: match r.encoding {
            host_content::ContentEncoding::Utf8 => pt::ContentEncoding::Utf8,
        },
    }
}

pub(super) fn publish_params_out(
    p: pt::UIPublishParams,
) -> Result<host_ui::UiPublishParams, Error> {
    use host_ui::UiPublishKind as K;
    Ok(host_ui::UiPublishParams {
        surface_id: p.surface_id,
        session_id: p.session_id,
        generation: generation_out(p.generation),
        kind: match p.kind {
            pt::UISurfaceKind::Card => K::Card,
            pt::UISurfaceKind::Form => K::Form,
            pt::UISurfaceKind::Notification => K::Notification,
            pt::UISurfaceKind::Panel => K::Panel,
            pt::UISurfaceKind::Status => K::Status,
            pt::UISurfaceKind::View => K::View,
        },
        payload: p.payload.get().to_owned(),
    })
}

pub(super) fn request_params_out(
    p: pt::UIRequestParams,
) -> Result<host_ui::UiRequestParams, Error> {
    use host_ui::UiRequestKind as K;
    Ok(host_ui::UiRequestParams {
        surface_id: p.surface_id,
        session_id: p.session_id,
        generation: generation_out(p.generation),
        kind: match p.kind {
            pt::UIRequestKind::Confirm => K::Confirm,
            pt::UIRequestKind::Input => K::Input,
            pt::UIRequestKind::Multiselect => K::Multiselect,
            pt::UIRequestKind::Select => K::Select,
        },
        payload: p.payload.get().to_owned(),
    })
}

pub(super) fn request_result_in(r: host_ui::UiRequestResult) -> Result<pt::UIRequestResult, Error> {
    let values = match r.values {
        Some(text) => values_in("host-ui.request values", &text)
            .map_err(|e| Error::protocol(ErrorReason::ProtocolError, e.to_string()))?,
        None => pt::UiValues::new(),
    };
    Ok(pt::UIRequestResult {
        cancelled: r.cancelled,
        values,
    })
}
