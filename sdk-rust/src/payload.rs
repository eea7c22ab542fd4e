//! The payload an interceptor or observer receives, already paged in from
//! a content reference when the host externalised it.

use crate::error::Error;
use reasonix_protocol::types::RawJson;
use reasonix_protocol::{HookPoint, PointPayload, decode_payload};
use serde::de::DeserializeOwned;

/// One hook point's payload as the JSON the host sent.
#[derive(Debug, Clone)]
pub struct Payload {
    point: HookPoint,
    raw: RawJson,
    externalized: bool,
}

impl Payload {
    pub(crate) fn new(point: HookPoint, raw: RawJson, externalized: bool) -> Self {
        Payload {
            point,
            raw,
            externalized,
        }
    }

    /// The point this payload belongs to.
    pub fn point(&self) -> HookPoint {
        self.point
    }

    /// The JSON text.
    pub fn json(&self) -> &str {
        self.raw.get()
    }

    /// The raw JSON value.
    pub fn raw(&self) -> &RawJson {
        &self.raw
    }

    /// True when the host sent the payload as a content reference and the
    /// SDK read it back through `host/content/read`.
    pub fn was_externalized(&self) -> bool {
        self.externalized
    }

    /// Decodes into any serde type (lenient: unknown members are ignored
    /// unless `T` denies them). A mismatch is `invalid_params`.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, Error> {
        serde_json::from_str(self.raw.get())
            .map_err(|e| Error::invalid_params(format!("payload of {}: {e}", self.point)))
    }

    /// Decodes strictly into the point's own DTO (see [`crate::payloads`]).
    pub fn typed(&self) -> Result<PointPayload, Error> {
        Ok(decode_payload(self.point, &self.raw)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reasonix_protocol::payloads::InputPayload;
    use reasonix_protocol::types::raw_json;

    #[test]
    fn decodes_lenient_and_strict() {
        let p = Payload::new(
            HookPoint::InputReceive,
            raw_json(r#"{"text":"hi"}"#).unwrap(),
            false,
        );
        let input: InputPayload = p.decode().unwrap();
        assert_eq!(input.text, "hi");
        assert!(matches!(p.typed().unwrap(), PointPayload::Input(_)));
        let odd = Payload::new(
            HookPoint::InputReceive,
            raw_json(r#"{"text":"hi","extra":1}"#).unwrap(),
            false,
        );
        let err = odd.typed().unwrap_err();
        assert_eq!(
            err.wire_reason(),
            reasonix_protocol::ErrorReason::InvalidParams
        );
        assert!(err.to_string().contains("extra"), "{err}");
    }
}
