//! The adapter for components built against WIT package
//! `reasonix:extension@2.0.x` (`wit/since_v2.0.0`).
//!
//! It owns the `bindgen!` output for that package version and converts
//! between its types and the wire types of `reasonix-protocol`, so the rest
//! of the runtime speaks the same DTOs as the sidecar transport. A later
//! minor gets its own module (`v2_1.rs`) beside this one, the way Zed keeps
//! `since_v0_x` host modules side by side.

use std::collections::BTreeMap;

use reasonix_protocol::types as wire;
use reasonix_protocol::{ErrorReason, HookPoint, Slot, Validate};
use serde_json::value::RawValue;

use super::instance::{CallError, Emission, HostState};
use super::sandbox::LogSource;

wasmtime::component::bindgen!({
    world: "extension",
    path: "../wit/since_v2.0.0",
    // Exports are entered with `call_async` on the caller's task; the host
    // imports stay synchronous (none of them waits).
    exports: { default: async },
});

use self::exports::reasonix::extension::{intercept, lifecycle, observation, provider, tool, ui};
use self::reasonix::extension::{host_content, host_provider, host_ui, log, provider_types, types};

/// The package version this adapter was generated from.
pub const PACKAGE_VERSION: (u64, u64) = (2, 0);

/// One instantiated 2.0.x component.
pub(crate) struct Bindings {
    inner: Extension,
}

type Store<'a> = &'a mut wasmtime::Store<HostState>;
type Outcome<T> = Result<T, CallError>;

fn guest_error(error: types::ExtensionError) -> CallError {
    CallError::Guest(reason_from_wit(error.reason), error.message)
}

fn trapped(error: wasmtime::Error) -> CallError {
    CallError::Trap(error)
}

impl Bindings {
    pub(crate) async fn instantiate(
        pre: &ExtensionPre<HostState>,
        store: Store<'_>,
    ) -> Outcome<Self> {
        pre.instantiate_async(store)
            .await
            .map(|inner| Bindings { inner })
            .map_err(trapped)
    }

    pub(crate) async fn protocol_version(&self, store: Store<'_>) -> Outcome<String> {
        self.inner
            .reasonix_extension_lifecycle()
            .call_protocol_version(store)
            .await
            .map_err(trapped)
    }

    pub(crate) async fn initialize(
        &self,
        store: Store<'_>,
        params: &wire::InitializeParams,
    ) -> Outcome<wire::InitializeResult> {
        let params = initialize_params(params);
        let result = self
            .inner
            .reasonix_extension_lifecycle()
            .call_initialize(store, &params)
            .await
            .map_err(trapped)?
            .map_err(guest_error)?;
        initialize_result(result)
    }

    pub(crate) async fn initialized(&self, store: Store<'_>) -> Outcome<()> {
        self.inner
            .reasonix_extension_lifecycle()
            .call_initialized(store)
            .await
            .map_err(trapped)
    }

    pub(crate) async fn shutdown(&self, store: Store<'_>, timeout_millis: u64) -> Outcome<bool> {
        let result = self
            .inner
            .reasonix_extension_lifecycle()
            .call_shutdown(store, lifecycle::ShutdownParams { timeout_millis })
            .await
            .map_err(trapped)?
            .map_err(guest_error)?;
        Ok(result.accepted)
    }

    pub(crate) async fn intercept(
        &self,
        store: Store<'_>,
        point: HookPoint,
        seq: u64,
        payload: &RawValue,
        timeout_millis: u64,
    ) -> Outcome<wire::InterceptResult> {
        let params = intercept::InterceptParams {
            event: point_to_wit(point),
            seq,
            payload: payload.get().to_owned(),
            timeout_millis,
            externalized: None,
        };
        let result = self
            .inner
            .reasonix_extension_intercept()
            .call_intercept(store, &params)
            .await
            .map_err(trapped)?
            .map_err(guest_error)?;
        if result.externalized.is_some() {
            // This host never mints content refs for a component, so no
            // ref a component names can exist.
            return Err(CallError::Guest(
                ErrorReason::ContentRefExpired,
                Some("the replacement names a content reference this host never issued".into()),
            ));
        }
        let replacement = result
            .replacement
            .map(|text| json_text("replacement", text))
            .transpose()?;
        Ok(wire::InterceptResult {
            decision: decision_from_wit(result.decision),
            reason: result.reason,
            replacement,
            externalized: Vec::new(),
        })
    }

    pub(crate) async fn event(
        &self,
        store: Store<'_>,
        point: HookPoint,
        payload: &RawValue,
    ) -> Outcome<()> {
        let params = observation::EventParams {
            event: point_to_wit(point),
            payload: payload.get().to_owned(),
            externalized: None,
        };
        self.inner
            .reasonix_extension_observation()
            .call_event(store, &params)
            .await
            .map_err(trapped)
    }

    pub(crate) async fn resources_changed(
        &self,
        store: Store<'_>,
        paths: &[String],
    ) -> Outcome<()> {
        let params = observation::ResourcesChangedParams {
            paths: paths.to_vec(),
        };
        self.inner
            .reasonix_extension_observation()
            .call_resources_changed(store, &params)
            .await
            .map_err(trapped)
    }

    pub(crate) async fn tool_call(
        &self,
        store: Store<'_>,
        name: &str,
        arguments: &RawValue,
        timeout_millis: u64,
    ) -> Outcome<wire::ToolCallResult> {
        let params = tool::ToolCallParams {
            name: name.to_owned(),
            arguments: arguments.get().to_owned(),
            timeout_millis,
        };
        let result = self
            .inner
            .reasonix_extension_tool()
            .call_call(store, &params)
            .await
            .map_err(trapped)?
            .map_err(guest_error)?;
        Ok(wire::ToolCallResult {
            content: result.content,
            is_error: result.is_error,
        })
    }

    pub(crate) async fn provider_catalog(
        &self,
        store: Store<'_>,
    ) -> Outcome<Vec<wire::ProviderDescriptor>> {
        let result = self
            .inner
            .reasonix_extension_provider()
            .call_catalog(store)
            .await
            .map_err(trapped)?
            .map_err(guest_error)?;
        let providers: Vec<_> = result.providers.into_iter().map(descriptor).collect();
        for p in &providers {
            p.validate()
                .map_err(|e| CallError::Invalid(format!("provider catalog: {e}")))?;
        }
        Ok(providers)
    }

    pub(crate) async fn stream_open(
        &self,
        store: Store<'_>,
        open: &wire::StreamOpenParams,
    ) -> Outcome<bool> {
        let params = provider::StreamOpenParams {
            stream_id: open.stream_id.clone(),
            provider_ref: open.provider_ref.clone(),
            request: request_to_wit(&open.request),
            seq_base: open.seq_base,
            model: open.model.clone(),
            effort: open.effort.clone(),
            generation: open.generation.map(generation_to_wit),
            epoch: open.epoch.clone(),
        };
        let result = self
            .inner
            .reasonix_extension_provider()
            .call_stream_open(store, &params)
            .await
            .map_err(trapped)?
            .map_err(guest_error)?;
        Ok(result.accepted)
    }

    pub(crate) async fn stream_cancel(&self, store: Store<'_>, stream_id: &str) -> Outcome<bool> {
        let params = provider::StreamCancelParams {
            stream_id: stream_id.to_owned(),
        };
        let result = self
            .inner
            .reasonix_extension_provider()
            .call_stream_cancel(store, &params)
            .await
            .map_err(trapped)?
            .map_err(guest_error)?;
        Ok(result.cancelled)
    }

    pub(crate) async fn ui_action(
        &self,
        store: Store<'_>,
        action_id: &str,
        session_id: &str,
        generation: u64,
        args: &BTreeMap<String, String>,
    ) -> Outcome<(bool, Option<String>)> {
        let params = ui::UiActionParams {
            action_id: action_id.to_owned(),
            session_id: session_id.to_owned(),
            generation: generation_to_wit(generation),
            args: (!args.is_empty())
                .then(|| args.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        };
        let result = self
            .inner
            .reasonix_extension_ui()
            .call_action(store, &params)
            .await
            .map_err(trapped)?
            .map_err(guest_error)?;
        Ok((result.accepted, result.message))
    }

    pub(crate) async fn ui_submit(
        &self,
        store: Store<'_>,
        surface_id: &str,
        session_id: &str,
        generation: u64,
        values: &BTreeMap<String, serde_json::Value>,
    ) -> Outcome<bool> {
        let values = serde_json::to_string(values)
            .map_err(|e| CallError::Invalid(format!("submit values: {e}")))?;
        let params = ui::UiSubmitParams {
            surface_id: surface_id.to_owned(),
            session_id: session_id.to_owned(),
            generation: generation_to_wit(generation),
            values,
        };
        let result = self
            .inner
            .reasonix_extension_ui()
            .call_submit(store, &params)
            .await
            .map_err(trapped)?
            .map_err(guest_error)?;
        Ok(result.accepted)
    }
}

/// A guest's JSON text parsed as exactly one JSON value.
fn json_text(field: &str, text: String) -> Outcome<Box<RawValue>> {
    RawValue::from_string(text)
        .map_err(|e| CallError::Invalid(format!("{field} is not one JSON value: {e}")))
}

/// Wire generations are non-negative; WIT carries `s64`.
fn generation_to_wit(generation: u64) -> i64 {
    i64::try_from(generation).unwrap_or(i64::MAX)
}

fn generation_from_wit(field: &str, generation: i64) -> Result<u64, String> {
    u64::try_from(generation).map_err(|_| format!("{field} {generation} is negative"))
}

macro_rules! same_cases {
    ($to:ident, $from:ident, $wire:ty, $wit:ty, [$($case:ident),* $(,)?]) => {
        #[allow(dead_code)]
        fn $to(value: $wire) -> $wit {
            match value { $(<$wire>::$case => <$wit>::$case,)* }
        }
        #[allow(dead_code)]
        fn $from(value: $wit) -> $wire {
            match value { $(<$wit>::$case => <$wire>::$case,)* }
        }
    };
}

same_cases!(
    point_to_wit,
    point_from_wit,
    HookPoint,
    types::HookPoint,
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

same_cases!(
    decision_to_wit,
    decision_from_wit,
    wire::Decision,
    types::Decision,
    [Continue, Block, Replace, Allow, Deny,]
);

same_cases!(
    reason_to_wit,
    reason_from_wit,
    ErrorReason,
    types::ErrorReason,
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

same_cases!(
    role_to_wit,
    role_from_wit,
    wire::ProviderRole,
    provider_types::ProviderRole,
    [System, User, Assistant, Tool,]
);

same_cases!(
    chunk_type_to_wit,
    chunk_type_from_wit,
    wire::ChunkType,
    provider_types::ChunkType,
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

same_cases!(
    ui_host_to_wit,
    ui_host_from_wit,
    wire::UiHost,
    lifecycle::UiHost,
    [Acp, Desktop, Headless, Tui,]
);

same_cases!(
    publish_kind_to_wit,
    publish_kind_from_wit,
    wire::UISurfaceKind,
    host_ui::UiPublishKind,
    [Status, Card, Form, Notification, Panel, View,]
);

same_cases!(
    request_kind_to_wit,
    request_kind_from_wit,
    wire::UIRequestKind,
    host_ui::UiRequestKind,
    [Confirm, Input, Select, Multiselect,]
);

fn provider_error_code_from_wit(
    code: provider_types::ProviderErrorCode,
) -> wire::ProviderErrorCode {
    match code {
        provider_types::ProviderErrorCode::ProviderFailed => {
            wire::ProviderErrorCode::ProviderFailed
        }
        provider_types::ProviderErrorCode::ProviderInterrupted => {
            wire::ProviderErrorCode::ProviderInterrupted
        }
    }
}

fn slot_to_wit(slot: &Slot) -> types::ReplacementSlot {
    use types::ReplacementSlot as W;
    match slot {
        Slot::SystemPrompt => W::SystemPrompt,
        Slot::Context => W::Context,
        Slot::ProviderRequest => W::ProviderRequest,
        Slot::ProviderResponse => W::ProviderResponse,
        Slot::Compaction => W::Compaction,
        Slot::SessionPolicy => W::SessionPolicy,
        Slot::Permission => W::Permission,
        Slot::FrontendEvents => W::FrontendEvents,
        Slot::Tool(name) => W::Tool(name.clone()),
        Slot::Provider(reference) => W::Provider(reference.clone()),
    }
}

fn slot_from_wit(slot: types::ReplacementSlot) -> Slot {
    use types::ReplacementSlot as W;
    match slot {
        W::SystemPrompt => Slot::SystemPrompt,
        W::Context => Slot::Context,
        W::ProviderRequest => Slot::ProviderRequest,
        W::ProviderResponse => Slot::ProviderResponse,
        W::Compaction => Slot::Compaction,
        W::SessionPolicy => Slot::SessionPolicy,
        W::Permission => Slot::Permission,
        W::FrontendEvents => Slot::FrontendEvents,
        W::Tool(name) => Slot::Tool(name),
        W::Provider(reference) => Slot::Provider(reference),
    }
}

fn non_empty<T>(items: Vec<T>) -> Option<Vec<T>> {
    (!items.is_empty()).then_some(items)
}

fn capability_to_wit(c: &wire::CapabilityWire) -> types::CapabilityWire {
    types::CapabilityWire {
        namespace: c.namespace.clone(),
        kind: c.kind.clone(),
        id: c.id.clone(),
        version: c.version.clone(),
        schema_hash: c.schema_hash.clone(),
    }
}

fn capability_from_wit(c: types::CapabilityWire) -> wire::CapabilityWire {
    wire::CapabilityWire {
        namespace: c.namespace,
        kind: c.kind,
        id: c.id,
        version: c.version,
        schema_hash: c.schema_hash,
    }
}

fn requirement_to_wit(r: &wire::RequirementWire) -> types::RequirementWire {
    types::RequirementWire {
        namespace: r.namespace.clone(),
        kind: r.kind.clone(),
        id: r.id.clone(),
        version: r.version.clone(),
        version_range: r.version_range.clone(),
        schema_hash: r.schema_hash.clone(),
        optional: r.optional,
    }
}

fn requirement_from_wit(r: types::RequirementWire) -> wire::RequirementWire {
    wire::RequirementWire {
        namespace: r.namespace,
        kind: r.kind,
        id: r.id,
        version: r.version,
        version_range: r.version_range,
        schema_hash: r.schema_hash,
        optional: r.optional,
    }
}

/// The manifest ceiling as WIT. Its point and slot strings were checked by
/// the manifest parser; one that does not parse is left out rather than
/// sent as something else.
fn initialize_params(p: &wire::InitializeParams) -> lifecycle::InitializeParams {
    let m = &p.manifest;
    let intercepts: Vec<_> = m
        .intercepts
        .iter()
        .filter_map(|name| HookPoint::from_name(name))
        .map(point_to_wit)
        .collect();
    let replaces: Vec<_> = m
        .replaces
        .iter()
        .filter_map(|s| Slot::parse(s).ok())
        .map(|s| slot_to_wit(&s))
        .collect();
    lifecycle::InitializeParams {
        protocol_id: p.protocol_id.clone(),
        protocol_version: p.protocol_version.clone(),
        manifest: lifecycle::ManifestExpectation {
            intercepts: non_empty(intercepts),
            replaces: non_empty(replaces),
            capabilities: non_empty(m.capabilities.clone()),
            requires: non_empty(m.requires.iter().map(requirement_to_wit).collect()),
            provides: non_empty(m.provides.iter().map(capability_to_wit).collect()),
            providers: non_empty(m.providers.clone()),
            ui_actions: non_empty(m.ui_actions.clone()),
            tools: non_empty(m.tools.clone()),
        },
        session: lifecycle::SessionContext {
            session_id: p.session.session_id.clone(),
            workspace_root: p.session.workspace_root.clone(),
            generation: generation_to_wit(p.session.generation),
            epoch: p.session.epoch.clone(),
        },
        capabilities: lifecycle::HostCapabilities {
            content_refs: p.capabilities.content_refs,
            ui_host: ui_host_to_wit(p.capabilities.ui_host),
            protocol_version: p.capabilities.protocol_version.clone(),
            dependency_schema_version: p.capabilities.dependency_schema_version,
        },
        dependency_schema_version: p.dependency_schema_version,
    }
}

fn initialize_result(r: lifecycle::InitializeResult) -> Outcome<wire::InitializeResult> {
    let result = wire::InitializeResult {
        protocol_version: r.protocol_version,
        name: r.name,
        version: r.version,
        component_id: r.component_id,
        subscriptions: r
            .subscriptions
            .unwrap_or_default()
            .into_iter()
            .map(|p| point_from_wit(p).as_str().to_owned())
            .collect(),
        replaces: r
            .replaces
            .unwrap_or_default()
            .into_iter()
            .map(|s| slot_from_wit(s).to_wire())
            .collect(),
        providers: r
            .providers
            .unwrap_or_default()
            .into_iter()
            .map(descriptor)
            .collect(),
        ui_actions: r
            .ui_actions
            .unwrap_or_default()
            .into_iter()
            .map(|a| wire::UIActionDecl {
                action_id: a.action_id,
                label: a.label,
            })
            .collect(),
        requires: r
            .requires
            .unwrap_or_default()
            .into_iter()
            .map(requirement_from_wit)
            .collect(),
        provides: r
            .provides
            .unwrap_or_default()
            .into_iter()
            .map(capability_from_wit)
            .collect(),
        state_schema_version: r.state_schema_version,
        tools: r.tools.unwrap_or_default(),
    };
    result
        .validate()
        .map_err(|e| CallError::Invalid(format!("invalid initialize result: {e}")))?;
    Ok(result)
}

fn descriptor(d: provider_types::ProviderDescriptor) -> wire::ProviderDescriptor {
    wire::ProviderDescriptor {
        reference: d.ref_,
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
        efforts: d.efforts.unwrap_or_default(),
        default_effort: d.default_effort,
        tool_call_reasoning: d.tool_call_reasoning,
        reasoning_round_trip: d.reasoning_round_trip,
        warn_on_missing_tool_call_reasoning: d.warn_on_missing_tool_call_reasoning,
    }
}

fn tool_call_to_wit(c: &wire::ProviderToolCall) -> provider_types::ProviderToolCall {
    provider_types::ProviderToolCall {
        id: c.id.clone(),
        name: c.name.clone(),
        arguments: c.arguments.clone(),
        thought_signature: c.thought_signature.clone(),
    }
}

fn tool_call_from_wit(c: provider_types::ProviderToolCall) -> wire::ProviderToolCall {
    wire::ProviderToolCall {
        id: c.id,
        name: c.name,
        arguments: c.arguments,
        thought_signature: c.thought_signature,
    }
}

fn request_to_wit(r: &wire::ProviderRequest) -> provider_types::ProviderRequest {
    provider_types::ProviderRequest {
        messages: r
            .messages
            .iter()
            .map(|m| provider_types::ProviderMessage {
                role: m.role.map(role_to_wit),
                content: m.content.clone(),
                images: non_empty(m.images.clone()),
                reasoning_content: m.reasoning_content.clone(),
                reasoning_signature: m.reasoning_signature.clone(),
                tool_calls: non_empty(m.tool_calls.iter().map(tool_call_to_wit).collect()),
                tool_call_id: m.tool_call_id.clone(),
                name: m.name.clone(),
            })
            .collect(),
        tools: r
            .tools
            .iter()
            .map(|t| provider_types::ProviderToolSchema {
                name: t.name.clone(),
                description: t.description.clone(),
                parameters: t.parameters.get().to_owned(),
            })
            .collect(),
        max_tokens: r.max_tokens,
        temperature: r.temperature,
        response_format: r.response_format.as_ref().map(|f| {
            provider_types::ProviderResponseFormat {
                type_: f.format_type.clone(),
            }
        }),
    }
}

fn chunk_from_wit(c: provider_types::ProviderChunk) -> Result<wire::ProviderChunk, String> {
    let chunk = wire::ProviderChunk {
        chunk_type: chunk_type_from_wit(c.type_),
        text: c.text,
        signature: c.signature,
        tool_call: c.tool_call.map(tool_call_from_wit),
        arg_chars: c.arg_chars,
        usage: c.usage.map(|u| wire::ProviderUsage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            total_tokens: u.total_tokens,
            cache_hit_tokens: u.cache_hit_tokens,
            cache_miss_tokens: u.cache_miss_tokens,
            reasoning_tokens: u.reasoning_tokens,
            finish_reason: u.finish_reason,
        }),
        error: c.error.map(|e| wire::ProviderError {
            code: provider_error_code_from_wit(e.code),
            message: e.message,
        }),
        generation: c
            .generation
            .map(|g| generation_from_wit("chunk.generation", g))
            .transpose()?,
        epoch: c.epoch,
    };
    chunk.validate().map_err(|e| e.to_string())?;
    Ok(chunk)
}

/// Host imports other than `log` wait for `initialized` (spec §4.3 rule
/// 11): an earlier call poisons the handshake.
fn barrier(state: &mut HostState, import: &'static str) -> Result<(), types::ExtensionError> {
    if state.ready {
        return Ok(());
    }
    state.barrier_violation.get_or_insert(import);
    Err(types::ExtensionError {
        reason: types::ErrorReason::ProtocolError,
        message: Some(format!("{import} called before extension/initialized")),
    })
}

fn wit_error(reason: ErrorReason, message: Option<String>) -> types::ExtensionError {
    types::ExtensionError {
        reason: reason_to_wit(reason),
        message,
    }
}

impl types::Host for HostState {}

impl provider_types::Host for HostState {}

impl log::Host for HostState {
    fn log(&mut self, level: log::Level, message: String) {
        let level = match level {
            log::Level::Trace => "trace",
            log::Level::Debug => "debug",
            log::Level::Info => "info",
            log::Level::Warn => "warn",
            log::Level::Error => "error",
        };
        for line in message.lines() {
            self.log.line(LogSource::Log(level), line);
        }
    }
}

impl host_content::Host for HostState {
    fn read(
        &mut self,
        params: host_content::ContentReadParams,
    ) -> Result<host_content::ContentReadResult, types::ExtensionError> {
        barrier(self, "host-content.read")?;
        // Values reach a component inline (a component call has no frame
        // cap), so no content reference exists for it to page through.
        let _ = params;
        Err(wit_error(ErrorReason::ContentRefExpired, None))
    }
}

impl host_ui::Host for HostState {
    fn publish(
        &mut self,
        params: host_ui::UiPublishParams,
    ) -> Result<host_ui::UiPublishResult, types::ExtensionError> {
        barrier(self, "host-ui.publish")?;
        let Some(ui) = self.ui.clone() else {
            return Err(wit_error(ErrorReason::UnknownMethod, None));
        };
        let generation = generation_from_wit("generation", params.generation)
            .map_err(|e| wit_error(ErrorReason::InvalidParams, Some(e)))?;
        let payload = RawValue::from_string(params.payload)
            .map_err(|e| wit_error(ErrorReason::InvalidParams, Some(format!("payload: {e}"))))?;
        let wire_params = wire::UIPublishParams {
            surface_id: params.surface_id,
            session_id: params.session_id,
            generation,
            kind: publish_kind_from_wit(params.kind),
            payload,
        };
        wire_params
            .validate()
            .map_err(|e| wit_error(ErrorReason::InvalidParams, Some(e.to_string())))?;
        ui.publish(&self.plugin_id, wire_params)
            .map(|r| host_ui::UiPublishResult {
                accepted: r.accepted,
            })
            .map_err(|(reason, message)| wit_error(reason, message))
    }

    fn request(
        &mut self,
        params: host_ui::UiRequestParams,
    ) -> Result<host_ui::UiRequestResult, types::ExtensionError> {
        barrier(self, "host-ui.request")?;
        let Some(ui) = self.ui.clone() else {
            return Err(wit_error(ErrorReason::UnknownMethod, None));
        };
        let generation = generation_from_wit("generation", params.generation)
            .map_err(|e| wit_error(ErrorReason::InvalidParams, Some(e)))?;
        let payload = RawValue::from_string(params.payload)
            .map_err(|e| wit_error(ErrorReason::InvalidParams, Some(format!("payload: {e}"))))?;
        let wire_params = wire::UIRequestParams {
            surface_id: params.surface_id,
            session_id: params.session_id,
            generation,
            kind: request_kind_from_wit(params.kind),
            payload,
        };
        wire_params
            .validate()
            .map_err(|e| wit_error(ErrorReason::InvalidParams, Some(e.to_string())))?;
        let result = ui
            .request(&self.plugin_id, wire_params)
            .map_err(|(reason, message)| wit_error(reason, message))?;
        let values = if result.values.is_empty() {
            None
        } else {
            Some(serde_json::to_string(&result.values).map_err(|e| {
                wit_error(ErrorReason::Internal, Some(format!("answer values: {e}")))
            })?)
        };
        Ok(host_ui::UiRequestResult {
            cancelled: result.cancelled,
            values,
        })
    }
}

impl host_provider::Host for HostState {
    fn stream_chunk(&mut self, params: host_provider::StreamChunkParams) {
        if barrier(self, "host-provider.stream-chunk").is_err() {
            return;
        }
        let stream_id = params.stream_id.clone();
        let converted = chunk_from_wit(params.chunk).and_then(|chunk| {
            Ok(wire::StreamChunkParams {
                stream_id: params.stream_id,
                seq: params.seq,
                chunk,
                generation: params
                    .generation
                    .map(|g| generation_from_wit("generation", g))
                    .transpose()?,
                epoch: params.epoch,
            })
        });
        self.emitted.push(match converted {
            Ok(chunk) => Emission::Chunk(Box::new(chunk)),
            Err(why) => Emission::Invalid { stream_id, why },
        });
    }

    fn stream_end(&mut self, params: host_provider::StreamEndParams) {
        if barrier(self, "host-provider.stream-end").is_err() {
            return;
        }
        self.emitted.push(Emission::End(wire::StreamEndParams {
            stream_id: params.stream_id,
            last_seq: params.last_seq,
            error: params.error,
            interrupted: params.interrupted,
        }));
    }
}
