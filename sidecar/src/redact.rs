//! Credential redaction: the one function the project uses before any
//! sidecar-originated or credential-bearing text reaches a log, an error or
//! the user.
//!
//! Rules are deliberately shape-based (known token prefixes, key/value
//! assignments whose key *ends* in a secret word, URL userinfo, JWTs, PEM
//! private keys) so that ordinary words ("tokenizer"), git hashes, UUIDs and
//! prose stay untouched.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

struct Rule {
    pattern: Regex,
    replace: fn(&Captures<'_>) -> String,
}

fn rule(pattern: &str, replace: fn(&Captures<'_>) -> String) -> Rule {
    Rule {
        pattern: Regex::new(pattern).expect("redaction pattern is valid"),
        replace,
    }
}

fn whole(_: &Captures<'_>) -> String {
    REDACTED.to_owned()
}

/// Keeps capture 1 (the key or scheme), redacts the rest.
fn keep_first(c: &Captures<'_>) -> String {
    format!("{}{REDACTED}", &c[1])
}

/// Keeps capture 1 and capture 3 around a redacted capture 2.
fn keep_outer(c: &Captures<'_>) -> String {
    format!("{}{REDACTED}{}", &c[1], &c[3])
}

/// A `Basic`/`Bearer` credential must look like one (a digit, `+`, `/`,
/// `=`, `.`, `_` or `-` inside, or long), so "Basic authentication" stays.
fn auth_scheme(c: &Captures<'_>) -> String {
    let token = &c[2];
    let looks_encoded = token
        .chars()
        .any(|ch| ch.is_ascii_digit() || "+/=._-~".contains(ch))
        || token.len() >= 24;
    if looks_encoded {
        format!("{}{REDACTED}", &c[1])
    } else {
        c[0].to_owned()
    }
}

/// Secret words a key must end with; `(?:^|[^a-z0-9])` style boundaries keep
/// "tokenizer" and "max_tokens" out.
const SECRET_KEY: &str = r"[A-Za-z0-9_.-]*?(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?|auth)";

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    vec![
        // PEM private keys (also a block cut off by a tail boundary).
        rule(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\z)",
            whole,
        ),
        // JSON Web Tokens.
        rule(
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
            whole,
        ),
        // Well-known vendor token shapes.
        rule(
            r"\b(?:sk-(?:proj-|ant-[a-z0-9]{2,8}-|or-v1-)?[A-Za-z0-9_-]{20,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}|xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_-]{50,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|dop_v1_[a-f0-9]{64})\b",
            whole,
        ),
        // Slack incoming-webhook and workflow URLs: the path is the secret.
        rule(
            r"(\bhooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_/-]{8,}",
            keep_first,
        ),
        // Azure connection strings: AccountKey=… / SharedAccessKey=… (base64
        // with `+`, `/` and `=` padding, up to the next `;`).
        rule(
            r"(?i)(\b(?:Account|SharedAccess)Key\s*=\s*)([A-Za-z0-9+/]{16,}={0,2})",
            keep_first,
        ),
        // URL userinfo with a password: scheme://user:pass@host.
        rule(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@", |c| {
            format!("{}{REDACTED}@", &c[1])
        }),
        // HTTP authorization schemes.
        rule(
            r"(?i)(\b(?:bearer|basic|token)\s+)([A-Za-z0-9+/=._~-]{8,})",
            auth_scheme,
        ),
        // JSON fields: "api_key": "value".
        rule(
            &format!(r#"(?i)("{SECRET_KEY}"\s*:\s*")((?:[^"\\]|\\.)+)(")"#),
            keep_outer,
        ),
        // Assignments: token=value, PASSWORD: value, --api-key value is not
        // covered (no separator) on purpose: it is indistinguishable from
        // prose.
        rule(
            &format!(r#"(?i)(\b{SECRET_KEY}\s*[:=]\s*['"]?)([^\s'",;&]+)"#),
            keep_first,
        ),
    ]
});

/// Returns `text` with every credential-shaped substring replaced by
/// [`REDACTED`]. Borrowed when nothing matched.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut current: Cow<'_, str> = Cow::Borrowed(text);
    for rule in RULES.iter() {
        // A rule may decide to keep a match unchanged (`auth_scheme`), which
        // still yields an owned copy: only take it when the text differs.
        if let Cow::Owned(changed) = rule.pattern.replace_all(&current, rule.replace)
            && changed != *current
        {
            current = Cow::Owned(changed);
        }
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (input, expected output) for secrets.
    const SECRETS: &[(&str, &str)] = &[
        (
            "key sk-abcdefghijklmnopqrstuvwxyz012345 end",
            "key [REDACTED] end",
        ),
        (
            "OPENAI=sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
            "OPENAI=[REDACTED]",
        ),
        (
            "anthropic sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx_yz-0123",
            "anthropic [REDACTED]",
        ),
        (
            "gh ghp_0123456789abcdefghijABCDEFGHIJ012345 ok",
            "gh [REDACTED] ok",
        ),
        (
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
            "[REDACTED]",
        ),
        ("slack xoxb-123456789012-abcdefABCDEF", "slack [REDACTED]"),
        ("aws AKIAIOSFODNN7EXAMPLE here", "aws [REDACTED] here"),
        (
            "google AIzaSyA-0123456789abcdefghijklmnopqrstu",
            "google [REDACTED]",
        ),
        ("gitlab glpat-abcdefghij0123456789", "gitlab [REDACTED]"),
        ("stripe sk_live_abcdefghijklmnop0123", "stripe [REDACTED]"),
        (
            "npm npm_abcdefghijklmnopqrstuvwxyz0123456789",
            "npm [REDACTED]",
        ),
        ("hf hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf [REDACTED]"),
        (
            "Authorization: Bearer abc.DEF-123_xyz~456",
            "Authorization: Bearer [REDACTED]",
        ),
        (
            "Authorization: Basic dXNlcjpwYXNzd29yZA==",
            "Authorization: Basic [REDACTED]",
        ),
        ("password=hunter2", "password=[REDACTED]"),
        ("GITHUB_TOKEN=abc123def", "GITHUB_TOKEN=[REDACTED]"),
        ("client_secret: s3cr3t-value", "client_secret: [REDACTED]"),
        ("api_key='k-9f8e7d'", "api_key='[REDACTED]'"),
        ("X-Api-Key: 0123abcd", "X-Api-Key: [REDACTED]"),
        (
            r#"{"apiKey": "abc\"def", "n": 1}"#,
            r#"{"apiKey": "[REDACTED]", "n": 1}"#,
        ),
        (r#"{"db_password":"pw"}"#, r#"{"db_password":"[REDACTED]"}"#),
        (
            "clone https://alice:s3cret@example.com/repo.git",
            "clone https://[REDACTED]@example.com/repo.git",
        ),
        (
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "jwt [REDACTED]",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----\nafter",
            "[REDACTED]\nafter",
        ),
        (
            "tail -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk",
            "tail [REDACTED]",
        ),
        (
            "?access_token=ya29.a0AfH6SMB&x=1",
            "?access_token=[REDACTED]&x=1",
        ),
        (
            "post to https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/aBcDeFgHiJkLmNoPqRsTuVwX now",
            "post to https://hooks.slack.com/services/[REDACTED] now",
        ),
        (
            "hooks.slack.com/workflows/T01ABCDEF/A02GHIJKL/123456789/XyZ0aBcD",
            "hooks.slack.com/workflows/[REDACTED]",
        ),
        (
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA+/xyz==;EndpointSuffix=core.windows.net",
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED];EndpointSuffix=core.windows.net",
        ),
        (
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTIzNA=",
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=[REDACTED]",
        ),
    ];

    /// Text that looks a little like a secret but is not.
    const KEPT: &[&str] = &[
        "loading tokenizer from disk",
        "max_tokens=4096 tokens: 12",
        "commit 3f2a9c1d4e5b6a7980f1e2d3c4b5a6978f0e1d2c (HEAD -> main)",
        "request 123e4567-e89b-12d3-a456-426614174000 done",
        "id sk-1 and task-1234",
        "Set your password in the settings page.",
        "ssh://git@github.com/owner/repo.git",
        "sha256:085c014bb6d1713f722177dda5d79b1224d9bf611cb3947d3331aeb0768449fa",
        "Basic authentication is disabled",
        "the token expired; please log in again",
        "https://example.com/path?page=2",
        "content_0123456789abcdef01234567 es_0123456789abcdef01234567",
        "secretary of state",
        "AKIA is a prefix",
        "see https://api.slack.com/messaging/webhooks and hooks.slack.com/services",
        "AccountName=acct;AccountKey=;EndpointSuffix=core.windows.net",
        "the AccountKeyName field and SharedAccessKeyName=root",
    ];

    #[test]
    fn secrets_are_redacted() {
        assert!(SECRETS.len() >= 20);
        for (input, expected) in SECRETS {
            assert_eq!(redact(input), *expected, "input: {input}");
        }
    }

    #[test]
    fn look_alikes_are_kept_borrowed() {
        assert!(KEPT.len() >= 10);
        for input in KEPT {
            let out = redact(input);
            assert!(
                matches!(out, Cow::Borrowed(_)),
                "changed: {input:?} -> {out:?}"
            );
        }
    }
}
