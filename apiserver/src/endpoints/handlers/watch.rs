//! WATCH (kube's `ListResource` with `watch=true`, and the deprecated `/watch/` paths): a 200 whose chunked
//! body carries one event per line, `{"type":"ADDED","object":{...}}` (in protobuf, one length-prefixed
//! `WatchEvent` frame per event, `Content-Type: application/vnd.kubernetes.protobuf;stream=watch`), until
//! the watch's time is up, the store ends it, the client goes away or the server shuts down.
//!
//! Errors found before the stream starts (bad options, a cache that is not ready) are ordinary HTTP
//! errors; later ones (a resourceVersion too old) arrive as one `ERROR` event carrying the `Status`, after
//! which the stream ends. Bookmarks carry an empty object of the resource's kind with only
//! its resourceVersion, and the one ending a watch-list's initial events the
//! `k8s.io/initial-events-end: "true"` annotation. A watch without `timeoutSeconds` lasts a random time
//! between the server's minimum request timeout and twice it. Table and metadata conversions apply per
//! event; a Table carries its column definitions in the first event only.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::{Response, StatusCode};
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use serde_json::{json, Map, Value};

use crate::apis::Printer;
use crate::endpoints::error::ApiError;
use crate::endpoints::handlers::{Call, Target};
use crate::endpoints::metrics::RequestLabels;
use crate::endpoints::negotiate::{Conversion, Format, Negotiated};
use crate::endpoints::query;
use crate::endpoints::response::{content_type, status_value};
use crate::endpoints::table::{self, IncludeObject, ListMeta};
use crate::endpoints::{ApiServer, Body};
use crate::failpoint::{Injected, Point};
use crate::storage::watch::INITIAL_EVENTS_END_ANNOTATION;
use crate::storage::{WatchEvent, Watcher};

/// `GET ...?watch=true` and `GET /.../watch/...`.
pub(crate) async fn watch(
    server: Arc<ApiServer>,
    call: &Call,
    target: &Target<'_>,
    negotiated: &Negotiated,
    include: IncludeObject,
    labels: &RequestLabels,
) -> Result<Response<Body>, ApiError> {
    let mut list = query::list_query(&call.query, call.info.verb_in_path, server.config.watch_list)?;
    if !target.name.is_empty() {
        // A watch of one object is a watch of the collection selected by its name.
        let by_name = format!("metadata.name={}", target.name);
        let selector = &list.request.field_selector;
        if !selector.is_empty()
            && selector.trim() != by_name
            && selector.trim() != format!("metadata.name=={}", target.name)
        {
            return Err(ApiError::BadRequest("fieldSelector metadata.name doesn't match requested name".into()));
        }
        list.request.field_selector = by_name;
    }
    if server.shutdown.draining() {
        return Err(ApiError::Unavailable("apiserver is shutting down".into()));
    }
    let timeout = match list.timeout_seconds {
        Some(secs) if secs > 0 => Duration::from_secs(secs as u64),
        _ => server.random_watch_timeout(),
    };
    let watcher = target.rest.watch(&target.namespace, &list.request).await?;
    let encoder = EventEncoder {
        negotiated: negotiated.clone(),
        kind: target.resource.resource.kind.clone(),
        api_version: target.resource.resource.api_version(),
        printer: target.resource.printer.clone(),
        include,
        headers_sent: false,
    };
    let open = OpenWatch::new(server.clone(), labels.clone());
    let stream = event_stream(server, watcher, encoder, timeout, open);
    let body = StreamBody::new(stream.map(|bytes| Ok::<_, std::convert::Infallible>(Frame::data(bytes))));
    Ok(Response::builder()
        .status(StatusCode::OK)
        .header("Content-Type", watch_content_type(negotiated.format))
        .header("Cache-Control", "no-cache, private")
        .header("Transfer-Encoding", "chunked")
        .body(body.boxed_unsync())
        .expect("static headers are valid"))
}

/// The watch's media type: kube adds `;stream=watch` to every format but JSON.
fn watch_content_type(format: Format) -> String {
    match format {
        Format::Json => content_type(format).to_string(),
        other => format!("{};stream=watch", content_type(other)),
    }
}

/// The frames of one watch: events until the watcher ends, the time is up or the server drains.
fn event_stream(
    server: Arc<ApiServer>,
    watcher: Watcher,
    encoder: EventEncoder,
    timeout: Duration,
    open: OpenWatch,
) -> impl futures::Stream<Item = Bytes> + Send {
    let deadline = tokio::time::Instant::now() + timeout;
    futures::stream::unfold(Some((server, watcher, encoder, open)), move |state| async move {
        let (server, mut watcher, mut encoder, open) = state?;
        let event = loop {
            let event = tokio::select! {
                biased;
                () = server.shutdown.wait() => None,
                () = tokio::time::sleep_until(deadline) => None,
                event = watcher.next() => event,
            };
            let event = event?;
            match server.failpoints.eval(Point::BeforeHttpWatchSend).await {
                Ok(()) => break event,
                // The deliberate bug: this event never reaches the client.
                Err(Injected::Drop) => continue,
                // The connection drops: the stream ends as a timed-out watch's does.
                Err(Injected::Error) => return None,
            }
        };
        let now = server.clock.now_unix_s();
        let frame = encoder.encode(&event, now);
        // An ERROR event is the last.
        let next = (!matches!(event, WatchEvent::Error(_))).then_some((server, watcher, encoder, open));
        Some((frame, next))
    })
}

/// One protobuf frame: the object as a document of the `apiVersion` and `kind` it carries. An object
/// that does not fit its message (which the registry's validation should have prevented) becomes an
/// `ERROR` event saying so, which ends the watch as kube's encoder failing would.
#[cfg(not(madsim))]
fn protobuf_frame(kind: &str, object: &Value) -> Bytes {
    use crate::endpoints::protobuf;
    let of = |field: &str| object.get(field).and_then(Value::as_str).unwrap_or("").to_string();
    protobuf::watch_frame(kind, object, &of("apiVersion"), &of("kind")).unwrap_or_else(|err| {
        let status = status_value(&err.to_status());
        protobuf::watch_frame("ERROR", &status, "v1", "Status").expect("a Status has a protobuf form")
    })
}

/// The simulation build negotiates no protobuf, so no watch of it gets here.
#[cfg(madsim)]
fn protobuf_frame(_kind: &str, _object: &Value) -> Bytes {
    unreachable!("the simulation build never negotiates protobuf")
}

/// Counts a watch in `apiserver_longrunning_requests` for as long as its stream lives (the client going
/// away drops the stream, and with it the store's watcher).
struct OpenWatch {
    server: Arc<ApiServer>,
    labels: RequestLabels,
}

impl OpenWatch {
    fn new(server: Arc<ApiServer>, labels: RequestLabels) -> OpenWatch {
        server.metrics.long_running(&labels, 1);
        OpenWatch { server, labels }
    }
}

impl Drop for OpenWatch {
    fn drop(&mut self) {
        self.server.metrics.long_running(&self.labels, -1);
    }
}

/// Encodes watch events as one request asked for them.
struct EventEncoder {
    negotiated: Negotiated,
    kind: String,
    api_version: String,
    printer: Printer,
    include: IncludeObject,
    /// Whether a Table event has carried the column definitions yet.
    headers_sent: bool,
}

impl EventEncoder {
    fn encode(&mut self, event: &WatchEvent, now_unix_s: i64) -> Bytes {
        let (kind, object) = match event {
            WatchEvent::Added(obj) => ("ADDED", obj),
            WatchEvent::Modified(obj) => ("MODIFIED", obj),
            WatchEvent::Deleted(obj) => ("DELETED", obj),
            WatchEvent::Bookmark(rv) => {
                let object = self.convert(&self.bookmark(&rv.to_string(), false), now_unix_s);
                return self.frame("BOOKMARK", object);
            }
            WatchEvent::InitialEventsEnd(rv) => {
                let object = self.convert(&self.bookmark(&rv.to_string(), true), now_unix_s);
                return self.frame("BOOKMARK", object);
            }
            WatchEvent::Error(status) => return self.frame("ERROR", status_value(status)),
        };
        if self.negotiated.conversion.is_none() && self.negotiated.format == Format::Json {
            // Every watcher of this change shares the object's encoding; only the envelope is new.
            let mut line = crate::go_json::watch_event(kind, &object.json());
            line.push(b'\n');
            return Bytes::from(line);
        }
        let converted = self.convert(object.value(), now_unix_s);
        self.frame(kind, converted)
    }

    /// One event in the watch's format.
    fn frame(&self, kind: &str, object: Value) -> Bytes {
        match self.negotiated.format {
            Format::Protobuf => protobuf_frame(kind, &object),
            _ => Self::line(kind, object),
        }
    }

    /// One event line, `{"type":"...","object":...}` and a newline.
    fn line(kind: &str, object: Value) -> Bytes {
        let mut line = crate::go_json::watch_event(kind, &crate::go_json::to_vec(&object));
        line.push(b'\n');
        Bytes::from(line)
    }

    /// The object of a bookmark: an empty object of the resource's kind with only its resourceVersion.
    fn bookmark(&self, rv: &str, initial_events_end: bool) -> Value {
        let mut metadata = Map::new();
        metadata.insert("resourceVersion".into(), Value::from(rv));
        metadata.insert("creationTimestamp".into(), Value::Null);
        if initial_events_end {
            metadata.insert("annotations".into(), json!({ INITIAL_EVENTS_END_ANNOTATION: "true" }));
        }
        json!({"kind": self.kind, "apiVersion": self.api_version, "metadata": metadata})
    }

    fn convert(&mut self, obj: &Value, now_unix_s: i64) -> Value {
        match self.negotiated.conversion {
            None | Some(Conversion::PartialObjectMetadataList) => obj.clone(),
            Some(Conversion::PartialObjectMetadata) => table::partial_object_metadata(obj),
            Some(Conversion::Table) => {
                let meta = ListMeta {
                    resource_version: obj
                        .pointer("/metadata/resourceVersion")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .into(),
                    ..ListMeta::default()
                };
                let is_end =
                    obj.pointer("/metadata/annotations").and_then(|a| a.get(INITIAL_EVENTS_END_ANNOTATION)).is_some();
                let include = if is_end { IncludeObject::Metadata } else { self.include };
                let headers = !self.headers_sent;
                self.headers_sent = true;
                table::table(&self.printer, std::slice::from_ref(obj), &meta, include, headers, now_unix_s)
            }
        }
    }
}
