//! JSON as kube-apiserver writes it: Go's `encoding/json` output of kube's typed objects.
//!
//! Two things tell Go's output from serde_json's over the same value. Keys come in the order of the Go
//! struct's fields (`kind` and `apiVersion` first, from the inlined `TypeMeta`), where a
//! `serde_json::Value` keeps them sorted; and strings escape `<`, `>`, `&`, U+2028 and U+2029 as `\u003c`
//! and so on, as Go's encoder does unless told not to (kube never tells it).
//!
//! The order comes from upstream's round-trip fixtures (`upstream/`, kubernetes/api v0.32.9
//! `testdata/HEAD`, unchanged): each is one object of a kind with every field set, written by Go, so the
//! key order of each of its objects is its type's struct order. [`template`] reads them into trees of
//! keys; `ours/` adds the few meta kinds upstream has no fixture of (Table, PartialObjectMetadata,
//! APIResourceList, APIGroupList), written by us in the same form. A list of a kind (`PodList`) is
//! derived: `kind`, `apiVersion`, `metadata` (`ListMeta`), `items`.
//!
//! What has no template is written in sorted order, which is also upstream's for it: custom resources and
//! their lists are unstructured there, Go maps, which `encoding/json` sorts; and map-valued fields
//! (`labels`, `data`) sort the same way. Keys an object has that its template does not come after the
//! template's, sorted. An embedded object (`RawExtension`, a Table row's `object`, a watch event's) is
//! written by the template of its own `apiVersion` and `kind`.
//!
//! A leaf of the crate (layer 1): it knows JSON and Go, nothing of the apiserver.

mod template;

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
use serde_json::Value;

use template::Node;

/// `value` as Go writes it, compact, without a trailing newline.
pub(crate) fn to_vec(value: &Value) -> Vec<u8> {
    write(value, false, false)
}

/// `value` as Go's `json.MarshalIndent(v, "", "  ")` writes it.
pub(crate) fn to_vec_pretty(value: &Value) -> Vec<u8> {
    write(value, true, false)
}

/// An object as a typed list carries it: as [`to_vec`], without its `kind` and `apiVersion`.
pub(crate) fn to_vec_list_item(value: &Value) -> Vec<u8> {
    write(value, false, true)
}

/// A watch event's line without its newline, `{"type":"ADDED","object":...}` (`metav1.WatchEvent` has no
/// `kind` to look its template up by), around an object already written.
pub(crate) fn watch_event(kind: &str, object: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(object.len() + 32);
    out.extend_from_slice(b"{\"type\":");
    append_str(&mut out, kind);
    out.extend_from_slice(b",\"object\":");
    out.extend_from_slice(object);
    out.push(b'}');
    out
}

/// Appends `value`, compact, to `out`.
pub(crate) fn append(out: &mut Vec<u8>, value: &Value) {
    let ordered = Ordered { value, node: None, without_type: false };
    ordered.serialize(&mut serde_json::Serializer::with_formatter(out, GoFormatter(CompactFormatter))).expect(WRITES);
}

/// Appends the JSON string `text` to `out`, escaped as Go escapes it.
pub(crate) fn append_str(out: &mut Vec<u8>, text: &str) {
    text.serialize(&mut serde_json::Serializer::with_formatter(out, GoFormatter(CompactFormatter))).expect(WRITES);
}

const WRITES: &str = "a JSON value always serializes to memory";

fn write(value: &Value, pretty: bool, without_type: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    let ordered = Ordered { value, node: None, without_type };
    if pretty {
        let formatter = GoFormatter(PrettyFormatter::with_indent(b"  "));
        ordered.serialize(&mut serde_json::Serializer::with_formatter(&mut out, formatter)).expect(WRITES);
    } else {
        ordered
            .serialize(&mut serde_json::Serializer::with_formatter(&mut out, GoFormatter(CompactFormatter)))
            .expect(WRITES);
    }
    out
}

/// A value with the template its keys follow, if any.
struct Ordered<'a> {
    value: &'a Value,
    node: Option<&'a Node>,
    /// Leave out `kind` and `apiVersion` (a typed list's items).
    without_type: bool,
}

impl Serialize for Ordered<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.value {
            Value::Object(map) => {
                // An object names its own type where the position says nothing (the top, an embedded object).
                let node = match self.node {
                    Some(Node::Object(fields)) => Some(fields),
                    _ => template::of_object(map),
                };
                let skip = |key: &str| self.without_type && (key == "kind" || key == "apiVersion");
                let mut out = serializer.serialize_map(Some(map.len()))?;
                match node {
                    Some(fields) => {
                        for (key, child) in fields.iter() {
                            if let Some(value) = map.get(key).filter(|_| !skip(key)) {
                                out.serialize_entry(key, &Ordered { value, node: Some(child), without_type: false })?;
                            }
                        }
                        for (key, value) in map.iter().filter(|(k, _)| !fields.has(k) && !skip(k)) {
                            out.serialize_entry(key, &Ordered { value, node: None, without_type: false })?;
                        }
                    }
                    None => {
                        for (key, value) in map.iter().filter(|(k, _)| !skip(k)) {
                            out.serialize_entry(key, &Ordered { value, node: None, without_type: false })?;
                        }
                    }
                }
                out.end()
            }
            Value::Array(items) => {
                let element = match self.node {
                    Some(Node::Array(element)) => Some(element.as_ref()),
                    _ => None,
                };
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for value in items {
                    out.serialize_element(&Ordered { value, node: element, without_type: false })?;
                }
                out.end()
            }
            scalar => scalar.serialize(serializer),
        }
    }
}

/// serde_json's formatting with Go's escapes on top: serde_json already escapes what JSON requires (and
/// writes `\b`, `\f`, `\n`, `\r`, `\t` and lowercase `\u00xx` as Go 1.22+ does); Go also escapes `<`,
/// `>` and `&` (HTML safety) and the line and paragraph separators U+2028 and U+2029.
struct GoFormatter<F>(F);

impl<F: Formatter> Formatter for GoFormatter<F> {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            let escape: &[u8] = match c {
                '<' => b"\\u003c",
                '>' => b"\\u003e",
                '&' => b"\\u0026",
                '\u{2028}' => b"\\u2028",
                '\u{2029}' => b"\\u2029",
                _ => continue,
            };
            writer.write_all(&fragment.as_bytes()[start..i])?;
            writer.write_all(escape)?;
            start = i + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests;
