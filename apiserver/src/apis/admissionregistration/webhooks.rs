//! What MutatingWebhookConfigurations and ValidatingWebhookConfigurations share
//! (`KK/pkg/apis/admissionregistration/validation/validation.go`, `KK/pkg/apis/admissionregistration/v1/defaults.go`,
//! `KK/pkg/registry/admissionregistration/{mutating,validating}webhookconfiguration`): a webhook's defaults, its
//! validation with upstream's messages and the relaxations an update gets from what is already stored, the
//! generation rule, and the printer (Name, Webhooks, Age).
//!
//! Nothing is called: kube-apiserver would send an `AdmissionReview` to each matching webhook on every
//! request; that is issue 27's work. Not checked: a match condition's CEL compile errors (see [`super::rules`]),
//! more than 64 match conditions (apimachinery's `TooMany` error type has no counterpart here yet), and a
//! URL Go's `url.Parse` refuses (its parse errors are not reproduced; the scheme, host, user information,
//! query and fragment rules are).

use serde_json::{json, Map, Value};

use super::rules::{
    default_field, default_rules, duplicate, go_slice, invalid_go, items, opt_str, strings, validate_match_conditions,
    validate_rule_with_operations, FAILURE_POLICIES, MATCH_POLICIES,
};
use crate::apis::networking::networkpolicies::validate_label_selector;
use crate::apis::printers::{age, age_column, column, name, name_column};
use crate::apis::Printer;
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::strategies::start_generation;

/// The AdmissionReview versions kube-apiserver 1.32 speaks (`AcceptedAdmissionReviewVersions`).
const ACCEPTED_REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];
/// The side effect classes a new webhook may declare (`noSideEffectClasses`, sorted).
const NO_SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun"];
/// Every side effect class (`supportedSideEffectClasses`, sorted), allowed on update when a stored webhook
/// already declares one of the old ones.
const ALL_SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun", "Some", "Unknown"];
/// `IfNeeded`, `Never` (`supportedReinvocationPolicies`, sorted).
const REINVOCATION_POLICIES: &[&str] = &["IfNeeded", "Never"];
const URL_FORM: &str = "; desired format: https://host[/path]";

/// `SetDefaults_ValidatingWebhook` / `SetDefaults_MutatingWebhook` on every webhook, with their rules' scope and
/// their service's port.
pub(crate) fn default(obj: &mut Value, mutating: bool) {
    let Some(hooks) = obj.get_mut("webhooks").and_then(Value::as_array_mut) else { return };
    for hook in hooks.iter_mut().filter(|h| h.is_object()) {
        if let Some(map) = hook.as_object_mut() {
            default_field(map, "failurePolicy", json!("Fail"));
            default_field(map, "matchPolicy", json!("Equivalent"));
            default_field(map, "namespaceSelector", Value::Object(Map::new()));
            default_field(map, "objectSelector", Value::Object(Map::new()));
            default_field(map, "timeoutSeconds", json!(10));
            if mutating {
                default_field(map, "reinvocationPolicy", json!("Never"));
            }
        }
        default_rules(hook, "rules");
        if let Some(service) = hook.pointer_mut("/clientConfig/service").and_then(Value::as_object_mut) {
            default_field(service, "port", json!(443));
        }
    }
}

/// A new configuration: generation 1 and defaults.
pub(crate) fn prepare_for_create(obj: &mut Value, mutating: bool) {
    default(obj, mutating);
    start_generation(obj);
}

/// An update: defaults; the generation follows the webhooks.
pub(crate) fn prepare_for_update(new: &mut Value, old: &Value, mutating: bool) {
    default(new, mutating);
    if new.get("webhooks") != old.get("webhooks") {
        let generation = meta::get(old, "generation").and_then(Value::as_i64).unwrap_or(0);
        meta::set(new, "generation", Some(Value::from(generation + 1)));
    }
}

/// `validationOptions`: what a create requires, and what an update relaxes when the stored object already
/// breaks it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Options {
    ignore_match_conditions: bool,
    require_no_side_effects: bool,
    require_recognized_review_version: bool,
    require_unique_names: bool,
    allow_invalid_label_values: bool,
}

impl Options {
    pub(crate) fn create() -> Options {
        Options {
            ignore_match_conditions: false,
            require_no_side_effects: true,
            require_recognized_review_version: true,
            require_unique_names: true,
            allow_invalid_label_values: false,
        }
    }

    /// `Validate*WebhookConfigurationUpdate`'s options, from the stored webhooks.
    pub(crate) fn update(new: &Value, old: &Value) -> Options {
        let (new_hooks, old_hooks) = (items(new, "webhooks"), items(old, "webhooks"));
        let ignore_match_conditions = new_hooks.len() == old_hooks.len()
            && new_hooks.iter().zip(old_hooks).all(|(n, o)| conditions(n) == conditions(o));
        let require_no_side_effects =
            old_hooks.iter().all(|h| opt_str(h, "sideEffects").is_some_and(|s| NO_SIDE_EFFECTS.contains(&s)));
        let require_recognized_review_version = old_hooks.iter().all(|h| {
            let versions = strings(h, "admissionReviewVersions");
            versions.is_empty() || versions.iter().any(|v| ACCEPTED_REVIEW_VERSIONS.contains(v))
        });
        let mut seen: Vec<&str> = Vec::new();
        let mut require_unique_names = true;
        for hook in old_hooks {
            let name = hook.get("name").and_then(Value::as_str).unwrap_or("");
            if seen.contains(&name) {
                require_unique_names = false;
            }
            seen.push(name);
        }
        let allow_invalid_label_values = old_hooks.iter().any(|h| {
            ["namespaceSelector", "objectSelector"]
                .iter()
                .any(|s| !validate_label_selector(h.get(*s).filter(|v| !v.is_null()), "", false).is_empty())
        });
        Options {
            ignore_match_conditions,
            require_no_side_effects,
            require_recognized_review_version,
            require_unique_names,
            allow_invalid_label_values,
        }
    }
}

/// A webhook's match conditions, absent and null alike.
fn conditions(hook: &Value) -> Option<&Value> {
    hook.get("matchConditions").filter(|v| !v.is_null())
}

/// `validate{Mutating,Validating}WebhookConfiguration`: the metadata, then each webhook, its review versions
/// and its name's uniqueness.
pub(crate) fn validate(obj: &Value, mutating: bool, opts: Options) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, false, names::name_is_dns_subdomain);
    errs.extend(validate_webhooks(obj, mutating, opts));
    errs
}

/// The update's validation: the metadata's update rules, then the webhooks with the update's options.
pub(crate) fn validate_update(new: &Value, old: &Value, mutating: bool) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain);
    errs.extend(validate_webhooks(new, mutating, Options::update(new, old)));
    errs
}

fn validate_webhooks(obj: &Value, mutating: bool, opts: Options) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, hook) in items(obj, "webhooks").iter().enumerate() {
        let path = format!("webhooks[{i}]");
        errs.extend(validate_webhook(hook, mutating, opts, &path));
        errs.extend(validate_review_versions(
            &strings(hook, "admissionReviewVersions"),
            opts.require_recognized_review_version,
            &format!("{path}.admissionReviewVersions"),
        ));
        let name = hook.get("name").and_then(Value::as_str).unwrap_or("");
        if opts.require_unique_names && !name.is_empty() {
            if seen.contains(&name) {
                errs.push(duplicate(&format!("{path}.name"), name));
            } else {
                seen.push(name);
            }
        }
    }
    errs
}

/// `utilvalidation.IsFullyQualifiedName`: a DNS subdomain of at least three labels.
fn validate_fully_qualified_name(name: &str, path: &str) -> Option<FieldError> {
    if name.is_empty() {
        return Some(FieldError::required(path, ""));
    }
    let errs = names::dns1123_subdomain(name);
    if !errs.is_empty() {
        return Some(FieldError::invalid(path, name, &errs.join(",")));
    }
    (name.split('.').count() < 3)
        .then(|| FieldError::invalid(path, name, "should be a domain with at least three segments separated by dots"))
}

/// `validateValidatingWebhook` / `validateMutatingWebhook`.
fn validate_webhook(hook: &Value, mutating: bool, opts: Options, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = hook.get("name").and_then(Value::as_str).unwrap_or("");
    errs.extend(validate_fully_qualified_name(name, &format!("{path}.name")));
    for (i, rule) in items(hook, "rules").iter().enumerate() {
        errs.extend(validate_rule_with_operations(rule, &format!("{path}.rules[{i}]")));
    }
    if let Some(policy) = opt_str(hook, "failurePolicy") {
        if !FAILURE_POLICIES.contains(&policy) {
            errs.push(FieldError::not_supported(&format!("{path}.failurePolicy"), policy, FAILURE_POLICIES));
        }
    }
    if let Some(policy) = opt_str(hook, "matchPolicy") {
        if !MATCH_POLICIES.contains(&policy) {
            errs.push(FieldError::not_supported(&format!("{path}.matchPolicy"), policy, MATCH_POLICIES));
        }
    }
    let allowed = if opts.require_no_side_effects { NO_SIDE_EFFECTS } else { ALL_SIDE_EFFECTS };
    match opt_str(hook, "sideEffects") {
        None => errs.push(FieldError::required(
            &format!("{path}.sideEffects"),
            &format!("must specify one of {}", allowed.join(", ")),
        )),
        Some(s) if !allowed.contains(&s) => {
            errs.push(FieldError::not_supported(&format!("{path}.sideEffects"), s, allowed))
        }
        Some(_) => {}
    }
    if let Some(timeout) = hook.get("timeoutSeconds").and_then(Value::as_i64) {
        if !(1..=30).contains(&timeout) {
            errs.push(FieldError::invalid_int(
                &format!("{path}.timeoutSeconds"),
                timeout,
                "the timeout value must be between 1 and 30 seconds",
            ));
        }
    }
    for selector in ["namespaceSelector", "objectSelector"] {
        errs.extend(validate_label_selector(
            hook.get(selector).filter(|v| !v.is_null()),
            &format!("{path}.{selector}"),
            opts.allow_invalid_label_values,
        ));
    }
    if mutating {
        if let Some(policy) = opt_str(hook, "reinvocationPolicy") {
            if !REINVOCATION_POLICIES.contains(&policy) {
                errs.push(FieldError::not_supported(
                    &format!("{path}.reinvocationPolicy"),
                    policy,
                    REINVOCATION_POLICIES,
                ));
            }
        }
    }
    let empty = Value::Null;
    let cc = hook.get("clientConfig").unwrap_or(&empty);
    let cc_path = format!("{path}.clientConfig");
    match (opt_str(cc, "url"), cc.get("service").filter(|s| !s.is_null())) {
        (Some(url), None) => errs.extend(validate_url(url, &format!("{cc_path}.url"))),
        (None, Some(service)) => errs.extend(validate_service(service, &format!("{cc_path}.service"))),
        _ => errs.push(FieldError::required(&cc_path, "exactly one of url or service is required")),
    }
    if !opts.ignore_match_conditions {
        errs.extend(validate_match_conditions(items(hook, "matchConditions"), &format!("{path}.matchConditions")));
    }
    errs
}

/// `validateAdmissionReviewVersions`: at least one, each once and a DNS-1035 label, one of them known.
fn validate_review_versions(versions: &[&str], require_recognized: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if versions.is_empty() {
        errs.push(FieldError::required(path, &format!("must specify one of {}", ACCEPTED_REVIEW_VERSIONS.join(", "))));
        return errs;
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut has_accepted = false;
    for (i, version) in versions.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if seen.contains(version) {
            errs.push(FieldError::invalid(&at, version, "duplicate version"));
            continue;
        }
        seen.push(version);
        for msg in names::dns1035_label(version) {
            errs.push(FieldError::invalid(&at, version, &msg));
        }
        has_accepted |= ACCEPTED_REVIEW_VERSIONS.contains(version);
    }
    if require_recognized && !has_accepted {
        errs.push(invalid_go(
            path,
            go_slice("string", versions),
            &format!("must include at least one of {}", ACCEPTED_REVIEW_VERSIONS.join(", ")),
        ));
    }
    errs
}

/// The parts of a URL that `webhook.ValidateWebhookURL` looks at, split as Go's `url.Parse` splits them:
/// scheme (lower-cased), user information, host, raw query, fragment.
struct UrlParts<'a> {
    scheme: String,
    user: Option<&'a str>,
    host: &'a str,
    query: &'a str,
    fragment: &'a str,
}

fn split_url(url: &str) -> UrlParts<'_> {
    let (rest, fragment) = url.split_once('#').unwrap_or((url, ""));
    // A scheme is a letter, then letters, digits, '+', '-' or '.', before the first ':'.
    let mut scheme = String::new();
    let mut rest = rest;
    if let Some(colon) = rest.find(':') {
        let candidate = &rest[..colon];
        let ok = candidate.bytes().next().is_some_and(|c| c.is_ascii_alphabetic())
            && candidate.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'));
        if ok {
            scheme = candidate.to_ascii_lowercase();
            rest = &rest[colon + 1..];
        }
    }
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (mut user, mut host) = (None, "");
    if let Some(after) = rest.strip_prefix("//") {
        let authority = &after[..after.find('/').unwrap_or(after.len())];
        match authority.rfind('@') {
            Some(at) => {
                user = Some(&authority[..at]);
                host = &authority[at + 1..];
            }
            None => host = authority,
        }
    }
    UrlParts { scheme, user, host, query, fragment }
}

/// `webhook.ValidateWebhookURL` with https required.
fn validate_url(url: &str, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let parts = split_url(url);
    if parts.scheme != "https" {
        errs.push(FieldError::invalid(
            path,
            &parts.scheme,
            &format!("'https' is the only allowed URL scheme{URL_FORM}"),
        ));
    }
    if parts.host.is_empty() {
        errs.push(FieldError::invalid(path, parts.host, &format!("host must be specified{URL_FORM}")));
    }
    if let Some(user) = parts.user {
        errs.push(FieldError::invalid(path, user, "user information is not permitted in the URL"));
    }
    if !parts.fragment.is_empty() {
        errs.push(FieldError::invalid(path, parts.fragment, "fragments are not permitted in the URL"));
    }
    if !parts.query.is_empty() {
        errs.push(FieldError::invalid(path, parts.query, "query parameters are not permitted in the URL"));
    }
    errs
}

/// `webhook.ValidateWebhookService`, called as upstream calls it: with the service's name where the function
/// takes the namespace and the other way round, so an empty name is reported as a missing namespace.
fn validate_service(service: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (as_namespace, as_name) = (
        service.get("name").and_then(Value::as_str).unwrap_or(""),
        service.get("namespace").and_then(Value::as_str).unwrap_or(""),
    );
    if as_name.is_empty() {
        errs.push(FieldError::required(&format!("{path}.name"), "service name is required"));
    }
    if as_namespace.is_empty() {
        errs.push(FieldError::required(&format!("{path}.namespace"), "service namespace is required"));
    }
    let port = service.get("port").and_then(Value::as_i64).unwrap_or(0);
    if !(1..=65535).contains(&port) {
        errs.push(FieldError::invalid_int(
            &format!("{path}.port"),
            port,
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(url_path) = opt_str(service, "path") else { return errs };
    let at = format!("{path}.path");
    if url_path.is_empty() || url_path == "/" {
        return errs;
    }
    if url_path == "//" {
        errs.push(FieldError::invalid(&at, url_path, "segment[0] may not be empty"));
        return errs;
    }
    if !url_path.starts_with('/') {
        errs.push(FieldError::invalid(&at, url_path, "must start with a '/'"));
    }
    // Upstream drops the first byte whatever it is, and one trailing '/'.
    let mut check = url_path.get(1..).unwrap_or("");
    check = check.strip_suffix('/').unwrap_or(check);
    for (i, step) in check.split('/').enumerate() {
        if step.is_empty() {
            errs.push(FieldError::invalid(&at, url_path, &format!("segment[{i}] may not be empty")));
            continue;
        }
        for msg in names::dns1123_subdomain(step) {
            errs.push(FieldError::invalid(&at, url_path, &format!("segment[{i}]: {msg}")));
        }
    }
    errs
}

/// `printMutatingWebhook` / `printValidatingWebhook`: the number of webhooks.
pub(crate) fn printer() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            column(
                "Webhooks",
                "integer",
                "Webhooks indicates the number of webhooks registered in this configuration",
                0,
            ),
            age_column(),
        ],
        cells: |obj, now, _| vec![name(obj), Value::from(items(obj, "webhooks").len()), age(obj, now)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn hook(extra: Value) -> Value {
        let mut h = json!({
            "name": "a.example.com",
            "clientConfig": {"service": {"namespace": "default", "name": "svc"}},
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]
        });
        for (k, v) in extra.as_object().unwrap() {
            if v.is_null() {
                h.as_object_mut().unwrap().remove(k);
            } else {
                h[k] = v.clone();
            }
        }
        h
    }

    fn config(hooks: Vec<Value>) -> Value {
        let mut obj = json!({"metadata": {"name": "adm"}, "webhooks": hooks});
        default(&mut obj, true);
        obj
    }

    fn errors(hooks: Vec<Value>) -> Vec<String> {
        messages(validate(&config(hooks), true, Options::create()))
    }

    #[test]
    fn webhooks_default_as_v1_defaults_them() {
        let obj = config(vec![hook(json!({}))]);
        let h = &obj["webhooks"][0];
        assert_eq!(h["failurePolicy"], "Fail");
        assert_eq!(h["matchPolicy"], "Equivalent");
        assert_eq!(h["namespaceSelector"], json!({}));
        assert_eq!(h["objectSelector"], json!({}));
        assert_eq!(h["timeoutSeconds"], 10);
        assert_eq!(h["reinvocationPolicy"], "Never");
        assert_eq!(h["rules"][0]["scope"], "*");
        assert_eq!(h["clientConfig"]["service"]["port"], 443);
        assert!(h.get("sideEffects").is_some());
        let mut validating = json!({"webhooks": [hook(json!({"sideEffects": null}))]});
        default(&mut validating, false);
        assert!(validating["webhooks"][0].get("reinvocationPolicy").is_none());
        assert!(validating["webhooks"][0].get("sideEffects").is_none());
    }

    #[test]
    fn webhooks_are_validated_as_upstream_validates_them() {
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (hook(json!({})), vec![]),
            (hook(json!({"name": "example.com"})), vec!["webhooks[0].name: Invalid value: \"example.com\": should be a domain with at least three segments separated by dots"]),
            (hook(json!({"name": null})), vec!["webhooks[0].name: Required value"]),
            (hook(json!({"name": "A.example.com"})), vec!["webhooks[0].name: Invalid value: \"A.example.com\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]),
            (hook(json!({"failurePolicy": "Maybe", "matchPolicy": "Loose", "reinvocationPolicy": "Always"})), vec![
                "webhooks[0].failurePolicy: Unsupported value: \"Maybe\": supported values: \"Fail\", \"Ignore\"",
                "webhooks[0].matchPolicy: Unsupported value: \"Loose\": supported values: \"Equivalent\", \"Exact\"",
                "webhooks[0].reinvocationPolicy: Unsupported value: \"Always\": supported values: \"IfNeeded\", \"Never\"",
            ]),
            (hook(json!({"sideEffects": null})), vec!["webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"]),
            (hook(json!({"sideEffects": "Some"})), vec!["webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\""]),
            (hook(json!({"timeoutSeconds": 31})), vec!["webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds"]),
            (hook(json!({"timeoutSeconds": 0})), vec!["webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds"]),
            (hook(json!({"objectSelector": {"matchLabels": {"a": "-"}}})), vec!["webhooks[0].objectSelector.matchLabels: Invalid value: \"-\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]),
            (hook(json!({"admissionReviewVersions": null})), vec!["webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"]),
            (hook(json!({"admissionReviewVersions": ["v2", "v2", "V3"]})), vec![
                "webhooks[0].admissionReviewVersions[1]: Invalid value: \"v2\": duplicate version",
                "webhooks[0].admissionReviewVersions[2]: Invalid value: \"V3\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                "webhooks[0].admissionReviewVersions: Invalid value: []string{\"v2\", \"v2\", \"V3\"}: must include at least one of v1, v1beta1",
            ]),
            (hook(json!({"clientConfig": {}})), vec!["webhooks[0].clientConfig: Required value: exactly one of url or service is required"]),
            (hook(json!({"clientConfig": {"url": "https://a.example.com/x", "service": {"name": "s", "namespace": "n"}}})), vec!["webhooks[0].clientConfig: Required value: exactly one of url or service is required"]),
            (hook(json!({"clientConfig": {"url": "https://a.example.com:8443/hook"}})), vec![]),
            (hook(json!({"clientConfig": {"url": "http://u:p@a.example.com/x?q=1#f"}})), vec![
                "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
                "webhooks[0].clientConfig.url: Invalid value: \"u:p\": user information is not permitted in the URL",
                "webhooks[0].clientConfig.url: Invalid value: \"f\": fragments are not permitted in the URL",
                "webhooks[0].clientConfig.url: Invalid value: \"q=1\": query parameters are not permitted in the URL",
            ]),
            (hook(json!({"clientConfig": {"url": "a.example.com"}})), vec![
                "webhooks[0].clientConfig.url: Invalid value: \"\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
                "webhooks[0].clientConfig.url: Invalid value: \"\": host must be specified; desired format: https://host[/path]",
            ]),
            (hook(json!({"clientConfig": {"service": {"namespace": "", "name": "", "port": 0, "path": "x//Y/"}}})), vec![
                "webhooks[0].clientConfig.service.name: Required value: service name is required",
                "webhooks[0].clientConfig.service.namespace: Required value: service namespace is required",
                "webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
                "webhooks[0].clientConfig.service.path: Invalid value: \"x//Y/\": must start with a '/'",
                "webhooks[0].clientConfig.service.path: Invalid value: \"x//Y/\": segment[0] may not be empty",
                "webhooks[0].clientConfig.service.path: Invalid value: \"x//Y/\": segment[1] may not be empty",
                "webhooks[0].clientConfig.service.path: Invalid value: \"x//Y/\": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ]),
            (hook(json!({"clientConfig": {"service": {"namespace": "default", "name": "", "path": "//"}}})), vec![
                "webhooks[0].clientConfig.service.namespace: Required value: service namespace is required",
                "webhooks[0].clientConfig.service.path: Invalid value: \"//\": segment[0] may not be empty",
            ]),
            (hook(json!({"matchConditions": [{"name": "c"}]})), vec!["webhooks[0].matchConditions[0].expression: Required value"]),
            (hook(json!({"rules": [{"operations": ["GET"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]})), vec![
                "webhooks[0].rules[0].operations[0]: Unsupported value: \"GET\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\"",
            ]),
        ];
        for (h, want) in cases {
            assert_eq!(errors(vec![h.clone()]), want, "{h}");
        }
        assert_eq!(
            errors(vec![hook(json!({})), hook(json!({}))]),
            ["webhooks[1].name: Duplicate value: \"a.example.com\""]
        );
    }

    #[test]
    fn an_update_keeps_what_was_already_stored() {
        let old = config(vec![
            hook(
                json!({"sideEffects": "Some", "admissionReviewVersions": ["v9"], "objectSelector": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["-"]}]}}),
            ),
            hook(json!({"sideEffects": "Some", "matchConditions": [{"name": "c", "expression": ""}]})),
        ]);
        let mut new = old.clone();
        assert_eq!(messages(validate_update(&new, &old, true)), Vec::<String>::new());
        assert!(!messages(validate(&new, true, Options::create())).is_empty());
        new["webhooks"][1]["matchConditions"][0]["name"] = json!("d");
        assert_eq!(
            messages(validate_update(&new, &old, true)),
            ["webhooks[1].matchConditions[0].expression: Required value"]
        );
        let strict = config(vec![hook(json!({}))]);
        let mut changed = strict.clone();
        changed["webhooks"][0]["sideEffects"] = json!("Some");
        assert_eq!(
            messages(validate_update(&changed, &strict, true)),
            ["webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\""]
        );
    }

    #[test]
    fn the_generation_follows_the_webhooks() {
        let mut old = json!({"metadata": {"name": "adm"}, "webhooks": [hook(json!({}))]});
        prepare_for_create(&mut old, false);
        assert_eq!(old["metadata"]["generation"], 1);
        let mut same = old.clone();
        same["metadata"]["labels"] = json!({"a": "b"});
        prepare_for_update(&mut same, &old, false);
        assert_eq!(same["metadata"]["generation"], 1);
        let mut new = old.clone();
        new["webhooks"][0]["timeoutSeconds"] = json!(5);
        prepare_for_update(&mut new, &old, false);
        assert_eq!(new["metadata"]["generation"], 2);
    }

    #[test]
    fn the_printer_counts_webhooks() {
        let obj = config(vec![hook(json!({})), hook(json!({"name": "b.example.com"}))]);
        assert_eq!((printer().cells)(&obj, 0, &[]), vec![json!("adm"), json!(2), json!("<unknown>")]);
        let none = json!({"metadata": {"name": "empty"}});
        assert_eq!((printer().cells)(&none, 0, &[])[1], json!(0));
    }
}
