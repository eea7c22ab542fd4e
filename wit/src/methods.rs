//! The 17 methods of generation B: names, direction, class, and the strict
//! params decoder per method.

use crate::types::*;
use crate::validate::{DecodeError, decode_params};
use serde_json::value::RawValue;
use std::fmt;

pub const EXTENSION_INITIALIZE: &str = "extension/initialize";
pub const EXTENSION_INITIALIZED: &str = "extension/initialized";
pub const EXTENSION_SHUTDOWN: &str = "extension/shutdown";
pub const EXTENSION_INTERCEPT: &str = "extension/intercept";
pub const EXTENSION_EVENT: &str = "extension/event";
pub const EXTENSION_RESOURCES_CHANGED: &str = "extension/resources/changed";
pub const EXTENSION_PROVIDER_CATALOG: &str = "extension/provider/catalog";
pub const EXTENSION_PROVIDER_STREAM_OPEN: &str = "extension/provider/stream/open";
pub const EXTENSION_PROVIDER_STREAM_CANCEL: &str = "extension/provider/stream/cancel";
pub const EXTENSION_PROVIDER_STREAM_CHUNK: &str = "extension/provider/stream/chunk";
pub const EXTENSION_PROVIDER_STREAM_END: &str = "extension/provider/stream/end";
pub const EXTENSION_UI_ACTION: &str = "extension/ui/action";
pub const EXTENSION_UI_SUBMIT: &str = "extension/ui/submit";
pub const EXTENSION_TOOL_CALL: &str = "extension/tool/call";
pub const HOST_UI_PUBLISH: &str = "host/ui/publish";
pub const HOST_UI_REQUEST: &str = "host/ui/request";
pub const HOST_CONTENT_READ: &str = "host/content/read";

/// Who sends a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    HostToExtension,
    ExtensionToHost,
}

/// The schema's `class` of a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MethodClass {
    Lifecycle,
    Intercept,
    Observation,
    Provider,
    Ui,
    Content,
    Tool,
}

impl MethodClass {
    /// The schema's name of the class.
    pub fn as_str(self) -> &'static str {
        match self {
            MethodClass::Lifecycle => "lifecycle",
            MethodClass::Intercept => "intercept",
            MethodClass::Observation => "observation",
            MethodClass::Provider => "provider",
            MethodClass::Ui => "ui",
            MethodClass::Content => "content",
            MethodClass::Tool => "tool",
        }
    }
}

/// One of the 17 methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    Initialize,
    Initialized,
    Shutdown,
    Intercept,
    Event,
    ResourcesChanged,
    ProviderCatalog,
    ProviderStreamOpen,
    ProviderStreamCancel,
    ProviderStreamChunk,
    ProviderStreamEnd,
    UiAction,
    UiSubmit,
    ToolCall,
    UiPublish,
    UiRequest,
    ContentRead,
}

impl Method {
    /// Every method.
    pub const ALL: [Method; 17] = [
        Method::Initialize,
        Method::Initialized,
        Method::Shutdown,
        Method::Intercept,
        Method::Event,
        Method::ResourcesChanged,
        Method::ProviderCatalog,
        Method::ProviderStreamOpen,
        Method::ProviderStreamCancel,
        Method::ProviderStreamChunk,
        Method::ProviderStreamEnd,
        Method::UiAction,
        Method::UiSubmit,
        Method::ToolCall,
        Method::UiPublish,
        Method::UiRequest,
        Method::ContentRead,
    ];

    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Initialize => EXTENSION_INITIALIZE,
            Method::Initialized => EXTENSION_INITIALIZED,
            Method::Shutdown => EXTENSION_SHUTDOWN,
            Method::Intercept => EXTENSION_INTERCEPT,
            Method::Event => EXTENSION_EVENT,
            Method::ResourcesChanged => EXTENSION_RESOURCES_CHANGED,
            Method::ProviderCatalog => EXTENSION_PROVIDER_CATALOG,
            Method::ProviderStreamOpen => EXTENSION_PROVIDER_STREAM_OPEN,
            Method::ProviderStreamCancel => EXTENSION_PROVIDER_STREAM_CANCEL,
            Method::ProviderStreamChunk => EXTENSION_PROVIDER_STREAM_CHUNK,
            Method::ProviderStreamEnd => EXTENSION_PROVIDER_STREAM_END,
            Method::UiAction => EXTENSION_UI_ACTION,
            Method::UiSubmit => EXTENSION_UI_SUBMIT,
            Method::ToolCall => EXTENSION_TOOL_CALL,
            Method::UiPublish => HOST_UI_PUBLISH,
            Method::UiRequest => HOST_UI_REQUEST,
            Method::ContentRead => HOST_CONTENT_READ,
        }
    }

    /// Looks a wire name up; `None` for unknown methods (including the
    /// generation-A browser methods).
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Who sends it.
    pub fn direction(self) -> Direction {
        match self {
            Method::ProviderStreamChunk
            | Method::ProviderStreamEnd
            | Method::UiPublish
            | Method::UiRequest
            | Method::ContentRead => Direction::ExtensionToHost,
            _ => Direction::HostToExtension,
        }
    }

    /// The schema's class.
    pub fn class(self) -> MethodClass {
        match self {
            Method::Initialize | Method::Initialized | Method::Shutdown => MethodClass::Lifecycle,
            Method::Intercept => MethodClass::Intercept,
            Method::Event | Method::ResourcesChanged => MethodClass::Observation,
            Method::ProviderCatalog
            | Method::ProviderStreamOpen
            | Method::ProviderStreamCancel
            | Method::ProviderStreamChunk
            | Method::ProviderStreamEnd => MethodClass::Provider,
            Method::UiAction | Method::UiSubmit | Method::UiPublish | Method::UiRequest => {
                MethodClass::Ui
            }
            Method::ContentRead => MethodClass::Content,
            Method::ToolCall => MethodClass::Tool,
        }
    }

    /// True for the five notifications (no id, no result).
    pub fn is_notification(self) -> bool {
        matches!(
            self,
            Method::Initialized
                | Method::Event
                | Method::ResourcesChanged
                | Method::ProviderStreamChunk
                | Method::ProviderStreamEnd
        )
    }

    /// The `$defs` name of the params type.
    pub fn params_def(self) -> &'static str {
        match self {
            Method::Initialize => "InitializeParams",
            Method::Initialized => "InitializedParams",
            Method::Shutdown => "ShutdownParams",
            Method::Intercept => "InterceptParams",
            Method::Event => "EventParams",
            Method::ResourcesChanged => "ResourcesChangedParams",
            Method::ProviderCatalog => "ProviderCatalogParams",
            Method::ProviderStreamOpen => "StreamOpenParams",
            Method::ProviderStreamCancel => "StreamCancelParams",
            Method::ProviderStreamChunk => "StreamChunkParams",
            Method::ProviderStreamEnd => "StreamEndParams",
            Method::UiAction => "UIActionParams",
            Method::UiSubmit => "UISubmitParams",
            Method::ToolCall => "ToolCallParams",
            Method::UiPublish => "UIPublishParams",
            Method::UiRequest => "UIRequestParams",
            Method::ContentRead => "ContentReadParams",
        }
    }

    /// The `$defs` name of the result type (`None` for notifications).
    pub fn result_def(self) -> Option<&'static str> {
        Some(match self {
            Method::Initialize => "InitializeResult",
            Method::Shutdown => "ShutdownResult",
            Method::Intercept => "InterceptResult",
            Method::ProviderCatalog => "ProviderCatalogResult",
            Method::ProviderStreamOpen => "StreamOpenResult",
            Method::ProviderStreamCancel => "StreamCancelResult",
            Method::UiAction => "UIActionResult",
            Method::UiSubmit => "UISubmitResult",
            Method::ToolCall => "ToolCallResult",
            Method::UiPublish => "UIPublishResult",
            Method::UiRequest => "UIRequestResult",
            Method::ContentRead => "ContentReadResult",
            Method::Initialized
            | Method::Event
            | Method::ResourcesChanged
            | Method::ProviderStreamChunk
            | Method::ProviderStreamEnd => return None,
        })
    }

    /// Strictly decodes params of this method (absent params = `{}`).
    pub fn decode_params(self, raw: Option<&RawValue>) -> Result<Params, DecodeError> {
        Ok(match self {
            Method::Initialize => Params::Initialize(decode_params(raw)?),
            Method::Initialized => Params::Initialized(decode_params(raw)?),
            Method::Shutdown => Params::Shutdown(decode_params(raw)?),
            Method::Intercept => Params::Intercept(decode_params(raw)?),
            Method::Event => Params::Event(decode_params(raw)?),
            Method::ResourcesChanged => Params::ResourcesChanged(decode_params(raw)?),
            Method::ProviderCatalog => Params::ProviderCatalog(decode_params(raw)?),
            Method::ProviderStreamOpen => Params::ProviderStreamOpen(decode_params(raw)?),
            Method::ProviderStreamCancel => Params::ProviderStreamCancel(decode_params(raw)?),
            Method::ProviderStreamChunk => Params::ProviderStreamChunk(decode_params(raw)?),
            Method::ProviderStreamEnd => Params::ProviderStreamEnd(decode_params(raw)?),
            Method::UiAction => Params::UiAction(decode_params(raw)?),
            Method::UiSubmit => Params::UiSubmit(decode_params(raw)?),
            Method::ToolCall => Params::ToolCall(decode_params(raw)?),
            Method::UiPublish => Params::UiPublish(decode_params(raw)?),
            Method::UiRequest => Params::UiRequest(decode_params(raw)?),
            Method::ContentRead => Params::ContentRead(decode_params(raw)?),
        })
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Decoded params of any method.
#[derive(Debug, Clone)]
pub enum Params {
    Initialize(InitializeParams),
    Initialized(InitializedParams),
    Shutdown(ShutdownParams),
    Intercept(InterceptParams),
    Event(EventParams),
    ResourcesChanged(ResourcesChangedParams),
    ProviderCatalog(ProviderCatalogParams),
    ProviderStreamOpen(StreamOpenParams),
    ProviderStreamCancel(StreamCancelParams),
    ProviderStreamChunk(StreamChunkParams),
    ProviderStreamEnd(StreamEndParams),
    UiAction(UIActionParams),
    UiSubmit(UISubmitParams),
    ToolCall(ToolCallParams),
    UiPublish(UIPublishParams),
    UiRequest(UIRequestParams),
    ContentRead(ContentReadParams),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seventeen_methods_nine_three_three_two() {
        let count = |dir, notif| {
            Method::ALL
                .iter()
                .filter(|m| m.direction() == dir && m.is_notification() == notif)
                .count()
        };
        assert_eq!(count(Direction::HostToExtension, false), 9);
        assert_eq!(count(Direction::ExtensionToHost, false), 3);
        assert_eq!(count(Direction::HostToExtension, true), 3);
        assert_eq!(count(Direction::ExtensionToHost, true), 2);
        for m in Method::ALL {
            assert_eq!(Method::from_name(m.name()), Some(m));
            assert_eq!(m.result_def().is_none(), m.is_notification());
        }
        assert_eq!(Method::from_name("host/browser/tab/list"), None);
        assert_eq!(Method::ToolCall.class(), MethodClass::Tool);
    }

    #[test]
    fn absent_params_decode_as_empty_object() {
        assert!(matches!(
            Method::Initialized.decode_params(None),
            Ok(Params::Initialized(_))
        ));
        let err = Method::Shutdown.decode_params(None).unwrap_err();
        assert!(err.to_string().contains("timeoutMillis"), "{err}");
    }
}
