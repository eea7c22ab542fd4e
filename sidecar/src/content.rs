//! Content references (§8): large intercept/event payloads are kept in a
//! per-connection store and sent as `null` plus one `externalized`
//! descriptor; the extension pages them back with `host/content/read`.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use reasonix_protocol::limits::{
    CONTENT_REF_CHUNK_BYTES, CONTENT_REF_OBJECT_BYTES, EXTERNALIZE_FIELD_BYTES,
};
use reasonix_protocol::types::{ContentEncoding, ContentReadResult, ExternalizedField, RawJson};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

/// Objects kept per connection; the oldest is evicted first.
pub const STORE_OBJECTS: usize = 64;

/// Why the store refused or could not serve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContentError {
    #[error("content object is {size} bytes; limit is {limit}")]
    TooLarge { size: usize, limit: usize },
    #[error("content reference {content_ref:?} is unknown or expired")]
    Expired { content_ref: String },
    #[error("offset {offset} is outside content reference {content_ref:?} ({total} bytes)")]
    BadOffset {
        content_ref: String,
        offset: u64,
        total: u64,
    },
}

struct Object {
    content_ref: String,
    bytes: Arc<[u8]>,
    sha256: String,
}

/// One connection's content store.
pub struct ContentStore {
    objects: VecDeque<Object>,
    nonce: [u8; 16],
    counter: u64,
}

impl Default for ContentStore {
    fn default() -> Self {
        Self::new()
    }
}

impl ContentStore {
    pub fn new() -> Self {
        // Refs only need to be unique per connection and unguessable enough
        // not to collide across connections: hash a process-wide counter,
        // the pid and the clock.
        static CONNECTIONS: AtomicU64 = AtomicU64::new(0);
        let mut seed = Sha256::new();
        seed.update(std::process::id().to_le_bytes());
        seed.update(CONNECTIONS.fetch_add(1, Ordering::Relaxed).to_le_bytes());
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        seed.update(now.to_le_bytes());
        let digest = seed.finalize();
        let mut nonce = [0u8; 16];
        nonce.copy_from_slice(&digest[..16]);
        ContentStore {
            objects: VecDeque::new(),
            nonce,
            counter: 0,
        }
    }

    fn mint_ref(&mut self) -> String {
        self.counter += 1;
        let mut h = Sha256::new();
        h.update(self.nonce);
        h.update(self.counter.to_le_bytes());
        format!("content_{}", hex::encode(&h.finalize()[..12]))
    }

    /// Stores `bytes` and returns its descriptor for `json_pointer`.
    pub fn put(
        &mut self,
        json_pointer: &str,
        bytes: &[u8],
    ) -> Result<ExternalizedField, ContentError> {
        if bytes.len() > CONTENT_REF_OBJECT_BYTES {
            return Err(ContentError::TooLarge {
                size: bytes.len(),
                limit: CONTENT_REF_OBJECT_BYTES,
            });
        }
        let sha256 = hex::encode(Sha256::digest(bytes));
        let content_ref = self.mint_ref();
        if self.objects.len() >= STORE_OBJECTS {
            self.objects.pop_front();
        }
        self.objects.push_back(Object {
            content_ref: content_ref.clone(),
            bytes: bytes.into(),
            sha256: sha256.clone(),
        });
        Ok(ExternalizedField {
            json_pointer: json_pointer.to_owned(),
            content_ref,
            total_bytes: bytes.len() as u64,
            sha256,
        })
    }

    fn find(&self, content_ref: &str) -> Option<&Object> {
        self.objects.iter().find(|o| o.content_ref == content_ref)
    }

    /// One `host/content/read` chunk: at most 256 KiB from `offset`;
    /// `nextOffset` only when more remains.
    pub fn read(&self, content_ref: &str, offset: u64) -> Result<ContentReadResult, ContentError> {
        let object = self
            .find(content_ref)
            .ok_or_else(|| ContentError::Expired {
                content_ref: content_ref.to_owned(),
            })?;
        let total = object.bytes.len() as u64;
        if offset > total {
            return Err(ContentError::BadOffset {
                content_ref: content_ref.to_owned(),
                offset,
                total,
            });
        }
        let start = offset as usize;
        let end = (start + CONTENT_REF_CHUNK_BYTES).min(object.bytes.len());
        Ok(ContentReadResult {
            content_ref: content_ref.to_owned(),
            offset,
            data_base64: base64::engine::general_purpose::STANDARD
                .encode(&object.bytes[start..end]),
            next_offset: (end < object.bytes.len()).then_some(end as u64),
            total_bytes: total,
            sha256: object.sha256.clone(),
            encoding: ContentEncoding::Utf8,
        })
    }

    /// The whole object behind `descriptor`, checked against its size and
    /// hash (for an externalised replacement naming a host ref).
    pub fn resolve(&self, descriptor: &ExternalizedField) -> Result<Arc<[u8]>, ResolveError> {
        let object = self
            .find(&descriptor.content_ref)
            .ok_or_else(|| ResolveError::Expired(descriptor.content_ref.clone()))?;
        if object.bytes.len() as u64 != descriptor.total_bytes {
            return Err(ResolveError::Mismatch(format!(
                "totalBytes {} but the object has {} bytes",
                descriptor.total_bytes,
                object.bytes.len()
            )));
        }
        // Hash the bytes again rather than trusting the stored digest: this
        // is the verification step before the content is used.
        let actual = hex::encode(Sha256::digest(&object.bytes));
        if !actual.eq_ignore_ascii_case(&descriptor.sha256) {
            return Err(ResolveError::Mismatch(format!(
                "sha256 {} does not match the object ({actual})",
                descriptor.sha256
            )));
        }
        Ok(object.bytes.clone())
    }

    /// Number of objects held.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }
}

/// Why an externalised replacement could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("content reference {0:?} is unknown or expired")]
    Expired(String),
    #[error("externalised content does not verify: {0}")]
    Mismatch(String),
    #[error("externalised content is not one JSON value: {0}")]
    NotJson(String),
    #[error("{0}")]
    Shape(String),
}

/// An owner-level field ready to send: inline, or `null` plus descriptor.
pub(crate) struct Outgoing {
    pub value: RawJson,
    pub externalized: Vec<ExternalizedField>,
}

/// Applies the §8 rule to one serialised field: over 64 KiB it goes to the
/// store and the wire carries `null` and one descriptor for `pointer`.
pub(crate) fn externalize(
    store: &mut ContentStore,
    pointer: &str,
    value: RawJson,
) -> Result<Outgoing, ContentError> {
    if value.get().len() <= EXTERNALIZE_FIELD_BYTES {
        return Ok(Outgoing {
            value,
            externalized: Vec::new(),
        });
    }
    let descriptor = store.put(pointer, value.get().as_bytes())?;
    Ok(Outgoing {
        value: null_raw(),
        externalized: vec![descriptor],
    })
}

pub(crate) fn null_raw() -> RawJson {
    RawValue::from_string("null".to_owned()).expect("null is JSON")
}

/// Resolves an externalised owner-level field received from the extension:
/// inline value and envelope at once is a protocol error; exactly one
/// descriptor naming `pointer`; bytes verified and decoded as one JSON value.
pub(crate) fn internalize(
    store: &ContentStore,
    pointer: &str,
    inline: Option<RawJson>,
    externalized: &[ExternalizedField],
) -> Result<Option<RawJson>, ResolveError> {
    if externalized.is_empty() {
        return Ok(inline);
    }
    if inline.as_ref().is_some_and(|v| v.get() != "null") {
        return Err(ResolveError::Shape(format!(
            "{pointer} is both inline and externalised"
        )));
    }
    let [descriptor] = externalized else {
        return Err(ResolveError::Shape(format!(
            "expected exactly one externalized descriptor, got {}",
            externalized.len()
        )));
    };
    if descriptor.json_pointer != pointer {
        return Err(ResolveError::Shape(format!(
            "externalized jsonPointer {:?} must be {pointer:?}",
            descriptor.json_pointer
        )));
    }
    let bytes = store.resolve(descriptor)?;
    let text = std::str::from_utf8(&bytes).map_err(|e| ResolveError::NotJson(e.to_string()))?;
    let value: RawJson =
        serde_json::from_str(text).map_err(|e| ResolveError::NotJson(e.to_string()))?;
    Ok(Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: String) -> RawJson {
        RawValue::from_string(text).unwrap()
    }

    #[test]
    fn small_values_stay_inline_large_ones_are_externalised() {
        let mut store = ContentStore::new();
        let small = raw(format!("\"{}\"", "a".repeat(EXTERNALIZE_FIELD_BYTES - 2)));
        let out = externalize(&mut store, "/payload", small).unwrap();
        assert!(out.externalized.is_empty());
        assert_eq!(out.value.get().len(), EXTERNALIZE_FIELD_BYTES);

        let big_text = format!("\"{}\"", "b".repeat(EXTERNALIZE_FIELD_BYTES - 1));
        let out = externalize(&mut store, "/payload", raw(big_text.clone())).unwrap();
        assert_eq!(out.value.get(), "null");
        let [d] = out.externalized.as_slice() else {
            panic!("one descriptor")
        };
        assert_eq!(d.json_pointer, "/payload");
        assert!(d.content_ref.starts_with("content_") && d.content_ref.len() == 32);
        assert!(d.content_ref[8..].bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(d.total_bytes as usize, big_text.len());
        assert_eq!(d.sha256, hex::encode(Sha256::digest(big_text.as_bytes())));
    }

    #[test]
    fn paging_and_expiry() {
        let mut store = ContentStore::new();
        let data = vec![b'x'; CONTENT_REF_CHUNK_BYTES * 2 + 10];
        let d = store.put("/payload", &data).unwrap();
        let first = store.read(&d.content_ref, 0).unwrap();
        assert_eq!(first.next_offset, Some(CONTENT_REF_CHUNK_BYTES as u64));
        let last = store
            .read(&d.content_ref, (CONTENT_REF_CHUNK_BYTES * 2) as u64)
            .unwrap();
        assert_eq!(last.next_offset, None);
        assert_eq!(last.data_base64, "eHh4eHh4eHh4eA==");
        let end = store.read(&d.content_ref, data.len() as u64).unwrap();
        assert_eq!((end.data_base64.as_str(), end.next_offset), ("", None));
        assert!(matches!(
            store.read(&d.content_ref, data.len() as u64 + 1),
            Err(ContentError::BadOffset { .. })
        ));
        assert!(matches!(
            store.read("content_000000000000000000000000", 0),
            Err(ContentError::Expired { .. })
        ));
        assert!(matches!(
            store.put("/payload", &vec![0; CONTENT_REF_OBJECT_BYTES + 1]),
            Err(ContentError::TooLarge { .. })
        ));
    }

    #[test]
    fn oldest_object_is_evicted() {
        let mut store = ContentStore::new();
        let first = store.put("/payload", b"1").unwrap();
        for _ in 0..STORE_OBJECTS {
            store.put("/payload", b"2").unwrap();
        }
        assert_eq!(store.len(), STORE_OBJECTS);
        assert!(store.read(&first.content_ref, 0).is_err());
    }

    #[test]
    fn internalize_verifies_and_decodes() {
        let mut store = ContentStore::new();
        let d = store.put("/replacement", br#"{"text":"hi"}"#).unwrap();
        let got = internalize(&store, "/replacement", None, std::slice::from_ref(&d))
            .unwrap()
            .unwrap();
        assert_eq!(got.get(), r#"{"text":"hi"}"#);

        let both = internalize(
            &store,
            "/replacement",
            Some(raw("{}".into())),
            std::slice::from_ref(&d),
        );
        assert!(matches!(both, Err(ResolveError::Shape(_))));

        let mut wrong_hash = d.clone();
        wrong_hash.sha256 = "0".repeat(64);
        assert!(matches!(
            internalize(&store, "/replacement", None, &[wrong_hash]),
            Err(ResolveError::Mismatch(_))
        ));
        let mut wrong_size = d.clone();
        wrong_size.total_bytes += 1;
        assert!(matches!(
            internalize(&store, "/replacement", None, &[wrong_size]),
            Err(ResolveError::Mismatch(_))
        ));
        let mut wrong_pointer = d.clone();
        wrong_pointer.json_pointer = "/payload".into();
        assert!(matches!(
            internalize(&store, "/replacement", None, &[wrong_pointer]),
            Err(ResolveError::Shape(_))
        ));
        let not_json = store.put("/replacement", b"{} trailing").unwrap();
        assert!(matches!(
            internalize(&store, "/replacement", None, &[not_json]),
            Err(ResolveError::NotJson(_))
        ));
    }
}
