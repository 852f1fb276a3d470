//! Field management as upstream documents and behaves (the structured-merge-diff and `managedfields`
//! cases, written as our own data): field sets in `FieldsV1`, updates, applies, conflicts, forcing,
//! removal of fields no longer applied, shared ownership.

use serde_json::{json, Value};

use super::managers::Managers;
use super::path::FieldSet;
use super::shape::Shape;
use super::walk::field_set;
use super::*;

const NOW: &str = "2026-11-26T10:00:00Z";

/// The entry of `manager`.
fn entry_of<'a>(managers: &'a Managers, manager: &str) -> Option<&'a super::managers::Entry> {
    managers.entries().iter().find(|e| e.manager == manager)
}
const LATER: &str = "2026-11-26T10:05:00Z";

fn configmap() -> Shape {
    Shape::root(crate::registry::schema::schemas().kind("", "v1", "ConfigMap"))
}

fn deployment() -> Shape {
    Shape::root(crate::registry::schema::schemas().kind("apps", "v1", "Deployment"))
}

fn writer<'a>(manager: &'a str, now: &'a str) -> Writer<'a> {
    Writer { manager, subresource: "", api_version: "v1", now }
}

fn managed(obj: &Value) -> Value {
    obj.pointer("/metadata/managedFields").cloned().unwrap_or(Value::Null)
}

/// A ConfigMap with `data` (none at all for null).
fn cm(data: Value) -> Value {
    let mut out = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "default"}});
    if !data.is_null() {
        out["data"] = data;
    }
    out
}

#[test]
fn an_applied_configuration_owns_its_leaves_and_map_entries() {
    let config = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "x", "labels": {"app": "web"}},
        "data": {"a": "1", "b": "2"},
    });
    let set = field_set(&config, &configmap()).difference(stripped());
    assert_eq!(
        set.to_fields_v1(),
        json!({"f:data": {"f:a": {}, "f:b": {}}, "f:metadata": {"f:labels": {"f:app": {}}}})
    );
}

#[test]
fn keyed_lists_name_their_elements_by_key_and_sets_by_value() {
    let config = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"template": {"spec": {"containers": [
            {"name": "web", "image": "nginx", "ports": [{"containerPort": 80}]},
        ]}}},
    });
    let set = field_set(&config, &deployment()).difference(stripped());
    assert_eq!(
        set.to_fields_v1(),
        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"web\"}": {
                ".": {}, "f:image": {}, "f:name": {},
                "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}},
            },
        }}}}})
    );
    let round = FieldSet::from_fields_v1(&set.to_fields_v1()).unwrap();
    assert_eq!(round, set);
}

#[test]
fn an_update_owns_what_it_added_including_the_maps_it_made() {
    let created = update(
        &Value::Null,
        &cm(json!({"a": "1"})),
        &writer("kubectl-create", NOW),
        &configmap(),
        &FieldSet::default(),
    );
    assert_eq!(
        managed(&created),
        json!([{
            "manager": "kubectl-create", "operation": "Update", "apiVersion": "v1", "time": NOW,
            "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}, "f:a": {}}},
        }])
    );
    // An update that changes nothing leaves the entry and its time alone.
    let same = update(&created, &created, &writer("kubectl-edit", LATER), &configmap(), &FieldSet::default());
    assert_eq!(managed(&same), managed(&created));
    // Another manager that changes a field takes it.
    let edited =
        update(&created, &cm(json!({"a": "2"})), &writer("kubectl-edit", LATER), &configmap(), &FieldSet::default());
    let entries = managed(&edited);
    assert_eq!(entries[0]["manager"], "kubectl-create");
    assert_eq!(entries[0]["fieldsV1"], json!({"f:data": {}}));
    assert_eq!(entries[1]["manager"], "kubectl-edit");
    assert_eq!(entries[1]["fieldsV1"], json!({"f:data": {"f:a": {}}}));
}

#[test]
fn an_apply_that_changes_another_managers_field_conflicts_and_force_takes_it() {
    let created = update(
        &Value::Null,
        &cm(json!({"a": "1"})),
        &writer("kubectl-client-side-apply", NOW),
        &configmap(),
        &FieldSet::default(),
    );
    let config = cm(json!({"a": "2"}));
    let err = apply(&created, &config, &writer("ssa", LATER), false, &configmap(), &FieldSet::default()).unwrap_err();
    let ApplyError::Conflicts(conflicts) = err else { panic!("{err:?}") };
    assert_eq!(
        conflict_message(&conflicts),
        r#"Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.a"#
    );
    let forced = apply(&created, &config, &writer("ssa", LATER), true, &configmap(), &FieldSet::default()).unwrap();
    assert_eq!(forced["data"], json!({"a": "2"}));
    let entries = managed(&forced);
    assert_eq!(entries[0]["manager"], "ssa");
    assert_eq!(entries[0]["operation"], "Apply");
    assert_eq!(entries[0]["fieldsV1"], json!({"f:data": {"f:a": {}}}));
    assert_eq!(entries[1]["fieldsV1"], json!({"f:data": {}}));
}

#[test]
fn the_same_value_is_shared_not_a_conflict() {
    let created =
        update(&Value::Null, &cm(json!({"a": "1"})), &writer("creator", NOW), &configmap(), &FieldSet::default());
    let applied =
        apply(&created, &cm(json!({"a": "1"})), &writer("ssa", LATER), false, &configmap(), &FieldSet::default())
            .unwrap();
    let managers = Managers::decode(&applied).unwrap();
    assert!(entry_of(&managers, "creator").unwrap().set.has(&[PathElement::field("data"), PathElement::field("a")]));
    assert!(entry_of(&managers, "ssa").unwrap().set.has(&[PathElement::field("data"), PathElement::field("a")]));
}

#[test]
fn applying_twice_changes_nothing_and_dropping_a_field_removes_it() {
    let first = apply(
        &Value::Null,
        &cm(json!({"a": "1", "b": "2"})),
        &writer("ssa", NOW),
        false,
        &configmap(),
        &FieldSet::default(),
    )
    .unwrap();
    let again = apply(
        &first,
        &cm(json!({"a": "1", "b": "2"})),
        &writer("ssa", LATER),
        false,
        &configmap(),
        &FieldSet::default(),
    )
    .unwrap();
    assert_eq!(again, first, "a repeated apply is a no-op, its time included");
    let fewer = apply(&first, &cm(json!({"a": "1"})), &writer("ssa", LATER), false, &configmap(), &FieldSet::default())
        .unwrap();
    assert_eq!(fewer["data"], json!({"a": "1"}));
    let none =
        apply(&fewer, &cm(Value::Null), &writer("ssa", LATER), false, &configmap(), &FieldSet::default()).unwrap();
    assert_eq!(none.get("data"), None, "{none}");
    assert_eq!(managed(&none), Value::Null, "a manager owning nothing is dropped");
}

#[test]
fn a_field_another_manager_owns_stays_when_the_applier_drops_it() {
    let first =
        apply(&Value::Null, &cm(json!({"a": "1"})), &writer("one", NOW), false, &configmap(), &FieldSet::default())
            .unwrap();
    let both =
        apply(&first, &cm(json!({"a": "1"})), &writer("two", NOW), false, &configmap(), &FieldSet::default()).unwrap();
    let dropped =
        apply(&both, &cm(Value::Null), &writer("one", LATER), false, &configmap(), &FieldSet::default()).unwrap();
    assert_eq!(dropped["data"], json!({"a": "1"}));
}

#[test]
fn keyed_list_elements_merge_by_key() {
    let live = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "1"}, {"name": "b", "image": "1"},
        ]}}},
    });
    let config = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "3"}, {"name": "b", "image": "2"}]}}},
    });
    let w = Writer { manager: "ssa", subresource: "", api_version: "apps/v1", now: NOW };
    let merged = apply(&live, &config, &w, false, &deployment(), &FieldSet::default()).unwrap();
    let names: Vec<&str> = merged["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "c", "b"]);
    assert_eq!(merged["spec"]["template"]["spec"]["containers"][2]["image"], "2");
}

#[test]
fn several_conflicts_are_listed_by_manager() {
    let mut live =
        update(&Value::Null, &cm(json!({"a": "1", "b": "1"})), &writer("one", NOW), &configmap(), &FieldSet::default());
    live = update(
        &live,
        &cm(json!({"a": "1", "b": "1", "c": "1"})),
        &writer("two", NOW),
        &configmap(),
        &FieldSet::default(),
    );
    let err = apply(
        &live,
        &cm(json!({"a": "2", "b": "2", "c": "2"})),
        &writer("ssa", LATER),
        false,
        &configmap(),
        &FieldSet::default(),
    )
    .unwrap_err();
    let ApplyError::Conflicts(conflicts) = err else { panic!() };
    assert_eq!(
        conflict_message(&conflicts),
        "Apply failed with 3 conflicts: conflicts with \"one\" using v1:\n- .data.a\n- .data.b\nconflicts with \"two\" using v1:\n- .data.c"
    );
}

#[test]
fn an_apply_in_another_version_or_with_managed_fields_is_refused() {
    let mut config = cm(json!({}));
    config["apiVersion"] = json!("v2");
    let err = apply(&Value::Null, &config, &writer("ssa", NOW), false, &configmap(), &FieldSet::default()).unwrap_err();
    assert_eq!(err, ApplyError::BadRequest("invalid object type: /v2, Kind=ConfigMap".into()));
    let mut config = cm(json!({}));
    config["metadata"]["managedFields"] = json!([]);
    let err = apply(&Value::Null, &config, &writer("ssa", NOW), false, &configmap(), &FieldSet::default()).unwrap_err();
    assert_eq!(err, ApplyError::BadRequest("metadata.managedFields must be nil".into()));
}

#[test]
fn kubectl_takes_over_what_its_client_side_apply_still_holds() {
    let last =
        r#"{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"name":"x","namespace":"default"}}"#;
    let mut obj = cm(json!({"a": "1"}));
    obj["metadata"]["annotations"] = json!({LAST_APPLIED: last});
    let live =
        update(&Value::Null, &obj, &writer("kubectl-client-side-apply", NOW), &configmap(), &FieldSet::default());
    let config = cm(json!({"a": "2"}));
    let taken = apply(&live, &config, &writer("kubectl", LATER), false, &configmap(), &FieldSet::default()).unwrap();
    assert_eq!(taken["data"], json!({"a": "2"}));
    let err = apply(&live, &config, &writer("other", LATER), false, &configmap(), &FieldSet::default()).unwrap_err();
    assert!(matches!(err, ApplyError::Conflicts(_)), "only kubectl takes over");
}

mod properties {
    use proptest::collection::btree_map;
    use proptest::prelude::*;
    use serde_json::{json, Map, Value};

    use super::super::*;
    use super::{configmap, writer, NOW};

    type Entries = std::collections::BTreeMap<String, String>;

    /// A ConfigMap configuration with these data entries and labels (no map at all where there are none).
    fn config(data: &Entries, labels: &Entries) -> Value {
        let to_map = |m: &Entries| {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect::<Map<_, _>>())
        };
        let mut out = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p"}});
        if !labels.is_empty() {
            out["metadata"]["labels"] = to_map(labels);
        }
        if !data.is_empty() {
            out["data"] = to_map(data);
        }
        out
    }

    fn entries() -> impl Strategy<Value = Entries> {
        btree_map("[a-e]{1,2}", "[x-z]{0,2}", 0..5)
    }

    proptest! {
        /// Applying the same configuration twice is a no-op: the object, its managed fields and their times
        /// are what the first apply left.
        #[test]
        fn applying_twice_is_a_no_op(data in entries(), labels in entries()) {
            let config = config(&data, &labels);
            let first = apply(&Value::Null, &config, &writer("m", NOW), false, &configmap(), &FieldSet::default()).unwrap();
            let second = apply(&first, &config, &writer("m", "2030-01-01T00:00:00Z"), false, &configmap(), &FieldSet::default()).unwrap();
            prop_assert_eq!(second, first);
        }

        /// Two managers applying disjoint fields never conflict, and each owns exactly its own.
        #[test]
        fn disjoint_appliers_never_conflict(data in entries(), labels in entries()) {
            let none = Entries::new();
            let (one, two) = (config(&data, &none), config(&none, &labels));
            let first = apply(&Value::Null, &one, &writer("one", NOW), false, &configmap(), &FieldSet::default()).unwrap();
            let both = apply(&first, &two, &writer("two", NOW), false, &configmap(), &FieldSet::default());
            prop_assert!(both.is_ok(), "{:?}", both);
            let both = both.unwrap();
            for (k, v) in &data {
                prop_assert_eq!(&both["data"][k], &json!(v));
            }
            for (k, v) in &labels {
                prop_assert_eq!(&both["metadata"]["labels"][k], &json!(v));
            }
        }
    }
}

/// A custom resource's shape from its CRD's structural schema: `spec.ports` a list-type map keyed by name,
/// `spec.tags` a set, `spec.labels` a granular map, `spec.owner` an atomic struct.
fn widget() -> Shape {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "args": {"type": "array", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "owner": {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {"name": {"type": "string"}}},
    }}}});
    let structural = crate::registry::structural::Structural::parse(&schema, "schema").unwrap();
    Shape::custom_root(std::sync::Arc::new(structural))
}

#[test]
fn a_custom_resource_is_owned_by_its_crd_schema() {
    let config = json!({
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "labels": {"a": "b"}},
        "spec": {"ports": [{"name": "http", "port": 80}], "tags": ["x"], "args": ["-v"], "labels": {"k": "v"}, "owner": {"name": "o"}},
    });
    let set = field_set(&config, &widget()).difference(stripped());
    assert_eq!(
        set.to_fields_v1(),
        json!({
            "f:metadata": {"f:labels": {"f:a": {}}},
            "f:spec": {
                "f:args": {}, "f:labels": {"f:k": {}}, "f:owner": {},
                "f:ports": {"k:{\"name\":\"http\"}": {".": {}, "f:name": {}, "f:port": {}}},
                "f:tags": {"v:\"x\"": {}},
            },
        })
    );
}

#[test]
fn appliers_of_different_keyed_elements_of_a_custom_resource_share_the_list() {
    let w = |ports: Value| json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"ports": ports}});
    let writer = |manager, now| Writer { manager, subresource: "", api_version: "example.com/v1", now };
    let none = FieldSet::default();
    let first =
        apply(&Value::Null, &w(json!([{"name": "http", "port": 80}])), &writer("a", NOW), false, &widget(), &none)
            .unwrap();
    let both = apply(&first, &w(json!([{"name": "grpc", "port": 90}])), &writer("b", LATER), false, &widget(), &none)
        .expect("a keyed list is merged by key, so different elements never conflict");
    assert_eq!(both["spec"]["ports"], json!([{"name": "http", "port": 80}, {"name": "grpc", "port": 90}]));
    // The same element with another value conflicts, naming it by its key.
    let Err(ApplyError::Conflicts(conflicts)) =
        apply(&both, &w(json!([{"name": "http", "port": 81}])), &writer("b", LATER), false, &widget(), &none)
    else {
        panic!("changing a's port must conflict");
    };
    assert_eq!(conflicts[0].field, ".spec.ports[name=\"http\"].port");
}
