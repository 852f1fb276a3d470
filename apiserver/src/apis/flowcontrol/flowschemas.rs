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
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn fs(name: &str, spec: Value) -> Value {
        json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": name},
            "spec": spec})
    }

    fn user_rule(extra: Value) -> Value {
        let mut rule = json!({"subjects": [{"kind": "User", "user": {"name": "noxu"}}]});
        for (k, v) in extra.as_object().unwrap() {
            rule[k] = v.clone();
        }
        rule
    }

    fn spec_with(rule: Value) -> Value {
        json!({"matchingPrecedence": 50, "priorityLevelConfiguration": {"name": "system-bar"}, "rules": [rule]})
    }

    fn all_resources() -> Value {
        json!({"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["*"]}]})
    }

    #[test]
    fn schemas_are_validated_as_upstream_validates_them() {
        let s = FlowSchemas;
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (fs("system-foo", spec_with(user_rule(all_resources()))), vec![]),
            (
                fs("system-foo", spec_with(user_rule(json!({})))),
                vec!["spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty"],
            ),
            (
                fs("system-foo", spec_with(json!({"subjects": [{"kind": "ServiceAccount", "user": {"name": "fred"},
                    "group": {"name": "fred"}}], "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}))),
                vec![
                    "spec.rules[0].subjects[0].serviceAccount: Required value: serviceAccount is required when subject kind is 'ServiceAccount'",
                    "spec.rules[0].subjects[0].user: Forbidden: user is forbidden when subject kind is not 'User'",
                    "spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind is not 'Group'",
                ],
            ),
            (
                fs("system-foo", spec_with(json!({"subjects": [{"kind": "FooKind"}],
                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*", "tik"]}]}))),
                vec![
                    "spec.rules[0].subjects[0].kind: Unsupported value: \"FooKind\": supported values: \"Group\", \"ServiceAccount\", \"User\"",
                    "spec.rules[0].nonResourceRules[0].nonResourceURLs: Invalid value: []string{\"*\", \"tik\"}: if '*' is present, must not specify other non-resource URLs",
                ],
            ),
            (
                fs("system-foo", spec_with(user_rule(json!({"resourceRules": [{"verbs": ["*", "create"],
                    "apiGroups": ["*", "tak"], "resources": ["*", "tok"], "namespaces": ["foo", "*"]}]})))),
                vec![
                    "spec.rules[0].resourceRules[0].verbs: Invalid value: []string{\"*\", \"create\"}: if '*' is present, must not specify other verbs",
                    "spec.rules[0].resourceRules[0].apiGroups: Invalid value: []string{\"*\", \"tak\"}: if '*' is present, must not specify other api groups",
                    "spec.rules[0].resourceRules[0].resources: Invalid value: []string{\"*\", \"tok\"}: if '*' is present, must not specify other resources",
                    "spec.rules[0].resourceRules[0].namespaces: Invalid value: []string{\"foo\", \"*\"}: if '*' is present, must not specify other namespaces",
                ],
            ),
            (
                fs("system-foo", spec_with(user_rule(json!({"resourceRules": [{"verbs": ["feed"], "apiGroups": [],
                    "resources": ["*"], "namespaces": ["-foo"]}, {"verbs": ["get"], "apiGroups": ["*"], "resources": []}]})))),
                vec![
                    "spec.rules[0].resourceRules[0].verbs: Unsupported value: []string{\"feed\"}: supported values: \"create\", \"delete\", \"deletecollection\", \"get\", \"list\", \"patch\", \"proxy\", \"update\", \"watch\"",
                    "spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group",
                    "spec.rules[0].resourceRules[0].namespaces[0]: Invalid value: \"-foo\": each member of this list must be '*' or a DNS-1123 label; a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                    "spec.rules[0].resourceRules[1].resources: Required value: resource rules must supply at least one resource",
                    "spec.rules[0].resourceRules[1].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace",
                ],
            ),
            (
                fs("system-foo", spec_with(json!({"subjects": [], "nonResourceRules": [{"verbs": [],
                    "nonResourceURLs": ["foo", "/a b", "//", "/x*", "/ok/*", ""]}, {"verbs": ["get"]}]}))),
                vec![
                    "spec.rules[0].subjects: Required value: subjects must contain at least one value",
                    "spec.rules[0].nonResourceRules[0].verbs: Required value: verbs must contain at least one value",
                    "spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: \"foo\": must start with slash",
                    "spec.rules[0].nonResourceRules[0].nonResourceURLs[1]: Invalid value: \"/a b\": must not contain white-space",
                    "spec.rules[0].nonResourceRules[0].nonResourceURLs[2]: Invalid value: \"//\": must not contain double slash",
                    "spec.rules[0].nonResourceRules[0].nonResourceURLs[3]: Invalid value: \"/x*\": wildcard can only do suffix matching",
                    "spec.rules[0].nonResourceRules[0].nonResourceURLs[5]: Invalid value: \"\": must not be empty",
                    "spec.rules[0].nonResourceRules[1].nonResourceURLs: Required value: nonResourceURLs must contain at least one value",
                ],
            ),
            (
                fs("system-foo", spec_with(json!({"subjects": [
                    {"kind": "ServiceAccount", "serviceAccount": {"name": "noxu"}},
                    {"kind": "ServiceAccount", "serviceAccount": {"name": "No", "namespace": "Bad"}},
                    {"kind": "ServiceAccount", "serviceAccount": {"name": "*", "namespace": "ns"}},
                    {"kind": "User", "user": {}, "serviceAccount": {"name": "n", "namespace": "s"}},
                    {"kind": "Group", "group": {"name": ""}}],
                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["/"]}]}))),
                vec![
                    "spec.rules[0].subjects[0].serviceAccount.namespace: Required value: must specify namespace for service account",
                    "spec.rules[0].subjects[1].serviceAccount.name: Invalid value: \"No\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                    "spec.rules[0].subjects[1].serviceAccount.namespace: Invalid value: \"Bad\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                    "spec.rules[0].subjects[3].user.name: Required value",
                    "spec.rules[0].subjects[3].serviceAccount: Forbidden: serviceAccount is forbidden when subject kind is not 'ServiceAccount'",
                    "spec.rules[0].subjects[4].group.name: Required value",
                ],
            ),
            (
                fs("fred", json!({"matchingPrecedence": 1, "priorityLevelConfiguration": {"name": "system+++$$"},
                    "distinguisherMethod": {"type": "ByGroup"},
                    "rules": [user_rule(json!({"nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}))]})),
                vec![
                    "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
                    "spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:\"ByGroup\"}: supported values: \"ByNamespace\", \"ByUser\"",
                    "spec.priorityLevelConfiguration.name: Invalid value: \"system+++$$\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                ],
            ),
            (
                fs("big", json!({"matchingPrecedence": 10001, "rules": []})),
                vec![
                    "spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000",
                    "spec.priorityLevelConfiguration.name: Required value: must reference a priority level",
                ],
            ),
            (
                fs("neg", json!({"matchingPrecedence": -3, "priorityLevelConfiguration": {"name": "p"}})),
                vec!["spec.matchingPrecedence: Invalid value: -3: must be a positive value"],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(s.validate(&obj)), want, "{obj}");
        }
    }

    #[test]
    fn mandatory_schemas_keep_their_spec() {
        let s = FlowSchemas;
        for mut obj in bootstrap::flow_schemas() {
            s.prepare_for_create(&mut obj);
            assert_eq!(messages(s.validate(&obj)), Vec::<String>::new(), "{obj}");
        }
        // The same spec with explicit zero values and empty lists is the same spec.
        let mut exempt = fs("exempt", bootstrap::mandatory_flow_schema_spec("exempt").unwrap());
        exempt["spec"]["rules"][0]["resourceRules"][0]["clusterScope"] = json!(true);
        exempt["spec"]["distinguisherMethod"] = Value::Null;
        assert!(s.validate(&exempt).is_empty());
        let mut changed = fs("exempt", bootstrap::mandatory_flow_schema_spec("exempt").unwrap());
        changed["spec"]["rules"][0]["nonResourceRules"][0]["nonResourceURLs"] = json!(["/"]);
        assert_eq!(
            messages(s.validate(&changed)),
            ["spec: Invalid value: flowcontrol.FlowSchemaSpec{PriorityLevelConfiguration:flowcontrol.PriorityLevelConfigurationReference{Name:\"exempt\"}, MatchingPrecedence:1, DistinguisherMethod:(*flowcontrol.FlowDistinguisherMethod)(nil), Rules:[]flowcontrol.PolicyRulesWithSubjects{flowcontrol.PolicyRulesWithSubjects{Subjects:[]flowcontrol.Subject{flowcontrol.Subject{Kind:\"Group\", User:(*flowcontrol.UserSubject)(nil), Group:(*flowcontrol.GroupSubject)(0xc000000000), ServiceAccount:(*flowcontrol.ServiceAccountSubject)(nil)}}, ResourceRules:[]flowcontrol.ResourcePolicyRule{flowcontrol.ResourcePolicyRule{Verbs:[]string{\"*\"}, APIGroups:[]string{\"*\"}, Resources:[]string{\"*\"}, ClusterScope:true, Namespaces:[]string{\"*\"}}}, NonResourceRules:[]flowcontrol.NonResourcePolicyRule{flowcontrol.NonResourcePolicyRule{Verbs:[]string{\"*\"}, NonResourceURLs:[]string{\"/\"}}}}}}: spec of 'exempt' must equal the fixed value"]
        );
        let mut catch_all = fs("catch-all", bootstrap::mandatory_flow_schema_spec("catch-all").unwrap());
        catch_all["spec"]["matchingPrecedence"] = json!(9999);
        assert!(messages(s.validate(&catch_all))[0].ends_with("spec of 'catch-all' must equal the fixed value"));
    }

    #[test]
    fn defaults_status_and_generation() {
        let s = FlowSchemas;
        let mut obj = fs("mine", json!({"priorityLevelConfiguration": {"name": "p"}}));
        obj["status"] = json!({"conditions": [{"type": "Dangling", "status": "True"}]});
        s.prepare_for_create(&mut obj);
        assert_eq!(obj["spec"]["matchingPrecedence"], 1000);
        assert_eq!(obj["status"], json!({}));
        assert_eq!(obj["metadata"]["generation"], 1);
        obj["status"] = json!({"conditions": [{"type": "Dangling", "status": "False"}]});

        // The main endpoint keeps the stored status and counts spec changes.
        let mut same = obj.clone();
        same["status"] = json!({});
        s.prepare_for_update(&mut same, &obj);
        assert_eq!(same["metadata"]["generation"], 1);
        assert_eq!(same["status"], obj["status"]);
        let mut moved = obj.clone();
        moved["spec"]["matchingPrecedence"] = json!(0);
        s.prepare_for_update(&mut moved, &obj);
        assert_eq!(moved["spec"]["matchingPrecedence"], 1000);
        assert_eq!(moved["metadata"]["generation"], 1);
        moved["spec"]["matchingPrecedence"] = json!(7);
        s.prepare_for_update(&mut moved, &obj);
        assert_eq!(moved["metadata"]["generation"], 2);

        // `/status` keeps everything else, labels included.
        let mut status = obj.clone();
        status["spec"]["matchingPrecedence"] = json!(5);
        status["metadata"]["labels"] = json!({"a": "b"});
        status["metadata"]["resourceVersion"] = json!("9");
        status["status"] = json!({"conditions": [{"type": "Dangling"}, {"type": "Dangling"}, {"type": ""}]});
        s.prepare_for_subresource_update(Subresource::Status, &mut status, &obj);
        assert_eq!(status["spec"], obj["spec"]);
        assert!(status["metadata"].get("labels").is_none());
        assert_eq!(status["metadata"]["resourceVersion"], "9");
        assert_eq!(
            messages(s.validate_subresource_update(Subresource::Status, &status, &obj)),
            [
                "status.conditions[1].type: Duplicate value: \"Dangling\"",
                "status.conditions[2].type: Required value: must not be empty"
            ]
        );
    }

    #[test]
    fn empty_lists_read_back_as_upstream_stores_them() {
        let mut obj = fs(
            "mine",
            json!({"rules": [{"subjects": [], "nonResourceRules": [],
            "resourceRules": [{"verbs": ["*"], "clusterScope": true}, {"namespaces": []}]}]}),
        );
        obj["status"] = json!({"conditions": []});
        FlowSchemas.canonicalize(&mut obj);
        assert_eq!(
            obj["spec"]["rules"][0],
            json!({"subjects": [], "resourceRules": [{"verbs": ["*"], "clusterScope": true, "namespaces": null},
                {"namespaces": null}]})
        );
        assert_eq!(obj["status"], json!({}));
        let mut none = fs("none", json!({"rules": []}));
        FlowSchemas.canonicalize(&mut none);
        assert!(none["spec"].get("rules").is_none());
    }

    #[test]
    fn the_printer_shows_level_precedence_method_and_dangling() {
        let mut obj = fs("mine", json!({"priorityLevelConfiguration": {"name": "p"}}));
        FlowSchemas.prepare_for_create(&mut obj);
        assert_eq!(
            (printer().cells)(&obj, 0, &[]),
            vec![json!("mine"), json!("p"), json!(1000), json!("<none>"), json!("<unknown>"), json!("?")]
        );
        obj["spec"]["distinguisherMethod"] = json!({"type": "ByUser"});
        obj["status"] =
            json!({"conditions": [{"type": "Other", "status": "True"}, {"type": "Dangling", "status": "False"}]});
        let cells = (printer().cells)(&obj, 0, &[]);
        assert_eq!((cells[3].clone(), cells[5].clone()), (json!("ByUser"), json!("False")));
        let names: Vec<String> = printer().columns.iter().map(|c| c.name.to_string()).collect();
        assert_eq!(names, ["Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", "Age", "MissingPL"]);
    }
}
