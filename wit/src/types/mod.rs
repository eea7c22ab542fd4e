//! Serde types for every `$defs` entry of schema generation B.
//!
//! Conventions: every object is closed (`deny_unknown_fields`); required
//! fields carry no `default`; optional scalars are `Option` and optional
//! lists/maps are omitted when empty, matching the upstream Go SDK's
//! `omitempty` so the host sends exactly what upstream sends. Schema "any"
//! fields stay raw JSON.

mod content;
mod intercept;
mod lifecycle;
mod provider;
mod tool;
mod ui;

pub use content::*;
pub use intercept::*;
pub use lifecycle::*;
pub use provider::*;
pub use tool::*;
pub use ui::*;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// Raw JSON of a schema "any" field.
pub type RawJson = Box<RawValue>;

/// Links a Rust type to its `$defs` entry in the schema.
pub trait SchemaDef {
    /// The `$defs` key.
    const SCHEMA_DEF: &'static str;
}

macro_rules! schema_defs {
    ($($ty:ident),* $(,)?) => {
        $(impl SchemaDef for $ty { const SCHEMA_DEF: &'static str = stringify!($ty); })*
        /// Every `$defs` name that has a Rust type here.
        pub const SCHEMA_DEF_NAMES: &[&str] = &[$(stringify!($ty)),*];
    };
}

schema_defs!(
    CapabilityWire,
    ContentReadParams,
    ContentReadResult,
    EventParams,
    ExternalizedField,
    HostCapabilities,
    InitializeParams,
    InitializeResult,
    InitializedParams,
    InterceptParams,
    InterceptResult,
    ManifestExpectation,
    ProviderCatalogParams,
    ProviderCatalogResult,
    ProviderChunk,
    ProviderDescriptor,
    ProviderError,
    ProviderMessage,
    ProviderRequest,
    ProviderResponseFormat,
    ProviderToolCall,
    ProviderToolSchema,
    ProviderUsage,
    RequirementWire,
    ResourcesChangedParams,
    SessionContext,
    ShutdownParams,
    ShutdownResult,
    StreamCancelParams,
    StreamCancelResult,
    StreamChunkParams,
    StreamEndParams,
    StreamOpenParams,
    StreamOpenResult,
    ToolCallParams,
    ToolCallResult,
    UIActionDecl,
    UIActionParams,
    UIActionResult,
    UIPublishParams,
    UIPublishResult,
    UIRequestParams,
    UIRequestResult,
    UISubmitParams,
    UISubmitResult,
);

/// For an optional "any" field: keeps an explicit JSON `null` as
/// `Some("null")` so it stays distinguishable from an absent member (use with
/// `#[serde(default)]`).
pub fn present_raw<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RawJson>, D::Error> {
    RawJson::deserialize(d).map(Some)
}

/// Parses a JSON text into raw JSON (for building values by hand).
pub fn raw_json(text: &str) -> Result<RawJson, serde_json::Error> {
    RawValue::from_string(text.to_owned())
}

#[cfg(test)]
mod tests;
