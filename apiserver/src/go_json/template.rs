//! The key order of each kind: trees of keys read from the fixtures (`upstream/` and `ours/`, listed by
//! `build.rs`), one per `apiVersion` and `kind`, with a list kind derived for each.
//!
//! A fixture is read with its keys in the order written (a `serde_json::Value` would sort them), into a
//! [`Node`]: an object's keys and each one's subtree, an array's element, or a leaf. Upstream fills a
//! `RawExtension` with an object of kind `CustomType`; such a subtree becomes [`Node::Embedded`], whose
//! objects are then written by their own kind's template.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The fixtures: (file stem, text).
static FIXTURES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/go_json_fixtures.rs"));

/// What a position in an object holds.
#[derive(Clone, Debug)]
pub(super) enum Node {
    Leaf,
    Array(Box<Node>),
    Object(Fields),
    /// An object of any kind (`RawExtension`): its own `apiVersion` and `kind` say how to write it.
    Embedded,
}

/// An object's keys in Go's order, each with its subtree.
#[derive(Clone, Debug, Default)]
pub(super) struct Fields {
    order: Vec<(String, Node)>,
    index: BTreeMap<String, usize>,
}

impl Fields {
    fn push(&mut self, key: String, node: Node) {
        self.index.insert(key.clone(), self.order.len());
        self.order.push((key, node));
    }

    /// The keys in order, each with its subtree.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&str, &Node)> {
        self.order.iter().map(|(k, n)| (k.as_str(), n))
    }

    /// Whether the type has the field `key`.
    pub(super) fn has(&self, key: &str) -> bool {
        self.index.contains_key(key)
    }
}

/// The template of an object that names its type, if kube has the type: by `apiVersion` and `kind`,
/// `v1` when an object carries no `apiVersion` (discovery's `APIVersions`).
pub(super) fn of_object(map: &Map<String, Value>) -> Option<&'static Fields> {
    let kind = map.get("kind")?.as_str()?;
    let api_version = map.get("apiVersion").and_then(Value::as_str).unwrap_or("v1");
    templates().get(&(api_version.to_string(), kind.to_string()))
}

fn templates() -> &'static BTreeMap<(String, String), Fields> {
    static TEMPLATES: OnceLock<BTreeMap<(String, String), Fields>> = OnceLock::new();
    TEMPLATES.get_or_init(|| {
        let mut templates = BTreeMap::new();
        for (stem, text) in FIXTURES {
            let Node::Object(fields) = parse(text) else { panic!("fixture {stem} is not an object") };
            templates.insert(type_of_stem(stem), fields);
        }
        // Each kind's list, unless the list has a fixture of its own (`APIGroupList` has `groups`, not
        // `items`): its items are the kind's tree, its metadata `ListMeta`, read once from the `Status`.
        let list_meta = templates
            .get(&("v1".to_string(), "Status".to_string()))
            .and_then(|status| status.order.get(status.index["metadata"]))
            .map(|(_, node)| node.clone())
            .expect("the Status fixture is built in, with its metadata");
        let lists: Vec<((String, String), Fields)> = templates
            .iter()
            .filter(|((api_version, kind), _)| !templates.contains_key(&(api_version.clone(), format!("{kind}List"))))
            .map(|((api_version, kind), fields)| {
                let mut list = Fields::default();
                list.push("kind".into(), Node::Leaf);
                list.push("apiVersion".into(), Node::Leaf);
                list.push("metadata".into(), list_meta.clone());
                list.push("items".into(), Node::Array(Box::new(Node::Object(fields.clone()))));
                ((api_version.clone(), format!("{kind}List")), list)
            })
            .collect();
        templates.extend(lists);
        templates
    })
}

/// `apps.v1.Deployment` is (`apps/v1`, `Deployment`); `core.v1.Pod` is (`v1`, `Pod`).
fn type_of_stem(stem: &str) -> (String, String) {
    let (rest, kind) = stem.rsplit_once('.').expect("a fixture is named group.version.Kind");
    let (group, version) = rest.rsplit_once('.').expect("a fixture is named group.version.Kind");
    let api_version = if group == "core" { version.to_string() } else { format!("{group}/{version}") };
    (api_version, kind.to_string())
}

/// A fixture's tree. The fixtures are compiled in, so one that does not parse is a build defect.
fn parse(text: &str) -> Node {
    let mut de = serde_json::Deserializer::from_str(text);
    Node::deserialize(&mut de).expect("a fixture is JSON")
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Node, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_str<E>(self, _: &str) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Leaf)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        // Upstream's fixtures hold one element per array; it stands for all.
        let element = seq.next_element::<Node>()?.unwrap_or(Node::Leaf);
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Node::Array(Box::new(element)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut fields = Fields::default();
        let mut embedded = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "kind" {
                let kind: Value = map.next_value()?;
                embedded |= kind == "CustomType";
                fields.push(key, Node::Leaf);
                continue;
            }
            let node = map.next_value::<Node>()?;
            fields.push(key, node);
        }
        Ok(if embedded { Node::Embedded } else { Node::Object(fields) })
    }
}

/// The template of a fixture's file stem.
#[cfg(test)]
pub(super) fn of_stem(stem: &str) -> &'static Fields {
    &templates()[&type_of_stem(stem)]
}

/// Every fixture, for the test that writes each back.
#[cfg(test)]
pub(super) fn fixtures() -> &'static [(&'static str, &'static str)] {
    FIXTURES
}
