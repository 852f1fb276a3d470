//! PriorityLevelConfigurations, `flowcontrol.apiserver.k8s.io/v1`
//! (`KK/pkg/registry/flowcontrol/prioritylevelconfiguration`, `KK/pkg/apis/flowcontrol/validation`,
//! `KK/pkg/apis/flowcontrol/v1/defaults.go`): cluster-scoped, names are DNS subdomains, a `/status`
//! subresource. The type is `Exempt` exactly for the level named `exempt`, and only the member of the
//! type's name is set. A limited level's `nominalConcurrencyShares` defaults to 30 when absent (an explicit
//! 0 stays 0 in v1, and is refused: it must be positive), `lendablePercent` to 0 (within 0..=100),
//! `borrowingLimitPercent` is not negative; it rejects or queues, and a queuing's `queues` (64, at most
//! 10^7), `handSize` (8, at most `queues`, within 60 bits of shuffle-sharding entropy) and
//! `queueLengthLimit` (50) default when 0 and are positive. An exempt level's shares and lendable percent
//! default to 0. The mandatory `catch-all` level keeps kube-apiserver's spec, and `exempt` all of it but
//! `spec.exempt`; v1beta3's round-trip annotation is refused. Status and generation as for flow schemas.

use std::sync::Arc;

use serde_json::{json, Value};

use super::bootstrap;
use super::flowschemas::{canonicalize_status, go_pointer, keep_all_but_status, validate_conditions};
use crate::apis::networking::ingresses::invalid_go;
use crate::apis::printers::{age, age_column, doc_column, name, name_column};
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
        namespaced: false,
        subresources: vec![status("PriorityLevelConfiguration")],
        bootstrap: bootstrap::priority_levels,
        ..ResourceInfo::new(resource(), "prioritylevelconfiguration", Arc::new(PriorityLevels), printer())
    }
}

fn resource() -> Resource {
    Resource {
        group: "flowcontrol.apiserver.k8s.io".into(),
        version: "v1".into(),
        kind: "PriorityLevelConfiguration".into(),
        plural: "prioritylevelconfigurations".into(),
        etcd_prefix: "prioritylevelconfigurations".into(),
    }
}

/// `PriorityLevelConfigurationDefaultNominalConcurrencyShares`.
const DEFAULT_SHARES: i64 = 30;
/// The queuing defaults: queues, hand size, queue length limit.
const DEFAULT_QUEUING: [(&str, i64); 3] = [("queues", 64), ("handSize", 8), ("queueLengthLimit", 50)];
/// `priorityLevelConfigurationQueuingMaxQueues`.
const MAX_QUEUES: i64 = 10_000_000;
/// `shufflesharding.MaxHashBits`.
const MAX_HASH_BITS: i64 = 60;
/// The level types and the limit response types, sorted.
const TYPES: &[&str] = &["Exempt", "Limited"];
const LIMIT_RESPONSE_TYPES: &[&str] = &["Queue", "Reject"];
/// v1beta3's annotation that keeps a zero share count; never on a stored object.
const PRESERVE_ZERO_ANNOTATION: &str = "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares";

/// The PriorityLevelConfiguration strategy.
struct PriorityLevels;

fn int(obj: &Value, key: &str) -> Option<i64> {
    obj.get(key).and_then(Value::as_i64)
}

/// Sets `key` to `value` when absent or null.
fn or_default(obj: &mut Value, key: &str, value: i64) {
    if obj.get(key).is_none_or(Value::is_null) {
        obj[key] = json!(value);
    }
}

/// The v1 defaults: a limited level's shares (30) and lendable percent (0), its queuing's zero fields, an
/// exempt level's shares and lendable percent (0).
fn default(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else { return };
    if let Some(limited) = spec.get_mut("limited").filter(|l| l.is_object()) {
        or_default(limited, "nominalConcurrencyShares", DEFAULT_SHARES);
        or_default(limited, "lendablePercent", 0);
        if let Some(queuing) = limited.pointer_mut("/limitResponse/queuing").filter(|q| q.is_object()) {
            for (key, value) in DEFAULT_QUEUING {
                if int(queuing, key).unwrap_or(0) == 0 {
                    queuing[key] = json!(value);
                }
            }
        }
    }
    if let Some(exempt) = spec.get_mut("exempt").filter(|e| e.is_object()) {
        or_default(exempt, "nominalConcurrencyShares", 0);
        or_default(exempt, "lendablePercent", 0);
    }
}

fn member<'a>(obj: &'a Value, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

/// `shufflesharding.RequiredEntropyBits`.
fn required_entropy_bits(deck_size: i64, hand_size: i64) -> i64 {
    ((deck_size as f64).log2() * hand_size as f64).ceil() as i64
}

/// `ValidatePriorityLevelQueuingConfiguration`.
fn validate_queuing(queuing: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let (queues, hand_size, limit) = (
        int(queuing, "queues").unwrap_or(0),
        int(queuing, "handSize").unwrap_or(0),
        int(queuing, "queueLengthLimit").unwrap_or(0),
    );
    if limit <= 0 {
        errs.push(FieldError::invalid_int(&format!("{path}.queueLengthLimit"), limit, "must be positive"));
    }
    let queues_field = format!("{path}.queues");
    if queues <= 0 {
        errs.push(FieldError::invalid_int(&queues_field, queues, "must be positive"));
    } else if queues > MAX_QUEUES {
        errs.push(FieldError::invalid_int(&queues_field, queues, &format!("must not be greater than {MAX_QUEUES}")));
    }
    let hand_field = format!("{path}.handSize");
    if hand_size <= 0 {
        errs.push(FieldError::invalid_int(&hand_field, hand_size, "must be positive"));
    } else if hand_size > queues {
        errs.push(FieldError::invalid_int(
            &hand_field,
            hand_size,
            &format!("should not be greater than queues ({queues})"),
        ));
    } else if required_entropy_bits(queues, hand_size) > MAX_HASH_BITS {
        errs.push(FieldError::invalid_int(
            &hand_field,
            hand_size,
            &format!(
                "required entropy bits of deckSize {queues} and handSize {hand_size} should not be greater than {MAX_HASH_BITS}"
            ),
        ));
    }
}

/// `ValidateLimitResponse`.
fn validate_limit_response(response: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let ty = response.get("type").and_then(Value::as_str).unwrap_or("");
    let queuing = member(response, "queuing");
    match ty {
        "Reject" if queuing.is_some() => errs.push(FieldError::forbidden(
            &format!("{path}.queuing"),
            "must be nil if limited.limitResponse.type is not Limited",
        )),
        "Reject" => {}
        "Queue" => match queuing {
            None => errs.push(FieldError::required(
                &format!("{path}.queuing"),
                "must not be empty if limited.limitResponse.type is Limited",
            )),
            Some(queuing) => validate_queuing(queuing, &format!("{path}.queuing"), errs),
        },
        other => errs.push(FieldError::not_supported(&format!("{path}.type"), other, LIMIT_RESPONSE_TYPES)),
    }
}

/// `lendablePercent`'s bounds, shared by both kinds of level.
fn validate_lendable_percent(level: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(percent) = int(level, "lendablePercent").filter(|p| !(0..=100).contains(p)) {
        errs.push(FieldError::invalid_int(
            &format!("{path}.lendablePercent"),
            percent,
            "must be between 0 and 100, inclusive",
        ));
    }
}

/// `ValidateLimitedPriorityLevelConfiguration`, as the v1 strategy calls it (zero shares refused).
fn validate_limited(limited: &Value, errs: &mut Vec<FieldError>) {
    let shares = int(limited, "nominalConcurrencyShares").unwrap_or(0);
    if shares <= 0 {
        errs.push(FieldError::invalid_int("spec.limited.nominalConcurrencyShares", shares, "must be positive"));
    }
    let empty = json!({});
    validate_limit_response(limited.get("limitResponse").unwrap_or(&empty), "spec.limited.limitResponse", errs);
    validate_lendable_percent(limited, "spec.limited", errs);
    if let Some(percent) = int(limited, "borrowingLimitPercent").filter(|p| *p < 0) {
        errs.push(FieldError::invalid_int(
            "spec.limited.borrowingLimitPercent",
            percent,
            "if specified, must be a non-negative integer",
        ));
    }
}

/// `ValidateExemptPriorityLevelConfiguration`.
fn validate_exempt(exempt: &Value, errs: &mut Vec<FieldError>) {
    if let Some(shares) = int(exempt, "nominalConcurrencyShares").filter(|s| *s < 0) {
        errs.push(FieldError::invalid_int(
            "spec.exempt.nominalConcurrencyShares",
            shares,
            "must be a non-negative integer",
        ));
    }
    validate_lendable_percent(exempt, "spec.exempt", errs);
}

/// `ValidatePriorityLevelConfigurationSpec`.
fn validate_spec(name: &str, spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ty = spec.get("type").and_then(Value::as_str).unwrap_or("");
    if (name == "exempt") != (ty == "Exempt") {
        errs.push(FieldError::invalid("spec.type", ty, "type must be 'Exempt' if and only if name is 'exempt'"));
    }
    let (limited, exempt) = (member(spec, "limited"), member(spec, "exempt"));
    match ty {
        "Exempt" => {
            if limited.is_some() {
                errs.push(FieldError::forbidden("spec.limited", "must be nil if the type is not Limited"));
            }
            if let Some(exempt) = exempt {
                validate_exempt(exempt, &mut errs);
            }
        }
        "Limited" => {
            if exempt.is_some() {
                errs.push(FieldError::forbidden("spec.exempt", "must be nil if the type is Limited"));
            }
            match limited {
                None => errs.push(FieldError::required("spec.limited", "must not be empty when type is Limited")),
                Some(limited) => validate_limited(limited, &mut errs),
            }
        }
        other => errs.push(FieldError::not_supported("spec.type", other, TYPES)),
    }
    errs
}

/// The spec with every field present, pointers as null, so that two specs compare as
/// `apiequality.Semantic.DeepEqual` compares them.
fn canonical_spec(spec: &Value) -> Value {
    let optional = |v: &Value, key: &str| json!(int(v, key));
    let limited = member(spec, "limited").map(|l| {
        let empty = json!({});
        let response = l.get("limitResponse").unwrap_or(&empty);
        let queuing = member(response, "queuing").map(|q| {
            json!({"queues": int(q, "queues").unwrap_or(0), "handSize": int(q, "handSize").unwrap_or(0),
                "queueLengthLimit": int(q, "queueLengthLimit").unwrap_or(0)})
        });
        json!({"nominalConcurrencyShares": int(l, "nominalConcurrencyShares").unwrap_or(0),
            "limitResponse": {"type": response.get("type").and_then(Value::as_str).unwrap_or(""), "queuing": queuing},
            "lendablePercent": optional(l, "lendablePercent"),
            "borrowingLimitPercent": optional(l, "borrowingLimitPercent")})
    });
    let exempt = member(spec, "exempt").map(|e| {
        json!({"nominalConcurrencyShares": optional(e, "nominalConcurrencyShares"),
            "lendablePercent": optional(e, "lendablePercent")})
    });
    json!({"type": spec.get("type").and_then(Value::as_str).unwrap_or(""), "limited": limited, "exempt": exempt})
}

/// Go's `%#v` of the internal `PriorityLevelConfigurationSpec`.
fn go_spec(spec: &Value) -> String {
    format!(
        "flowcontrol.PriorityLevelConfigurationSpec{{Type:{}, Limited:{}, Exempt:{}}}",
        quote(spec.get("type").and_then(Value::as_str).unwrap_or("")),
        go_pointer(spec, "limited", "LimitedPriorityLevelConfiguration"),
        go_pointer(spec, "exempt", "ExemptPriorityLevelConfiguration"),
    )
}

/// `ValidateIfMandatoryPriorityLevelConfigurationObject`: `catch-all` keeps its spec, `exempt` all of it
/// but `spec.exempt`.
fn validate_mandatory(name: &str, spec: &Value) -> Option<FieldError> {
    let fixed = bootstrap::mandatory_priority_level_spec(name)?;
    let mut have = canonical_spec(spec);
    let want = canonical_spec(&fixed);
    let detail = if name == "exempt" {
        have["exempt"] = want["exempt"].clone();
        format!("spec of '{name}' except the 'spec.exempt' field must equal the fixed value")
    } else {
        format!("spec of '{name}' must equal the fixed value")
    };
    (have != want).then(|| invalid_go("spec", go_spec(spec), &detail))
}

/// `ValidatePriorityLevelConfiguration`.
fn validate_priority_level(obj: &Value) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, false, names::name_is_dns_subdomain);
    if meta::get(obj, "annotations").and_then(|a| a.get(PRESERVE_ZERO_ANNOTATION)).is_some() {
        errs.push(FieldError::forbidden(
            "metadata.annotations",
            &format!("annotation '{PRESERVE_ZERO_ANNOTATION}' is forbidden"),
        ));
    }
    let name = meta::get_str(obj, "name");
    let empty = json!({});
    let spec = obj.get("spec").filter(|s| s.is_object()).unwrap_or(&empty);
    errs.extend(validate_spec(name, spec));
    errs.extend(validate_mandatory(name, spec));
    errs.extend(validate_conditions(obj));
    errs
}

impl Strategy for PriorityLevels {
    fn namespace_scoped(&self) -> bool {
        false
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        default(obj);
        obj["status"] = json!({});
        start_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        default(new);
        common::keep_status(new, old);
        bump_generation_on_spec_change(new, old);
    }

    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        keep_all_but_status(new, old);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_priority_level(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain);
        errs.extend(validate_priority_level(new));
        errs
    }

    fn validate_subresource_update(&self, _sub: Subresource, new: &Value, _old: &Value) -> Vec<FieldError> {
        validate_conditions(new)
    }

    fn canonicalize(&self, obj: &mut Value) {
        canonicalize_status(obj);
    }
}

impl DeleteStrategy for PriorityLevels {}

/// `printPriorityLevelConfiguration`: type, and for limited levels the shares and queuing (`<none>` where
/// there is none).
fn printer() -> Printer {
    const QUEUING: &str = "io.k8s.api.flowcontrol.v1.QueuingConfiguration";
    Printer {
        columns: vec![
            name_column(),
            doc_column("Type", "string", "io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationSpec", "type", 0),
            doc_column(
                "NominalConcurrencyShares",
                "string",
                "io.k8s.api.flowcontrol.v1.LimitedPriorityLevelConfiguration",
                "nominalConcurrencyShares",
                0,
            ),
            doc_column("Queues", "string", QUEUING, "queues", 0),
            doc_column("HandSize", "string", QUEUING, "handSize", 0),
            doc_column("QueueLengthLimit", "string", QUEUING, "queueLengthLimit", 0),
            age_column(),
        ],
        cells: |obj, now, _| {
            let none = || json!("<none>");
            let ty = obj.pointer("/spec/type").and_then(Value::as_str).unwrap_or("");
            let limited = obj.pointer("/spec/limited").filter(|l| !l.is_null());
            let shares = limited.map_or_else(none, |l| json!(int(l, "nominalConcurrencyShares").unwrap_or(0)));
            let queuing = limited.and_then(|l| l.pointer("/limitResponse/queuing")).filter(|q| !q.is_null());
            let field = |key: &str| queuing.map_or_else(none, |q| json!(int(q, key).unwrap_or(0)));
            vec![
                name(obj),
                json!(ty),
                shares,
                field("queues"),
                field("handSize"),
                field("queueLengthLimit"),
                age(obj, now),
            ]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn pl(name: &str, spec: Value) -> Value {
        json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
            "metadata": {"name": name}, "spec": spec})
    }

    fn limited(limited: Value) -> Value {
        json!({"type": "Limited", "limited": limited})
    }

    fn queue(queues: i64, hand_size: i64, limit: i64) -> Value {
        limited(json!({"nominalConcurrencyShares": 100, "limitResponse": {"type": "Queue",
            "queuing": {"queues": queues, "handSize": hand_size, "queueLengthLimit": limit}}}))
    }

    #[test]
    fn levels_are_validated_as_upstream_validates_them() {
        let s = PriorityLevels;
        let reject = json!({"type": "Reject"});
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (pl("max-in-flight", limited(json!({"nominalConcurrencyShares": 42, "limitResponse": reject}))), vec![]),
            (pl("system-foo", queue(512, 4, 100)), vec![]),
            (pl("system-foo", queue(10_000_000, 2, 100)), vec![]),
            (
                pl("system-foo", queue(512, 8, 100)),
                vec!["spec.limited.limitResponse.queuing.handSize: Invalid value: 8: required entropy bits of deckSize 512 and handSize 8 should not be greater than 60"],
            ),
            (
                pl("system-foo", queue(2147483647, 3, 100)),
                vec![
                    "spec.limited.limitResponse.queuing.queues: Invalid value: 2147483647: must not be greater than 10000000",
                    "spec.limited.limitResponse.queuing.handSize: Invalid value: 3: required entropy bits of deckSize 2147483647 and handSize 3 should not be greater than 60",
                ],
            ),
            (
                pl("system-foo", queue(7, 8, 100)),
                vec!["spec.limited.limitResponse.queuing.handSize: Invalid value: 8: should not be greater than queues (7)"],
            ),
            (
                pl("system-foo", queue(-1, -2, -3)),
                vec![
                    "spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -3: must be positive",
                    "spec.limited.limitResponse.queuing.queues: Invalid value: -1: must be positive",
                    "spec.limited.limitResponse.queuing.handSize: Invalid value: -2: must be positive",
                ],
            ),
            (
                pl("system-foo", limited(json!({"nominalConcurrencyShares": 100, "limitResponse": {"type": "Reject",
                    "queuing": {"queues": 512, "handSize": 4, "queueLengthLimit": 100}}}))),
                vec!["spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited"],
            ),
            (
                pl("system-foo", limited(json!({"nominalConcurrencyShares": 0, "limitResponse": {"type": "Queue"},
                    "lendablePercent": 101, "borrowingLimitPercent": -1}))),
                vec![
                    "spec.limited.nominalConcurrencyShares: Invalid value: 0: must be positive",
                    "spec.limited.limitResponse.queuing: Required value: must not be empty if limited.limitResponse.type is Limited",
                    "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
                    "spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, must be a non-negative integer",
                ],
            ),
            (
                pl("system-foo", limited(json!({"nominalConcurrencyShares": 1, "limitResponse": {"type": "Drop"}}))),
                vec!["spec.limited.limitResponse.type: Unsupported value: \"Drop\": supported values: \"Queue\", \"Reject\""],
            ),
            (
                pl("broken-limited", json!({"type": "Limited", "exempt": {}})),
                vec![
                    "spec.exempt: Forbidden: must be nil if the type is Limited",
                    "spec.limited: Required value: must not be empty when type is Limited",
                ],
            ),
            (
                pl("odd", json!({"type": "Sometimes"})),
                vec!["spec.type: Unsupported value: \"Sometimes\": supported values: \"Exempt\", \"Limited\""],
            ),
            (
                pl("not-exempt", json!({"type": "Exempt"})),
                vec!["spec.type: Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'"],
            ),
            (
                pl("exempt", json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": -1, "lendablePercent": -1}})),
                vec![
                    "spec.exempt.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
                    "spec.exempt.lendablePercent: Invalid value: -1: must be between 0 and 100, inclusive",
                ],
            ),
            (pl("exempt", json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 10, "lendablePercent": 10}})), vec![]),
            (
                pl("exempt", json!({"type": "Exempt", "exempt": {}, "limited": {"nominalConcurrencyShares": 42,
                    "limitResponse": {"type": "Reject"}}})),
                vec![
                    "spec.limited: Forbidden: must be nil if the type is not Limited",
                    "spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:\"Exempt\", Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(0xc000000000), Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(0xc000000000)}: spec of 'exempt' except the 'spec.exempt' field must equal the fixed value",
                ],
            ),
            (
                pl("catch-all", limited(json!({"nominalConcurrencyShares": 42, "limitResponse": reject}))),
                vec!["spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:\"Limited\", Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(0xc000000000), Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(nil)}: spec of 'catch-all' must equal the fixed value"],
            ),
            (
                json!({"metadata": {"name": "annotated", "annotations": {PRESERVE_ZERO_ANNOTATION: ""}},
                    "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 42, "limitResponse": reject}}}),
                vec!["metadata.annotations: Forbidden: annotation 'flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares' is forbidden"],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(s.validate(&obj)), want, "{obj}");
        }
    }

    #[test]
    fn defaults_follow_v1() {
        let s = PriorityLevels;
        let mut obj = pl("mine", limited(json!({"limitResponse": {"type": "Queue", "queuing": {"handSize": 4}}})));
        obj["status"] = json!({"conditions": [{"type": "X"}]});
        s.prepare_for_create(&mut obj);
        assert_eq!(
            obj["spec"],
            json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 30, "lendablePercent": 0,
                "limitResponse": {"type": "Queue", "queuing": {"queues": 64, "handSize": 4, "queueLengthLimit": 50}}}})
        );
        assert_eq!(obj["status"], json!({}));
        assert_eq!(obj["metadata"]["generation"], 1);
        // An explicit zero stays zero in v1, and is refused.
        let mut zero = pl("zero", limited(json!({"nominalConcurrencyShares": 0, "limitResponse": {"type": "Reject"}})));
        s.prepare_for_create(&mut zero);
        assert_eq!(zero["spec"]["limited"]["nominalConcurrencyShares"], 0);
        assert_eq!(
            messages(s.validate(&zero)),
            ["spec.limited.nominalConcurrencyShares: Invalid value: 0: must be positive"]
        );
        let mut exempt = pl("exempt", json!({"type": "Exempt", "exempt": {"lendablePercent": 5}}));
        s.prepare_for_create(&mut exempt);
        assert_eq!(exempt["spec"]["exempt"], json!({"nominalConcurrencyShares": 0, "lendablePercent": 5}));
        assert!(s.validate(&exempt).is_empty());
    }

    #[test]
    fn the_bootstrap_levels_are_valid_and_keep_their_spec() {
        let s = PriorityLevels;
        for mut obj in bootstrap::priority_levels() {
            let before = obj["spec"].clone();
            s.prepare_for_create(&mut obj);
            assert_eq!(obj["spec"], before, "defaults change nothing");
            assert_eq!(messages(s.validate(&obj)), Vec::<String>::new(), "{obj}");
        }
    }

    #[test]
    fn updates_keep_status_and_count_spec_changes() {
        let s = PriorityLevels;
        let mut old = pl("mine", queue(64, 8, 50));
        s.prepare_for_create(&mut old);
        old["status"] = json!({"conditions": [{"type": "X", "status": "True"}]});
        let mut new = old.clone();
        new["status"] = json!({});
        new["spec"]["limited"]["limitResponse"]["queuing"]["queues"] = json!(128);
        s.prepare_for_update(&mut new, &old);
        assert_eq!(new["status"], old["status"]);
        assert_eq!(new["metadata"]["generation"], 2);
        let mut status = old.clone();
        status["spec"]["type"] = json!("Exempt");
        status["status"] = json!({"conditions": [{"type": ""}]});
        s.prepare_for_subresource_update(Subresource::Status, &mut status, &old);
        assert_eq!(status["spec"], old["spec"]);
        assert_eq!(
            messages(s.validate_subresource_update(Subresource::Status, &status, &old)),
            ["status.conditions[0].type: Required value: must not be empty"]
        );
    }

    #[test]
    fn the_printer_shows_shares_and_queuing() {
        let mut obj = pl("mine", queue(64, 8, 50));
        PriorityLevels.prepare_for_create(&mut obj);
        assert_eq!(
            (printer().cells)(&obj, 0, &[]),
            vec![json!("mine"), json!("Limited"), json!(100), json!(64), json!(8), json!(50), json!("<unknown>")]
        );
        let exempt = pl("exempt", json!({"type": "Exempt", "exempt": {}}));
        let cells = (printer().cells)(&exempt, 0, &[]);
        assert_eq!(cells[1..6], [json!("Exempt"), json!("<none>"), json!("<none>"), json!("<none>"), json!("<none>")]);
        let catch_all = pl("catch-all", bootstrap::mandatory_priority_level_spec("catch-all").unwrap());
        assert_eq!(
            (printer().cells)(&catch_all, 0, &[])[2..6],
            [json!(5), json!("<none>"), json!("<none>"), json!("<none>")]
        );
    }
}
