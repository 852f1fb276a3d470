//! Tests as data: each case is a rule, the values it runs against and the error upstream gives (as
//! `FieldError`'s text), or the errors of compiling it. Cases marked "wrong" prove a check fails when it
//! should.

use proptest::prelude::*;
use serde_json::{json, Value};

use super::*;

/// The entry path the compile cases report under.
const ENTRY: &str = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]";

/// Go's `%#v` of an entry with only a rule.
fn go_rule(rule: &str) -> String {
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:\"\", MessageExpression:\"\", \
         Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}}",
        crate::go_text::quote(rule)
    )
}

/// Runs an entry against `value` (and `old`) at `spec`.
fn run(entry: &Value, value: &Value, old: Option<&Value>) -> Option<String> {
    let rule = Rule::compile(entry, ENTRY).unwrap_or_else(|e| panic!("{entry} does not compile: {e:?}"));
    rule.check(value, old, "spec").map(|e| e.to_string())
}

#[test]
fn rules_evaluate_as_upstream() {
    let obj = json!({"minReplicas": 1, "replicas": 3, "name": "web-1", "tags": ["a", "b"], "labels": {"app": "web"}});
    // (entry, self, oldSelf, the error or None)
    let cases: Vec<(Value, Value, Option<Value>, Option<&str>)> = vec![
        (json!({"rule": "self.minReplicas <= self.replicas"}), obj.clone(), None, None),
        (
            json!({"rule": "self.minReplicas <= self.replicas"}),
            json!({"minReplicas": 5, "replicas": 3}),
            None,
            Some("spec: Invalid value: \"object\": failed rule: self.minReplicas <= self.replicas"),
        ),
        (
            json!({"rule": "self.minReplicas <= self.replicas", "message": " must not exceed replicas "}),
            json!({"minReplicas": 5, "replicas": 3}),
            None,
            Some("spec: Invalid value: \"object\": must not exceed replicas"),
        ),
        // An absent field is "no such key"; has() tests presence.
        (
            json!({"rule": "self.minReplicas <= self.replicas"}),
            json!({"replicas": 3}),
            None,
            Some("spec: Invalid value: \"object\": no such key: minReplicas evaluating rule: self.minReplicas <= self.replicas"),
        ),
        (json!({"rule": "!has(self.minReplicas) || self.minReplicas <= self.replicas"}), json!({"replicas": 3}), None, None),
        (
            json!({"rule": "has(self.foo)", "message": "foo is required"}),
            obj.clone(),
            None,
            Some("spec: Invalid value: \"object\": foo is required"),
        ),
        (json!({"rule": "has(self.labels.app) && 'app' in self.labels"}), obj.clone(), None, None),
        // Transition rules: skipped without an old value, run with one.
        (json!({"rule": "self == oldSelf", "message": "Value is immutable"}), json!("a"), None, None),
        (json!({"rule": "self == oldSelf", "message": "Value is immutable"}), json!("a"), Some(json!("a")), None),
        (
            json!({"rule": "self == oldSelf", "message": "Value is immutable"}),
            json!("b"),
            Some(json!("a")),
            Some("spec: Invalid value: \"string\": Value is immutable"),
        ),
        (
            json!({"rule": "self.name == oldSelf.name"}),
            obj.clone(),
            Some(json!({"name": "web-0"})),
            Some("spec: Invalid value: \"object\": failed rule: self.name == oldSelf.name"),
        ),
        // optionalOldSelf: oldSelf is an optional, empty on create, and the rule runs then too.
        (
            json!({"rule": "!oldSelf.hasValue() || self >= oldSelf.value()", "optionalOldSelf": true, "message": "may only grow"}),
            json!(3),
            None,
            None,
        ),
        (
            json!({"rule": "oldSelf.hasValue()", "optionalOldSelf": true}),
            json!(3),
            None,
            Some("spec: Invalid value: \"integer\": failed rule: oldSelf.hasValue()"),
        ),
        (
            json!({"rule": "self >= oldSelf.orValue(0)", "optionalOldSelf": true, "message": "may only grow"}),
            json!(3),
            Some(json!(4)),
            Some("spec: Invalid value: \"integer\": may only grow"),
        ),
        // Strings.
        (json!({"rule": "self.name.startsWith('web-') && self.name.endsWith('1')"}), obj.clone(), None, None),
        (json!({"rule": "self.name.matches('^[a-z]+-[0-9]+$') && size(self.name) == 5"}), obj.clone(), None, None),
        (
            json!({"rule": "self.matches('^[a-z]+$')", "message": "must be lowercase letters"}),
            json!("Web"),
            None,
            Some("spec: Invalid value: \"string\": must be lowercase letters"),
        ),
        (json!({"rule": "self.name.contains('eb') && self.name.upperAscii() == 'WEB-1'"}), obj.clone(), None, None),
        (json!({"rule": "self.name.split('-') == ['web', '1'] && self.name.indexOf('-') == 3"}), obj.clone(), None, None),
        (json!({"rule": "size('héllo') == 5"}), json!("x"), None, None),
        // Null values are not validated.
        (json!({"rule": "false"}), json!(null), None, None),
        // Lists and maps.
        (json!({"rule": "self.tags.all(t, t.size() == 1) && self.tags.exists(t, t == 'b')"}), obj.clone(), None, None),
        (
            json!({"rule": "self.tags.exists_one(t, t == 'c')"}),
            obj.clone(),
            None,
            Some("spec: Invalid value: \"object\": failed rule: self.tags.exists_one(t, t == 'c')"),
        ),
        (json!({"rule": "self.tags.map(t, t + '!') == ['a!', 'b!'] && self.tags.filter(t, t > 'a') == ['b']"}), obj.clone(), None, None),
        (json!({"rule": "self.all(k, k.size() > 0) && self.map(k, k) == ['labels', 'minReplicas', 'name', 'replicas', 'tags']"}), obj.clone(), None, None),
        (json!({"rule": "self.labels == {'app': 'web'} && {'app': 'web'} == self.labels"}), obj.clone(), None, None),
        (json!({"rule": "self.tags == ['a', 'b'] && ['a', 'b'] == self.tags && 'a' in self.tags"}), obj.clone(), None, None),
        (json!({"rule": "type(self) == map && type(self.tags) == list && type(self.replicas) == int"}), obj.clone(), None, None),
        // Optional syntax.
        (json!({"rule": "self.?foo.orValue(3) == 3 && self.?replicas.orValue(0) == 3"}), obj.clone(), None, None),
        (json!({"rule": "self.labels[?'app'].hasValue() && !self.labels[?'team'].hasValue()"}), obj.clone(), None, None),
        // Runtime errors, in cel-go's words.
        (
            json!({"rule": "self.tags[2] == 'c'"}),
            obj.clone(),
            None,
            Some("spec: Invalid value: \"object\": index '2' out of range evaluating rule: self.tags[2] == 'c'"),
        ),
        (
            json!({"rule": "self.replicas / 0 == 1", "message": "bad division"}),
            obj.clone(),
            None,
            Some("spec: Invalid value: \"object\": division by zero evaluating rule: bad division"),
        ),
        (
            json!({"rule": "self.replicas % 0 == 1"}),
            obj.clone(),
            None,
            Some("spec: Invalid value: \"object\": modulus by zero evaluating rule: self.replicas % 0 == 1"),
        ),
        (
            json!({"rule": "self.x + 1 > 0"}),
            json!({"x": i64::MAX}),
            None,
            Some("spec: Invalid value: \"object\": integer overflow evaluating rule: self.x + 1 > 0"),
        ),
        // An int-or-string value bypasses type checking upstream too, and fails at runtime the same way.
        (
            json!({"rule": "self > 1"}),
            json!("50%"),
            None,
            Some("spec: Invalid value: \"string\": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: self > 1"),
        ),
        // A non-bool result the missing type checker lets through.
        (
            json!({"rule": "self.replicas"}),
            obj.clone(),
            None,
            Some("spec: Invalid value: \"object\": rule compile error: cel expression must evaluate to a bool"),
        ),
        // reason and fieldPath.
        (
            json!({"rule": "has(self.name)", "reason": "FieldValueRequired", "fieldPath": ".name", "message": "name is required"}),
            json!({}),
            None,
            Some("spec.name: Required value: name is required"),
        ),
        (
            json!({"rule": "false", "reason": "FieldValueForbidden", "fieldPath": "['x.y'].z"}),
            json!({}),
            None,
            Some("spec.x.y.z: Forbidden: failed rule: false"),
        ),
        (
            json!({"rule": "false", "reason": "FieldValueDuplicate", "message": "dropped"}),
            json!([1, 1]),
            None,
            Some("spec: Duplicate value: \"array\""),
        ),
        (json!({"rule": "false", "reason": "FieldValueInvalid"}), json!(true), None, Some("spec: Invalid value: \"boolean\": failed rule: false")),
        // messageExpression, and its fallbacks to the message.
        (
            json!({"rule": "self.replicas < 3", "messageExpression": "'replicas is ' + string(self.replicas)"}),
            obj.clone(),
            None,
            Some("spec: Invalid value: \"object\": replicas is 3"),
        ),
        (
            json!({"rule": "self.replicas < 3", "message": "too many", "messageExpression": "self.nope"}),
            obj.clone(),
            None,
            Some("spec: Invalid value: \"object\": too many"),
        ),
        (
            json!({"rule": "self.replicas < 3", "messageExpression": "'  '"}),
            obj.clone(),
            None,
            Some("spec: Invalid value: \"object\": failed rule: self.replicas < 3"),
        ),
        (
            json!({"rule": "self.replicas < 3", "messageExpression": "'a\\nb'"}),
            obj.clone(),
            None,
            Some("spec: Invalid value: \"object\": failed rule: self.replicas < 3"),
        ),
    ];
    for (entry, value, old, want) in &cases {
        assert_eq!(run(entry, value, old.as_ref()).as_deref(), *want, "{entry} on {value} (old {old:?})");
    }
}

#[test]
fn compile_errors_are_upstreams() {
    let invalid =
        |child: &str, rule: &str, detail: &str| format!("{ENTRY}.{child}: Invalid value: {}: {detail}", go_rule(rule));
    // (entry, the errors)
    let cases: Vec<(Value, Vec<String>)> = vec![
        (
            json!({"rule": "self.x >"}),
            vec![invalid(
                "rule",
                "self.x >",
                "compilation failed: ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', \
                 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | self.x >\n | ........^",
            )],
        ),
        (
            json!({"rule": "self.a == foo"}),
            vec![invalid(
                "rule",
                "self.a == foo",
                "compilation failed: ERROR: <input>:1:11: undeclared reference to 'foo' (in container '')\n | self.a == foo\n | ..........^",
            )],
        ),
        (
            json!({"rule": "self.a.all(x, x > y)"}),
            vec![invalid(
                "rule",
                "self.a.all(x, x > y)",
                "compilation failed: ERROR: <input>:1:19: undeclared reference to 'y' (in container '')\n | self.a.all(x, x > y)\n | ..................^",
            )],
        ),
        (json!({"rule": "self.x + 1"}), vec![invalid("rule", "self.x + 1", "cel expression must evaluate to a bool")]),
        (json!({"rule": "'yes'"}), vec![invalid("rule", "'yes'", "cel expression must evaluate to a bool")]),
        (json!({}), vec![format!("{ENTRY}.rule: Required value: rule is not specified")]),
        (json!({"rule": "  "}), vec![format!("{ENTRY}.rule: Required value: rule is not specified")]),
        (
            json!({"rule": "true", "reason": "FieldValueBad"}),
            vec![format!(
                "{ENTRY}.reason: Unsupported value: \"FieldValueBad\": supported values: \"FieldValueDuplicate\", \
                 \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\""
            )],
        ),
        (json!({"rule": "true", "message": " "}), vec![format!("{ENTRY}.message: Invalid value: \" \": message must be non-empty if specified")]),
        (json!({"rule": "true", "message": "a\nb"}), vec![format!("{ENTRY}.message: Invalid value: \"a\\nb\": message must not contain line breaks")]),
        (json!({"rule": "true ||\nfalse"}), vec![format!("{ENTRY}.message: Required value: message must be specified if rule contains line breaks")]),
        (json!({"rule": "true", "fieldPath": "spec"}), vec![format!("{ENTRY}.fieldPath: Invalid value: \"spec\": fieldPath must be a valid path")]),
        (json!({"rule": "true", "optionalOldSelf": true}), vec![format!("{ENTRY}.optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule")]),
        (
            json!({"rule": "self > 0", "messageExpression": "'got ' + "}),
            vec![format!(
                "{ENTRY}.messageExpression: Invalid value: apiextensions.ValidationRule{{Rule:\"self > 0\", Message:\"\", \
                 MessageExpression:\"'got ' + \", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", \
                 OptionalOldSelf:(*bool)(nil)}}: messageExpression compilation failed: ERROR: <input>:1:10: Syntax error: \
                 mismatched input '<EOF>' expecting {{'[', '{{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, \
                 NUM_UINT, STRING, BYTES, IDENTIFIER}}\n | 'got ' + \n | .........^"
            )],
        ),
        (
            json!({"rule": "self > 0", "messageExpression": "42"}),
            vec![format!(
                "{ENTRY}.messageExpression: Invalid value: apiextensions.ValidationRule{{Rule:\"self > 0\", Message:\"\", \
                 MessageExpression:\"42\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", \
                 OptionalOldSelf:(*bool)(nil)}}: messageExpression must evaluate to a string"
            )],
        ),
    ];
    for (entry, want) in &cases {
        let got: Vec<String> = match Rule::compile(entry, &format!("{ENTRY}.rule")) {
            Ok(_) => vec![],
            Err(errs) => errs.iter().map(ToString::to_string).collect(),
        };
        assert_eq!(&got, want, "{entry}");
    }
}

#[test]
fn transition_rules_are_told_apart() {
    for (rule, transition) in [
        ("self == oldSelf", true),
        ("has(oldSelf.x)", true),
        ("self.all(oldSelf, oldSelf > 0)", false),
        ("self.x > 0", false),
    ] {
        let compiled = Rule::compile(&json!({"rule": rule}), ENTRY).unwrap();
        assert_eq!(compiled.uses_old_self(), transition, "{rule}");
    }
}

/// Cases that must fail prove the checks are not vacuous: a wrong expectation is caught.
#[test]
fn wrong_expectations_are_caught() {
    let rule = json!({"rule": "self.minReplicas <= self.replicas"});
    assert_ne!(run(&rule, &json!({"minReplicas": 5, "replicas": 3}), None), None);
    assert_ne!(
        run(&rule, &json!({"minReplicas": 5, "replicas": 3}), None).as_deref(),
        Some("spec: Invalid value: \"object\": failed rule: self.replicas <= self.minReplicas")
    );
    let immutable = json!({"rule": "self == oldSelf", "message": "Value is immutable"});
    assert_ne!(run(&immutable, &json!(1), Some(&json!(2))), None);
    assert!(Rule::compile(&json!({"rule": "self.x >"}), ENTRY).is_err());
    assert!(Rule::compile(&json!({"rule": "self.x > 1"}), ENTRY).is_ok());
}

/// A JSON value without floats (CEL compares 1 and 1.0 equal, JSON does not).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-z]{0,4}".prop_map(Value::from)
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z]{1,3}", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// `self == oldSelf` passes exactly when the value did not change.
    #[test]
    fn immutability_holds_iff_unchanged(new in json_value(), old in json_value()) {
        let rule = json!({"rule": "self == oldSelf", "message": "Value is immutable"});
        prop_assert_eq!(run(&rule, &new, Some(&new)), None);
        prop_assert_eq!(run(&rule, &new, Some(&old)).is_none(), new.is_null() || new == old);
    }

    /// Comprehensions over an object visit its keys in sorted order, every time.
    #[test]
    fn object_keys_iterate_sorted(keys in prop::collection::btree_set("[a-z]{1,4}", 0..8)) {
        let object: serde_json::Map<String, Value> = keys.iter().map(|k| (k.clone(), json!(1))).collect();
        let listed: Vec<String> = keys.iter().map(|k| format!("'{k}'")).collect();
        let rule = json!({"rule": format!("self.map(k, k) == [{}]", listed.join(", "))});
        prop_assert_eq!(run(&rule, &Value::Object(object), None), None);
    }
}
