//! PodDisruptionBudgets, `policy/v1` (`KK/pkg/registry/policy/poddisruptionbudget`,
//! `KK/pkg/apis/policy/validation`): namespaced, short name `pdb`, a `/status` subresource. Names are only
//! checked as path segments (the strategy checks no name format, the store's generic check runs once the
//! spec is valid). `minAvailable` and `maxUnavailable` exclude each other and are each a non-negative
//! integer or a percentage of at most 100%; the selector is a valid label selector;
//! `unhealthyPodEvictionPolicy` is `IfHealthyBudget` or `AlwaysAllow`. The main endpoint resets the status
//! (zero counts on create, the stored one on update) and bumps the generation when the spec changes;
//! `/status` keeps the spec and wants non-negative counts. The `pods/eviction` subresource that honours a
//! budget is not here: it needs the disruption controller's status.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::networking::ingresses::invalid_go;
use crate::apis::networking::networkpolicies::validate_label_selector;
use crate::apis::printers::{age, age_column, column, name, name_column};
use crate::apis::{status, Printer, ResourceInfo};
use crate::go_text::quote;
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::{bump_generation_on_spec_change, common, start_generation};
use crate::registry::strategy::{DeleteStrategy, Strategy, Subresource};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        short_names: &["pdb"],
        subresources: vec![status("PodDisruptionBudget")],
        ..ResourceInfo::new(resource(), "poddisruptionbudget", Arc::new(PodDisruptionBudgets), printer())
    }
}

fn resource() -> Resource {
    Resource {
        group: "policy".into(),
        version: "v1".into(),
        kind: "PodDisruptionBudget".into(),
        plural: "poddisruptionbudgets".into(),
        etcd_prefix: "poddisruptionbudgets".into(),
    }
}

/// The eviction policies, sorted.
const EVICTION_POLICIES: &[&str] = &["AlwaysAllow", "IfHealthyBudget"];
const PERCENT_MESSAGE: &str =
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or \
'93%', regex used for validation is '[0-9]+%')";
/// What a fresh status is: every count zero (they are not omitted when empty).
const STATUS_COUNTS: &[&str] = &["disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"];

fn fresh_status() -> Value {
    json!({"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0})
}

/// Go's `%#v` of an `intstr.IntOrString`.
fn go_int_or_string(value: &Value) -> String {
    match value {
        Value::String(s) => format!("intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}", quote(s)),
        other => format!("intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}", other.as_i64().unwrap_or(0)),
    }
}

/// A percentage's number, when `text` is one (`getPercentValue`).
fn percent(text: &str) -> Option<i64> {
    let digits = text.strip_suffix('%')?;
    (!digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())).then(|| digits.parse().unwrap_or(i64::MAX))
}

/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent`.
fn validate_int_or_percent(value: &Value, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match value {
        Value::String(text) => match percent(text) {
            None => errs.push(invalid_go(field, go_int_or_string(value), PERCENT_MESSAGE)),
            Some(p) if p > 100 => {
                errs.push(invalid_go(field, go_int_or_string(value), "must not be greater than 100%"))
            }
            Some(_) => {}
        },
        other => {
            let number = other.as_i64().unwrap_or(0);
            if number < 0 {
                errs.push(FieldError::invalid_int(field, number, "must be greater than or equal to 0"));
            }
        }
    }
    errs
}

/// Go's `%#v` of the internal spec, as the message of both bounds prints it. Its pointers print as
/// addresses upstream, which differ on every request; they show here as one fixed address.
fn go_spec(spec: &Value) -> String {
    let pointer = |key: &str, ty: &str| match spec.get(key).filter(|v| !v.is_null()) {
        Some(_) => format!("(*{ty})(0xc000000000)"),
        None => format!("(*{ty})(nil)"),
    };
    format!(
        "policy.PodDisruptionBudgetSpec{{MinAvailable:{}, Selector:{}, MaxUnavailable:{}, UnhealthyPodEvictionPolicy:{}}}",
        pointer("minAvailable", "intstr.IntOrString"),
        pointer("selector", "v1.LabelSelector"),
        pointer("maxUnavailable", "intstr.IntOrString"),
        pointer("unhealthyPodEvictionPolicy", "policy.UnhealthyPodEvictionPolicyType"),
    )
}

/// `ValidatePodDisruptionBudgetSpec`.
fn validate_spec(obj: &Value, allow_invalid_values: bool) -> Vec<FieldError> {
    let empty = json!({});
    let spec = obj.get("spec").filter(|s| s.is_object()).unwrap_or(&empty);
    let min = spec.get("minAvailable").filter(|v| !v.is_null());
    let max = spec.get("maxUnavailable").filter(|v| !v.is_null());
    let mut errs = Vec::new();
    if min.is_some() && max.is_some() {
        errs.push(invalid_go("spec", go_spec(spec), "minAvailable and maxUnavailable cannot be both set"));
    }
    if let Some(min) = min {
        errs.extend(validate_int_or_percent(min, "spec.minAvailable"));
    }
    if let Some(max) = max {
        errs.extend(validate_int_or_percent(max, "spec.maxUnavailable"));
    }
    errs.extend(validate_label_selector(spec.get("selector"), "spec.selector", allow_invalid_values));
    if let Some(policy) = spec.get("unhealthyPodEvictionPolicy").and_then(Value::as_str) {
        if !EVICTION_POLICIES.contains(&policy) {
            errs.push(FieldError::not_supported("spec.unhealthyPodEvictionPolicy", policy, EVICTION_POLICIES));
        }
    }
    errs
}

/// The PodDisruptionBudget strategy.
struct PodDisruptionBudgets;

impl Strategy for PodDisruptionBudgets {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = fresh_status();
        start_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        common::keep_status(new, old);
        bump_generation_on_spec_change(new, old);
    }

    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        common::keep_all_but_status(new, old);
    }

    /// The spec first; the metadata (a path segment name) only once the spec is valid, as the store runs
    /// its generic check after the strategy's.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let errs = validate_spec(obj, false);
        if !errs.is_empty() {
            return errs;
        }
        meta::validate_object_meta(obj, true, names::path_segment_name)
    }

    /// A stored selector that fails the checks lets label values through.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let allow = !validate_label_selector(old.pointer("/spec/selector"), "", false).is_empty();
        let mut errs = meta::validate_object_meta_update(new, old, true, names::path_segment_name);
        errs.extend(validate_spec(new, allow));
        errs
    }

    /// `ValidatePodDisruptionBudgetStatusUpdate` (conditions aside): the counts are not negative.
    fn validate_subresource_update(&self, _sub: Subresource, new: &Value, _old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        for count in STATUS_COUNTS {
            let value = new.pointer(&format!("/status/{count}")).and_then(Value::as_i64).unwrap_or(0);
            if value < 0 {
                errs.push(FieldError::invalid_int(
                    &format!("status.{count}"),
                    value,
                    "must be greater than or equal to 0",
                ));
            }
        }
        errs
    }
}

impl DeleteStrategy for PodDisruptionBudgets {}

/// `IntOrString.String()`, or `N/A`.
fn bound(obj: &Value, key: &str) -> String {
    match obj.pointer(&format!("/spec/{key}")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "N/A".into(),
    }
}

/// `printPodDisruptionBudget`: both bounds and the disruptions allowed now.
fn printer() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            column("Min Available", "string", "The minimum number of pods that must be available.", 0),
            column("Max Unavailable", "string", "The maximum number of pods that may be unavailable.", 0),
            column(
                "Allowed Disruptions",
                "integer",
                "Calculated number of pods that may be disrupted at this time.",
                0,
            ),
            age_column(),
        ],
        cells: |obj, now, _| {
            let allowed = obj.pointer("/status/disruptionsAllowed").and_then(Value::as_i64).unwrap_or(0);
            vec![
                name(obj),
                Value::from(bound(obj, "minAvailable")),
                Value::from(bound(obj, "maxUnavailable")),
                Value::from(allowed),
                age(obj, now),
            ]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn pdb(spec: Value) -> Value {
        json!({"metadata": {"name": "web", "namespace": "ns"}, "spec": spec})
    }

    #[test]
    fn budgets_are_validated_as_upstream_validates_them() {
        let s = PodDisruptionBudgets;
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (pdb(json!({"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}})), vec![]),
            (pdb(json!({"maxUnavailable": "100%", "unhealthyPodEvictionPolicy": "AlwaysAllow"})), vec![]),
            (json!({"metadata": {"name": "Odd_Name", "namespace": "ns"}, "spec": {}}), vec![]),
            (pdb(json!({"minAvailable": -1})), vec!["spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"]),
            (
                pdb(json!({"maxUnavailable": "50"})),
                vec!["spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"50\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"],
            ),
            (
                pdb(json!({"minAvailable": "150%"})),
                vec!["spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater than 100%"],
            ),
            (
                pdb(json!({"unhealthyPodEvictionPolicy": "Never"})),
                vec!["spec.unhealthyPodEvictionPolicy: Unsupported value: \"Never\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\""],
            ),
            (
                pdb(json!({"selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}})),
                vec!["spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"],
            ),
            (
                json!({"metadata": {"name": "a%b", "namespace": "ns"}, "spec": {}}),
                vec!["metadata.name: Invalid value: \"a%b\": may not contain '%'"],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(s.validate(&obj)), want, "{obj}");
        }
        let both = messages(s.validate(&pdb(json!({"minAvailable": 1, "maxUnavailable": 1}))));
        assert_eq!(both.len(), 1);
        assert!(both[0]
            .starts_with("spec: Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:(*intstr.IntOrString)("));
        assert!(both[0].ends_with(": minAvailable and maxUnavailable cannot be both set"));
    }

    #[test]
    fn status_belongs_to_its_subresource() {
        let s = PodDisruptionBudgets;
        let mut old = pdb(json!({"minAvailable": 1}));
        old["status"] = json!({"disruptionsAllowed": 5});
        s.prepare_for_create(&mut old);
        assert_eq!(old["status"], fresh_status());
        assert_eq!(old["metadata"]["generation"], 1);
        let mut new = old.clone();
        new["spec"]["minAvailable"] = json!(2);
        new["status"]["disruptionsAllowed"] = json!(3);
        s.prepare_for_update(&mut new, &old);
        assert_eq!(new["status"], fresh_status());
        assert_eq!(new["metadata"]["generation"], 2);
        let mut via_status = old.clone();
        via_status["spec"]["minAvailable"] = json!(9);
        via_status["status"]["disruptionsAllowed"] = json!(-1);
        s.prepare_for_subresource_update(Subresource::Status, &mut via_status, &old);
        assert_eq!(via_status["spec"], old["spec"]);
        assert_eq!(
            messages(s.validate_subresource_update(Subresource::Status, &via_status, &old)),
            ["status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0"]
        );
    }

    #[test]
    fn the_printer_shows_bounds_and_allowed_disruptions() {
        let mut obj = pdb(json!({"minAvailable": "50%"}));
        obj["status"] = json!({"disruptionsAllowed": 2});
        assert_eq!(
            (printer().cells)(&obj, 0, &[]),
            vec![json!("web"), json!("50%"), json!("N/A"), json!(2), json!("<unknown>")]
        );
        let max = pdb(json!({"maxUnavailable": 1}));
        assert_eq!((printer().cells)(&max, 0, &[])[1..4], [json!("N/A"), json!("1"), json!(0)]);
    }
}
