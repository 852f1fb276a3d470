//! One watch's events, read line by line from its chunked body (`WatchEvent` JSON, one per line).

use bytes::{Bytes, BytesMut};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::BodyExt;
use serde_json::Value;

/// One event of a watch stream.
#[derive(Clone, Debug, PartialEq)]
pub struct WatchEvent {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    pub kind: String,
    pub object: Value,
}

/// The events of one watch.
pub struct WatchStream {
    body: UnsyncBoxBody<Bytes, String>,
    buffer: BytesMut,
}

impl WatchStream {
    pub(crate) fn new(body: UnsyncBoxBody<Bytes, String>) -> WatchStream {
        WatchStream { body, buffer: BytesMut::new() }
    }

    /// The next event; `None` once the server has ended the stream, or it broke.
    pub async fn next(&mut self) -> Option<WatchEvent> {
        loop {
            if let Some(at) = self.buffer.iter().position(|b| *b == b'\n') {
                let line = self.buffer.split_to(at + 1);
                let mut value: Value = serde_json::from_slice(&line[..at]).ok()?;
                let kind = value.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
                let object = value.get_mut("object").map(Value::take).unwrap_or(Value::Null);
                return Some(WatchEvent { kind, object });
            }
            let frame = self.body.frame().await?.ok()?;
            if let Ok(data) = frame.into_data() {
                self.buffer.extend_from_slice(&data);
            }
        }
    }
}
