//! The walks over objects that server-side apply is made of, on JSON values and their [`Shape`]s:
//!
//! - [`field_set`]: the paths an object (an applied configuration) sets, as structured-merge-diff's
//!   `ToFieldSet` finds them: every scalar and atomic value, every map entry and list element, and a
//!   struct's field only when it is null or an empty object;
//! - [`compare`]: what changed between two objects (added, modified, removed), as its `Compare` reports it:
//!   leaves by value, and every map entry or list element that appeared or went;
//! - [`merge`]: an applied configuration merged into the live object (maps and structs key by key,
//!   associative lists element by element in structured-merge-diff's order, the rest replaced);
//! - [`remove`]: the paths of a set taken out of an object, except what others still own.

use serde_json::{Map, Value};

use crate::registry::managed_fields::path::{FieldSet, Path, PathElement};
use crate::registry::managed_fields::shape::{key_default, Shape};

/// The paths `value` sets.
pub(crate) fn field_set(value: &Value, shape: &Shape) -> FieldSet {
    let mut out = FieldSet::default();
    collect(value, shape, &mut Vec::new(), &mut out);
    out
}

fn collect(value: &Value, shape: &Shape, path: &mut Path, out: &mut FieldSet) {
    match (shape, value) {
        (Shape::Struct(_) | Shape::Map(_) | Shape::Deduced | Shape::Custom { .. }, Value::Object(fields)) => {
            for (name, child) in fields {
                let (child_shape, declared) = shape.field(name);
                path.push(PathElement::field(name));
                collect(child, &child_shape, path, out);
                let empty = child.is_null() || child.as_object().is_some_and(Map::is_empty);
                if empty || !declared {
                    out.insert(path);
                }
                path.pop();
            }
        }
        (Shape::Associative { element, keys }, Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                path.push(element_of(item, keys, i));
                collect(item, element, path, out);
                out.insert(path);
                path.pop();
            }
        }
        _ => out.insert(path),
    }
}

/// How an associative list names its element `item` (at index `i`).
pub(crate) fn element_of(item: &Value, keys: &[String], i: usize) -> PathElement {
    if keys.is_empty() {
        return match item {
            Value::Object(_) | Value::Array(_) => PathElement::Index(i),
            scalar => PathElement::Value(scalar.to_string()),
        };
    }
    let fields: Vec<(String, String)> = keys
        .iter()
        .filter_map(|key| {
            let value = item.get(key).map(Value::to_string).or_else(|| key_default(key).map(str::to_string))?;
            Some((key.clone(), value))
        })
        .collect();
    let mut fields = fields;
    fields.sort();
    PathElement::Key(fields)
}

/// What changed from `lhs` to `rhs`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Comparison {
    pub added: FieldSet,
    pub modified: FieldSet,
    pub removed: FieldSet,
}

impl Comparison {
    /// The paths that now hold something new: modified or added.
    pub(crate) fn changed(&self) -> FieldSet {
        self.modified.union(&self.added)
    }

    /// The comparison without the paths in or below `ignored`.
    pub(crate) fn without(&self, ignored: &FieldSet) -> Comparison {
        Comparison {
            added: self.added.recursive_difference(ignored),
            modified: self.modified.recursive_difference(ignored),
            removed: self.removed.recursive_difference(ignored),
        }
    }
}

/// Compares two objects of the shape `shape`.
pub(crate) fn compare(lhs: &Value, rhs: &Value, shape: &Shape) -> Comparison {
    let mut out = Comparison::default();
    compare_at(Some(lhs), Some(rhs), shape, &mut Vec::new(), &mut out);
    out
}

fn compare_at(lhs: Option<&Value>, rhs: Option<&Value>, shape: &Shape, path: &mut Path, out: &mut Comparison) {
    match (shape, lhs, rhs) {
        (Shape::Struct(_) | Shape::Map(_) | Shape::Deduced | Shape::Custom { .. }, l, r)
            if l.is_none_or(Value::is_object) && r.is_none_or(Value::is_object) =>
        {
            let empty = Map::new();
            let l = l.and_then(Value::as_object).unwrap_or(&empty);
            let r = r.and_then(Value::as_object).unwrap_or(&empty);
            let mut names: Vec<&String> = l.keys().chain(r.keys()).collect();
            names.sort();
            names.dedup();
            for name in names {
                let (child_shape, _) = shape.field(name);
                path.push(PathElement::field(name));
                item(l.get(name.as_str()), r.get(name.as_str()), &child_shape, path, out);
                path.pop();
            }
        }
        (Shape::Associative { element, keys }, l, r)
            if l.is_none_or(Value::is_array) && r.is_none_or(Value::is_array) =>
        {
            let l = indexed(l, keys);
            let r = indexed(r, keys);
            let mut elements: Vec<&PathElement> = l.iter().map(|(e, _)| e).chain(r.iter().map(|(e, _)| e)).collect();
            elements.sort();
            elements.dedup();
            for pe in elements {
                let (lv, rv) = (find(&l, pe), find(&r, pe));
                path.push(pe.clone());
                item(lv, rv, element, path, out);
                path.pop();
            }
        }
        (_, None, Some(_)) => out.added.insert(path),
        (_, Some(_), None) => out.removed.insert(path),
        (_, Some(l), Some(r)) if l != r => out.modified.insert(path),
        _ => {}
    }
}

/// One map entry or list element: compared, then counted as added or removed itself.
fn item(lhs: Option<&Value>, rhs: Option<&Value>, shape: &Shape, path: &mut Path, out: &mut Comparison) {
    compare_at(lhs, rhs, shape, path, out);
    match (lhs, rhs) {
        (None, Some(_)) => out.added.insert(path),
        (Some(_), None) => out.removed.insert(path),
        _ => {}
    }
}

/// The element `pe` of an indexed list.
fn find<'a>(list: &[(PathElement, &'a Value)], pe: &PathElement) -> Option<&'a Value> {
    list.iter().find(|(e, _)| e == pe).map(|(_, v)| *v)
}

/// A list's elements with their path elements.
fn indexed<'a>(list: Option<&'a Value>, keys: &[String]) -> Vec<(PathElement, &'a Value)> {
    let items = list.and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    items.iter().enumerate().map(|(i, item)| (element_of(item, keys, i), item)).collect()
}

/// `config` merged into `live`: what the object becomes when `config` is applied to it.
pub(crate) fn merge(live: &Value, config: &Value, shape: &Shape) -> Value {
    match (shape, live, config) {
        (
            Shape::Struct(_) | Shape::Map(_) | Shape::Deduced | Shape::Custom { .. },
            Value::Object(l),
            Value::Object(r),
        ) => {
            let mut out = l.clone();
            for (name, value) in r {
                if value.is_null() {
                    out.remove(name);
                    continue;
                }
                let (child_shape, _) = shape.field(name);
                let merged = match l.get(name) {
                    Some(old) => merge(old, value, &child_shape),
                    None => value.clone(),
                };
                out.insert(name.clone(), merged);
            }
            Value::Object(out)
        }
        (Shape::Associative { element, keys }, Value::Array(l), Value::Array(r)) => {
            Value::Array(merge_list(l, r, keys, element))
        }
        _ => config.clone(),
    }
}

/// Two associative lists merged as structured-merge-diff orders them: the applied elements in their
/// order, each live-only element kept where it stood relative to the elements both lists share.
fn merge_list(live: &[Value], config: &[Value], keys: &[String], shape: &Shape) -> Vec<Value> {
    let lhs: Vec<PathElement> = live.iter().enumerate().map(|(i, v)| element_of(v, keys, i)).collect();
    let rhs: Vec<PathElement> = config.iter().enumerate().map(|(i, v)| element_of(v, keys, i)).collect();
    let in_rhs = |pe: &PathElement| rhs.iter().position(|e| e == pe);
    let in_lhs = |pe: &PathElement| lhs.iter().position(|e| e == pe);
    // The shared elements in the applied order: the live list waits at a shared element until the
    // applied list reaches it.
    let mut shared: std::collections::VecDeque<&PathElement> = rhs.iter().filter(|pe| in_lhs(pe).is_some()).collect();
    let mut taken: Vec<&PathElement> = Vec::new();
    let mut out = Vec::with_capacity(live.len().max(config.len()));
    let (mut li, mut ri) = (0, 0);
    let merged = |pe: &PathElement, r: &Value| match in_lhs(pe) {
        Some(l) => merge(&live[l], r, shape),
        None => r.clone(),
    };
    while li < lhs.len() || ri < rhs.len() {
        if li < lhs.len() && ri < rhs.len() {
            if lhs[li] == rhs[ri] {
                out.push(merged(&rhs[ri], &config[ri]));
                taken.push(&rhs[ri]);
                if shared.front() == Some(&&rhs[ri]) {
                    shared.pop_front();
                }
                li += 1;
                ri += 1;
                continue;
            }
            if in_rhs(&lhs[li]).is_some() && shared.front().is_some_and(|next| *next != &lhs[li]) {
                li += 1;
                continue;
            }
        }
        if li < lhs.len() {
            if in_rhs(&lhs[li]).is_none() {
                out.push(live[li].clone());
                li += 1;
                continue;
            }
            if taken.contains(&&lhs[li]) {
                li += 1;
                continue;
            }
        }
        if ri < rhs.len() {
            out.push(merged(&rhs[ri], &config[ri]));
            taken.push(&rhs[ri]);
            if shared.front() == Some(&&rhs[ri]) {
                shared.pop_front();
            }
            ri += 1;
        }
    }
    out
}

/// Takes the paths of `gone` out of `value`, except where `kept` (what some manager still owns) has the
/// path or something below it; a struct field left empty by the removal, that no one owns, goes too.
pub(crate) fn remove(value: &mut Value, gone: &FieldSet, kept: &FieldSet, shape: &Shape) {
    match (shape, value) {
        (Shape::Struct(_) | Shape::Map(_) | Shape::Deduced | Shape::Custom { .. }, Value::Object(fields)) => {
            let names: Vec<String> = fields.keys().cloned().collect();
            for name in names {
                let pe = PathElement::field(&name);
                if !gone.touches(&pe) {
                    continue;
                }
                let (child_shape, declared) = shape.field(&name);
                if gone.has_member(&pe) && !kept.touches(&pe) {
                    fields.remove(&name);
                    continue;
                }
                if let (Some(below), Some(child)) = (gone.child(&pe), fields.get_mut(&name)) {
                    remove(child, below, kept.child(&pe).unwrap_or(&FieldSet::default()), &child_shape);
                    let emptied = match child {
                        Value::Object(m) => m.is_empty(),
                        Value::Array(a) => a.is_empty(),
                        _ => false,
                    };
                    if emptied && declared && !kept.touches(&pe) {
                        fields.remove(&name);
                    }
                }
            }
        }
        (Shape::Associative { element, keys }, Value::Array(items)) => {
            let mut i = 0;
            items.retain_mut(|item| {
                let pe = element_of(item, keys, i);
                i += 1;
                if gone.has_member(&pe) && !kept.touches(&pe) {
                    return false;
                }
                if let Some(below) = gone.child(&pe) {
                    remove(item, below, kept.child(&pe).unwrap_or(&FieldSet::default()), element);
                }
                true
            });
        }
        _ => {}
    }
}
