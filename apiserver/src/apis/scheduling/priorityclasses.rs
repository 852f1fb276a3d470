//! PriorityClasses, `scheduling.k8s.io/v1` (`KK/pkg/registry/scheduling/priorityclass`,
//! `KK/pkg/apis/scheduling/validation`): cluster-scoped, names are DNS subdomains; the `system-` prefix
//! belongs to the two system classes, which kube-apiserver creates at start and refuses to delete; a user's
//! class is worth at most one billion; `value` and `preemptionPolicy` never change; `preemptionPolicy`
//! defaults to `PreemptLowerPriority`.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::printers::{age, age_column, doc_column, name, name_column};
use crate::apis::{Printer, ResourceInfo};
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategy::{DeleteStrategy, Strategy};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        short_names: &["pc"],
        namespaced: false,
        bootstrap: system_classes,
        ..ResourceInfo::new(resource(), "priorityclass", Arc::new(PriorityClasses), printer())
    }
}

fn resource() -> Resource {
    Resource {
        group: "scheduling.k8s.io".into(),
        version: "v1".into(),
        kind: "PriorityClass".into(),
        plural: "priorityclasses".into(),
        etcd_prefix: "priorityclasses".into(),
    }
}

/// `HighestUserDefinablePriority`.
const HIGHEST_USER_DEFINABLE: i64 = 1_000_000_000;
const SYSTEM_PREFIX: &str = "system-";

/// The system classes: name, value, description (`SystemPriorityClasses`).
const SYSTEM_CLASSES: &[(&str, i64, &str)] = &[
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

/// What the scheduling post-start hook creates.
fn system_classes() -> Vec<Value> {
    SYSTEM_CLASSES
        .iter()
        .map(|(name, value, description)| {
            json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                "value": value, "description": description})
        })
        .collect()
}

/// `IsKnownSystemPriorityClass`: why a `system-` class is not one of the system classes as they are.
fn not_a_system_class(name: &str, value: i64, global_default: bool) -> Option<String> {
    let Some((name, want, _)) = SYSTEM_CLASSES.iter().find(|(n, _, _)| *n == name) else {
        return Some(format!("{name} is not a known system priority class"));
    };
    if value != *want {
        return Some(format!("value of {name} PriorityClass must be {want}"));
    }
    // No system class is the global default.
    global_default.then(|| format!("globalDefault of {name} PriorityClass must be false"))
}

/// The PriorityClass strategy.
struct PriorityClasses;

fn default(obj: &mut Value) {
    if let Some(map) = obj.as_object_mut() {
        map.entry("preemptionPolicy").or_insert_with(|| Value::from("PreemptLowerPriority"));
    }
}

fn validate_preemption_policy(obj: &Value) -> Option<FieldError> {
    let policy = obj.get("preemptionPolicy")?.as_str().unwrap_or("");
    (!matches!(policy, "Never" | "PreemptLowerPriority"))
        .then(|| FieldError::not_supported("preemptionPolicy", policy, &["Never", "PreemptLowerPriority"]))
}

impl Strategy for PriorityClasses {
    fn namespace_scoped(&self) -> bool {
        false
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        default(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        default(new);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, false, names::name_is_dns_subdomain);
        let name = meta::get_str(obj, "name");
        let value = obj.get("value").and_then(Value::as_i64).unwrap_or(0);
        let global_default = obj.get("globalDefault").and_then(Value::as_bool).unwrap_or(false);
        if name.starts_with(SYSTEM_PREFIX) {
            if let Some(why) = not_a_system_class(name, value, global_default) {
                errs.push(FieldError::forbidden(
                    "metadata.name",
                    &format!("priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system use only. error: {why}"),
                ));
            }
        } else if value > HIGHEST_USER_DEFINABLE {
            errs.push(FieldError::forbidden(
                "value",
                &format!("maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE}"),
            ));
        }
        errs.extend(validate_preemption_policy(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain);
        if new.get("value") != old.get("value") {
            errs.push(FieldError::forbidden("value", "may not be changed in an update."));
        }
        errs.extend(crate::registry::strategies::common::immutable(
            new.get("preemptionPolicy"),
            old.get("preemptionPolicy"),
            "preemptionPolicy",
        ));
        errs
    }
}

impl DeleteStrategy for PriorityClasses {
    /// The priority class REST refuses to delete the system classes.
    fn undeletable(&self, name: &str) -> Option<&'static str> {
        SYSTEM_CLASSES
            .iter()
            .any(|(n, _, _)| *n == name)
            .then_some("this is a system priority class and cannot be deleted")
    }
}

/// `printPriorityClass`: value, whether it is the global default, age, preemption policy.
fn printer() -> Printer {
    const DEFINITION: &str = "io.k8s.api.scheduling.v1.PriorityClass";
    Printer {
        columns: vec![
            name_column(),
            doc_column("Value", "integer", DEFINITION, "value", 0),
            doc_column("Global-Default", "boolean", DEFINITION, "globalDefault", 0),
            age_column(),
            doc_column("PreemptionPolicy", "string", DEFINITION, "preemptionPolicy", 0),
        ],
        cells: |obj, now, _| {
            let value = obj.get("value").and_then(Value::as_i64).unwrap_or(0);
            let global_default = obj.get("globalDefault").and_then(Value::as_bool).unwrap_or(false);
            let policy = obj.get("preemptionPolicy").and_then(Value::as_str).unwrap_or("<unset>");
            vec![name(obj), Value::from(value), Value::from(global_default), age(obj, now), Value::from(policy)]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn pc(name: &str, value: i64) -> Value {
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value})
    }

    #[test]
    fn classes_are_validated_as_upstream_validates_them() {
        let s = PriorityClasses;
        let cases: &[(Value, &[&str])] = &[
            (pc("high", 1000), &[]),
            (pc("too-high", 1_000_000_001), &["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]),
            (pc("system-mine", 5), &["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"]),
            (pc("system-node-critical", 5), &["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-node-critical PriorityClass must be 2000001000"]),
            (pc("system-node-critical", 2_000_001_000), &[]),
            (
                json!({"metadata": {"name": "p"}, "value": 1, "preemptionPolicy": "Sometimes"}),
                &["preemptionPolicy: Unsupported value: \"Sometimes\": supported values: \"Never\", \"PreemptLowerPriority\""],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(s.validate(obj)), *want, "{obj}");
        }
    }

    #[test]
    fn value_and_policy_never_change() {
        let s = PriorityClasses;
        let mut old = pc("p", 1);
        s.prepare_for_create(&mut old);
        assert_eq!(old["preemptionPolicy"], "PreemptLowerPriority");
        old["metadata"]["resourceVersion"] = json!("5");
        let mut new = old.clone();
        new["value"] = json!(2);
        new["preemptionPolicy"] = json!("Never");
        assert_eq!(
            messages(s.validate_update(&new, &old)),
            [
                "value: Forbidden: may not be changed in an update.",
                "preemptionPolicy: Invalid value: \"Never\": field is immutable"
            ]
        );
    }

    #[test]
    fn the_system_classes_are_valid_and_undeletable() {
        let s = PriorityClasses;
        for mut class in system_classes() {
            s.prepare_for_create(&mut class);
            assert_eq!(messages(s.validate(&class)), Vec::<String>::new(), "{class}");
            assert!(s.undeletable(meta::get_str(&class, "name")).is_some());
        }
        assert!(s.undeletable("high").is_none());
    }

    #[test]
    fn the_printer_shows_value_default_and_policy() {
        let mut obj = pc("high", 1000);
        PriorityClasses.prepare_for_create(&mut obj);
        let cells = (printer().cells)(&obj, 0, &[]);
        assert_eq!(
            cells,
            vec![json!("high"), json!(1000), json!(false), json!("<unknown>"), json!("PreemptLowerPriority")]
        );
    }
}
