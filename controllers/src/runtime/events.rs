//! Events, as client-go's event recorder writes them for a controller (`tools/record`, core/v1 Events):
//! named `<object name>.<creation time in hex nanoseconds>`, in the object's namespace (`default` for a
//! cluster-scoped object), with the controller as their source. Recording is best effort, as upstream's:
//! a failed write is logged and dropped, never retried into the controller's way. Upstream's correlator
//! (aggregating repeats into one Event with a count) is left out: each call is one Event.

use std::sync::Arc;

use apiserver::registry::system::rfc3339;
use serde_json::{json, Value};

use crate::client::resource::builtin;
use crate::client::Client;

/// `Normal` or `Warning`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Normal,
    Warning,
}

/// One controller's event recorder.
#[derive(Clone)]
pub struct Recorder {
    client: Arc<Client>,
    /// The source component (`garbage-collector-controller`).
    component: String,
    now_unix_us: Arc<dyn Fn() -> i64 + Send + Sync>,
}

impl Recorder {
    pub fn new(client: Arc<Client>, component: &str, now_unix_us: Arc<dyn Fn() -> i64 + Send + Sync>) -> Recorder {
        Recorder { client, component: component.into(), now_unix_us }
    }

    /// The same recorder under another component name.
    pub fn for_component(&self, component: &str) -> Recorder {
        Recorder { component: component.into(), ..self.clone() }
    }

    /// The Event about `object` (a whole object, or an `ObjectReference`).
    pub fn event_for(&self, object: &Value, kind: EventType, reason: &str, message: &str) -> Value {
        let meta = |f: &str| {
            object
                .pointer(&format!("/metadata/{f}"))
                .or_else(|| object.get(f))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let namespace = match meta("namespace") {
            ns if ns.is_empty() => "default".to_string(),
            ns => ns,
        };
        let now_us = (self.now_unix_us)();
        let stamp = rfc3339(now_us.div_euclid(1_000_000));
        let mut involved = json!({
            "kind": object.get("kind").and_then(Value::as_str).unwrap_or(""),
            "name": meta("name"),
            "uid": meta("uid"),
            "apiVersion": object.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
            "resourceVersion": meta("resourceVersion"),
        });
        if !meta("namespace").is_empty() {
            involved["namespace"] = json!(meta("namespace"));
        }
        json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": format!("{}.{:x}", meta("name"), now_us.saturating_mul(1000)), "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "source": {"component": self.component},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "type": match kind { EventType::Normal => "Normal", EventType::Warning => "Warning" },
            "reportingComponent": self.component,
            "reportingInstance": "",
        })
    }

    /// Records an Event about `object`.
    pub async fn record(&self, object: &Value, kind: EventType, reason: &str, message: &str) {
        let event = self.event_for(object, kind, reason, message);
        let ns = event.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("default").to_string();
        if let Err(err) = self.client.create(&builtin::events().collection_path(Some(&ns)), &event).await {
            tracing::debug!(component = %self.component, reason, "recording an event failed: {err}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Transport;

    #[test]
    fn an_event_names_its_object_and_source() {
        let client = Arc::new(Client::new(Transport::Http("127.0.0.1:1".parse().unwrap()), None, "test"));
        let recorder = Recorder::new(client, "garbage-collector-controller", Arc::new(|| 1_700_000_000_000_001));
        let pod = json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "resourceVersion": "7"}});
        let event = recorder.event_for(&pod, EventType::Warning, "OwnerRefInvalidNamespace", "m");
        assert_eq!(event["metadata"]["name"], "p.17979cfe362a03e8");
        assert_eq!(event["metadata"]["namespace"], "ns");
        assert_eq!(event["involvedObject"]["uid"], "u1");
        assert_eq!(event["type"], "Warning");
        assert_eq!(event["source"]["component"], "garbage-collector-controller");
        assert_eq!(event["firstTimestamp"], "2023-11-14T22:13:20Z");
        let node = json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n1"}});
        let event = recorder.event_for(&node, EventType::Normal, "R", "m");
        assert_eq!(event["metadata"]["namespace"], "default");
        assert!(event["involvedObject"].get("namespace").is_none());
    }
}
