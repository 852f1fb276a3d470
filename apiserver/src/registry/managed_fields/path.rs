//! Field paths and sets of them, as structured-merge-diff names the parts of an object a manager owns, and
//! their `FieldsV1` form in `metadata.managedFields`.
//!
//! A path is a list of elements: a struct field or map key (`f:name`), an associative list's element by
//! the values of its key fields (`k:{"name":"nginx"}`), a set's element by its value (`v:"a"`), or a
//! list element by index (`i:0`, only where nothing better identifies it). A [`FieldSet`] is a tree: each
//! node has the elements that are members of the set and the children it descends into, so a node can be
//! both (`".": {}` in `FieldsV1` says so).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};

/// One step of a field path. The variant order is structured-merge-diff's sort order (fields, then keys,
/// then values, then indexes), which is the order of sets and of conflicts.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PathElement {
    Field(String),
    /// The key fields of an associative list's element, by name, each with its value's JSON text.
    Key(Vec<(String, String)>),
    /// A set's element, as JSON text.
    Value(String),
    Index(usize),
}

/// A path from an object's root.
pub(crate) type Path = Vec<PathElement>;

impl PathElement {
    pub(crate) fn field(name: &str) -> PathElement {
        PathElement::Field(name.to_string())
    }

    /// The `FieldsV1` key of the element (`f:name`, `k:{...}`, `v:...`, `i:N`).
    fn fields_v1_key(&self) -> String {
        match self {
            PathElement::Field(name) => format!("f:{name}"),
            PathElement::Key(fields) => {
                let body: Vec<String> =
                    fields.iter().map(|(name, value)| format!("{}:{value}", Value::from(name.as_str()))).collect();
                format!("k:{{{}}}", body.join(","))
            }
            PathElement::Value(text) => format!("v:{text}"),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    fn from_fields_v1_key(key: &str) -> Result<PathElement, String> {
        let bad = || format!("invalid field path element {key:?}");
        let (kind, rest) = key.split_once(':').ok_or_else(bad)?;
        match kind {
            "f" => Ok(PathElement::Field(rest.to_string())),
            "v" => {
                let value: Value = serde_json::from_str(rest).map_err(|_| bad())?;
                Ok(PathElement::Value(value.to_string()))
            }
            "i" => rest.parse().map(PathElement::Index).map_err(|_| bad()),
            "k" => match serde_json::from_str(rest) {
                Ok(Value::Object(fields)) => {
                    Ok(PathElement::Key(fields.into_iter().map(|(name, value)| (name, value.to_string())).collect()))
                }
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }
}

/// How upstream prints a path in a conflict: `.spec.containers[name="nginx"].image`, `[=value]`, `[0]`.
pub(crate) struct Display<'a>(pub &'a [PathElement]);

impl fmt::Display for Display<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for element in self.0 {
            match element {
                PathElement::Field(name) => write!(f, ".{name}")?,
                PathElement::Key(fields) => {
                    let parts: Vec<String> = fields.iter().map(|(name, value)| format!("{name}={value}")).collect();
                    write!(f, "[{}]", parts.join(","))?
                }
                PathElement::Value(text) => write!(f, "[={text}]")?,
                PathElement::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

/// A set of field paths, as a tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSet {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(FieldSet::is_empty)
    }

    /// Adds `path` (the empty path is not a member of anything and is ignored).
    pub(crate) fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => match self.children.get_mut(first) {
                // Only a new level clones its element.
                Some(child) => child.insert(rest),
                None => self.children.entry(first.clone()).or_default().insert(rest),
            },
        }
    }

    /// Whether `path` is a member (the tests' question; the field manager walks sets instead).
    #[cfg(test)]
    pub(crate) fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|child| child.has(rest)),
        }
    }

    /// Whether `element` is a member here.
    pub(crate) fn has_member(&self, element: &PathElement) -> bool {
        self.members.contains(element)
    }

    /// The set below `element` (paths relative to it), if any.
    pub(crate) fn child(&self, element: &PathElement) -> Option<&FieldSet> {
        self.children.get(element).filter(|child| !child.is_empty())
    }

    /// Whether the set has `element` or anything below it.
    pub(crate) fn touches(&self, element: &PathElement) -> bool {
        self.members.contains(element) || self.child(element).is_some()
    }

    pub(crate) fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (element, child) in &other.children {
            let merged = match out.children.get(element) {
                Some(mine) => mine.union(child),
                None => child.clone(),
            };
            out.children.insert(element.clone(), merged);
        }
        out
    }

    /// The paths of `self` that are not in `other` (member by member, at every depth).
    pub(crate) fn difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.iter().filter(|m| !other.members.contains(m)).cloned().collect();
        let mut children = BTreeMap::new();
        for (element, child) in &self.children {
            let rest = match other.children.get(element) {
                Some(theirs) => child.difference(theirs),
                None => child.clone(),
            };
            if !rest.is_empty() {
                children.insert(element.clone(), rest);
            }
        }
        FieldSet { members, children }
    }

    /// The paths of `self` that are not in `other` and not below any member of `other`.
    pub(crate) fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.iter().filter(|m| !other.members.contains(m)).cloned().collect();
        let mut children = BTreeMap::new();
        for (element, child) in &self.children {
            if other.members.contains(element) {
                continue;
            }
            let rest = match other.children.get(element) {
                Some(theirs) => child.recursive_difference(theirs),
                None => child.clone(),
            };
            if !rest.is_empty() {
                children.insert(element.clone(), rest);
            }
        }
        FieldSet { members, children }
    }

    pub(crate) fn intersection(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.intersection(&other.members).cloned().collect();
        let mut children = BTreeMap::new();
        for (element, child) in &self.children {
            if let Some(theirs) = other.children.get(element) {
                let both = child.intersection(theirs);
                if !both.is_empty() {
                    children.insert(element.clone(), both);
                }
            }
        }
        FieldSet { members, children }
    }

    /// Every member path, members of a node before its children's, each level in sort order (the order
    /// structured-merge-diff iterates a set, and so lists conflicts).
    pub(crate) fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for member in &self.members {
            let mut path = prefix.clone();
            path.push(member.clone());
            out.push(path);
        }
        for (element, child) in &self.children {
            prefix.push(element.clone());
            child.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// The set as `FieldsV1` JSON.
    pub(crate) fn to_fields_v1(&self) -> Value {
        Value::Object(self.fields_v1_body(false))
    }

    fn fields_v1_body(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        for member in &self.members {
            if self.child(member).is_none() {
                out.insert(member.fields_v1_key(), Value::Object(Map::new()));
            }
        }
        for (element, child) in &self.children {
            if child.is_empty() {
                continue;
            }
            let body = child.fields_v1_body(self.members.contains(element));
            out.insert(element.fields_v1_key(), Value::Object(body));
        }
        out
    }

    /// Reads a `FieldsV1` value; the error says what is wrong with it.
    pub(crate) fn from_fields_v1(value: &Value) -> Result<FieldSet, String> {
        let Value::Object(map) = value else { return Err("expected an object".into()) };
        let mut out = FieldSet::default();
        for (key, body) in map {
            if key == "." {
                continue;
            }
            let element = PathElement::from_fields_v1_key(key)?;
            let Value::Object(inner) = body else { return Err(format!("expected an object under {key:?}")) };
            if inner.is_empty() || inner.contains_key(".") {
                out.members.insert(element.clone());
            }
            if inner.keys().any(|k| k != ".") {
                out.children.insert(element, FieldSet::from_fields_v1(body)?);
            }
        }
        Ok(out)
    }
}
