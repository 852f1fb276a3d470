//! JSON values as CEL values: what `self` and `oldSelf` are bound to.
//!
//! Upstream (`apiextensions-apiserver` `pkg/apiserver/schema/cel/values.go`, `UnstructuredToVal`) binds an
//! object of a schema with `properties` to a struct-like value: `self.x` of a field that is declared but
//! absent fails with "no such key: x", and `has(self.x)` tests presence. A map keyed by strings behaves the
//! same way, so objects are bound as maps here.
//!
//! Determinism: the `cel` crate's own map (`DefaultMap`) is a `HashMap` with a randomly seeded hasher, so
//! iterating it (the `all`, `exists`, `exists_one`, `map` and `filter` macros over a map's keys) visits keys in
//! an order that changes from run to run. [`Object`] keeps that map for lookups and equality, and a sorted
//! copy of its keys for iteration, so comprehensions over JSON objects run in key order. Two places still
//! iterate a `DefaultMap`: a map literal written in the rule, and an object moved out of an optional by
//! `orValue` (the crate moves the inner map out as its built-in type). Neither affects a rule's boolean
//! result unless two different errors race; rules over such maps whose output is a list
//! (`{...}.map(k, k)`) are not deterministic.

use std::collections::HashMap;

use cel::common::traits::{self, Container, Indexer, Iterable, Sizer, Zeroer};
use cel::common::types::{CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString, Type, MAP_TYPE};
use cel::common::value::{Builtin, BuiltinRef, CowVal, Val};
use cel::ExecutionError;
use serde_json::Value as Json;

/// Converts JSON into the value an evaluation binds: integers `Int` (or `Float` past `i64`), other numbers
/// `Float`, arrays lists, and objects [`Object`]s.
pub(super) fn json_to_val(json: &Json) -> Box<dyn Val> {
    match json {
        Json::Null => Box::new(CelNull),
        Json::Bool(b) => Box::new(CelBool::from(*b)),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Box::new(CelInt::from(i)),
            None => Box::new(CelDouble::from(n.as_f64().unwrap_or(f64::NAN))),
        },
        Json::String(s) => Box::new(CelString::from(s.clone())),
        Json::Array(items) => Box::new(CelList::from(items.iter().map(json_to_val).collect::<Vec<_>>())),
        Json::Object(fields) => Box::new(Object::new(fields)),
    }
}

/// The OpenAPI type name of a JSON value, as upstream shows a schema's `type` in a failed rule's error
/// (`Invalid value: "object"`). Integral numbers are "integer"; a schema of type `number` holding an integral
/// value is shown as "integer" here, which is why callers that know the schema pass its type instead.
pub(crate) fn schema_type_of(json: &Json) -> &'static str {
    match json {
        Json::Null => "",
        Json::Bool(_) => "boolean",
        Json::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

/// A JSON object: a CEL `map` whose keys iterate in sorted order.
#[derive(Clone, Debug)]
pub(super) struct Object {
    /// The fields; lookups, `in`, `size` and equality go through the crate's map, so an [`Object`] compares
    /// equal to a map literal with the same entries whichever side of `==` it is on.
    fields: CelMap<'static>,
    /// The keys in sorted order (a `serde_json::Map` without `preserve_order` is already sorted; sorting again
    /// keeps that true whatever features are enabled).
    keys: Vec<CelString<'static>>,
}

impl Object {
    fn new(fields: &serde_json::Map<String, Json>) -> Object {
        let mut keys: Vec<&String> = fields.keys().collect();
        keys.sort();
        let map: HashMap<CelMapKey<'static>, Box<dyn Val>> =
            fields.iter().map(|(k, v)| (CelMapKey::String(CelString::from(k.clone())), json_to_val(v))).collect();
        Object { fields: CelMap::from(map), keys: keys.into_iter().map(|k| CelString::from(k.clone())).collect() }
    }
}

/// Iterates an [`Object`]'s sorted keys.
struct KeyIter<'b>(std::slice::Iter<'b, CelString<'static>>);

impl<'b, 'w> traits::Iterator<'b, 'w> for KeyIter<'b> {
    fn next(&mut self) -> Option<&'b (dyn Val + 'w)> {
        self.0.next().map(|k| k as &dyn Val)
    }
}

impl Val for Object {
    fn get_type(&self) -> &Type {
        &MAP_TYPE
    }

    fn cel_type() -> &'static Type {
        &MAP_TYPE
    }

    fn as_container(&self) -> Option<&dyn Container> {
        Some(self)
    }

    fn as_indexer<'b, 'w>(&'b self) -> Option<&'b (dyn Indexer + 'w)>
    where
        Self: 'w,
    {
        Some(self)
    }

    fn into_indexer<'w>(self: Box<Self>) -> Option<Box<dyn Indexer + 'w>>
    where
        Self: 'w,
    {
        Some(self)
    }

    fn as_iterable<'b, 'w>(&'b self) -> Option<&'b (dyn Iterable + 'w)>
    where
        Self: 'w,
    {
        Some(self)
    }

    fn as_sizer(&self) -> Option<&dyn Sizer> {
        Some(self)
    }

    fn as_zeroer(&self) -> Option<&dyn Zeroer> {
        Some(self)
    }

    fn equals(&self, other: &dyn Val) -> bool {
        self.fields.equals(other)
    }

    fn clone_as_boxed<'w>(&self) -> Box<dyn Val + 'w>
    where
        Self: 'w,
    {
        Box::new(self.clone())
    }

    // The crate recognizes its own map through these two: that is what lets a map literal on the left of `==`
    // compare with an `Object` on the right, and `Value` conversion see a map.
    fn as_builtin<'b, 'w>(&'b self) -> BuiltinRef<'b, 'w>
    where
        Self: 'w,
    {
        BuiltinRef::Map(&self.fields)
    }

    fn into_builtin<'w>(self: Box<Self>) -> Option<Builtin<'w>>
    where
        Self: 'w,
    {
        Some(Builtin::Map(self.fields))
    }
}

impl Container for Object {
    fn contains(&self, value: &dyn Val) -> Result<bool, ExecutionError> {
        self.fields.contains(value)
    }
}

impl Indexer for Object {
    fn get<'b, 'w>(&'b self, idx: &dyn Val) -> Result<CowVal<'b, 'w>, ExecutionError>
    where
        Self: 'w,
    {
        self.fields.get(idx)
    }

    fn steal<'w>(self: Box<Self>, idx: &dyn Val) -> Result<Box<dyn Val + 'w>, ExecutionError>
    where
        Self: 'w,
    {
        Box::new(self.fields).steal(idx)
    }
}

impl Iterable for Object {
    fn iter<'b, 'w>(&'b self) -> Box<dyn traits::Iterator<'b, 'w> + 'b>
    where
        Self: 'w,
    {
        Box::new(KeyIter(self.keys.iter()))
    }
}

impl Sizer for Object {
    fn size(&self) -> CelInt {
        self.fields.size()
    }
}

impl Zeroer for Object {
    fn is_zero_value(&self) -> bool {
        self.keys.is_empty()
    }
}
