//! CSIDrivers, `storage.k8s.io/v1` (`KK/pkg/registry/storage/csidriver`,
//! `KK/pkg/apis/storage/validation`: `ValidateCSIDriver`, `ValidateCSIDriverUpdate`;
//! `KK/pkg/apis/storage/v1/defaults.go`: `SetDefaults_CSIDriver`): cluster-scoped, names are DNS
//! subdomains. Defaults: `attachRequired: true`, `podInfoOnMount: false`, `storageCapacity: false`,
//! `fsGroupPolicy: ReadWriteOnceWithFSType`, `volumeLifecycleModes: [Persistent]`, `requiresRepublish:
//! false` and, as the `SELinuxMountReadWriteOncePod` gate is on by default in 1.32, `seLinuxMount: false`.
//! The booleans are required (only reachable without the defaults), the fsGroup policy and the lifecycle
//! modes are known values, token request audiences are unique and their expirations between 10 minutes
//! and 2^32 seconds. `attachRequired` (reported at upstream's `spec.attachedRequired`) and
//! `volumeLifecycleModes` never change. No generation on create; a spec change bumps it. Updates need a
//! resourceVersion; a delete answers the deleted object.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::networking::ingresses::invalid_go;
use crate::apis::printers::{age, age_column, doc_column, name, name_column};
use crate::apis::{Printer, ResourceInfo};
use crate::go_text::quote;
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategy::{DeleteStrategy, Strategy};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo { namespaced: false, ..ResourceInfo::new(resource(), "csidriver", Arc::new(CSIDrivers), printer()) }
}

fn resource() -> Resource {
    Resource::group("storage.k8s.io", "v1", "CSIDriver", "csidrivers")
}

/// The CSIDriver strategy.
struct CSIDrivers;

/// `supportedFSGroupPolicy`, sorted as `sets.String.List` gives them.
const FS_GROUP_POLICIES: &[&str] = &["File", "None", "ReadWriteOnceWithFSType"];
/// The lifecycle modes, in the order upstream's message lists them.
const LIFECYCLE_MODES: &[&str] = &["Persistent", "Ephemeral"];
/// The shortest token expiration, 10 minutes, and the longest, 2^32 seconds.
const MIN_EXPIRATION: i64 = 600;
const MAX_EXPIRATION: i64 = 1 << 32;

/// `SetDefaults_CSIDriver` with 1.32's default gates.
fn default(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else { return };
    let spec = map.entry("spec").or_insert_with(|| json!({}));
    if spec.is_null() {
        *spec = json!({});
    }
    let Some(spec) = spec.as_object_mut() else { return };
    for (field, value) in [
        ("attachRequired", json!(true)),
        ("podInfoOnMount", json!(false)),
        ("storageCapacity", json!(false)),
        ("fsGroupPolicy", json!("ReadWriteOnceWithFSType")),
        ("requiresRepublish", json!(false)),
        ("seLinuxMount", json!(false)),
    ] {
        if spec.get(field).is_none_or(Value::is_null) {
            spec.insert(field.into(), value);
        }
    }
    if spec.get("volumeLifecycleModes").and_then(Value::as_array).is_none_or(Vec::is_empty) {
        spec.insert("volumeLifecycleModes".into(), json!(["Persistent"]));
    }
}

fn spec_field<'a>(obj: &'a Value, field: &str) -> Option<&'a Value> {
    obj.get("spec").and_then(|s| s.get(field)).filter(|v| !v.is_null())
}

fn items<'a>(obj: &'a Value, field: &str) -> &'a [Value] {
    spec_field(obj, field).and_then(Value::as_array).map_or(&[][..], Vec::as_slice)
}

/// `validateTokenRequests`: one request per audience, expirations within bounds.
fn validate_token_requests(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut audiences: Vec<&str> = Vec::new();
    for (i, request) in items(obj, "tokenRequests").iter().enumerate() {
        let at = format!("spec.tokenRequests[{i}]");
        let audience = request.get("audience").and_then(Value::as_str).unwrap_or("");
        if audiences.contains(&audience) {
            errs.push(FieldError {
                kind: FieldErrorType::Duplicate,
                field: format!("{at}.audience"),
                value: BadValue::Str(audience.into()),
                detail: String::new(),
            });
            continue;
        }
        audiences.push(audience);
        let Some(seconds) = request.get("expirationSeconds").and_then(Value::as_i64) else { continue };
        if seconds < MIN_EXPIRATION {
            errs.push(FieldError::invalid_int(
                &format!("{at}.expirationSeconds"),
                seconds,
                "may not specify a duration less than 10 minutes",
            ));
        }
        if seconds > MAX_EXPIRATION {
            errs.push(FieldError::invalid_int(
                &format!("{at}.expirationSeconds"),
                seconds,
                "may not specify a duration larger than 2^32 seconds",
            ));
        }
    }
    errs
}

/// `validateCSIDriverSpec`.
fn validate_spec(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (field, path) in [
        ("attachRequired", "spec.attachedRequired"),
        ("podInfoOnMount", "spec.podInfoOnMount"),
        ("storageCapacity", "spec.storageCapacity"),
    ] {
        if spec_field(obj, field).is_none() {
            errs.push(FieldError::required(path, ""));
        }
    }
    if let Some(policy) = spec_field(obj, "fsGroupPolicy") {
        let policy = policy.as_str().unwrap_or("");
        if !FS_GROUP_POLICIES.contains(&policy) {
            errs.push(FieldError::not_supported("spec.fsGroupPolicy", policy, FS_GROUP_POLICIES));
        }
    }
    errs.extend(validate_token_requests(obj));
    for mode in items(obj, "volumeLifecycleModes") {
        let mode = mode.as_str().unwrap_or("");
        if !LIFECYCLE_MODES.contains(&mode) {
            errs.push(FieldError::not_supported("spec.volumeLifecycleModes", mode, LIFECYCLE_MODES));
        }
    }
    if spec_field(obj, "seLinuxMount").is_none() {
        errs.push(FieldError::required("spec.seLinuxMount", ""));
    }
    errs
}

/// `ValidateCSIDriver`.
fn validate(obj: &Value) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, false, names::name_is_dns_subdomain);
    errs.extend(validate_spec(obj));
    errs
}

/// Go's `%#v` of the modes, a `[]storage.VolumeLifecycleMode` (nil when absent).
fn go_modes(modes: &[Value]) -> String {
    if modes.is_empty() {
        return "[]storage.VolumeLifecycleMode(nil)".into();
    }
    let shown: Vec<String> = modes.iter().map(|m| quote(m.as_str().unwrap_or(""))).collect();
    format!("[]storage.VolumeLifecycleMode{{{}}}", shown.join(", "))
}

/// A value as `apiequality.Semantic` compares it: nulls, empty lists and empty objects are absent.
pub(crate) fn semantic(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), semantic(v))).filter(|(_, v)| !is_empty(v)).collect())
        }
        Value::Array(list) => Value::Array(list.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// `ValidateCSIDriverUpdate`: the metadata update, the new spec, and the two fields that never change.
fn validate_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain);
    errs.extend(validate_spec(new));
    let (now, was) = (spec_field(new, "attachRequired"), spec_field(old, "attachRequired"));
    if now != was {
        let shown = match now {
            Some(v) => v.to_string(),
            None => "null".into(),
        };
        errs.push(invalid_go("spec.attachedRequired", shown, "field is immutable"));
    }
    let (now, was) = (items(new, "volumeLifecycleModes"), items(old, "volumeLifecycleModes"));
    if now != was {
        errs.push(invalid_go("spec.volumeLifecycleModes", go_modes(now), "field is immutable"));
    }
    errs
}

impl Strategy for CSIDrivers {
    fn namespace_scoped(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    /// The v1 defaults apply as the request decodes, as upstream's codec applies them: the managed fields
    /// count the defaulted fields as the writer's.
    fn decode(&self, obj: &mut Value) {
        default(obj);
    }

    /// Any change of the spec bumps the generation (from 0 for a driver created without one).
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let spec = |o: &Value| semantic(o.get("spec").unwrap_or(&Value::Null));
        if spec(new) != spec(old) {
            let generation = meta::get(old, "generation").and_then(Value::as_i64).unwrap_or(0);
            meta::set(new, "generation", Some(Value::from(generation + 1)));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_update(new, old)
    }
}

/// The csidrivers store answers a delete with the deleted object (`ReturnDeletedObject`).
impl DeleteStrategy for CSIDrivers {
    fn return_deleted_object(&self) -> bool {
        true
    }
}

/// `printCSIDriver`: the attach, pod info, capacity and republish flags (their defaults when unset),
/// the token audiences (`<unset>` without token requests) and the lifecycle modes (`<none>`).
fn printer() -> Printer {
    const SPEC: &str = "io.k8s.api.storage.v1.CSIDriverSpec";
    Printer {
        columns: vec![
            name_column(),
            doc_column("AttachRequired", "boolean", SPEC, "attachRequired", 0),
            doc_column("PodInfoOnMount", "boolean", SPEC, "podInfoOnMount", 0),
            doc_column("StorageCapacity", "boolean", SPEC, "storageCapacity", 0),
            doc_column("TokenRequests", "string", SPEC, "tokenRequests", 0),
            doc_column("RequiresRepublish", "boolean", SPEC, "requiresRepublish", 0),
            doc_column("Modes", "string", SPEC, "volumeLifecycleModes", 0),
            age_column(),
        ],
        cells: |obj, now, _| {
            let flag = |field: &str, absent: bool| spec_field(obj, field).and_then(Value::as_bool).unwrap_or(absent);
            let tokens = match spec_field(obj, "tokenRequests").and_then(Value::as_array) {
                None => "<unset>".to_string(),
                Some(list) => list
                    .iter()
                    .map(|t| t.get("audience").and_then(Value::as_str).unwrap_or(""))
                    .collect::<Vec<_>>()
                    .join(","),
            };
            let modes: Vec<&str> = items(obj, "volumeLifecycleModes").iter().filter_map(Value::as_str).collect();
            let modes = if modes.is_empty() { "<none>".to_string() } else { modes.join(",") };
            vec![
                name(obj),
                Value::from(flag("attachRequired", true)),
                Value::from(flag("podInfoOnMount", false)),
                Value::from(flag("storageCapacity", false)),
                Value::from(tokens),
                Value::from(flag("requiresRepublish", false)),
                Value::from(modes),
                age(obj, now),
            ]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn driver(spec: Value) -> Value {
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
            "metadata": {"name": "csi.example.com"}, "spec": spec})
    }

    fn created(mut obj: Value) -> Value {
        CSIDrivers.decode(&mut obj);
        CSIDrivers.prepare_for_create(&mut obj);
        obj
    }

    #[test]
    fn a_driver_gets_its_defaults_and_no_generation() {
        let obj = created(json!({"metadata": {"name": "csi.example.com"}}));
        assert_eq!(
            obj["spec"],
            json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
                "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": false, "seLinuxMount": false,
                "volumeLifecycleModes": ["Persistent"]})
        );
        assert!(obj["metadata"].get("generation").is_none());
        assert_eq!(messages(CSIDrivers.validate(&obj)), Vec::<String>::new());
        let kept = created(driver(json!({"attachRequired": false, "volumeLifecycleModes": ["Ephemeral"]})));
        assert_eq!(kept["spec"]["attachRequired"], false);
        assert_eq!(kept["spec"]["volumeLifecycleModes"], json!(["Ephemeral"]));
    }

    #[test]
    fn drivers_are_validated_as_upstream_validates_them() {
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (
                created(json!({"metadata": {"name": "Bad_Name"}})),
                vec!["metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"],
            ),
            (
                created(driver(json!({"fsGroupPolicy": "Always"}))),
                vec!["spec.fsGroupPolicy: Unsupported value: \"Always\": supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\""],
            ),
            (
                created(driver(json!({"volumeLifecycleModes": ["Persistent", "Forever"]}))),
                vec!["spec.volumeLifecycleModes: Unsupported value: \"Forever\": supported values: \"Persistent\", \"Ephemeral\""],
            ),
            (
                created(driver(json!({"tokenRequests": [
                    {"audience": "a", "expirationSeconds": 60},
                    {"audience": "b", "expirationSeconds": 4_294_967_297_i64},
                    {"audience": "a", "expirationSeconds": 1}
                ]}))),
                vec![
                    "spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes",
                    "spec.tokenRequests[1].expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds",
                    "spec.tokenRequests[2].audience: Duplicate value: \"a\"",
                ],
            ),
            (
                driver(json!({})),
                vec![
                    "spec.attachedRequired: Required value",
                    "spec.podInfoOnMount: Required value",
                    "spec.storageCapacity: Required value",
                    "spec.seLinuxMount: Required value",
                ],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(CSIDrivers.validate(&obj)), want, "{obj}");
        }
    }

    #[test]
    fn attach_and_modes_never_change_and_spec_changes_bump_the_generation() {
        let old = created(driver(json!({})));
        let mut new = driver(json!({"attachRequired": false, "volumeLifecycleModes": ["Persistent", "Ephemeral"],
            "podInfoOnMount": true, "fsGroupPolicy": "File"}));
        CSIDrivers.decode(&mut new);
        CSIDrivers.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 1);
        assert_eq!(
            messages(CSIDrivers.validate_update(&new, &old)),
            [
                "spec.attachedRequired: Invalid value: false: field is immutable",
                "spec.volumeLifecycleModes: Invalid value: []storage.VolumeLifecycleMode{\"Persistent\", \"Ephemeral\"}: field is immutable",
            ]
        );
        let mut same = old.clone();
        same["metadata"]["labels"] = json!({"a": "b"});
        same["spec"]["tokenRequests"] = json!([]);
        CSIDrivers.prepare_for_update(&mut same, &old);
        assert!(same["metadata"].get("generation").is_none());
        assert_eq!(messages(CSIDrivers.validate_update(&same, &old)), Vec::<String>::new());
    }

    #[test]
    fn the_printer_shows_flags_audiences_and_modes() {
        let obj = created(driver(json!({"tokenRequests": [{"audience": "vault"}, {"audience": ""}],
            "volumeLifecycleModes": ["Persistent", "Ephemeral"], "requiresRepublish": true})));
        assert_eq!(
            (printer().cells)(&obj, 0, &[]),
            vec![
                json!("csi.example.com"),
                json!(true),
                json!(false),
                json!(false),
                json!("vault,"),
                json!(true),
                json!("Persistent,Ephemeral"),
                json!("<unknown>")
            ]
        );
        let bare = driver(json!({}));
        assert_eq!(
            (printer().cells)(&bare, 0, &[])[1..7],
            [json!(true), json!(false), json!(false), json!("<unset>"), json!(false), json!("<none>")]
        );
        assert_eq!(printer().columns[4].name, "TokenRequests");
    }
}
