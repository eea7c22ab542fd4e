//! The transport-independent half of serving an extension: the handshake
//! checks, payload rehydration, and the mapping of every method onto the
//! [`Extension`] trait. The stdio transport and the wasm adapter both call
//! these with strictly decoded params.

use crate::content::resolve_field;
use crate::declaration::outside_manifest;
use crate::error::Error;
use crate::extension::Extension;
use crate::host::{Context, LogLevel, Shared};
use crate::payload::Payload;
use crate::stream::{CancelToken, ChunkStream, StreamRequest};
use reasonix_protocol::types::{
    EventParams, InitializeParams, InitializeResult, InterceptParams, InterceptResult,
    ProviderCatalogResult, ResourcesChangedParams, StreamOpenParams, ToolCallParams,
    ToolCallResult, UIActionParams, UIActionResult, UISubmitParams, UISubmitResult,
};
use reasonix_protocol::{ErrorReason, PROTOCOL_ID, PROTOCOL_MAJOR};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The JSON pointer of the externalisable payload field.
const PAYLOAD_POINTER: &str = "/payload";

pub(crate) struct Core {
    pub ext: Box<dyn Extension>,
    pub shared: Arc<Shared>,
}

impl Core {
    pub fn new(ext: Box<dyn Extension>, shared: Arc<Shared>) -> Self {
        Core { ext, shared }
    }

    pub fn context(&self, timeout_millis: Option<u64>) -> Context {
        Context::new(self.shared.clone(), timeout_millis)
    }

    fn log(&self, level: LogLevel, message: &str) {
        self.shared.link.log(level, message);
    }

    /// Logs what the peer will not see (handler text stays local).
    fn report(&self, what: &str, error: &Error) {
        if !error.is_for_peer() {
            self.log(LogLevel::Error, &format!("{what} failed: {error}"));
        }
    }

    /// Checks the protocol identity, asks the extension for its
    /// declaration and records the session. An `unsupported_version` error
    /// means the transport must close the connection after answering.
    pub fn initialize(&self, params: InitializeParams) -> Result<InitializeResult, Error> {
        if params.protocol_id != PROTOCOL_ID {
            return Err(Error::protocol(
                ErrorReason::UnsupportedVersion,
                format!(
                    "protocol {:?} is not supported; this extension speaks {PROTOCOL_ID}",
                    params.protocol_id
                ),
            ));
        }
        let major: u32 = params.protocol_version.trim().parse().map_err(|_| {
            Error::protocol(
                ErrorReason::ProtocolError,
                format!(
                    "protocolVersion {:?} is not an integer",
                    params.protocol_version
                ),
            )
        })?;
        if major != PROTOCOL_MAJOR {
            return Err(Error::protocol(
                ErrorReason::UnsupportedVersion,
                format!(
                    "protocol major {major} is not supported; this extension speaks {PROTOCOL_MAJOR}"
                ),
            ));
        }
        let declaration = self
            .ext
            .initialize(&params)
            .inspect_err(|e| self.report("initialize", e))?;
        let result = declaration.into_result()?;
        for problem in outside_manifest(&result, &params.manifest) {
            self.log(
                LogLevel::Warn,
                &format!(
                    "the host will refuse this handshake (capability_not_declared): {problem}"
                ),
            );
        }
        // A successful handshake happens once per connection; the transports
        // refuse a second one before it gets here.
        let _ = self.shared.init.set(params);
        let _ = self.shared.declaration.set(result.clone());
        Ok(result)
    }

    /// Opens the barrier and runs the author's `initialized` hook.
    pub fn initialized(&self) {
        self.shared.ready.store(true, Ordering::Release);
        self.ext.initialized(&self.context(None));
    }

    pub fn intercept(&self, params: InterceptParams) -> Result<InterceptResult, Error> {
        let ctx = self.context(Some(params.timeout_millis));
        let (raw, paged) = resolve_field(
            &*self.shared.link,
            PAYLOAD_POINTER,
            params.payload,
            &params.externalized,
        )?;
        let payload = Payload::new(params.event, raw, paged);
        match self.ext.intercept(&ctx, &payload) {
            Ok(verdict) => Ok(verdict.into_result()),
            Err(e) => {
                self.report(&format!("interceptor for {}", params.event), &e);
                if ctx.is_past_deadline() && !e.is_for_peer() {
                    Err(Error::reason(ErrorReason::InterceptTimeout))
                } else {
                    Err(e)
                }
            }
        }
    }

    pub fn event(&self, params: EventParams) {
        let ctx = self.context(None);
        match resolve_field(
            &*self.shared.link,
            PAYLOAD_POINTER,
            params.payload,
            &params.externalized,
        ) {
            Ok((raw, paged)) => self
                .ext
                .observe(&ctx, &Payload::new(params.event, raw, paged)),
            Err(e) => self.log(
                LogLevel::Warn,
                &format!("dropped the {} event: {e}", params.event),
            ),
        }
    }

    pub fn resources_changed(&self, params: ResourcesChangedParams) {
        self.ext
            .resources_changed(&self.context(None), &params.paths);
    }

    pub fn tool_call(&self, params: ToolCallParams) -> Result<ToolCallResult, Error> {
        let declared = self
            .shared
            .declaration
            .get()
            .is_some_and(|d| d.tools.contains(&params.name));
        if !declared {
            return Err(Error::protocol(
                ErrorReason::UnknownMethod,
                format!("tool {:?} is not served by this extension", params.name),
            ));
        }
        let ctx = self.context(Some(params.timeout_millis));
        match self.ext.call_tool(&ctx, &params.name, &params.arguments) {
            Ok(out) => Ok(ToolCallResult {
                content: out.content,
                is_error: out.is_error.then_some(true),
            }),
            Err(e) if e.is_for_peer() => Err(e),
            Err(e) => Ok(ToolCallResult {
                content: e.to_string(),
                is_error: Some(true),
            }),
        }
    }

    pub fn provider_catalog(&self) -> Result<ProviderCatalogResult, Error> {
        let providers = self
            .ext
            .provider_catalog(&self.context(None))
            .inspect_err(|e| self.report("provider catalog", e))?;
        Ok(ProviderCatalogResult { providers })
    }

    /// Asks the extension for the stream's chunks. Any refusal other than
    /// "not served" is `provider_failed`.
    pub fn open_stream(
        &self,
        params: StreamOpenParams,
        cancel: CancelToken,
    ) -> Result<ChunkStream, Error> {
        let request = StreamRequest {
            stream_id: params.stream_id,
            provider_ref: params.provider_ref,
            model: params.model,
            effort: params.effort,
            request: params.request,
            cancel,
        };
        let stream_id = request.stream_id.clone();
        self.ext
            .open_stream(&self.context(None), request)
            .map_err(|e| {
                self.report(&format!("provider stream {stream_id}"), &e);
                if e.wire_reason() == ErrorReason::UnknownMethod {
                    e
                } else {
                    Error::reason(ErrorReason::ProviderFailed)
                }
            })
    }

    pub fn ui_action(&self, params: UIActionParams) -> Result<UIActionResult, Error> {
        match self.ext.ui_action(&self.context(None), &params) {
            Ok(message) => Ok(UIActionResult {
                accepted: true,
                message,
            }),
            Err(e) if e.wire_reason() == ErrorReason::UnknownMethod => Err(e),
            Err(e) => Ok(UIActionResult {
                accepted: false,
                message: Some(e.to_string()),
            }),
        }
    }

    pub fn ui_submit(&self, params: UISubmitParams) -> Result<UISubmitResult, Error> {
        match self.ext.ui_submit(&self.context(None), &params) {
            Ok(()) => Ok(UISubmitResult { accepted: true }),
            Err(e) if e.wire_reason() == ErrorReason::UnknownMethod => Err(e),
            Err(e) => {
                self.report(&format!("UI submit of {}", params.surface_id), &e);
                Ok(UISubmitResult { accepted: false })
            }
        }
    }

    pub fn shutdown(&self, timeout_millis: u64) {
        self.ext.shutdown(&self.context(Some(timeout_millis)));
    }
}
