//! Strategic merge patch cases, one per rule, on built-in kinds with their real patch facts. The
//! expectations restate the behaviour of upstream's `strategicpatch` package (its test cases and kubectl's
//! documented results), written as our own data.

use serde_json::{json, Value};

use super::*;

const POD: &str = "io.k8s.api.core.v1.Pod";
const DEPLOYMENT: &str = "io.k8s.api.apps.v1.Deployment";

fn pod(containers: Value) -> Value {
    json!({"metadata": {"name": "p", "labels": {"a": "1"}, "finalizers": ["x", "y"]}, "spec": {"containers": containers}})
}

fn c(name: &str, image: &str) -> Value {
    json!({"name": name, "image": image})
}

#[test]
fn patches_merge_as_the_field_strategies_say() {
    let two = pod(json!([c("a", "1"), c("b", "1")]));
    let cases: Vec<(&str, Value, Value, Value)> = vec![
        (
            "maps merge key by key; null deletes",
            two.clone(),
            json!({"metadata": {"labels": {"a": null, "b": "2"}}}),
            json!({"metadata": {"name": "p", "labels": {"b": "2"}, "finalizers": ["x", "y"]}, "spec": {"containers": [c("a", "1"), c("b", "1")]}}),
        ),
        (
            "an element merges into the one with its merge key",
            two.clone(),
            json!({"spec": {"containers": [{"name": "b", "image": "2"}]}}),
            pod(json!([c("a", "1"), c("b", "2")])),
        ),
        (
            "a new element is added after the original ones",
            two.clone(),
            json!({"spec": {"containers": [c("n", "1")]}}),
            pod(json!([c("a", "1"), c("b", "1"), c("n", "1")])),
        ),
        (
            "$patch: delete removes the element with that key",
            two.clone(),
            json!({"spec": {"containers": [{"$patch": "delete", "name": "a"}]}}),
            pod(json!([c("b", "1")])),
        ),
        (
            "$patch: replace in a list replaces it with the other elements",
            two.clone(),
            json!({"spec": {"containers": [c("z", "9"), {"$patch": "replace"}]}}),
            pod(json!([c("z", "9")])),
        ),
        (
            "$setElementOrder orders the merged list",
            two.clone(),
            json!({"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}], "containers": [{"name": "a", "image": "2"}]}}),
            pod(json!([c("b", "1"), c("a", "2")])),
        ),
        (
            "an original-only element keeps its place among the patched ones",
            pod(json!([c("a", "1"), c("b", "1"), c("d", "1")])),
            json!({"spec": {"containers": [{"name": "d", "image": "2"}, {"name": "a", "image": "2"}]}}),
            pod(json!([c("b", "1"), c("d", "2"), c("a", "2")])),
        ),
        (
            "a list without a merge strategy is replaced",
            pod(json!([{"name": "a", "args": ["x", "y"]}])),
            json!({"spec": {"containers": [{"name": "a", "args": ["z"]}]}}),
            pod(json!([{"name": "a", "args": ["z"]}])),
        ),
        (
            "a merging list of scalars is a union",
            two.clone(),
            json!({"metadata": {"finalizers": ["y", "z"]}}),
            json!({"metadata": {"name": "p", "labels": {"a": "1"}, "finalizers": ["x", "y", "z"]}, "spec": {"containers": [c("a", "1"), c("b", "1")]}}),
        ),
        (
            "$deleteFromPrimitiveList takes values out",
            two.clone(),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}}),
            json!({"metadata": {"name": "p", "labels": {"a": "1"}, "finalizers": ["y"]}, "spec": {"containers": [c("a", "1"), c("b", "1")]}}),
        ),
        (
            "$patch: replace in a map replaces it",
            two.clone(),
            json!({"metadata": {"labels": {"$patch": "replace", "n": "1"}}}),
            json!({"metadata": {"name": "p", "labels": {"n": "1"}, "finalizers": ["x", "y"]}, "spec": {"containers": [c("a", "1"), c("b", "1")]}}),
        ),
        (
            "$patch: delete in a map empties it",
            two.clone(),
            json!({"metadata": {"labels": {"$patch": "delete"}}}),
            json!({"metadata": {"name": "p", "labels": {}, "finalizers": ["x", "y"]}, "spec": {"containers": [c("a", "1"), c("b", "1")]}}),
        ),
        (
            "env merges by name inside a merged container",
            pod(json!([{"name": "a", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "1"}]}])),
            json!({"spec": {"containers": [{"name": "a", "env": [{"name": "Y", "value": "2"}]}]}}),
            pod(json!([{"name": "a", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]}])),
        ),
        (
            "directives in a value the original lacks are acted on, not stored",
            json!({"metadata": {"name": "p"}}),
            json!({"spec": {"containers": [c("a", "1"), {"$patch": "delete", "name": "b"}]}, "metadata": {"labels": {"n": "1", "m": null}}}),
            json!({"metadata": {"name": "p", "labels": {"n": "1"}}, "spec": {"containers": [c("a", "1")]}}),
        ),
    ];
    for (name, original, patch, want) in cases {
        assert_eq!(apply(&original, &patch, Some(POD), &BuiltinMeta), Ok(want), "{name}");
    }
}

#[test]
fn retain_keys_drops_what_it_does_not_list() {
    let deployment = json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
    let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
    let want = json!({"spec": {"strategy": {"type": "Recreate"}}});
    assert_eq!(apply(&deployment, &patch, Some(DEPLOYMENT), &BuiltinMeta), Ok(want));
    let stray = json!({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 2}}}});
    assert_eq!(
        apply(&deployment, &stray, Some(DEPLOYMENT), &BuiltinMeta),
        Err(SmpError::Unprocessable("patch content doesn't match retainKeys list".into()))
    );
}

#[test]
fn malformed_patches_are_refused_with_upstreams_words() {
    let original = pod(json!([c("a", "1")]));
    let cases: Vec<(Value, SmpError)> = vec![
        (
            json!({"metadata": {"labels": {"$patch": "merge", "x": "1"}}}),
            SmpError::Failed("unknown patch type: merge in map: map[$patch:merge x:1]".into()),
        ),
        (
            json!({"spec": {"containers": [{"image": "2"}]}}),
            SmpError::Failed("map: map[image:2] does not contain declared merge key: name".into()),
        ),
        (
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": "x"}}),
            SmpError::BadRequest("invalid patch format of primitive list".into()),
        ),
        (
            json!({"spec": {"$setElementOrder/containers": "a", "containers": [c("a", "2")]}}),
            SmpError::BadRequest("invalid patch format of setElementOrder list".into()),
        ),
        (json!({"spec": {"containers": [[1]]}}), SmpError::Unprocessable("lists of lists are not supported".into())),
        (
            json!({"metadata": {"$retainKeys": "name"}}),
            SmpError::BadRequest("invalid patch format of retainKeys".into()),
        ),
    ];
    for (patch, want) in cases {
        assert_eq!(apply(&original, &patch, Some(POD), &BuiltinMeta), Err(want), "{patch}");
    }
    assert_eq!(
        apply(&original, &json!([]), Some(POD), &BuiltinMeta),
        Err(SmpError::BadRequest("invalid JSON document".into()))
    );
}

#[test]
fn without_patch_facts_every_list_is_replaced() {
    let original = json!({"spec": {"items": [{"name": "a"}], "tags": ["x"]}});
    let patch = json!({"spec": {"items": [{"name": "b"}], "tags": ["y"]}});
    assert_eq!(apply(&original, &patch, None, &BuiltinMeta), Ok(patch.clone()));
}

#[test]
fn the_builtin_facts_come_from_the_extension_table() {
    let containers = BuiltinMeta.field(Some("io.k8s.api.core.v1.PodSpec"), "containers");
    assert_eq!(
        containers,
        FieldMeta {
            definition: Some("io.k8s.api.core.v1.Container".into()),
            merge: true,
            merge_key: Some("name".into())
        }
    );
    let args = BuiltinMeta.field(Some("io.k8s.api.core.v1.Container"), "args");
    assert_eq!(args, FieldMeta::default());
    let spec = BuiltinMeta.field(Some(POD), "spec");
    assert_eq!(spec.definition.as_deref(), Some("io.k8s.api.core.v1.PodSpec"));
    assert!(!spec.merge);
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    /// Small JSON maps: string keys from a few names (so that patches meet the original's keys), values
    /// strings, nulls or maps of the same, two levels deep.
    fn doc() -> impl Strategy<Value = Value> {
        let key = prop::sample::select(vec!["a", "b", "c", "d"]).prop_map(str::to_string);
        let leaf = prop_oneof![Just(Value::Null), "[xy]{0,2}".prop_map(Value::from)];
        let inner = prop::collection::btree_map(key.clone(), leaf.clone(), 0..4)
            .prop_map(|m| Value::Object(m.into_iter().collect()));
        let value = prop_oneof![leaf, inner];
        prop::collection::btree_map(key, value, 0..4).prop_map(|m| Value::Object(m.into_iter().collect()))
    }

    fn without_nulls(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), without_nulls(v))).collect(),
            ),
            other => other.clone(),
        }
    }

    proptest! {
        /// Where no field has a patch strategy (a ConfigMap's `data`, or no type at all), a strategic merge
        /// patch is a JSON merge patch (RFC 7386).
        #[test]
        fn without_lists_it_is_a_json_merge_patch(original in doc(), patch in doc()) {
            let original = without_nulls(&original);
            let mut merged = original.clone();
            json_patch::merge(&mut merged, &patch);
            prop_assert_eq!(apply(&original, &patch, None, &BuiltinMeta), Ok(merged.clone()));
            let cm = json!({"data": original});
            let cm_patch = json!({"data": patch});
            let mut cm_merged = cm.clone();
            json_patch::merge(&mut cm_merged, &cm_patch);
            prop_assert_eq!(apply(&cm, &cm_patch, Some("io.k8s.api.core.v1.ConfigMap"), &BuiltinMeta), Ok(cm_merged));
        }

        /// Applying the same patch twice changes nothing the second time, merging lists included.
        #[test]
        fn a_patch_applied_twice_is_applied_once(
            images in prop::collection::vec(("[a-d]", "[0-2]"), 0..5),
            patched in prop::collection::vec(("[a-e]", "[0-2]", any::<bool>()), 0..5),
        ) {
            let mut seen = std::collections::BTreeSet::new();
            let containers: Vec<Value> =
                images.iter().filter(|(n, _)| seen.insert(n.clone())).map(|(n, i)| c(n, i)).collect();
            let mut seen = std::collections::BTreeSet::new();
            let items: Vec<Value> = patched
                .iter()
                .filter(|(n, _, _)| seen.insert(n.clone()))
                .map(|(n, i, delete)| if *delete { json!({"$patch": "delete", "name": n}) } else { c(n, i) })
                .collect();
            let original = pod(Value::Array(containers));
            let patch = json!({"spec": {"containers": items}, "metadata": {"finalizers": ["z"]}});
            let once = apply(&original, &patch, Some(POD), &BuiltinMeta).unwrap();
            prop_assert_eq!(apply(&once, &patch, Some(POD), &BuiltinMeta), Ok(once.clone()));
        }
    }
}
