//! FlowSchemas, `flowcontrol.apiserver.k8s.io/v1` (`KK/pkg/registry/flowcontrol/flowschema`,
//! `KK/pkg/apis/flowcontrol/validation`, `KK/pkg/apis/flowcontrol/v1/defaults.go`): cluster-scoped, names
//! are DNS subdomains, a `/status` subresource. `matchingPrecedence` defaults to 1000 and lies in 1..=10000
//! (1 only for `exempt`); the distinguisher is `ByUser` or `ByNamespace`; the priority level is named by a
//! DNS subdomain; each rule has subjects (a `User`, `Group` or `ServiceAccount` union) and resource or
//! non-resource rules, whose `*` stands alone. The mandatory `exempt` and `catch-all` schemas keep
//! kube-apiserver's spec. The main endpoint resets the status (empty on create, the stored one on update)
//! and bumps the generation when the spec changes; `/status` keeps everything else of the stored object and
//! wants condition types present and unique. kube-apiserver's APF controller sets the `Dangling` condition
//! the `MissingPL` column reads; kubesim runs no such controller, so the column shows `?`.

use std::sync::Arc;

use serde_json::{json, Value};

use super::bootstrap;
use crate::apis::networking::ingresses::invalid_go;
use crate::apis::printers::{age, age_column, column, doc_column, name, name_column};
use crate::apis::{status, Printer, ResourceInfo};
use crate::go_text::quote;
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::{bump_generation_on_spec_change, common, start_generation};
use crate::registry::strategy::{DeleteStrategy, Strategy, Subresource};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        namespaced: false,
        subresources: vec![status("FlowSchema")],
        bootstrap: bootstrap::flow_schemas,
        ..ResourceInfo::new(resource(), "flowschema", Arc::new(FlowSchemas), printer())
    }
}

fn resource() -> Resource {
    Resource {
        group: "flowcontrol.apiserver.k8s.io".into(),
        version: "v1".into(),
        kind: "FlowSchema".into(),
        plural: "flowschemas".into(),
        etcd_prefix: "flowschemas".into(),
    }
}

/// `FlowSchemaDefaultMatchingPrecedence`.
const DEFAULT_MATCHING_PRECEDENCE: i64 = 1000;
/// `FlowSchemaMaxMatchingPrecedence`.
const MAX_MATCHING_PRECEDENCE: i64 = 10000;
/// The distinguisher methods, sorted.
const DISTINGUISHER_METHODS: &[&str] = &["ByNamespace", "ByUser"];
/// The subject kinds, sorted.
const SUBJECT_KINDS: &[&str] = &["Group", "ServiceAccount", "User"];
/// The verbs a rule may name besides `*`, sorted.
const VERBS: &[&str] = &["create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"];
/// What a namespace's DNS label messages start with.
const NAMESPACE_INTRO: &str = "each member of this list must be '*' or a DNS-1123 label; ";
/// How Go shows a non-nil pointer in `%#v`; the address differs on every request upstream.
pub(crate) const GO_ADDRESS: &str = "0xc000000000";

/// The FlowSchema strategy.
struct FlowSchemas;

/// `SetDefaults_FlowSchemaSpec`: a zero precedence becomes 1000.
fn default(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else { return };
    let spec = map.entry("spec").or_insert_with(|| json!({}));
    if !spec.is_object() {
        return;
    }
    if spec.get("matchingPrecedence").and_then(Value::as_i64).unwrap_or(0) == 0 {
        spec["matchingPrecedence"] = json!(DEFAULT_MATCHING_PRECEDENCE);
    }
}

fn array<'a>(obj: &'a Value, key: &str) -> &'a [Value] {
    obj.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn strings<'a>(obj: &'a Value, key: &str) -> Vec<&'a str> {
    array(obj, key).iter().map(|v| v.as_str().unwrap_or("")).collect()
}

fn string<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A present, non-null member.
fn member<'a>(obj: &'a Value, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

/// Go's `%#v` of a `[]string`: `nil` when absent.
pub(crate) fn go_strings(obj: &Value, key: &str) -> String {
    match obj.get(key).and_then(Value::as_array) {
        None => "[]string(nil)".into(),
        Some(items) => {
            let shown: Vec<String> = items.iter().map(|v| quote(v.as_str().unwrap_or(""))).collect();
            format!("[]string{{{}}}", shown.join(", "))
        }
    }
}

/// Go's `%#v` of a pointer field of type `ty`.
pub(crate) fn go_pointer(obj: &Value, key: &str, ty: &str) -> String {
    match member(obj, key) {
        Some(_) => format!("(*flowcontrol.{ty})({GO_ADDRESS})"),
        None => format!("(*flowcontrol.{ty})(nil)"),
    }
}

/// Go's `%#v` of a slice of structs of type `ty`, each shown by `item`.
fn go_slice(obj: &Value, key: &str, ty: &str, item: fn(&Value) -> String) -> String {
    match obj.get(key).and_then(Value::as_array) {
        None => format!("[]flowcontrol.{ty}(nil)"),
        Some(items) => format!("[]flowcontrol.{ty}{{{}}}", items.iter().map(item).collect::<Vec<_>>().join(", ")),
    }
}

fn go_subject(s: &Value) -> String {
    format!(
        "flowcontrol.Subject{{Kind:{}, User:{}, Group:{}, ServiceAccount:{}}}",
        quote(string(s, "kind")),
        go_pointer(s, "user", "UserSubject"),
        go_pointer(s, "group", "GroupSubject"),
        go_pointer(s, "serviceAccount", "ServiceAccountSubject"),
    )
}

fn go_resource_rule(r: &Value) -> String {
    format!(
        "flowcontrol.ResourcePolicyRule{{Verbs:{}, APIGroups:{}, Resources:{}, ClusterScope:{}, Namespaces:{}}}",
        go_strings(r, "verbs"),
        go_strings(r, "apiGroups"),
        go_strings(r, "resources"),
        r.get("clusterScope").and_then(Value::as_bool).unwrap_or(false),
        go_strings(r, "namespaces"),
    )
}

fn go_non_resource_rule(r: &Value) -> String {
    format!(
        "flowcontrol.NonResourcePolicyRule{{Verbs:{}, NonResourceURLs:{}}}",
        go_strings(r, "verbs"),
        go_strings(r, "nonResourceURLs")
    )
}

fn go_rule(r: &Value) -> String {
    format!(
        "flowcontrol.PolicyRulesWithSubjects{{Subjects:{}, ResourceRules:{}, NonResourceRules:{}}}",
        go_slice(r, "subjects", "Subject", go_subject),
        go_slice(r, "resourceRules", "ResourcePolicyRule", go_resource_rule),
        go_slice(r, "nonResourceRules", "NonResourcePolicyRule", go_non_resource_rule),
    )
}

/// Go's `%#v` of the internal `FlowSchemaSpec`, as the mandatory schemas' message prints it.
fn go_spec(spec: &Value) -> String {
    let level = spec.get("priorityLevelConfiguration").unwrap_or(&Value::Null);
    format!(
        "flowcontrol.FlowSchemaSpec{{PriorityLevelConfiguration:flowcontrol.PriorityLevelConfigurationReference{{Name:{}}}, MatchingPrecedence:{}, DistinguisherMethod:{}, Rules:{}}}",
        quote(string(level, "name")),
        spec.get("matchingPrecedence").and_then(Value::as_i64).unwrap_or(0),
        go_pointer(spec, "distinguisherMethod", "FlowDistinguisherMethod"),
        go_slice(spec, "rules", "PolicyRulesWithSubjects", go_rule),
    )
}

/// The spec with every field present (Go's zero values, nil and empty lists alike), so that two specs
/// compare as `apiequality.Semantic.DeepEqual` compares them.
fn canonical_spec(spec: &Value) -> Value {
    let list = |v: &Value, key: &str| json!(strings(v, key));
    let pointer_name = |v: &Value, key: &str| member(v, key).map(|p| json!({"name": string(p, "name")}));
    let rules: Vec<Value> = array(spec, "rules")
        .iter()
        .map(|r| {
            let subjects: Vec<Value> = array(r, "subjects")
                .iter()
                .map(|s| {
                    json!({"kind": string(s, "kind"), "user": pointer_name(s, "user"), "group": pointer_name(s, "group"),
                        "serviceAccount": member(s, "serviceAccount").map(|sa| json!({
                            "namespace": string(sa, "namespace"), "name": string(sa, "name")}))})
                })
                .collect();
            let resource_rules: Vec<Value> = array(r, "resourceRules")
                .iter()
                .map(|rr| {
                    json!({"verbs": list(rr, "verbs"), "apiGroups": list(rr, "apiGroups"),
                        "resources": list(rr, "resources"), "namespaces": list(rr, "namespaces"),
                        "clusterScope": rr.get("clusterScope").and_then(Value::as_bool).unwrap_or(false)})
                })
                .collect();
            let non_resource_rules: Vec<Value> = array(r, "nonResourceRules")
                .iter()
                .map(|nr| json!({"verbs": list(nr, "verbs"), "nonResourceURLs": list(nr, "nonResourceURLs")}))
                .collect();
            json!({"subjects": subjects, "resourceRules": resource_rules, "nonResourceRules": non_resource_rules})
        })
        .collect();
    json!({
        "priorityLevelConfiguration": string(spec.get("priorityLevelConfiguration").unwrap_or(&Value::Null), "name"),
        "matchingPrecedence": spec.get("matchingPrecedence").and_then(Value::as_i64).unwrap_or(0),
        "distinguisherMethod": member(spec, "distinguisherMethod").map(|d| string(d, "type")),
        "rules": rules,
    })
}

/// A `[]string` field error value.
fn go_list(values: &[&str]) -> String {
    let shown: Vec<String> = values.iter().map(|v| quote(v)).collect();
    format!("[]string{{{}}}", shown.join(", "))
}

/// The verbs rule shared by resource and non-resource rules.
fn validate_verbs(rule: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let verbs = strings(rule, "verbs");
    let field = format!("{path}.verbs");
    if verbs.is_empty() {
        errs.push(FieldError::required(&field, "verbs must contain at least one value"));
    } else if verbs.contains(&"*") {
        if verbs.len() > 1 {
            errs.push(invalid_go(&field, go_list(&verbs), "if '*' is present, must not specify other verbs"));
        }
    } else if !verbs.iter().all(|v| VERBS.contains(v)) {
        let owned: Vec<String> = verbs.iter().map(|v| v.to_string()).collect();
        errs.push(FieldError::not_supported_list(&field, &owned, VERBS));
    }
}

/// `ValidateFlowSchemaResourcePolicyRule`.
fn validate_resource_rule(rule: &Value, path: &str, errs: &mut Vec<FieldError>) {
    validate_verbs(rule, path, errs);
    for (key, what) in [("apiGroups", "api group"), ("resources", "resource")] {
        let values = strings(rule, key);
        let field = format!("{path}.{key}");
        if values.is_empty() {
            errs.push(FieldError::required(&field, &format!("resource rules must supply at least one {what}")));
        } else if values.len() > 1 && values.contains(&"*") {
            errs.push(invalid_go(
                &field,
                go_list(&values),
                &format!("if '*' is present, must not specify other {what}s"),
            ));
        }
    }
    let namespaces = strings(rule, "namespaces");
    let cluster_scope = rule.get("clusterScope").and_then(Value::as_bool).unwrap_or(false);
    let field = format!("{path}.namespaces");
    if namespaces.is_empty() && !cluster_scope {
        errs.push(FieldError::required(
            &field,
            "resource rules that are not cluster scoped must supply at least one namespace",
        ));
    } else if namespaces.contains(&"*") {
        if namespaces.len() > 1 {
            errs.push(invalid_go(&field, go_list(&namespaces), "if '*' is present, must not specify other namespaces"));
        }
    } else {
        for (i, ns) in namespaces.iter().enumerate() {
            for msg in names::name_is_dns_label(ns, false) {
                errs.push(FieldError::invalid(&format!("{field}[{i}]"), ns, &format!("{NAMESPACE_INTRO}{msg}")));
            }
        }
    }
}

/// `ValidateNonResourceURLPath`: the first thing wrong with a non-resource URL.
fn non_resource_url_problem(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("must not be empty");
    }
    if path == "/" {
        return None;
    }
    if !path.starts_with('/') {
        return Some("must start with slash");
    }
    if path.contains(' ') {
        return Some("must not contain white-space");
    }
    if path.contains("//") {
        return Some("must not contain double slash");
    }
    let wildcards = path.matches('*').count();
    if wildcards > 1 || (wildcards == 1 && !path.ends_with("/*")) {
        return Some("wildcard can only do suffix matching");
    }
    None
}

/// `ValidateFlowSchemaNonResourcePolicyRule`.
fn validate_non_resource_rule(rule: &Value, path: &str, errs: &mut Vec<FieldError>) {
    validate_verbs(rule, path, errs);
    let urls = strings(rule, "nonResourceURLs");
    let field = format!("{path}.nonResourceURLs");
    if urls.is_empty() {
        errs.push(FieldError::required(&field, "nonResourceURLs must contain at least one value"));
    } else if urls.contains(&"*") {
        if urls.len() > 1 {
            errs.push(invalid_go(
                &field,
                go_list(&urls),
                "if '*' is present, must not specify other non-resource URLs",
            ));
        }
    } else {
        for (i, url) in urls.iter().enumerate() {
            if let Some(why) = non_resource_url_problem(url) {
                errs.push(FieldError::invalid(&format!("{field}[{i}]"), url, why));
            }
        }
    }
}

/// `ValidateFlowSchemaSubject`: the member the kind names is present and valid, the others absent.
fn validate_subject(subject: &Value, path: &str, errs: &mut Vec<FieldError>) {
    const MEMBERS: [(&str, &str); 3] = [("serviceAccount", "ServiceAccount"), ("user", "User"), ("group", "Group")];
    let kind = string(subject, "kind");
    let Some((own, _)) = MEMBERS.iter().find(|(_, k)| *k == kind) else {
        errs.push(FieldError::not_supported(&format!("{path}.kind"), kind, SUBJECT_KINDS));
        return;
    };
    // The kind's own member first, then the others, as upstream's switch checks them.
    let order = std::iter::once(own).chain(MEMBERS.iter().map(|(k, _)| k).filter(|k| *k != own));
    for key in order {
        let key = *key;
        let member_kind = MEMBERS.iter().find(|(k, _)| *k == key).map_or("", |(_, m)| m);
        let field = format!("{path}.{key}");
        let value = member(subject, key);
        if key != *own {
            if value.is_some() {
                errs.push(FieldError::forbidden(
                    &field,
                    &format!("{key} is forbidden when subject kind is not '{member_kind}'"),
                ));
            }
            continue;
        }
        let Some(value) = value else {
            errs.push(FieldError::required(&field, &format!("{key} is required when subject kind is '{member_kind}'")));
            continue;
        };
        let name = string(value, "name");
        if name.is_empty() {
            errs.push(FieldError::required(&format!("{field}.name"), ""));
        } else if key == "serviceAccount" && name != "*" {
            for msg in names::name_is_dns_subdomain(name, false) {
                errs.push(FieldError::invalid(&format!("{field}.name"), name, &msg));
            }
        }
        if key == "serviceAccount" {
            let namespace = string(value, "namespace");
            if namespace.is_empty() {
                errs.push(FieldError::required(
                    &format!("{field}.namespace"),
                    "must specify namespace for service account",
                ));
            } else {
                for msg in names::name_is_dns_label(namespace, false) {
                    errs.push(FieldError::invalid(&format!("{field}.namespace"), namespace, &msg));
                }
            }
        }
    }
}

/// `ValidateFlowSchemaPolicyRulesWithSubjects`.
fn validate_rule(rule: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let subjects = array(rule, "subjects");
    if subjects.is_empty() {
        errs.push(FieldError::required(&format!("{path}.subjects"), "subjects must contain at least one value"));
    }
    for (i, subject) in subjects.iter().enumerate() {
        validate_subject(subject, &format!("{path}.subjects[{i}]"), errs);
    }
    let (resource_rules, non_resource_rules) = (array(rule, "resourceRules"), array(rule, "nonResourceRules"));
    if resource_rules.is_empty() && non_resource_rules.is_empty() {
        errs.push(FieldError::required(path, "at least one of resourceRules and nonResourceRules has to be non-empty"));
    }
    for (i, r) in resource_rules.iter().enumerate() {
        validate_resource_rule(r, &format!("{path}.resourceRules[{i}]"), errs);
    }
    for (i, r) in non_resource_rules.iter().enumerate() {
        validate_non_resource_rule(r, &format!("{path}.nonResourceRules[{i}]"), errs);
    }
}

/// `ValidateFlowSchemaSpec`.
fn validate_spec(name: &str, spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let precedence = spec.get("matchingPrecedence").and_then(Value::as_i64).unwrap_or(0);
    if precedence <= 0 {
        errs.push(FieldError::invalid_int("spec.matchingPrecedence", precedence, "must be a positive value"));
    }
    if precedence > MAX_MATCHING_PRECEDENCE {
        errs.push(FieldError::invalid_int(
            "spec.matchingPrecedence",
            precedence,
            &format!("must not be greater than {MAX_MATCHING_PRECEDENCE}"),
        ));
    }
    if precedence == 1 && name != "exempt" {
        errs.push(FieldError::invalid_int(
            "spec.matchingPrecedence",
            precedence,
            "only the schema named 'exempt' may have matchingPrecedence 1",
        ));
    }
    if let Some(method) = member(spec, "distinguisherMethod") {
        let ty = string(method, "type");
        if !DISTINGUISHER_METHODS.contains(&ty) {
            let allowed: Vec<String> = DISTINGUISHER_METHODS.iter().map(|v| quote(v)).collect();
            errs.push(FieldError {
                kind: FieldErrorType::NotSupported,
                field: "spec.distinguisherMethod.type".into(),
                value: BadValue::GoSyntax(format!("flowcontrol.FlowDistinguisherMethod{{Type:{}}}", quote(ty))),
                detail: format!("supported values: {}", allowed.join(", ")),
            });
        }
    }
    let level = string(spec.get("priorityLevelConfiguration").unwrap_or(&Value::Null), "name");
    if level.is_empty() {
        errs.push(FieldError::required("spec.priorityLevelConfiguration.name", "must reference a priority level"));
    } else {
        for msg in names::name_is_dns_subdomain(level, false) {
            errs.push(FieldError::invalid("spec.priorityLevelConfiguration.name", level, &msg));
        }
    }
    for (i, rule) in array(spec, "rules").iter().enumerate() {
        validate_rule(rule, &format!("spec.rules[{i}]"), &mut errs);
    }
    errs
}

/// `ValidateFlowSchemaStatus` (and the priority levels' twin): condition types present and unique.
pub(crate) fn validate_conditions(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let conditions = obj.pointer("/status/conditions").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for (i, condition) in conditions.iter().enumerate() {
        let ty = string(condition, "type");
        let field = format!("status.conditions[{i}].type");
        if seen.contains(&ty) {
            errs.push(FieldError {
                kind: FieldErrorType::Duplicate,
                field: field.clone(),
                value: BadValue::Str(ty.to_string()),
                detail: String::new(),
            });
        }
        seen.push(ty);
        if ty.is_empty() {
            errs.push(FieldError::required(&field, "must not be empty"));
        }
    }
    errs
}

/// The status strategies' rule: the stored object with the new status; only the resourceVersion (which
/// preconditions the write) and the managed fields come from the request.
pub(crate) fn keep_all_but_status(new: &mut Value, old: &Value) {
    let version = meta::get(new, "resourceVersion").cloned();
    let managed = meta::get(new, "managedFields").cloned();
    let status = new.get("status").cloned();
    *new = old.clone();
    match status {
        Some(status) => new["status"] = status,
        None => {
            new.as_object_mut().map(|o| o.remove("status"));
        }
    }
    meta::set(new, "resourceVersion", version);
    meta::set(new, "managedFields", managed);
}

/// What the protobuf round trip through etcd makes of the lists: empty `omitempty` lists are left out,
/// and a resource rule's empty `namespaces` (no `omitempty`) is written `null`, as upstream answers reads.
fn canonicalize(obj: &mut Value) {
    fn drop_empty(map: &mut serde_json::Map<String, Value>, key: &str) {
        if map.get(key).and_then(Value::as_array).is_some_and(Vec::is_empty) {
            map.remove(key);
        }
    }
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        drop_empty(spec, "rules");
        for rule in spec.get_mut("rules").and_then(Value::as_array_mut).into_iter().flatten() {
            let Some(rule) = rule.as_object_mut() else { continue };
            drop_empty(rule, "resourceRules");
            drop_empty(rule, "nonResourceRules");
            for resource_rule in rule.get_mut("resourceRules").and_then(Value::as_array_mut).into_iter().flatten() {
                let Some(resource_rule) = resource_rule.as_object_mut() else { continue };
                if resource_rule.get("namespaces").and_then(Value::as_array).is_none_or(Vec::is_empty) {
                    resource_rule.insert("namespaces".into(), Value::Null);
                }
            }
        }
    }
    canonicalize_status(obj);
}

/// Empty status conditions are left out (`omitempty`), for both kinds.
pub(crate) fn canonicalize_status(obj: &mut Value) {
    if let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut) {
        if status.get("conditions").and_then(Value::as_array).is_some_and(Vec::is_empty) {
            status.remove("conditions");
        }
    }
}

/// `ValidateFlowSchema`: metadata, spec, the mandatory schemas' fixed spec, status.
fn validate_flow_schema(obj: &Value) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, false, names::name_is_dns_subdomain);
    let name = meta::get_str(obj, "name");
    let empty = json!({});
    let spec = obj.get("spec").filter(|s| s.is_object()).unwrap_or(&empty);
    errs.extend(validate_spec(name, spec));
    if let Some(fixed) = bootstrap::mandatory_flow_schema_spec(name) {
        if canonical_spec(spec) != canonical_spec(&fixed) {
            errs.push(invalid_go("spec", go_spec(spec), &format!("spec of '{name}' must equal the fixed value")));
        }
    }
    errs.extend(validate_conditions(obj));
    errs
}

impl Strategy for FlowSchemas {
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
        validate_flow_schema(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain);
        errs.extend(validate_flow_schema(new));
        errs
    }

    fn validate_subresource_update(&self, _sub: Subresource, new: &Value, _old: &Value) -> Vec<FieldError> {
        validate_conditions(new)
    }

    fn canonicalize(&self, obj: &mut Value) {
        canonicalize(obj);
    }
}

impl DeleteStrategy for FlowSchemas {}

/// `printFlowSchema`: priority level, precedence, distinguisher, age, and whether the level is missing
/// (the `Dangling` condition's status, `?` before the APF controller has looked).
fn printer() -> Printer {
    const SPEC: &str = "io.k8s.api.flowcontrol.v1.FlowSchemaSpec";
    Printer {
        columns: vec![
            name_column(),
            doc_column(
                "PriorityLevel",
                "string",
                "io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationReference",
                "name",
                0,
            ),
            doc_column("MatchingPrecedence", "string", SPEC, "matchingPrecedence", 0),
            doc_column("DistinguisherMethod", "string", SPEC, "distinguisherMethod", 0),
            age_column(),
            column("MissingPL", "string", "references a broken or non-existent PriorityLevelConfiguration", 0),
        ],
        cells: |obj, now, _| {
            let level = obj.pointer("/spec/priorityLevelConfiguration/name").and_then(Value::as_str).unwrap_or("");
            let precedence = obj.pointer("/spec/matchingPrecedence").and_then(Value::as_i64).unwrap_or(0);
            let method = obj.pointer("/spec/distinguisherMethod/type").and_then(Value::as_str).unwrap_or("<none>");
            let conditions = obj.pointer("/status/conditions").and_then(Value::as_array);
            let dangling = conditions
                .and_then(|c| c.iter().find(|c| c.get("type").and_then(Value::as_str) == Some("Dangling")))
                .map_or("?", |c| string(c, "status"));
            vec![name(obj), json!(level), json!(precedence), json!(method), age(obj, now), json!(dangling)]
        },
    }
}

#[cfg(test)]
mod tests;
