//! A StatefulSet's ControllerRevisions (kube-controller-manager 1.32: `pkg/controller/history/controller_history.go`
//! `ControllerRevisionName`, `NewControllerRevision`, `HashControllerRevision`, `SortControllerRevisions`,
//! `EqualRevision`, `FindEqualRevisions`; `pkg/controller/statefulset/stateful_set_utils.go` `getPatch`,
//! `newRevision`, `ApplyRevision`, `nextRevision`; `stateful_set_control.go` `truncateHistory`'s choice).
//! Sans-IO.
//!
//! A revision holds a strategic merge patch that puts the pod template back, `{"spec":{"template":{...,
//! "$patch":"replace"}}}`, as bytes: upstream encodes the typed set, decodes it into a Go map and encodes
//! the patch map with `json.Marshal`, which writes map keys sorted bytewise, escapes `<`, `>`, `&`, U+2028
//! and U+2029, and prints numbers as `float64`. serde_json's `Value` (no `preserve_order` in this
//! workspace) keeps keys sorted bytewise too, so [`go_json`] only adds Go's escapes and number form. The
//! typed encoding also writes two zero values a JSON object may lack, `metadata.creationTimestamp: null`
//! and each container's `resources: {}`, which [`patch`] supplies; any other difference between the
//! apiserver's JSON and Go's typed encoding of the template would change the bytes, and so the name.
//!
//! The name is `<set>-<hash>`: FNV-1 (32 bits, Go's `fnv.New32`, not the 1a variant the pod-template-hash
//! uses) over those bytes and then the collision count in decimal (StatefulSets always pass one, so a
//! count of 0 still adds `"0"`), the decimal sum written in `SafeEncodeString`'s alphabet. Equal revisions
//! are found by comparing the bytes.

use std::cmp::Ordering;

use serde_json::{json, Map, Value};

use super::identity::{controller_ref_to, meta, pod_revision};
use crate::kcm::deployment::hash::safe_encode_string;
use crate::kcm::replicaset::pods::parse_time_us;

/// `history.ControllerRevisionHashLabel`.
pub const HASH_LABEL: &str = "controller.kubernetes.io/hash";

/// FNV-1, 32 bits (Go's `hash/fnv.New32`): multiply, then xor.
#[derive(Clone, Copy, Debug)]
pub struct Fnv32(u32);

impl Default for Fnv32 {
    fn default() -> Fnv32 {
        Fnv32(0x811c_9dc5)
    }
}

impl Fnv32 {
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.wrapping_mul(0x0100_0193);
            self.0 ^= u32::from(b);
        }
    }

    pub fn sum32(self) -> u32 {
        self.0
    }
}

/// A number as Go's `encoding/json` writes a `float64`: plain digits between 1e-6 and 1e21, the shortest
/// exponent form (`1e+21`, `1.5e-7`) outside.
fn go_number(n: &serde_json::Number) -> String {
    let f = n.as_f64().unwrap_or(0.0);
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let text = format!("{f:e}");
        match text.split_once('e') {
            Some((mantissa, exp)) if exp.starts_with('-') => format!("{mantissa}e{exp}"),
            Some((mantissa, exp)) => format!("{mantissa}e+{exp:0>2}"),
            None => text,
        }
    } else {
        format!("{f}")
    }
}

fn write_go(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&go_number(n)),
        Value::String(s) => {
            let quoted = serde_json::to_string(s).expect("a string serializes");
            // These characters can only be inside the string here, so replacing them is Go's escaping.
            for c in quoted.chars() {
                match c {
                    '<' => out.push_str("\\u003c"),
                    '>' => out.push_str("\\u003e"),
                    '&' => out.push_str("\\u0026"),
                    '\u{2028}' => out.push_str("\\u2028"),
                    '\u{2029}' => out.push_str("\\u2029"),
                    c => out.push(c),
                }
            }
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            // serde_json's map is a BTreeMap here: bytewise key order, which is Go's for a map.
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go(&Value::String(key.clone()), out);
                out.push(':');
                write_go(item, out);
            }
            out.push('}');
        }
    }
}

/// `value` as Go's `json.Marshal` writes a `map[string]interface{}` decoded from it.
pub fn go_json(value: &Value) -> String {
    let mut out = String::new();
    write_go(value, &mut out);
    out
}

/// `getPatch`: the patch that puts the set's pod template back.
pub fn patch(set: &Value) -> Value {
    let mut template = set.pointer("/spec/template").cloned().filter(Value::is_object).unwrap_or_else(|| json!({}));
    // Zero values Go's typed encoding always writes.
    if !template.get("metadata").is_some_and(Value::is_object) {
        template["metadata"] = json!({});
    }
    let metadata = template["metadata"].as_object_mut().expect("an object");
    metadata.entry("creationTimestamp").or_insert(Value::Null);
    for list in ["initContainers", "containers"] {
        if let Some(containers) = template.pointer_mut(&format!("/spec/{list}")).and_then(Value::as_array_mut) {
            for c in containers.iter_mut().filter_map(Value::as_object_mut) {
                c.entry("resources").or_insert_with(|| json!({}));
            }
        }
    }
    template["$patch"] = json!("replace");
    json!({"spec": {"template": template}})
}

/// `HashControllerRevision` of data whose bytes are `data`, with the collision count `probe`.
pub fn hash_revision(data: &str, probe: Option<i32>) -> String {
    let mut hasher = Fnv32::default();
    hasher.write(data.as_bytes());
    if let Some(probe) = probe {
        hasher.write(probe.to_string().as_bytes());
    }
    safe_encode_string(&hasher.sum32().to_string())
}

/// `ControllerRevisionName`: `<prefix>-<hash>`, the prefix cut to 223 bytes.
pub fn revision_name(prefix: &str, hash: &str) -> String {
    let mut cut = prefix.len().min(223);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{hash}", &prefix[..cut])
}

/// `newRevision`: the revision `number` of the set's current template, named and labelled with its hash
/// under `collision_count`, owned by the set, carrying the set's annotations.
pub fn new_revision(set: &Value, number: i64, collision_count: i32) -> Value {
    let data = patch(set);
    let hash = hash_revision(&go_json(&data), Some(collision_count));
    let mut labels =
        set.pointer("/spec/template/metadata/labels").and_then(Value::as_object).cloned().unwrap_or_default();
    labels.insert(HASH_LABEL.into(), json!(hash));
    let mut metadata = Map::new();
    metadata.insert("name".into(), json!(revision_name(meta(set, "name"), &hash)));
    metadata.insert("namespace".into(), json!(meta(set, "namespace")));
    metadata.insert("labels".into(), Value::Object(labels));
    if let Some(annotations) =
        set.pointer("/metadata/annotations").filter(|a| a.as_object().is_some_and(|m| !m.is_empty()))
    {
        metadata.insert("annotations".into(), annotations.clone());
    }
    metadata.insert("ownerReferences".into(), json!([controller_ref_to(set)]));
    json!({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": metadata, "data": data, "revision": number})
}

/// The revision's name under another collision count (`CreateControllerRevision`'s retry).
pub fn renamed(set: &Value, revision: &Value, collision_count: i32) -> String {
    let data = revision.get("data").cloned().unwrap_or(Value::Null);
    revision_name(meta(set, "name"), &hash_revision(&go_json(&data), Some(collision_count)))
}

/// A revision's number.
pub fn number(revision: &Value) -> i64 {
    revision.get("revision").and_then(Value::as_i64).unwrap_or(0)
}

/// The bytes of a revision's data.
pub fn data_bytes(revision: &Value) -> String {
    go_json(revision.get("data").unwrap_or(&Value::Null))
}

/// `EqualRevision`: hash labels that both parse as numbers must agree, then the data bytes must.
pub fn equal_revision(a: &Value, b: &Value) -> bool {
    let parsed = |r: &Value| {
        r.pointer("/metadata/labels")
            .and_then(|l| l.get(HASH_LABEL))
            .and_then(Value::as_str)
            .and_then(|h| h.parse::<i32>().ok())
    };
    if let (Some(x), Some(y)) = (parsed(a), parsed(b)) {
        if x != y {
            return false;
        }
    }
    data_bytes(a) == data_bytes(b)
}

/// `SortControllerRevisions`: by number, then creation time, then name (stable).
pub fn sort_revisions(revisions: &mut [Value]) {
    let created = |r: &Value| r.pointer("/metadata/creationTimestamp").and_then(Value::as_str).and_then(parse_time_us);
    revisions.sort_by(|a, b| {
        number(a).cmp(&number(b)).then_with(|| match created(a).cmp(&created(b)) {
            Ordering::Equal => meta(a, "name").cmp(meta(b, "name")),
            other => other,
        })
    });
}

/// `nextRevision`: one more than the last of the sorted revisions, 1 for none.
pub fn next_revision(sorted: &[Value]) -> i64 {
    sorted.last().map_or(1, |r| number(r) + 1)
}

/// `ApplyRevision`: the set with the revision's template (the patch replaces the template whole).
pub fn apply_revision(set: &Value, revision: &Value) -> Value {
    let mut restored = set.clone();
    if let Some(template) = revision.pointer("/data/spec/template").and_then(Value::as_object) {
        let mut template = template.clone();
        template.remove("$patch");
        restored["spec"]["template"] = Value::Object(template);
    }
    restored
}

/// `truncateHistory`'s choice: the oldest revisions neither current, nor the update revision, nor any
/// pod's, beyond `revisionHistoryLimit` (`sorted` in [`sort_revisions`] order).
pub fn history_to_delete(
    set: &Value,
    pods: &[Value],
    sorted: &[Value],
    current: Option<&str>,
    update: Option<&str>,
) -> Vec<Value> {
    let live =
        |name: &str| Some(name) == current || Some(name) == update || pods.iter().any(|p| pod_revision(p) == name);
    let history: Vec<&Value> = sorted.iter().filter(|r| !live(meta(r, "name"))).collect();
    let limit =
        usize::try_from(set.pointer("/spec/revisionHistoryLimit").and_then(Value::as_i64).unwrap_or(10)).unwrap_or(0);
    if history.len() <= limit {
        return Vec::new();
    }
    history[..history.len() - limit].iter().map(|r| (*r).clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(image: &str) -> Value {
        json!({
            "metadata": {"name": "web", "namespace": "ns", "uid": "set-uid", "annotations": {"a": "b"}},
            "spec": {
                "revisionHistoryLimit": 1,
                "template": {
                    "metadata": {"labels": {"app": "web"}, "creationTimestamp": null},
                    "spec": {"containers": [{"name": "c", "image": image}]},
                },
            },
        })
    }

    #[test]
    fn fnv1_test_vectors() {
        // FNV-1 (not 1a) 32-bit reference values.
        let cases = [("", 0x811c_9dc5u32), ("a", 0x050c_5d7e), ("foobar", 0x31f0_b262)];
        for (text, want) in cases {
            let mut h = Fnv32::default();
            h.write(text.as_bytes());
            assert_eq!(h.sum32(), want, "{text}");
        }
    }

    #[test]
    fn go_json_sorts_escapes_and_prints_floats() {
        let cases = [
            (json!({"b": 1, "a": [true, null], "B": "x"}), r#"{"B":"x","a":[true,null],"b":1}"#),
            (json!({"s": "<a & b>\u{2028}"}), r#"{"s":"\u003ca \u0026 b\u003e\u2028"}"#),
            (json!({"s": "tab\tquote\"nl\n\u{1}"}), r#"{"s":"tab\tquote\"nl\n\u0001"}"#),
            (
                json!([0.5, 100, -3, 1e21, 1.5e-7, 0.000001, 1e20]),
                "[0.5,100,-3,1e+21,1.5e-7,0.000001,100000000000000000000]",
            ),
        ];
        for (value, want) in cases {
            assert_eq!(go_json(&value), want, "{value}");
        }
    }

    #[test]
    fn the_patch_replaces_the_template_with_go_zero_values() {
        let mut s = set("nginx:1");
        s["spec"]["template"]["metadata"].as_object_mut().unwrap().remove("creationTimestamp");
        let p = patch(&s);
        assert_eq!(
            go_json(&p),
            r#"{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1","name":"c","resources":{}}]}}}}"#
        );
        let revision = json!({"data": p});
        let restored = apply_revision(&set("nginx:2"), &revision);
        assert_eq!(restored["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1");
        assert!(restored["spec"]["template"].get("$patch").is_none());
        assert_eq!(restored["metadata"]["uid"], "set-uid");
    }

    #[test]
    fn revisions_are_named_by_the_hash_of_their_bytes() {
        let data = go_json(&patch(&set("nginx:1")));
        // The hash is FNV-1 over the bytes and the decimal collision count, in the safe alphabet.
        let mut h = Fnv32::default();
        h.write(data.as_bytes());
        h.write(b"0");
        assert_eq!(hash_revision(&data, Some(0)), safe_encode_string(&h.sum32().to_string()));
        assert_ne!(hash_revision(&data, Some(0)), hash_revision(&data, None));
        assert_ne!(hash_revision(&data, Some(0)), hash_revision(&data, Some(1)));

        let rev = new_revision(&set("nginx:1"), 3, 0);
        let hash = rev["metadata"]["labels"][HASH_LABEL].as_str().unwrap().to_string();
        assert_eq!(rev["metadata"]["name"], format!("web-{hash}"));
        assert_eq!(hash, hash_revision(&data, Some(0)));
        assert_eq!(rev["metadata"]["labels"]["app"], "web");
        assert_eq!(rev["metadata"]["annotations"], json!({"a": "b"}));
        assert_eq!(rev["metadata"]["ownerReferences"][0]["uid"], "set-uid");
        assert_eq!(rev["revision"], 3);
        assert_eq!(renamed(&set("nginx:1"), &rev, 0), rev["metadata"]["name"]);
        assert_ne!(renamed(&set("nginx:1"), &rev, 1), rev["metadata"]["name"]);
        assert_ne!(new_revision(&set("nginx:2"), 3, 0)["metadata"]["name"], rev["metadata"]["name"]);
        assert_eq!(revision_name(&"x".repeat(300), "h").len(), 225);
    }

    #[test]
    fn equality_sorting_and_history() {
        let a1 = new_revision(&set("nginx:1"), 1, 0);
        let mut a3 = new_revision(&set("nginx:1"), 3, 0);
        a3["metadata"]["name"] = json!("web-a3");
        let b2 = new_revision(&set("nginx:2"), 2, 0);
        assert!(equal_revision(&a1, &a3));
        assert!(!equal_revision(&a1, &b2));
        let mut numeric = a1.clone();
        numeric["metadata"]["labels"][HASH_LABEL] = json!("123");
        let mut other_numeric = a1.clone();
        other_numeric["metadata"]["labels"][HASH_LABEL] = json!("124");
        assert!(!equal_revision(&numeric, &other_numeric), "numeric hashes that differ decide");

        let mut revs = vec![a3.clone(), b2.clone(), a1.clone()];
        sort_revisions(&mut revs);
        assert_eq!(revs.iter().map(number).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(next_revision(&revs), 4);
        assert_eq!(next_revision(&[]), 1);

        // Limit 1: of the two revisions no one uses, the older goes.
        let a1_name = meta(&a1, "name").to_string();
        let pods = vec![];
        let doomed = history_to_delete(&set("x"), &pods, &revs, Some("web-a3"), Some("web-a3"));
        assert_eq!(
            doomed.iter().map(|r| meta(r, "name").to_string()).collect::<Vec<_>>(),
            std::slice::from_ref(&a1_name)
        );
        // A pod still at the first revision keeps it.
        let pods = vec![json!({"metadata": {"labels": {"controller-revision-hash": a1_name}}})];
        assert!(history_to_delete(&set("x"), &pods, &revs, Some("web-a3"), Some("web-a3")).is_empty());
    }
}
