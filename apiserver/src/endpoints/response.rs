//! Writing answers: objects, lists and errors in the negotiated format, converted to a Table or metadata
//! form when asked (`transformResponseObject`), gzipped when large and the client accepts it (kube's
//! 128 KiB threshold), with `Retry-After` on errors that carry one and `Warning` headers.

use std::io::Write;

use bytes::Bytes;
use flate2::write::GzEncoder;
use flate2::Compression;
use http::{HeaderValue, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use serde_json::{Map, Value};

use crate::apis::Printer;
use crate::endpoints::codec;
use crate::endpoints::error::{retry_after, ApiError};
use crate::endpoints::negotiate::{Conversion, Format, Negotiated};
use crate::endpoints::table::{self, IncludeObject, ListMeta};
use crate::endpoints::Body;
use crate::storage::SharedObject;

/// Responses at least this large are gzipped for clients that accept it (`defaultGzipThresholdBytes`).
pub(crate) const GZIP_THRESHOLD_BYTES: usize = 128 * 1024;

/// A body from bytes.
pub(crate) fn full(bytes: Bytes) -> Body {
    Full::new(bytes).map_err(|never| match never {}).boxed_unsync()
}

/// How one request wants its answer.
#[derive(Clone)]
pub(crate) struct Responder {
    pub negotiated: Negotiated,
    /// `Accept-Encoding` names gzip.
    pub gzip: bool,
    /// A HEAD request: headers only.
    pub head: bool,
    /// The resource's printer, for Table answers.
    pub printer: Option<Printer>,
    pub include: IncludeObject,
    /// The server's clock, for the Age column.
    pub now_unix_s: i64,
    /// `Warning` headers to send (`299 - "text"`).
    pub warnings: Vec<String>,
}

impl Responder {
    /// This responder with `warnings` added.
    pub(crate) fn with_warnings(&self, warnings: Vec<String>) -> Responder {
        let mut responder = self.clone();
        responder.warnings.extend(warnings);
        responder
    }

    /// Answers with one object.
    pub(crate) fn object(&self, status: StatusCode, obj: &Value) -> Result<Response<Body>, ApiError> {
        let converted;
        let is_status = obj.get("kind").and_then(Value::as_str) == Some("Status");
        let out = match &self.negotiated.conversion {
            // A Status (a delete's answer) is never converted.
            _ if is_status => obj,
            None => obj,
            Some(Conversion::Table) => {
                let printer = self.printer.as_ref().ok_or_else(not_acceptable_table)?;
                let meta =
                    ListMeta { resource_version: meta_str(obj, "resourceVersion").to_string(), ..ListMeta::default() };
                converted =
                    table::table(printer, std::slice::from_ref(obj), &meta, self.include, true, self.now_unix_s);
                &converted
            }
            Some(Conversion::PartialObjectMetadata) => {
                converted = table::partial_object_metadata(obj);
                &converted
            }
            Some(Conversion::PartialObjectMetadataList) => {
                return Err(ApiError::NotAcceptable(crate::endpoints::negotiate::NotAcceptable { stream: false }))
            }
        };
        self.encoded(status, out)
    }

    /// Answers with a list: `kind`/`api_version` of the list, its items and metadata. Items of built-in
    /// kinds are written without their type fields, as typed lists carry them; `custom` keeps them. A plain
    /// JSON list is written from each item's shared encoding, without serializing anything again.
    pub(crate) fn list(
        &self,
        kind: &str,
        api_version: &str,
        items: &[SharedObject],
        meta: &ListMeta,
        custom: bool,
    ) -> Result<Response<Body>, ApiError> {
        let n = &self.negotiated;
        if n.conversion.is_none() && n.format == Format::Json && !n.pretty {
            let bytes = json_list(kind, api_version, items, meta, custom);
            return Ok(self.bytes(StatusCode::OK, content_type(Format::Json), bytes));
        }
        // A Table row's object keeps its type fields (upstream converts each row's object to the request's
        // version, which sets them); a list's items lose them.
        let keep_type = custom || n.conversion == Some(Conversion::Table);
        let values: Vec<Value> = items.iter().map(|obj| list_item(obj.value().clone(), keep_type)).collect();
        let out = match &self.negotiated.conversion {
            None => {
                let mut list = Map::new();
                list.insert("kind".into(), Value::from(kind));
                list.insert("apiVersion".into(), Value::from(api_version));
                list.insert("metadata".into(), list_meta_value(meta));
                list.insert("items".into(), Value::Array(values));
                Value::Object(list)
            }
            Some(Conversion::Table) => {
                let printer = self.printer.as_ref().ok_or_else(not_acceptable_table)?;
                table::table(printer, &values, meta, self.include, true, self.now_unix_s)
            }
            Some(Conversion::PartialObjectMetadataList) => table::partial_object_metadata_list(&values, meta),
            Some(Conversion::PartialObjectMetadata) => {
                return Err(ApiError::NotAcceptable(crate::endpoints::negotiate::NotAcceptable { stream: false }))
            }
        };
        self.encoded(StatusCode::OK, &out)
    }

    /// Encodes `obj` as negotiated.
    pub(crate) fn encoded(&self, status: StatusCode, obj: &Value) -> Result<Response<Body>, ApiError> {
        let bytes = codec::encode(obj, self.negotiated.format, self.negotiated.pretty)?;
        Ok(self.bytes(status, content_type(self.negotiated.format), bytes))
    }

    /// A response of `bytes`, gzipped if large and accepted.
    fn bytes(&self, status: StatusCode, content_type: &'static str, bytes: Bytes) -> Response<Body> {
        let mut builder = Response::builder()
            .status(status)
            .header("Content-Type", content_type)
            .header("Cache-Control", "no-cache, private");
        for warning in &self.warnings {
            builder = builder.header("Warning", warning_header(warning));
        }
        let bytes = if self.gzip && bytes.len() >= GZIP_THRESHOLD_BYTES {
            builder = builder.header("Content-Encoding", "gzip").header("Vary", "Accept-Encoding");
            gzip(&bytes)
        } else {
            bytes
        };
        builder = builder.header("Content-Length", bytes.len());
        let body = if self.head { Bytes::new() } else { bytes };
        builder.body(full(body)).expect("static headers are valid")
    }
}

/// An object as a list carries it: built-in kinds without their type fields.
pub(crate) fn list_item(mut obj: Value, custom: bool) -> Value {
    if !custom {
        if let Some(map) = obj.as_object_mut() {
            map.remove("kind");
            map.remove("apiVersion");
        }
    }
    obj
}

fn list_meta_value(meta: &ListMeta) -> Value {
    let mut list_meta = Map::new();
    if !meta.resource_version.is_empty() {
        list_meta.insert("resourceVersion".into(), Value::from(meta.resource_version.clone()));
    }
    if let Some(c) = &meta.continue_token {
        list_meta.insert("continue".into(), Value::from(c.clone()));
    }
    if let Some(n) = meta.remaining_item_count {
        list_meta.insert("remainingItemCount".into(), Value::from(n));
    }
    Value::Object(list_meta)
}

/// A JSON list assembled from its items' shared encodings, byte for byte what writing the list as a value
/// would give, with the trailing newline. A typed list is a Go struct (`kind`, `apiVersion`, `metadata`,
/// `items`); a custom resource's is unstructured, a Go map, whose keys come sorted (`apiVersion`, `items`,
/// `kind`, `metadata`).
fn json_list(kind: &str, api_version: &str, items: &[SharedObject], meta: &ListMeta, custom: bool) -> Bytes {
    let encoded: Vec<Bytes> = items.iter().map(|obj| if custom { obj.json() } else { obj.list_item_json() }).collect();
    let size: usize = encoded.iter().map(|b| b.len() + 1).sum();
    let mut out = Vec::with_capacity(size + 256);
    let items = |out: &mut Vec<u8>| {
        out.extend_from_slice(b"\"items\":[");
        for (i, item) in encoded.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(item);
        }
        out.push(b']');
    };
    let list_meta = list_meta_value(meta);
    if custom {
        out.extend_from_slice(b"{\"apiVersion\":");
        crate::go_json::append_str(&mut out, api_version);
        out.push(b',');
        items(&mut out);
        out.extend_from_slice(b",\"kind\":");
        crate::go_json::append_str(&mut out, kind);
        out.extend_from_slice(b",\"metadata\":");
        crate::go_json::append(&mut out, &list_meta);
    } else {
        out.extend_from_slice(b"{\"kind\":");
        crate::go_json::append_str(&mut out, kind);
        out.extend_from_slice(b",\"apiVersion\":");
        crate::go_json::append_str(&mut out, api_version);
        // `ListMeta`'s order: resourceVersion, continue, remainingItemCount.
        out.extend_from_slice(b",\"metadata\":{");
        let mut first = true;
        for key in ["resourceVersion", "continue", "remainingItemCount"] {
            if let Some(value) = list_meta.get(key) {
                if !first {
                    out.push(b',');
                }
                first = false;
                crate::go_json::append_str(&mut out, key);
                out.push(b':');
                crate::go_json::append(&mut out, value);
            }
        }
        out.extend_from_slice(b"},");
        items(&mut out);
    }
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

fn not_acceptable_table() -> ApiError {
    ApiError::NotAcceptable(crate::endpoints::negotiate::NotAcceptable { stream: false })
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata").and_then(|m| m.get(field)).and_then(Value::as_str).unwrap_or("")
}

/// The `Content-Type` of a format (kube writes the bare media type).
pub(crate) fn content_type(format: Format) -> &'static str {
    format.media_type()
}

/// A `Warning` header as kube writes it: code 299, agent `-`, quoted text.
pub(crate) fn warning_header(text: &str) -> HeaderValue {
    let escaped = text.replace('\\', "\\\\").replace('"', "\\\"");
    HeaderValue::from_str(&format!("299 - \"{escaped}\"")).unwrap_or_else(|_| HeaderValue::from_static("299 - \"\""))
}

fn gzip(bytes: &[u8]) -> Bytes {
    let mut encoder = GzEncoder::new(Vec::with_capacity(bytes.len() / 4), Compression::default());
    encoder.write_all(bytes).expect("writing to memory");
    Bytes::from(encoder.finish().expect("writing to memory"))
}

/// The answer to a failed request: Go's plain-text 404 for unknown paths, else the `Status` in the
/// negotiated format (JSON when nothing was negotiated), with `Retry-After` when it says when.
pub(crate) fn error(err: &ApiError, negotiated: Option<&Negotiated>) -> Response<Body> {
    if err.is_plain_not_found() {
        return Response::builder()
            .status(StatusCode::NOT_FOUND)
            .header("Content-Type", "text/plain; charset=utf-8")
            .header("X-Content-Type-Options", "nosniff")
            .body(full(Bytes::from_static(b"404 page not found\n")))
            .expect("static headers are valid");
    }
    status_response(&err.to_status(), negotiated)
}

/// A `Status` as the response to a request.
pub(crate) fn status_response(status: &Status, negotiated: Option<&Negotiated>) -> Response<Body> {
    let code = status.code.and_then(|c| u16::try_from(c).ok()).unwrap_or(500);
    let format = negotiated.map_or(Format::Json, |n| n.format);
    let value = status_value(status);
    let pretty = negotiated.is_some_and(|n| n.pretty);
    // A Status always has a protobuf form; should encoding fail all the same, the answer is JSON.
    let (format, bytes) = match codec::encode(&value, format, pretty) {
        Ok(bytes) => (format, bytes),
        Err(_) => (Format::Json, codec::encode(&value, Format::Json, pretty).unwrap_or_default()),
    };
    let mut builder = Response::builder()
        .status(StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header("Content-Type", content_type(format))
        .header("Cache-Control", "no-cache, private")
        .header("Content-Length", bytes.len());
    if let Some(secs) = retry_after(status) {
        builder = builder.header("Retry-After", secs.to_string());
    }
    builder.body(full(bytes)).expect("static headers are valid")
}

/// A `Status` as JSON, with its `kind` and `apiVersion`.
pub(crate) fn status_value(status: &Status) -> Value {
    let mut value = serde_json::to_value(status).expect("a Status serializes");
    if let Some(obj) = value.as_object_mut() {
        obj.insert("kind".into(), Value::from("Status"));
        obj.insert("apiVersion".into(), Value::from("v1"));
        obj.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::RegistryError;
    use crate::storage::{GroupResource, Operation, StorageError};

    /// A cache that is not ready answers 429 with the `Retry-After` its status carries (the watch cache's
    /// readiness is hard to catch over HTTP, so its answer is checked here).
    #[test]
    fn a_cache_not_ready_answers_429_with_retry_after() {
        let err = ApiError::Registry(RegistryError::Storage {
            err: Box::new(StorageError::NotReady { message: "storage is (re)initializing".into(), retry_after_s: 1 }),
            op: Operation::List,
            resource: GroupResource::new("", "configmaps"),
            name: String::new(),
        });
        let answer = error(&err, None);
        assert_eq!(answer.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(answer.headers().get("Retry-After").unwrap(), "1");
        assert_eq!(answer.headers().get("Content-Type").unwrap(), "application/json");
    }

    #[test]
    fn an_unknown_path_is_gos_plain_404() {
        let answer = error(&ApiError::NoRoute, None);
        assert_eq!(answer.status(), StatusCode::NOT_FOUND);
        assert_eq!(answer.headers().get("Content-Type").unwrap(), "text/plain; charset=utf-8");
    }
}
