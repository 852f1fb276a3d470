//! Go's JSON, checked against what Go wrote: upstream's fixtures byte for byte, and answers as
//! kube-apiserver 1.32 writes them.

use serde_json::{json, Value};

use super::*;

fn text(value: &Value) -> String {
    String::from_utf8(to_vec(value)).expect("JSON is UTF-8")
}

#[test]
fn every_fixture_reads_back_byte_for_byte() {
    // A `Value` sorts its keys; writing it again must give Go's bytes. Fixtures whose objects embed another
    // kind (`CustomType` in a RawExtension) are in sorted order there, as that kind has no template. The
    // type is the file's (a `WatchEvent` names none).
    for (stem, fixture) in template::fixtures() {
        let value: Value = serde_json::from_str(fixture).expect("a fixture is JSON");
        let node = template::Node::Object(template::of_stem(stem).clone());
        let ordered = Ordered { value: &value, node: Some(&node), without_type: false };
        let mut out = Vec::new();
        let formatter = GoFormatter(PrettyFormatter::with_indent(b"  "));
        ordered.serialize(&mut serde_json::Serializer::with_formatter(&mut out, formatter)).unwrap();
        let written = String::from_utf8(out).expect("JSON is UTF-8");
        assert!(written == *fixture, "{stem}: written\n{written}\nupstream\n{fixture}");
    }
}

#[test]
fn a_status_is_written_in_go_order() {
    // kube-apiserver 1.32's answer to creating a ConfigMap that exists.
    let status = json!({
        "apiVersion": "v1", "code": 409, "details": {"kind": "configmaps", "name": "a"},
        "kind": "Status", "message": "configmaps \"a\" already exists", "metadata": {},
        "reason": "AlreadyExists", "status": "Failure",
    });
    assert_eq!(
        text(&status),
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"a\" already exists","reason":"AlreadyExists","details":{"name":"a","kind":"configmaps"},"code":409}"#
    );
}

#[test]
fn objects_lists_and_their_maps() {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"b": "2", "a": "1"},
        "metadata": {"resourceVersion": "5", "name": "x", "namespace": "ns", "labels": {"z": "1", "app": "web"}}});
    let written = r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","namespace":"ns","resourceVersion":"5","labels":{"app":"web","z":"1"}},"data":{"a":"1","b":"2"}}"#;
    assert_eq!(text(&cm), written);
    assert_eq!(
        String::from_utf8(to_vec_list_item(&cm)).unwrap(),
        r#"{"metadata":{"name":"x","namespace":"ns","resourceVersion":"5","labels":{"app":"web","z":"1"}},"data":{"a":"1","b":"2"}}"#
    );
    let list = json!({"apiVersion": "v1", "kind": "ConfigMapList", "metadata": {"resourceVersion": "9", "continue": "c"},
        "items": [{"metadata": {"uid": "u", "name": "x"}, "data": {}}]});
    assert_eq!(
        text(&list),
        r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"c"},"items":[{"metadata":{"name":"x","uid":"u"},"data":{}}]}"#
    );
}

#[test]
fn what_kube_has_no_type_for_is_sorted() {
    // Custom resources are unstructured upstream: Go maps, which encoding/json sorts.
    let widget = json!({"kind": "Widget", "apiVersion": "example.com/v1", "spec": {"b": 1, "a": 2},
        "metadata": {"name": "w", "annotations": {}}});
    assert_eq!(
        text(&widget),
        r#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"annotations":{},"name":"w"},"spec":{"a":2,"b":1}}"#
    );
    // A field kube does not have comes after those it has.
    let cm = json!({"kind": "ConfigMap", "apiVersion": "v1", "zeta": 1, "alpha": 2, "data": {}});
    assert_eq!(text(&cm), r#"{"kind":"ConfigMap","apiVersion":"v1","data":{},"alpha":2,"zeta":1}"#);
}

#[test]
fn embedded_objects_follow_their_own_kind() {
    let pod = json!({"metadata": {"name": "p"}, "apiVersion": "v1", "kind": "Pod", "spec": {}});
    assert_eq!(
        String::from_utf8(watch_event("ADDED", &to_vec(&pod))).unwrap(),
        r#"{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"},"spec":{}}}"#
    );
    let table = json!({"apiVersion": "meta.k8s.io/v1", "kind": "Table", "metadata": {"resourceVersion": "3"},
        "rows": [{"object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": {"uid": "u", "name": "a"}}, "cells": ["a", "<none>"]}],
        "columnDefinitions": [{"priority": 0, "name": "Name", "type": "string", "format": "name", "description": "d"}]});
    assert_eq!(
        text(&table),
        r#"{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"3"},"columnDefinitions":[{"name":"Name","type":"string","format":"name","description":"d","priority":0}],"rows":[{"cells":["a","\u003cnone\u003e"],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","uid":"u"}}}]}"#
    );
    // An object reference names a kind too, but its position says it is an ObjectReference.
    let event = json!({"kind": "Event", "apiVersion": "v1", "involvedObject": {"uid": "u", "name": "p", "kind": "Pod", "apiVersion": "v1"}});
    assert_eq!(
        text(&event),
        r#"{"kind":"Event","apiVersion":"v1","involvedObject":{"kind":"Pod","name":"p","uid":"u","apiVersion":"v1"}}"#
    );
}

#[test]
fn strings_escape_as_go_escapes_them() {
    let cases = [
        ("<none>", r#""\u003cnone\u003e""#),
        ("a & b", r#""a \u0026 b""#),
        ("line\u{2028}para\u{2029}", r#""line\u2028para\u2029""#),
        ("tab\tnl\ncr\r\u{8}\u{c}\u{1}", r#""tab\tnl\ncr\r\b\f\u0001""#),
        ("quote\" back\\ é ✓", r#""quote\" back\\ é ✓""#),
    ];
    for (input, want) in cases {
        let mut out = Vec::new();
        append_str(&mut out, input);
        assert_eq!(String::from_utf8(out).unwrap(), want, "{input:?}");
    }
}

#[test]
fn pretty_is_go_marshal_indent() {
    let status =
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": {"causes": []}});
    assert_eq!(
        String::from_utf8(to_vec_pretty(&status)).unwrap(),
        "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Success\",\n  \"details\": {\n    \"causes\": []\n  }\n}"
    );
}
