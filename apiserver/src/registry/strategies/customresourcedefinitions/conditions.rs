//! A CRD's status conditions (`NamesAccepted`, `Established`, `Terminating`): reading them and setting one
//! as apiextensions-apiserver's `SetCRDCondition` does. Shared by the CRD strategy, and by the naming
//! decision and the controller above this layer (`crate::apiextensions`).

use serde_json::{json, Value};

/// Whether the CRD's condition `kind` is `True`.
pub(crate) fn condition_true(crd: &Value, kind: &str) -> bool {
    crd.pointer("/status/conditions").and_then(Value::as_array).is_some_and(|cs| {
        cs.iter().any(|c| {
            c.get("type").and_then(Value::as_str) == Some(kind)
                && c.get("status").and_then(Value::as_str) == Some("True")
        })
    })
}

/// Whether the CRD is established (its resources are served).
pub(crate) fn established(crd: &Value) -> bool {
    condition_true(crd, "Established")
}

/// A condition without its transition time.
pub(crate) fn condition(kind: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({"type": kind, "status": status, "reason": reason, "message": message})
}

/// `SetCRDCondition`: replaces the condition of the same type, keeping its transition time when its status
/// did not change; a new type goes last.
pub(crate) fn set_condition(status: &mut Value, mut new: Value, now: &str) {
    if !status.get("conditions").is_some_and(Value::is_array) {
        status["conditions"] = json!([]);
    }
    let conditions = status["conditions"].as_array_mut().expect("conditions were made an array");
    let kind = new["type"].clone();
    match conditions.iter_mut().find(|c| c["type"] == kind) {
        Some(existing) => {
            let time = if existing["status"] == new["status"] {
                existing.get("lastTransitionTime").cloned().unwrap_or_else(|| now.into())
            } else {
                now.into()
            };
            new["lastTransitionTime"] = time;
            *existing = new;
        }
        None => {
            new["lastTransitionTime"] = now.into();
            conditions.push(new);
        }
    }
}
