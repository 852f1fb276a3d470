//! Tests as data: schemas with objects and the error texts upstream prints (kube-openapi's messages through
//! apiextensions' conversion to field errors), parse errors of CRD schemas, pruning and defaulting results;
//! then properties that must hold for any schema (pruning is idempotent, defaulting keeps valid objects
//! valid).

use proptest::prelude::*;
use serde_json::{json, Value};

use super::gofmt::float_v;
use super::{ListType, Structural};

const ROOT: &str = "spec.versions[0].schema.openAPIV3Schema";

/// A root schema with the given `spec` properties (and `spec.required`).
fn spec_schema(props: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": {
            "spec": { "type": "object", "properties": props, "required": required },
        },
    })
}

fn parse(schema: &Value) -> Structural {
    match Structural::parse(schema, ROOT) {
        Ok(s) => s,
        Err(errs) => panic!("schema {schema} rejected: {:?}", errs.iter().map(ToString::to_string).collect::<Vec<_>>()),
    }
}

fn texts(errs: &[crate::registry::field_error::FieldError]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

#[test]
fn validation_texts_match_upstream() {
    // (spec properties, required, spec value, expected errors)
    let cases: Vec<(Value, Vec<&str>, Value, Vec<&str>)> = vec![
        (
            json!({"replicas": {"type": "integer"}}),
            vec![],
            json!({"replicas": "string"}),
            vec![r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#],
        ),
        (json!({"size": {"type": "integer"}}), vec!["size"], json!({}), vec!["spec.size: Required value"]),
        (
            json!({"mode": {"type": "string", "enum": ["a", "b"]}}),
            vec![],
            json!({"mode": "x"}),
            vec![r#"spec.mode: Unsupported value: "x": supported values: "a", "b""#],
        ),
        (
            json!({"count": {"type": "integer", "maximum": 10}}),
            vec![],
            json!({"count": 11}),
            vec!["spec.count: Invalid value: 11: spec.count in body should be less than or equal to 10"],
        ),
        (
            json!({"name": {"type": "string", "pattern": "^[a-z]+$"}}),
            vec![],
            json!({"name": "ABC"}),
            vec![r#"spec.name: Invalid value: "ABC": spec.name in body should match '^[a-z]+$'"#],
        ),
        (
            json!({"s": {"type": "string"}}),
            vec![],
            json!({"s": null}),
            vec![r#"spec.s: Invalid value: "null": spec.s in body must be of type string: "null""#],
        ),
        (json!({"s": {"type": "string", "nullable": true}}), vec![], json!({"s": null}), vec![]),
        (
            json!({"r": {"type": "integer"}}),
            vec![],
            json!({"r": 1.5}),
            vec![r#"spec.r: Invalid value: "number": spec.r in body must be of type integer: "number""#],
        ),
        // An integral float is an integer to kube-openapi.
        (json!({"r": {"type": "integer"}}), vec![], json!({"r": 2.0}), vec![]),
        (
            json!({"port": {"x-kubernetes-int-or-string": true}}),
            vec![],
            json!({"port": true}),
            vec![r#"spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#],
        ),
        (json!({"port": {"x-kubernetes-int-or-string": true}}), vec![], json!({"port": "http"}), vec![]),
        (
            json!({"d": {"type": "string", "format": "date"}}),
            vec![],
            json!({"d": "2023-02-29"}),
            vec![r#"spec.d: Invalid value: "2023-02-29": spec.d in body must be of type date: "2023-02-29""#],
        ),
        (json!({"d": {"type": "string", "format": "date"}}), vec![], json!({"d": "2024-02-29"}), vec![]),
        (
            json!({"t": {"type": "string", "format": "date-time"}}),
            vec![],
            json!({"t": "2024-01-01T25:00:00Z"}),
            vec![
                r#"spec.t: Invalid value: "2024-01-01T25:00:00Z": spec.t in body must be of type date-time: "2024-01-01T25:00:00Z""#,
            ],
        ),
        (
            json!({"u": {"type": "string", "format": "uuid"}}),
            vec![],
            json!({"u": "nope"}),
            vec![r#"spec.u: Invalid value: "nope": spec.u in body must be of type uuid: "nope""#],
        ),
        // int32 is not among the formats upstream checks: it is stripped, so a large value passes.
        (json!({"n": {"type": "integer", "format": "int32"}}), vec![], json!({"n": 1099511627776i64}), vec![]),
        // Unknown formats are ignored.
        (json!({"x": {"type": "string", "format": "no-such-format"}}), vec![], json!({"x": "anything"}), vec![]),
        (
            json!({"name": {"type": "string", "maxLength": 3, "minLength": 1}}),
            vec![],
            json!({"name": "abcd"}),
            vec!["spec.name: Too long: may not be more than 3 bytes"],
        ),
        (
            json!({"name": {"type": "string", "minLength": 2}}),
            vec![],
            json!({"name": "a"}),
            vec![r#"spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long"#],
        ),
        (
            json!({"list": {"type": "array", "items": {"type": "string"}, "minItems": 1}}),
            vec![],
            json!({"list": []}),
            vec!["spec.list: Invalid value: 0: spec.list in body should have at least 1 items"],
        ),
        (
            json!({"ratio": {"type": "number", "minimum": 0.5, "exclusiveMinimum": true}}),
            vec![],
            json!({"ratio": 0.5}),
            vec!["spec.ratio: Invalid value: 0.5: spec.ratio in body should be greater than 0.5"],
        ),
        (
            json!({"n": {"type": "integer", "multipleOf": 5}}),
            vec![],
            json!({"n": 7}),
            vec!["spec.n: Invalid value: 7: spec.n in body should be a multiple of 5"],
        ),
        (
            json!({"labels": {"type": "object", "additionalProperties": {"type": "string"}}}),
            vec![],
            json!({"labels": {"a": 1, "b": "ok"}}),
            vec![r#"spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer""#],
        ),
        (
            json!({"m": {"type": "object", "minProperties": 2, "additionalProperties": {"type": "string"}}}),
            vec![],
            json!({"m": {"a": "x"}}),
            vec!["spec.m: Invalid value: 1: spec.m in body should have at least 2 properties"],
        ),
        (
            json!({"level": {"type": "integer", "enum": [1, 2]}}),
            vec![],
            json!({"level": 3}),
            vec![r#"spec.level: Unsupported value: 3: supported values: "1", "2""#],
        ),
        // A type mismatch does not stop the enum check, as in kube-openapi.
        (
            json!({"mode": {"type": "string", "enum": ["a"]}}),
            vec![],
            json!({"mode": 5}),
            vec![
                r#"spec.mode: Invalid value: "integer": spec.mode in body must be of type string: "integer""#,
                r#"spec.mode: Unsupported value: 5: supported values: "a""#,
            ],
        ),
        // Array items, then the list-type uniqueness after all schema errors.
        (
            json!({"tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}),
            vec![],
            json!({"tags": ["a", "b", "a", 1]}),
            vec![
                r#"spec.tags[3]: Invalid value: "integer": spec.tags[3] in body must be of type string: "integer""#,
                r#"spec.tags[2]: Duplicate value: "a""#,
            ],
        ),
        (
            json!({"ports": {
                "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}},
            }}),
            vec![],
            json!({"ports": [{"name": "http", "port": 80}, {"name": "http", "port": 81}]}),
            vec![r#"spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"}"#],
        ),
        (
            json!({"template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}),
            vec![],
            json!({"template": {"apiVersion": "v1", "metadata": {"name": "a/b"}}}),
            vec![
                "spec.template.kind: Required value: must not be empty",
                r#"spec.template.metadata.name: Invalid value: "a/b": may not contain '/'"#,
            ],
        ),
        (
            json!({"template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}),
            vec![],
            json!({"template": {"apiVersion": "a/b/c", "kind": "Pod_x"}}),
            vec![
                r#"spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#,
                r#"spec.template.kind: Invalid value: "Pod_x": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
            ],
        ),
        (
            json!({"c": {"type": "object", "additionalProperties": false}}),
            vec![],
            json!({"c": {"x": 1}}),
            vec![r#"spec.c: Invalid value: "x": spec.c.x in body is a forbidden property"#],
        ),
        (
            json!({"v": {"type": "integer", "anyOf": [{"minimum": 10}, {"maximum": 0}]}}),
            vec![],
            json!({"v": 5}),
            vec![
                r#"<nil>: Invalid value: "": "spec.v" must validate at least one schema (anyOf)"#,
                "spec.v: Invalid value: 5: spec.v in body should be greater than or equal to 10",
            ],
        ),
    ];
    for (i, (props, required, spec, want)) in cases.into_iter().enumerate() {
        let s = parse(&spec_schema(props, &required));
        let obj = json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "x"}, "spec": spec});
        assert_eq!(texts(&s.validate(&obj)), want, "case {i}");
    }
}

#[test]
fn parse_errors_match_upstream() {
    let cases: Vec<(Value, Vec<String>)> = vec![
        (
            json!({"type": "object", "properties": {"spec": {"properties": {}}}}),
            vec![format!("{ROOT}.properties[spec].type: Required value: must not be empty for specified object fields")],
        ),
        (json!({"type": "string"}), vec![format!(r#"{ROOT}.type: Invalid value: "string": must be object at the root"#)]),
        (
            json!({"type": "object", "properties": {"a": {"type": "array"}}}),
            vec![format!("{ROOT}.properties[a].items: Required value: must be specified")],
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "array", "items": {}}}}),
            vec![format!("{ROOT}.properties[a].items.type: Required value: must not be empty for specified array items")],
        ),
        (
            json!({"type": "object", "properties": {"e": {"type": "string", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}}),
            vec![format!(
                r#"{ROOT}.properties[e].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true"#
            )],
        ),
        (
            json!({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-map-keys": ["a"]}}}),
            vec![format!(
                "{ROOT}.properties[l].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty"
            )],
        ),
        (
            json!({"type": "object", "properties": {"m": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}}}),
            vec![format!("{ROOT}.properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive")],
        ),
        (
            json!({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}}),
            vec![format!(
                "{ROOT}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"
            )],
        ),
        (
            json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "[a-"}}}),
            vec![format!(r#"{ROOT}.properties[s].pattern: Invalid value: "[a-": must be a valid regular expression, but isn't: error parsing regexp: error: unclosed character class"#)],
        ),
        // A default is validated from an unnamed root, so kube-openapi's message starts with an empty name
        // (" in body ..."), hence the two spaces.
        (
            json!({"type": "object", "properties": {"n": {"type": "integer", "default": "x"}}}),
            vec![format!(
                r#"{ROOT}.properties[n].default: Invalid value: "string":  in body must be of type integer: "string""#
            )],
        ),
        (
            json!({"type": "object", "properties": {"o": {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x", "b": 1}}}}),
            vec![format!(r#"{ROOT}.properties[o].default: Invalid value: map[string]interface {{}}{{"a":"x", "b":1}}: must not have unknown fields"#)],
        ),
        (
            json!({"type": "object", "nullable": true}),
            vec![format!("{ROOT}.nullable: Forbidden: nullable cannot be true at the root")],
        ),
        (
            json!({"type": "object", "properties": {"u": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}}}),
            vec![format!("{ROOT}.properties[u].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic")],
        ),
        (
            json!({"type": "object", "properties": {"x": {"$ref": "#/definitions/x"}}}),
            vec![
                format!("{ROOT}.properties[x].$ref: Forbidden: $ref is not supported"),
            ],
        ),
        (
            json!({"type": "object", "properties": {"metadata": {"type": "object", "default": {}}}}),
            vec![format!("{ROOT}.properties[metadata].default: Forbidden: must not be set in top-level metadata")],
        ),
        (
            json!({"type": "object", "properties": {"l": {"type": "string", "x-kubernetes-list-type": "set"}}}),
            vec![format!(r#"{ROOT}.properties[l].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified"#)],
        ),
        (
            json!({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
                "items": {"type": "object", "properties": {"k": {"type": "string"}}}}}}),
            vec![format!("{ROOT}.properties[l].items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property")],
        ),
    ];
    for (i, (schema, want)) in cases.into_iter().enumerate() {
        let got = match Structural::parse(&schema, ROOT) {
            Ok(_) => Vec::new(),
            Err(errs) => texts(&errs),
        };
        assert_eq!(got, want, "case {i}");
    }
}

#[test]
fn structural_errors_are_sorted_like_upstream() {
    // Two structural errors come out sorted by text, whatever the walk order.
    let schema = json!({"type": "object", "properties": {"b": {}, "a": {"type": "array"}}});
    let errs = texts(&Structural::parse(&schema, ROOT).unwrap_err());
    let mut sorted = errs.clone();
    sorted.sort();
    assert_eq!(errs, sorted);
    assert_eq!(errs.len(), 2);
}

#[test]
fn pruning_drops_undeclared_fields() {
    let schema = json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "keep": {"type": "string"},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"inner": {"type": "object", "properties": {"x": {"type": "string"}}}}},
                "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
                "tmpl": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}},
            }},
        },
    });
    let s = parse(&schema);
    let mut obj = json!({
        "apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n"}, "status": {"a": 1},
        "spec": {
            "keep": "k", "drop": 1,
            "free": {"anything": [1], "inner": {"x": "y", "z": 2}},
            "list": [{"a": "b", "c": "d"}],
            "tmpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"y": 1}, "other": true},
        },
    });
    let dropped = s.prune(&mut obj);
    assert_eq!(
        dropped,
        vec!["spec.drop", "spec.free.inner.z", "spec.list[0].c", "spec.tmpl.other", "spec.tmpl.spec.y", "status"]
    );
    assert_eq!(
        obj,
        json!({
            "apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n"},
            "spec": {
                "keep": "k",
                "free": {"anything": [1], "inner": {"x": "y"}},
                "list": [{"a": "b"}],
                "tmpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}},
            },
        })
    );
}

#[test]
fn defaulting_follows_upstream() {
    let schema = json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "default": {}, "properties": {
                "replicas": {"type": "integer", "default": 1},
                "mode": {"type": "string", "default": "a"},
                "opt": {"type": "string"},
                "nullable": {"type": "string", "nullable": true, "default": "d"},
                "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"w": {"type": "integer", "default": 5}}}},
                "list": {"type": "array", "items": {"type": "object", "properties": {"p": {"type": "integer", "default": 80}}}},
            }},
        },
    });
    let s = parse(&schema);
    let cases = vec![
        // An absent spec is defaulted, then defaults inside it apply.
        (json!({}), json!({"spec": {"replicas": 1, "mode": "a", "nullable": "d"}})),
        // A non-nullable null is defaulted; a null without a default is dropped; a nullable null stays.
        (
            json!({"spec": {"replicas": null, "opt": null, "nullable": null}}),
            json!({"spec": {"replicas": 1, "mode": "a", "nullable": null}}),
        ),
        // Through additionalProperties and array items.
        (
            json!({"spec": {"map": {"k": {}}, "list": [{}, {"p": 1}]}}),
            json!({"spec": {"replicas": 1, "mode": "a", "nullable": "d", "map": {"k": {"w": 5}}, "list": [{"p": 80}, {"p": 1}]}}),
        ),
    ];
    for (i, (mut obj, want)) in cases.into_iter().enumerate() {
        s.default(&mut obj);
        assert_eq!(obj, want, "case {i}");
    }
}

#[test]
fn accessors_walk_the_tree() {
    let schema = spec_schema(
        json!({
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "proto"],
                "items": {"type": "object", "required": ["name", "proto"], "properties": {"name": {"type": "string"}, "proto": {"type": "string"}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "sel": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"},
                "x-kubernetes-validations": [{"rule": "size(self) < 3"}]},
        }),
        &[],
    );
    let s = parse(&schema);
    assert_eq!(s.list_type(&["spec", "ports"]), Some(ListType::Map { keys: vec!["name".into(), "proto".into()] }));
    assert_eq!(s.list_type(&["spec", "tags"]), Some(ListType::Set));
    assert_eq!(s.list_type(&["spec", "sel"]), None);
    assert!(s.map_type_atomic(&["spec", "sel"]));
    assert!(!s.map_type_atomic(&["spec"]));
    assert_eq!(s.at(&["spec", "ports", "[]", "name"]).map(Structural::type_name), Some("string"));
    assert_eq!(s.at(&["spec", "sel", "anykey"]).map(Structural::type_name), Some("string"));
    assert!(s.at(&["spec", "nope"]).is_none());
    assert_eq!(s.properties().keys().collect::<Vec<_>>(), vec!["spec"]);
}

#[test]
fn floats_print_as_go_does() {
    for (f, want) in
        [(0.5, "0.5"), (10.0, "10"), (1e6, "1e+06"), (123456.0, "123456"), (1e-5, "1e-05"), (-2.5e21, "-2.5e+21")]
    {
        assert_eq!(float_v(f), want);
    }
}

/// A generated schema: nested objects of scalars, arrays and maps, with defaults on some scalars.
fn arb_schema() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        Just(json!({"type": "string"})),
        Just(json!({"type": "string", "default": "d"})),
        Just(json!({"type": "integer", "minimum": 0})),
        Just(json!({"type": "integer", "default": 3, "minimum": 0})),
        Just(json!({"type": "boolean"})),
        Just(json!({"x-kubernetes-int-or-string": true})),
    ];
    scalar.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::btree_map("[a-d]", inner.clone(), 1..4)
                .prop_map(|props| json!({"type": "object", "properties": props})),
            inner.clone().prop_map(|i| json!({"type": "array", "items": i})),
            inner.clone().prop_map(|i| json!({"type": "object", "additionalProperties": i})),
            inner.prop_map(
                |i| json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"k": i}})
            ),
        ]
    })
}

/// A generated JSON value, to be pruned, defaulted and validated.
fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (0i64..5).prop_map(|n| json!(n)),
        "[a-c]{0,2}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 32, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            proptest::collection::btree_map("[a-e]", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn pruning_is_idempotent_and_defaulting_keeps_validity(spec in arb_schema(), value in arb_value()) {
        let schema = json!({"type": "object", "properties": {"spec": spec}});
        let s = parse(&schema);
        let mut obj = json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n"}, "spec": value});
        s.prune(&mut obj);
        let once = obj.clone();
        prop_assert!(s.prune(&mut obj).is_empty(), "a second prune dropped something");
        prop_assert_eq!(&obj, &once);
        if s.validate(&obj).is_empty() {
            s.default(&mut obj);
            let after = s.validate(&obj);
            prop_assert!(after.is_empty(), "defaulting made {} invalid: {:?}", obj, texts(&after));
            prop_assert!(s.prune(&mut obj).is_empty(), "defaults added undeclared fields");
        }
    }
}
