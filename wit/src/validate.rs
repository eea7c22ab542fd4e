//! Checks the schema states beyond types (`nonempty`, minimums, sha256
//! format, chunk invariants), and the strict per-method decode.

use crate::strict::ObjectsOnly;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

/// A value that decoded but breaks a rule; `path` names the field
/// (`manifest.provides[0].id`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ValidationError {
    pub path: String,
    pub message: String,
}

impl ValidationError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }

    /// Prefixes the path with the enclosing field.
    pub fn within(mut self, field: &str) -> Self {
        self.path = join(field, &self.path);
        self
    }

    /// Prefixes the path with the enclosing list field and index.
    pub fn within_index(self, field: &str, index: usize) -> Self {
        self.within(&format!("{field}[{index}]"))
    }
}

fn join(outer: &str, inner: &str) -> String {
    if inner.is_empty() {
        outer.to_owned()
    } else if inner.starts_with('[') {
        format!("{outer}{inner}")
    } else {
        format!("{outer}.{inner}")
    }
}

/// Rules a decoded value must satisfy beyond its Rust type.
pub trait Validate {
    fn validate(&self) -> Result<(), ValidationError>;
}

/// Validates each element of a list field, naming the index on failure.
pub fn validate_list<T: Validate>(field: &str, items: &[T]) -> Result<(), ValidationError> {
    for (i, item) in items.iter().enumerate() {
        item.validate().map_err(|e| e.within_index(field, i))?;
    }
    Ok(())
}

/// `nonempty`: not blank after trimming.
pub fn nonempty(field: &str, value: &str) -> Result<(), ValidationError> {
    if value.trim().is_empty() {
        return Err(ValidationError::new(field, "must not be empty"));
    }
    Ok(())
}

/// Like [`nonempty`] for an optional field that is checked only if present.
pub fn nonempty_opt(field: &str, value: Option<&str>) -> Result<(), ValidationError> {
    value.map_or(Ok(()), |v| nonempty(field, v))
}

/// A lower bound on an integer field.
pub fn at_least(field: &str, value: u64, min: u64) -> Result<(), ValidationError> {
    if value < min {
        return Err(ValidationError::new(
            field,
            format!("must be >= {min}, got {value}"),
        ));
    }
    Ok(())
}

/// A lower bound of zero on a number field (NaN fails too).
pub fn non_negative_number(field: &str, value: Option<f64>) -> Result<(), ValidationError> {
    match value {
        Some(v) if v.is_nan() || v < 0.0 => Err(ValidationError::new(
            field,
            format!("must be >= 0, got {v}"),
        )),
        _ => Ok(()),
    }
}

/// A sha256 digest: lowercase hex, 64 characters.
pub fn sha256_hex(field: &str, value: &str) -> Result<(), ValidationError> {
    if !crate::content::is_sha256_hex(value) {
        return Err(ValidationError::new(
            field,
            format!("must be 64 lowercase hex characters, got {value:?}"),
        ));
    }
    Ok(())
}

/// A raw "any" field that must hold a JSON object.
pub fn json_object(field: &str, raw: &RawValue) -> Result<(), ValidationError> {
    if !raw.get().trim_start().starts_with('{') {
        return Err(ValidationError::new(field, "must be a JSON object"));
    }
    Ok(())
}

/// Why strict decoding of params, a result or a payload failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Not the right JSON shape (unknown field, missing required field,
    /// wrong type or enum value, trailing JSON).
    #[error("{}{message}", path_prefix(path))]
    Shape { path: String, message: String },
    /// The shape is right but a rule is broken.
    #[error(transparent)]
    Invalid(#[from] ValidationError),
}

fn path_prefix(path: &str) -> String {
    if path.is_empty() || path == "." {
        String::new()
    } else {
        format!("{path}: ")
    }
}

impl DecodeError {
    /// The field path the error names (empty for the whole value).
    pub fn path(&self) -> &str {
        match self {
            DecodeError::Shape { path, .. } => path,
            DecodeError::Invalid(v) => &v.path,
        }
    }
}

/// Strictly decodes a JSON text into `T` (unknown fields rejected through
/// `deny_unknown_fields`, trailing JSON rejected), then validates it.
///
/// Decoded once without tracking the path (the hot path: tracking it costs
/// on every field); a text that fails is decoded again with the path
/// tracked, so the error names the field all the same.
pub fn decode_json<T: DeserializeOwned + Validate>(text: &str) -> Result<T, DecodeError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = match T::deserialize(ObjectsOnly(&mut de)) {
        Ok(value) => value,
        Err(error) => return Err(shape_error::<T>(text, error)),
    };
    de.end().map_err(|e| DecodeError::Shape {
        path: String::new(),
        message: format!("trailing data after the JSON value: {e}"),
    })?;
    value.validate()?;
    Ok(value)
}

/// The error of a text that failed to decode, with the failing field's path.
#[cold]
fn shape_error<T: DeserializeOwned>(text: &str, first: serde_json::Error) -> DecodeError {
    let mut de = serde_json::Deserializer::from_str(text);
    match serde_path_to_error::deserialize::<_, T>(ObjectsOnly(&mut de)) {
        Err(e) => {
            let path = e.path().to_string();
            DecodeError::Shape {
                path: if path == "." { String::new() } else { path },
                message: e.into_inner().to_string(),
            }
        }
        // Decoding is deterministic; kept total all the same.
        Ok(_) => DecodeError::Shape {
            path: String::new(),
            message: first.to_string(),
        },
    }
}

/// Strictly decodes method params; absent params decode as `{}`.
pub fn decode_params<T: DeserializeOwned + Validate>(
    raw: Option<&RawValue>,
) -> Result<T, DecodeError> {
    decode_json(raw.map_or("{}", RawValue::get))
}

/// Strictly decodes a method result.
pub fn decode_result<T: DeserializeOwned + Validate>(raw: &RawValue) -> Result<T, DecodeError> {
    decode_json(raw.get())
}
