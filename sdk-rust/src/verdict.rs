//! What an interceptor answers: continue, block, replace, allow or deny.

use crate::error::Error;
use reasonix_protocol::types::{Decision, InterceptResult, RawJson};
use serde::Serialize;

/// An interceptor's ruling on one payload.
///
/// `Allow` and `Deny` are legal only at `permission.decision`; the host
/// treats them anywhere else as a contract violation.
#[derive(Debug, Clone)]
pub enum Verdict {
    /// Pass the payload on unchanged.
    Continue,
    /// Stop the operation; the host shows the (redacted) reason.
    Block { reason: String },
    /// Replace the whole payload with this JSON (re-validated by the host).
    Replace { replacement: RawJson },
    /// Allow the permission (`permission.decision` only).
    Allow { reason: Option<String> },
    /// Deny the permission (`permission.decision` only).
    Deny { reason: Option<String> },
}

impl Verdict {
    /// Pass the payload on.
    pub fn proceed() -> Self {
        Verdict::Continue
    }

    /// Stop the operation with a reason the user sees.
    pub fn block(reason: impl Into<String>) -> Self {
        Verdict::Block {
            reason: reason.into(),
        }
    }

    /// Replace the payload with `value` serialised to JSON. It must be the
    /// point's whole payload DTO (e.g. [`crate::payloads::InputPayload`]).
    pub fn replace<T: Serialize + ?Sized>(value: &T) -> Result<Self, Error> {
        Ok(Verdict::Replace {
            replacement: serde_json::value::to_raw_value(value)?,
        })
    }

    /// Replace the payload with raw JSON text (checked to be JSON).
    pub fn replace_json(text: &str) -> Result<Self, Error> {
        let replacement = serde_json::value::RawValue::from_string(text.to_owned())
            .map_err(|e| Error::failed(format!("replacement is not JSON: {e}")))?;
        Ok(Verdict::Replace { replacement })
    }

    /// Allow at `permission.decision`.
    pub fn allow() -> Self {
        Verdict::Allow { reason: None }
    }

    /// Deny at `permission.decision`, with a reason the user sees.
    pub fn deny(reason: impl Into<String>) -> Self {
        Verdict::Deny {
            reason: Some(reason.into()),
        }
    }

    /// The wire decision.
    pub fn decision(&self) -> Decision {
        match self {
            Verdict::Continue => Decision::Continue,
            Verdict::Block { .. } => Decision::Block,
            Verdict::Replace { .. } => Decision::Replace,
            Verdict::Allow { .. } => Decision::Allow,
            Verdict::Deny { .. } => Decision::Deny,
        }
    }

    /// The `extension/intercept` result. Replacements always travel inline
    /// (only the host mints content refs), so they must fit in a frame.
    pub fn into_result(self) -> InterceptResult {
        let decision = self.decision();
        let (reason, replacement) = match self {
            Verdict::Continue => (None, None),
            Verdict::Block { reason } => (Some(reason), None),
            Verdict::Replace { replacement } => (None, Some(replacement)),
            Verdict::Allow { reason } | Verdict::Deny { reason } => (reason, None),
        };
        InterceptResult {
            decision,
            reason: reason.filter(|r| !r.trim().is_empty()),
            replacement,
            externalized: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reasonix_protocol::payloads::InputPayload;

    #[test]
    fn results_carry_exactly_what_the_decision_needs() {
        let r = Verdict::replace(&InputPayload { text: "hi".into() })
            .unwrap()
            .into_result();
        assert_eq!(r.decision, Decision::Replace);
        assert_eq!(r.replacement.unwrap().get(), r#"{"text":"hi"}"#);
        let b = Verdict::block("no").into_result();
        assert_eq!(
            (b.decision, b.reason.as_deref()),
            (Decision::Block, Some("no"))
        );
        assert!(b.replacement.is_none());
        let c = serde_json::to_string(&Verdict::Continue.into_result()).unwrap();
        assert_eq!(c, r#"{"decision":"continue"}"#);
        assert_eq!(Verdict::allow().decision(), Decision::Allow);
        assert_eq!(Verdict::deny("x").decision(), Decision::Deny);
        assert!(Verdict::replace_json("{").is_err());
    }
}
