//! List continue tokens, byte for byte as kube-apiserver writes them, so that a token from one apiserver
//! works on any other (the whole cursor is in the token: no server-side state).
//!
//! A token is base64 (URL alphabet, no padding) of the JSON `{"v":"meta.k8s.io/v1","rv":N,"start":"K"}`,
//! where K is the next key to read with the list's key prefix removed. `rv` -1 means "continue at the latest
//! revision" (what a compacted token is replaced with). The JSON is written by hand with Go's string
//! escaping (`<`, `>`, `&` as `\u003c`...), which serde_json does not do.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::Deserialize;

use crate::storage::error::StorageError;

const TOKEN_VERSION: &str = "meta.k8s.io/v1";

/// The token that resumes a list at `key` (a full etcd key under `key_prefix`) at revision `rv`.
pub(crate) fn encode(key: &str, key_prefix: &str, rv: i64) -> Result<String, StorageError> {
    // Upstream refuses a key that does not strip (an empty prefix strips nothing).
    let start = key.strip_prefix(key_prefix).filter(|_| !key_prefix.is_empty()).ok_or_else(|| {
        StorageError::Internal("unable to encode next field: the key and key prefix do not match".to_string())
    })?;
    let json = format!(r#"{{"v":"{TOKEN_VERSION}","rv":{rv},"start":{}}}"#, go_json_string(start));
    Ok(URL_SAFE_NO_PAD.encode(json))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Token {
    v: String,
    rv: i64,
    start: String,
}

/// Decodes a token into (full etcd key to resume at, revision). Errors carry kube-apiserver's texts; the
/// caller reports them as 400 "invalid continue token: ...".
pub(crate) fn decode(token: &str, key_prefix: &str) -> Result<(String, i64), StorageError> {
    let invalid = |why: String| StorageError::InvalidContinue(format!("continue key is not valid: {why}"));
    let bytes = URL_SAFE_NO_PAD.decode(token).map_err(|e| invalid(go_base64_error(&e)))?;
    let token: Token = serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
    if token.v != TOKEN_VERSION {
        return Err(invalid(format!("server does not recognize this encoded version {}", token.v)));
    }
    if token.rv == 0 {
        return Err(invalid("incorrect encoded start resourceVersion (version meta.k8s.io/v1)".to_string()));
    }
    if token.start.is_empty() {
        return Err(invalid("encoded start key empty (version meta.k8s.io/v1)".to_string()));
    }
    // A start key must not climb out of the list's prefix: it has to be a clean path already.
    let rooted = if token.start.starts_with('/') { token.start.clone() } else { format!("/{}", token.start) };
    if clean_path(&rooted) != rooted {
        return Err(invalid(token.start));
    }
    Ok((format!("{key_prefix}{}", &rooted[1..]), token.rv))
}

/// Go's `base64` error text: the offset of the first bad input byte.
fn go_base64_error(err: &base64::DecodeError) -> String {
    let at = match err {
        base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _) => *at,
        base64::DecodeError::InvalidLength(len) => *len,
        base64::DecodeError::InvalidPadding => 0,
    };
    format!("illegal base64 data at input byte {at}")
}

/// Lexical path cleaning of a rooted path, as Go's `path.Clean` does it.
fn clean_path(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

/// A JSON string literal as Go's encoding/json writes it.
fn go_json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_as_kube_apiserver_does() {
        let token = encode("/registry/pods/ns/a\u{0}", "/registry/pods/", 42).unwrap();
        let json = URL_SAFE_NO_PAD.decode(&token).unwrap();
        assert_eq!(String::from_utf8(json).unwrap(), r#"{"v":"meta.k8s.io/v1","rv":42,"start":"ns/a\u0000"}"#);
        assert_eq!(decode(&token, "/registry/pods/").unwrap(), ("/registry/pods/ns/a\u{0}".to_string(), 42));
    }

    #[test]
    fn rejects_bad_tokens_with_kube_apiserver_texts() {
        let b64 = |s: &str| URL_SAFE_NO_PAD.encode(s);
        let cases = [
            ("!!!".to_string(), "continue key is not valid: illegal base64 data at input byte 0"),
            (
                b64(r#"{"v":"meta.k8s.io/v2","rv":1,"start":"a"}"#),
                "continue key is not valid: server does not recognize this encoded version meta.k8s.io/v2",
            ),
            (
                b64(r#"{"v":"meta.k8s.io/v1","rv":0,"start":"a"}"#),
                "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
            ),
            (
                b64(r#"{"v":"meta.k8s.io/v1","rv":3,"start":""}"#),
                "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)",
            ),
            (b64(r#"{"v":"meta.k8s.io/v1","rv":3,"start":"../secrets/x"}"#), "continue key is not valid: ../secrets/x"),
            (b64(r#"{"v":"meta.k8s.io/v1","rv":3,"start":"a/./b"}"#), "continue key is not valid: a/./b"),
        ];
        for (token, want) in cases {
            match decode(&token, "/registry/pods/") {
                Err(StorageError::InvalidContinue(got)) => assert_eq!(got, want, "{token}"),
                other => panic!("{token}: {other:?}"),
            }
        }
    }

    #[test]
    fn escapes_like_go() {
        assert_eq!(go_json_string("a<b>&\"\\\u{1}"), r#""a\u003cb\u003e\u0026\"\\\u0001""#);
    }
}
