//! The one trait an extension author implements.

use crate::declaration::Declaration;
use crate::error::Error;
use crate::host::Context;
use crate::payload::Payload;
use crate::stream::{ChunkStream, StreamRequest};
use crate::verdict::Verdict;
use reasonix_protocol::HookPoint;
use reasonix_protocol::types::{
    InitializeParams, ProviderDescriptor, RawJson, UIActionParams, UISubmitParams,
};

/// What a tool call returns: `content` is what the model reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub content: String,
    /// The tool reports its own failure (the model sees the content).
    pub is_error: bool,
}

impl ToolOutput {
    pub fn text(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
        }
    }
    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
        }
    }
}

macro_rules! point_methods {
    ($($(#[$doc:meta])* $method:ident => $point:ident;)*) => {
        /// An extension: one handshake, then whatever it declared.
        ///
        /// Only [`Extension::initialize`] is required. Every other method has
        /// a default: interceptors continue (each point's `on_*` method falls
        /// back to [`Extension::intercept_any`], the `*` interceptor),
        /// observers ignore, and calls the extension does not serve answer
        /// `unknown_method`.
        ///
        /// The same implementation runs as a native sidecar
        /// ([`crate::run_stdio`]) and as a wasm component
        /// ([`crate::export_extension!`]).
        pub trait Extension: Send + Sync + 'static {
            /// `extension/initialize`: declare what this extension serves.
            /// `init` carries the session, the host's capabilities and the
            /// manifest ceiling the declaration must stay within.
            fn initialize(&self, init: &InitializeParams) -> Result<Declaration, Error>;

            /// `extension/initialized`: the host accepted the handshake; host
            /// calls (UI, content) work from now on.
            fn initialized(&self, ctx: &Context) {
                let _ = ctx;
            }

            /// `extension/intercept` for any point. The default routes to
            /// the point's `on_*` method; override it to handle every point
            /// in one place.
            fn intercept(&self, ctx: &Context, payload: &Payload) -> Result<Verdict, Error> {
                match payload.point() {
                    $(HookPoint::$point => self.$method(ctx, payload),)*
                }
            }

            /// The `*` interceptor: points without an `on_*` method of their
            /// own end here. Default: continue.
            fn intercept_any(&self, ctx: &Context, payload: &Payload) -> Result<Verdict, Error> {
                let _ = (ctx, payload);
                Ok(Verdict::Continue)
            }

            $(
                $(#[$doc])*
                fn $method(&self, ctx: &Context, payload: &Payload) -> Result<Verdict, Error> {
                    self.intercept_any(ctx, payload)
                }
            )*

            /// `extension/event`: fire-and-forget observation of a point.
            fn observe(&self, ctx: &Context, payload: &Payload) {
                let _ = (ctx, payload);
            }

            /// `extension/resources/changed`.
            fn resources_changed(&self, ctx: &Context, paths: &[String]) {
                let _ = (ctx, paths);
            }

            /// `extension/tool/call` for a declared tool. `arguments` is the
            /// JSON the model produced (may be `null`). An `Err` of
            /// [`Error::Failed`] reaches the model as `isError` content; a
            /// protocol error is a JSON-RPC error (the call could not run).
            fn call_tool(
                &self,
                ctx: &Context,
                name: &str,
                arguments: &RawJson,
            ) -> Result<ToolOutput, Error> {
                let _ = (ctx, name, arguments);
                Err(Error::unknown_method())
            }

            /// `extension/provider/catalog`. Default: the providers declared
            /// at the handshake.
            fn provider_catalog(&self, ctx: &Context) -> Result<Vec<ProviderDescriptor>, Error> {
                Ok(ctx.declaration().map(|d| d.providers.clone()).unwrap_or_default())
            }

            /// `extension/provider/stream/open`: return the chunks of the
            /// response. An `Err` refuses the stream (`provider_failed`).
            /// The SDK numbers and sends the chunks after the open answer,
            /// then one `stream/end`.
            fn open_stream(&self, ctx: &Context, request: StreamRequest) -> Result<ChunkStream, Error> {
                let _ = (ctx, request);
                Err(Error::unknown_method())
            }

            /// `extension/ui/action`. `Ok(Some(text))` accepts with a
            /// message; an `Err` answers `accepted: false` with its text.
            fn ui_action(&self, ctx: &Context, action: &UIActionParams) -> Result<Option<String>, Error> {
                let _ = (ctx, action);
                Err(Error::unknown_method())
            }

            /// `extension/ui/submit`. An `Err` answers `accepted: false`.
            fn ui_submit(&self, ctx: &Context, submit: &UISubmitParams) -> Result<(), Error> {
                let _ = (ctx, submit);
                Err(Error::unknown_method())
            }

            /// `extension/shutdown`: release what you hold. Bounded by the
            /// host's `timeoutMillis` on a native sidecar.
            fn shutdown(&self, ctx: &Context) {
                let _ = ctx;
            }
        }
    };
}

point_methods! {
    /// `session.start`.
    on_session_start => SessionStart;
    /// `session.end`.
    on_session_end => SessionEnd;
    /// `session.load`.
    on_session_load => SessionLoad;
    /// `session.save`.
    on_session_save => SessionSave;
    /// `session.rotate`.
    on_session_rotate => SessionRotate;
    /// `input.receive`: the user's text (`InputPayload`).
    on_input_receive => InputReceive;
    /// `agent.before_start`.
    on_agent_before_start => AgentBeforeStart;
    /// `system_prompt.build`.
    on_system_prompt_build => SystemPromptBuild;
    /// `context.prepare`.
    on_context_prepare => ContextPrepare;
    /// `provider.request`.
    on_provider_request => ProviderRequest;
    /// `provider.response`.
    on_provider_response => ProviderResponse;
    /// `tool.before`.
    on_tool_before => ToolBefore;
    /// `tool.after`.
    on_tool_after => ToolAfter;
    /// `permission.decision`: the only point where allow/deny are legal.
    on_permission_decision => PermissionDecision;
    /// `compaction.prepare`.
    on_compaction_prepare => CompactionPrepare;
    /// `compaction.complete`.
    on_compaction_complete => CompactionComplete;
    /// `frontend.event`.
    on_frontend_event => FrontendEvent;
}
