//! Bodies in and out: request bodies decoded into JSON objects, and objects encoded into the negotiated
//! format, as kube-apiserver's serializers do.
//!
//! kube's JSON encoder ends every document with a newline (`json.Encoder`); the pretty form indents by two
//! spaces. YAML bodies are converted to JSON first (`sigs.k8s.io/yaml.YAMLToJSON`). A body that is not an
//! object at all fails as kube's decoder fails, before the registry's type check:
//! `the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse
//! error: unexpected end of JSON input (<empty>)`, with Go's `encoding/json` wording of the syntax error.
//! Protobuf is the `protobuf` module's; the simulation build has none (its clients speak JSON), so there a
//! protobuf body is a 415 and negotiation never picks protobuf.

use bytes::Bytes;
use serde_json::Value;

use crate::endpoints::error::ApiError;
use crate::endpoints::negotiate::Format;

/// Decodes a request body in `format` into a JSON object; `kind` is the type the endpoint expects, named
/// in errors.
pub(crate) fn decode(body: &[u8], format: Format, kind: &str) -> Result<Value, ApiError> {
    let value = match format {
        Format::Json => serde_json::from_slice::<Value>(body)
            .map_err(|err| format!("couldn't get version/kind; json parse error: {}", go_json_error(&err, body))),
        Format::Yaml => yaml_to_json(body),
        Format::Protobuf => return decode_protobuf(body, kind),
    };
    match value {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(unrecognized(
            kind,
            &format!(
                "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
                go_json_type(&other)
            ),
            body,
        )),
        Err(message) => Err(unrecognized(kind, &message, body)),
    }
}

/// kube's `transformDecodeError` when the body names no kind.
fn unrecognized(kind: &str, cause: &str, body: &[u8]) -> ApiError {
    ApiError::BadRequest(format!(
        "the object provided is unrecognized (must be of type {kind}): {cause} ({})",
        crate::go_text::summarize_data(body, 30)
    ))
}

/// The JSON type name Go's decoder uses in `cannot unmarshal X` messages.
fn go_json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A serde_json syntax error in the words of Go's `encoding/json` (`unexpected end of JSON input`,
/// `invalid character 'x' looking for beginning of value`).
pub(crate) fn go_json_error(err: &serde_json::Error, body: &[u8]) -> String {
    if err.is_eof() {
        return "unexpected end of JSON input".into();
    }
    // serde_json reports 1-based line and column of the offending character.
    let offset = offset_of(body, err.line(), err.column());
    let Some(&byte) = body.get(offset.saturating_sub(1)) else {
        return "unexpected end of JSON input".into();
    };
    let shown = go_quote_char(byte);
    let text = err.to_string();
    let context = if text.starts_with("trailing characters") {
        "after top-level value"
    } else if text.starts_with("key must be a string") {
        "looking for beginning of object key string"
    } else if text.starts_with("expected `,` or `}`") {
        "after object key:value pair"
    } else if text.starts_with("expected `:`") {
        "after object key"
    } else if text.starts_with("expected `,` or `]`") {
        "after array element"
    } else if text.starts_with("invalid escape") {
        "in string escape code"
    } else if text.starts_with("control character") {
        "in string literal"
    } else {
        "looking for beginning of value"
    };
    format!("invalid character {shown} {context}")
}

/// Go's `quoteChar`: `'x'`, with `'\''` and `'"'` spelled as Go spells them.
fn go_quote_char(byte: u8) -> String {
    match byte {
        b'\'' => "'\\''".into(),
        b'"' => "'\"'".into(),
        b if b.is_ascii_graphic() || b == b' ' => format!("'{}'", b as char),
        b => format!("'\\x{b:02x}'"),
    }
}

/// The byte offset (1-based, of the character) at `line`:`column`.
fn offset_of(body: &[u8], line: usize, column: usize) -> usize {
    let mut offset = 0;
    for _ in 1..line {
        match body[offset..].iter().position(|&b| b == b'\n') {
            Some(i) => offset += i + 1,
            None => break,
        }
    }
    offset + column
}

/// `YAMLToJSON`: a YAML document as JSON, or the converter's error.
fn yaml_to_json(body: &[u8]) -> Result<Value, String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    let yaml: serde_yaml::Value = serde_yaml::from_slice(body)
        .map_err(|err| format!("error converting YAML to JSON: yaml: {}", yaml_error(&err)))?;
    serde_json::to_value(yaml).map_err(|err| format!("error converting YAML to JSON: {err}"))
}

fn yaml_error(err: &serde_yaml::Error) -> String {
    let text = err.to_string();
    match err.location() {
        Some(at) => {
            let message = text.split(" at line ").next().unwrap_or(&text);
            format!("line {}: {message}", at.line())
        }
        None => text,
    }
}

/// Whether this build reads and writes Kubernetes protobuf.
pub(crate) const PROTOBUF: bool = cfg!(not(madsim));

#[cfg(not(madsim))]
fn decode_protobuf(body: &[u8], kind: &str) -> Result<Value, ApiError> {
    crate::endpoints::protobuf::decode(body, kind)
}

#[cfg(madsim)]
fn decode_protobuf(_body: &[u8], _kind: &str) -> Result<Value, ApiError> {
    Err(ApiError::unsupported_media_type())
}

#[cfg(not(madsim))]
fn encode_protobuf(obj: &Value) -> Result<Bytes, ApiError> {
    crate::endpoints::protobuf::encode(obj)
}

#[cfg(madsim)]
fn encode_protobuf(_obj: &Value) -> Result<Bytes, ApiError> {
    Err(ApiError::Internal("the simulation build has no protobuf".into()))
}

/// Encodes `obj` in `format`. JSON ends with a newline as kube's encoder writes it; a protobuf document
/// is of the `apiVersion` and `kind` the object carries.
pub(crate) fn encode(obj: &Value, format: Format, pretty: bool) -> Result<Bytes, ApiError> {
    match format {
        Format::Protobuf => encode_protobuf(obj),
        Format::Json => {
            // Go's key order and escapes, as kube's encoder writes them.
            let mut out = if pretty { crate::go_json::to_vec_pretty(obj) } else { crate::go_json::to_vec(obj) };
            out.push(b'\n');
            Ok(Bytes::from(out))
        }
        Format::Yaml => {
            let text = serde_yaml::to_string(obj).map_err(|e| ApiError::Internal(e.to_string()))?;
            Ok(Bytes::from(text))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_error(body: &str, format: Format) -> String {
        match decode(body.as_bytes(), format, "ConfigMap") {
            Err(ApiError::BadRequest(m)) => m,
            other => panic!("{body:?}: {other:?}"),
        }
    }

    #[test]
    fn malformed_bodies_read_as_kube_reports_them() {
        let cases = [
            ("", Format::Json, "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)"),
            ("{", Format::Json, "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({)"),
            ("x", Format::Json, "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'x' looking for beginning of value (78)"),
            ("{\"a\":1}}", Format::Json, "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character '}' after top-level value ({\"a\":1}})"),
            ("{a:1}", Format::Json, "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'a' looking for beginning of object key string ({a:1})"),
            ("[1]", Format::Json, "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" } (5b315d)"),
        ];
        for (body, format, want) in cases {
            assert_eq!(decode_error(body, format), want, "{body:?}");
        }
        assert!(decode_error("a: [", Format::Yaml).starts_with(
            "the object provided is unrecognized (must be of type ConfigMap): error converting YAML to JSON: yaml: line"
        ));
    }

    #[test]
    fn yaml_and_json_decode_to_the_same_object() {
        let json = decode(br#"{"kind":"ConfigMap","data":{"a":"1"}}"#, Format::Json, "ConfigMap").unwrap();
        let yaml = decode(b"kind: ConfigMap\ndata:\n  a: \"1\"\n", Format::Yaml, "ConfigMap").unwrap();
        assert_eq!(json, yaml);
    }

    #[test]
    fn json_ends_with_a_newline() {
        let obj = serde_json::json!({"a": 1});
        assert_eq!(encode(&obj, Format::Json, false).unwrap(), Bytes::from_static(b"{\"a\":1}\n"));
        assert_eq!(encode(&obj, Format::Json, true).unwrap(), Bytes::from_static(b"{\n  \"a\": 1\n}\n"));
        assert_eq!(encode(&obj, Format::Yaml, false).unwrap(), Bytes::from_static(b"a: 1\n"));
    }
}
