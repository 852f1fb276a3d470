//! `events.k8s.io/v1` events (`KK/pkg/registry/core/event/strategy.go` with the request version
//! `events.k8s.io/v1`, `KK/pkg/apis/events/v1/conversion.go`): the same objects as core `v1` events,
//! stored once as core events under `/registry/events/` and served in this group's shape (`regarding`
//! for `involvedObject`, `note` for `message`, `reportingController` for `reportingComponent`, and the
//! old fields as `deprecatedSource`, `deprecatedFirstTimestamp`, `deprecatedLastTimestamp`,
//! `deprecatedCount`). A create through this group is validated strictly, as upstream validates new
//! events: an event time, a type of `Normal` or `Warning`, a reporting controller and instance, an action
//! and a reason are required, and the deprecated fields must be unset.

use serde_json::{Map, Value};

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::common::{self, SelectableFields};
use crate::registry::strategy::Strategy;
use crate::storage::conversion::Conversion;

/// The descriptor of `events.k8s.io/v1` `events`, stored with core events.
pub(crate) fn resource() -> Resource {
    Resource::group("events.k8s.io", "v1", "Event", "events")
}

/// The events.k8s.io/v1 Event strategy.
pub(crate) struct EventsV1;

/// Served field name and core field name, for the fields whose names differ.
const RENAMED: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

/// How this group's events are stored and served.
pub(crate) fn conversion() -> Conversion {
    Conversion::new(to_core, from_core)
}

fn rename(obj: Value, api_version: &str, to_core: bool) -> Value {
    let Value::Object(map) = obj else { return obj };
    let mut out = Map::new();
    for (key, value) in map {
        let renamed = RENAMED.iter().find_map(|(served, core)| match to_core {
            true if key == *served => Some(*core),
            false if key == *core => Some(*served),
            _ => None,
        });
        out.insert(renamed.map_or(key, str::to_string), value);
    }
    out.insert("apiVersion".into(), Value::from(api_version));
    out.insert("kind".into(), Value::from("Event"));
    Value::Object(out)
}

/// An `events.k8s.io/v1` event as a core `v1` event.
pub(crate) fn to_core(obj: Value) -> Value {
    rename(obj, "v1", true)
}

/// A core `v1` event as an `events.k8s.io/v1` event.
pub(crate) fn from_core(obj: Value) -> Value {
    rename(obj, "events.k8s.io/v1", false)
}

/// The field selectors of this group, named as it names the fields.
const FIELDS: SelectableFields = &[
    ("regarding.kind", "/regarding/kind", ""),
    ("regarding.namespace", "/regarding/namespace", ""),
    ("regarding.name", "/regarding/name", ""),
    ("regarding.uid", "/regarding/uid", ""),
    ("regarding.apiVersion", "/regarding/apiVersion", ""),
    ("regarding.resourceVersion", "/regarding/resourceVersion", ""),
    ("regarding.fieldPath", "/regarding/fieldPath", ""),
    ("reason", "/reason", ""),
    ("reportingController", "/reportingController", ""),
    ("type", "/type", ""),
];

/// The longest reporting instance, action and reason, and the longest note (`ValidateEventCreate`).
const FIELD_LENGTH_LIMIT: usize = 128;
const NOTE_LENGTH_LIMIT: usize = 1024;

fn validate_new_event(obj: &Value) -> Vec<FieldError> {
    let text = |f: &str| obj.get(f).and_then(Value::as_str).unwrap_or("");
    let mut errs = Vec::new();
    if text("eventTime").is_empty() {
        errs.push(FieldError::required("eventTime", ""));
    }
    let kind = text("type");
    if kind != "Normal" && kind != "Warning" {
        errs.push(FieldError::invalid("type", "", &format!("has invalid value: {kind}")));
    }
    for field in ["deprecatedFirstTimestamp", "deprecatedLastTimestamp"] {
        if !text(field).is_empty() {
            errs.push(FieldError::invalid(field, "", "needs to be unset"));
        }
    }
    if obj.get("deprecatedCount").and_then(Value::as_i64).unwrap_or(0) != 0 {
        errs.push(FieldError::invalid("deprecatedCount", "", "needs to be unset"));
    }
    let source = obj.get("deprecatedSource");
    let source_set = ["component", "host"]
        .iter()
        .any(|f| source.and_then(|s| s.get(*f)).and_then(Value::as_str).is_some_and(|v| !v.is_empty()));
    if source_set {
        errs.push(FieldError::invalid("deprecatedSource", "", "needs to be unset"));
    }
    if text("reportingController").is_empty() {
        errs.push(FieldError::required("reportingController", ""));
    } else {
        for msg in names::qualified_name(text("reportingController")) {
            errs.push(FieldError::invalid("reportingController", text("reportingController"), &msg));
        }
    }
    for (field, limit) in
        [("reportingInstance", FIELD_LENGTH_LIMIT), ("action", FIELD_LENGTH_LIMIT), ("reason", FIELD_LENGTH_LIMIT)]
    {
        let value = text(field);
        if value.is_empty() {
            errs.push(FieldError::required(field, ""));
        } else if value.len() > limit {
            errs.push(FieldError::invalid(field, "", &format!("can have at most {limit} characters")));
        }
    }
    if text("note").len() > NOTE_LENGTH_LIMIT {
        errs.push(FieldError::invalid("note", "", &format!("can have at most {NOTE_LENGTH_LIMIT} characters")));
    }
    errs
}

impl Strategy for EventsV1 {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn expires(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_new_event(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain)
    }

    fn selectable_field(&self, obj: &Value, key: &str) -> Option<String> {
        common::selectable(FIELDS, obj, key)
    }

    fn supports_field(&self, key: &str) -> bool {
        common::supports(FIELDS, key)
    }

    fn unsupported_field_message(&self, key: &str) -> String {
        format!("field label not supported: {key}")
    }
}

impl crate::registry::strategy::DeleteStrategy for EventsV1 {}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_two_shapes_convert_both_ways() {
        let served = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"}, "regarding": {"kind": "Pod", "name": "p"}, "note": "pulled", "reportingController": "kubelet", "reason": "Pulled", "deprecatedCount": 2});
        let core = to_core(served.clone());
        assert_eq!(core["apiVersion"], "v1");
        assert_eq!(core["involvedObject"]["name"], "p");
        assert_eq!(core["message"], "pulled");
        assert_eq!(core["reportingComponent"], "kubelet");
        assert_eq!(core["count"], 2);
        assert_eq!(from_core(core), served);
    }

    #[test]
    fn new_events_are_validated_strictly() {
        let errs: Vec<String> = validate_new_event(&json!({"type": "Bad"})).iter().map(ToString::to_string).collect();
        assert_eq!(
            errs,
            [
                "eventTime: Required value",
                "type: Invalid value: \"\": has invalid value: Bad",
                "reportingController: Required value",
                "reportingInstance: Required value",
                "action: Required value",
                "reason: Required value",
            ]
        );
    }
}
