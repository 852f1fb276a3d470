//! CSINodes, `storage.k8s.io/v1` (`KK/pkg/registry/storage/csinode`, `KK/pkg/apis/storage/validation`:
//! `ValidateCSINode`, `ValidateCSINodeUpdate` with `AllowLongNodeID`): cluster-scoped, names are DNS
//! subdomains (node names). Each driver has a valid CSI driver name (required, at most 63 characters, a DNS
//! subdomain in lower case) that no other entry repeats, a node ID of 1 to 256 characters, a non-negative
//! allocatable count, and topology keys that are non-empty, unique qualified names (reported at the
//! driver's path, as upstream does). A driver that stays (same name) never changes. `drivers` and each
//! driver's `topologyKeys` have no `omitempty`: absent or empty, they are written `null`, as the protobuf
//! round trip through etcd leaves them. Updates need a resourceVersion; a delete answers the object.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::networking::ingresses::invalid_go;
use crate::apis::printers::{age, age_column, column, name, name_column};
use crate::apis::{Printer, ResourceInfo};
use crate::go_text::quote;
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategy::{DeleteStrategy, Strategy};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo { namespaced: false, ..ResourceInfo::new(resource(), "csinode", Arc::new(CSINodes), printer()) }
}

fn resource() -> Resource {
    Resource::group("storage.k8s.io", "v1", "CSINode", "csinodes")
}

/// The CSINode strategy.
struct CSINodes;

/// `csiNodeIDLongerMaxLength`: the strategy always allows long node IDs.
const NODE_ID_MAX_LENGTH: usize = 256;
/// The longest CSI driver name.
const DRIVER_NAME_MAX_LENGTH: usize = 63;

fn duplicate(field: &str, value: &str) -> FieldError {
    FieldError {
        kind: FieldErrorType::Duplicate,
        field: field.into(),
        value: BadValue::Str(value.into()),
        detail: String::new(),
    }
}

/// Core's `ValidateCSIDriverName`: required, at most 63 characters, a DNS subdomain once lower-cased.
pub(crate) fn validate_csi_driver_name(name: &str, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if name.is_empty() {
        errs.push(FieldError::required(path, ""));
    }
    if name.len() > DRIVER_NAME_MAX_LENGTH {
        errs.push(FieldError::too_long(path, DRIVER_NAME_MAX_LENGTH));
    }
    for msg in names::dns1123_subdomain(&name.to_lowercase()) {
        errs.push(FieldError::invalid(path, name, &msg));
    }
    errs
}

fn drivers(obj: &Value) -> &[Value] {
    obj.pointer("/spec/drivers").and_then(Value::as_array).map_or(&[][..], Vec::as_slice)
}

fn text<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field).and_then(Value::as_str).unwrap_or("")
}

/// `validateCSINodeDriver` of every driver.
fn validate_drivers(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, driver) in drivers(obj).iter().enumerate() {
        let at = format!("spec.drivers[{i}]");
        let name = text(driver, "name");
        errs.extend(validate_csi_driver_name(name, &format!("{at}.name")));
        let node_id = text(driver, "nodeID");
        if node_id.is_empty() {
            errs.push(FieldError::required(&format!("{at}.nodeID"), ""));
        }
        if node_id.len() > NODE_ID_MAX_LENGTH {
            errs.push(FieldError::invalid(
                &format!("{at}.nodeID"),
                node_id,
                &format!("must be {NODE_ID_MAX_LENGTH} characters or less"),
            ));
        }
        if let Some(count) = driver.pointer("/allocatable/count").and_then(Value::as_i64) {
            if count < 0 {
                errs.push(FieldError::invalid_int(
                    &format!("{at}.allocatable.count"),
                    count,
                    "must be greater than or equal to 0",
                ));
            }
        }
        if seen.contains(&name) {
            errs.push(duplicate(&format!("{at}.name"), name));
        }
        seen.push(name);
        let mut keys: Vec<&str> = Vec::new();
        for key in driver.get("topologyKeys").and_then(Value::as_array).into_iter().flatten() {
            let key = key.as_str().unwrap_or("");
            if key.is_empty() {
                errs.push(FieldError::required(&at, ""));
            }
            if keys.contains(&key) {
                errs.push(duplicate(&at, key));
            }
            keys.push(key);
            errs.extend(names::qualified_name(key).iter().map(|m| FieldError::invalid(&at, key, m)));
        }
    }
    errs
}

/// `ValidateCSINode`.
fn validate(obj: &Value) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, false, names::name_is_dns_subdomain);
    errs.extend(validate_drivers(obj));
    errs
}

/// A driver as `apiequality.Semantic` compares it: a nil and an empty key list are the same.
fn comparable(driver: &Value) -> (String, String, Vec<Value>, Option<Value>) {
    let keys = driver.get("topologyKeys").and_then(Value::as_array).cloned().unwrap_or_default();
    let allocatable = driver.get("allocatable").filter(|a| !a.is_null()).map(|a| {
        let count = a.get("count").filter(|c| !c.is_null()).cloned();
        json!({"count": count})
    });
    (text(driver, "name").into(), text(driver, "nodeID").into(), keys, allocatable)
}

/// Go's `%#v` of a `storage.CSINodeDriver`; a set `allocatable` prints as a fixed address where upstream
/// prints the pointer's.
fn go_driver(driver: &Value) -> String {
    let keys = match driver.get("topologyKeys").and_then(Value::as_array) {
        None => "[]string(nil)".to_string(),
        Some(list) => {
            let shown: Vec<String> = list.iter().map(|k| quote(k.as_str().unwrap_or(""))).collect();
            format!("[]string{{{}}}", shown.join(", "))
        }
    };
    let allocatable = match driver.get("allocatable").filter(|a| !a.is_null()) {
        Some(_) => "(*storage.VolumeNodeResources)(0xc000000000)",
        None => "(*storage.VolumeNodeResources)(nil)",
    };
    format!(
        "storage.CSINodeDriver{{Name:{}, NodeID:{}, TopologyKeys:{keys}, Allocatable:{allocatable}}}",
        quote(text(driver, "name")),
        quote(text(driver, "nodeID"))
    )
}

/// The strategy's `ValidateCSINode` of the new object, then `ValidateCSINodeUpdate` (which validates it
/// again; the message shows each error once): a driver present before and after is unchanged.
fn validate_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain);
    errs.extend(validate(new));
    errs.extend(validate(new));
    for was in drivers(old) {
        for now in drivers(new).iter().filter(|d| text(d, "name") == text(was, "name")) {
            if comparable(now) != comparable(was) {
                errs.push(invalid_go("spec.drivers", go_driver(now), "field is immutable"));
            }
        }
    }
    errs
}

/// Writes the fields without `omitempty` that an absent or empty list leaves `null`.
fn canonicalize(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else { return };
    let spec = map.entry("spec").or_insert_with(|| json!({}));
    if !spec.is_object() {
        *spec = json!({});
    }
    let Some(spec) = spec.as_object_mut() else { return };
    match spec.get_mut("drivers").and_then(Value::as_array_mut) {
        Some(list) if !list.is_empty() => {
            for driver in list.iter_mut().filter_map(Value::as_object_mut) {
                if driver.get("topologyKeys").and_then(Value::as_array).is_none_or(Vec::is_empty) {
                    driver.insert("topologyKeys".into(), Value::Null);
                }
            }
        }
        _ => {
            spec.insert("drivers".into(), Value::Null);
        }
    }
}

impl Strategy for CSINodes {
    fn namespace_scoped(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_update(new, old)
    }

    fn canonicalize(&self, obj: &mut Value) {
        canonicalize(obj);
    }
}

/// The csinodes store answers a delete with the deleted object (`ReturnDeletedObject`).
impl DeleteStrategy for CSINodes {
    fn return_deleted_object(&self) -> bool {
        true
    }
}

/// `printCSINode`: how many drivers the node has.
fn printer() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            column("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node", 0),
            age_column(),
        ],
        cells: |obj, now, _| vec![name(obj), Value::from(drivers(obj).len()), age(obj, now)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn node(drivers: Value) -> Value {
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "node-1"},
            "spec": {"drivers": drivers}})
    }

    const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

    #[test]
    fn nodes_are_validated_as_upstream_validates_them() {
        let good =
            node(json!([{"name": "csi.example.com", "nodeID": "n1", "topologyKeys": ["topology.example.com/zone"],
            "allocatable": {"count": 3}}]));
        assert_eq!(messages(CSINodes.validate(&good)), Vec::<String>::new());
        let long_id = "x".repeat(257);
        let cases: Vec<(Value, Vec<String>)> = vec![
            (
                node(json!([{"name": "", "nodeID": ""}])),
                vec![
                    "spec.drivers[0].name: Required value".into(),
                    format!("spec.drivers[0].name: Invalid value: \"\": {SUBDOMAIN}"),
                    "spec.drivers[0].nodeID: Required value".into(),
                ],
            ),
            (
                node(json!([{"name": "Csi_Driver", "nodeID": long_id, "allocatable": {"count": -1}}])),
                vec![
                    format!("spec.drivers[0].name: Invalid value: \"Csi_Driver\": {SUBDOMAIN}"),
                    format!("spec.drivers[0].nodeID: Invalid value: \"{long_id}\": must be 256 characters or less"),
                    "spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0".into(),
                ],
            ),
            (
                node(json!([{"name": format!("{}.com", "a".repeat(60)), "nodeID": "n"}])),
                vec!["spec.drivers[0].name: Too long: may not be more than 63 bytes".into()],
            ),
            (
                node(json!([{"name": "a.com", "nodeID": "n", "topologyKeys": ["zone", "zone", "bad key"]},
                    {"name": "a.com", "nodeID": "m"}])),
                vec![
                    "spec.drivers[0]: Duplicate value: \"zone\"".into(),
                    "spec.drivers[0]: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".into(),
                    "spec.drivers[1].name: Duplicate value: \"a.com\"".into(),
                ],
            ),
            (
                node(json!([{"name": "a.com", "nodeID": "n", "topologyKeys": [""]}])),
                vec![
                    "spec.drivers[0]: Required value".into(),
                    "spec.drivers[0]: Invalid value: \"\": name part must be non-empty".into(),
                    "spec.drivers[0]: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".into(),
                ],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(CSINodes.validate(&obj)), want, "{obj}");
        }
    }

    #[test]
    fn a_driver_that_stays_never_changes() {
        let old = node(json!([{"name": "a.com", "nodeID": "n1", "topologyKeys": null}]));
        let mut grown =
            node(json!([{"name": "a.com", "nodeID": "n1", "topologyKeys": []}, {"name": "b.com", "nodeID": "n1"}]));
        CSINodes.prepare_for_update(&mut grown, &old);
        assert_eq!(messages(CSINodes.validate_update(&grown, &old)), Vec::<String>::new());
        let changed =
            node(json!([{"name": "a.com", "nodeID": "n2", "topologyKeys": ["zone"], "allocatable": {"count": 1}}]));
        let errs: Vec<String> = messages(CSINodes.validate_update(&changed, &old));
        assert_eq!(
            errs,
            ["spec.drivers: Invalid value: storage.CSINodeDriver{Name:\"a.com\", NodeID:\"n2\", TopologyKeys:[]string{\"zone\"}, Allocatable:(*storage.VolumeNodeResources)(0xc000000000)}: field is immutable"]
        );
        let dropped = node(json!([]));
        assert_eq!(messages(CSINodes.validate_update(&dropped, &old)), Vec::<String>::new());
    }

    #[test]
    fn empty_lists_are_written_null() {
        let mut obj = json!({"metadata": {"name": "n"}});
        CSINodes.canonicalize(&mut obj);
        assert_eq!(obj["spec"], json!({"drivers": null}));
        let mut obj = node(
            json!([{"name": "a.com", "nodeID": "n", "topologyKeys": []}, {"name": "b.com", "nodeID": "n", "topologyKeys": ["z"]}]),
        );
        CSINodes.canonicalize(&mut obj);
        assert_eq!(obj["spec"]["drivers"][0]["topologyKeys"], Value::Null);
        assert_eq!(obj["spec"]["drivers"][1]["topologyKeys"], json!(["z"]));
    }

    #[test]
    fn the_printer_counts_drivers() {
        let obj = node(json!([{"name": "a.com", "nodeID": "n"}, {"name": "b.com", "nodeID": "n"}]));
        assert_eq!((printer().cells)(&obj, 0, &[]), vec![json!("node-1"), json!(2), json!("<unknown>")]);
        let empty = json!({"metadata": {"name": "n"}, "spec": {"drivers": null}});
        assert_eq!((printer().cells)(&empty, 0, &[])[1], json!(0));
    }
}
