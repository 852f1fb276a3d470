//! Tests of the ValidatingAdmissionPolicy plugin's sans-IO core: validations to decisions, params, rules
//! and the denial's status, with upstream's texts.

use serde_json::{json, Value};

use super::*;
use crate::registry::admission::Operation;
use crate::registry::resource::Resource;

fn policy(spec: Value) -> Policy {
    Policy::parse(&json!({"metadata": {"name": "p"}, "spec": spec}))
}

fn vars(obj: &Value) -> Variables {
    Variables::new(obj, &Value::Null, &json!({"operation": "CREATE"}))
}

#[test]
fn validations_decide_with_upstreams_messages() {
    let obj = json!({"metadata": {"name": "c"}, "data": {"k": "v"}});
    let deny = |validation: Value| policy(json!({"validations": [validation]})).validate(&vars(&obj));
    let d = |message: &str, reason: &str| vec![Decision { message: message.into(), reason: reason.into() }];
    assert_eq!(
        deny(json!({"expression": "size(object.data) < 1"})),
        d("failed expression: size(object.data) < 1", "Invalid")
    );
    assert_eq!(deny(json!({"expression": "size(object.data) < 1 ", "message": " too big "})), d("too big", "Invalid"));
    assert_eq!(
        deny(
            json!({"expression": "false", "messageExpression": "'name ' + object.metadata.name", "reason": "Forbidden"})
        ),
        d("name c", "Forbidden")
    );
    // A messageExpression that fails falls back to the message.
    assert_eq!(
        deny(json!({"expression": "false", "message": "m", "messageExpression": "object.nope"})),
        d("m", "Invalid")
    );
    assert_eq!(deny(json!({"expression": "object.data.k == 'v'"})), vec![]);
    assert_eq!(
        deny(json!({"expression": "object.spec.replicas > 1"})),
        d("expression 'object.spec.replicas > 1' resulted in error: no such key: spec", "Invalid")
    );
    let ignore = policy(json!({"failurePolicy": "Ignore", "validations": [{"expression": "object.spec.x"}]}));
    assert_eq!(ignore.validate(&vars(&obj)), vec![]);
    let gated = policy(json!({
        "matchConditions": [{"name": "only-d", "expression": "object.metadata.name == 'd'"}],
        "validations": [{"expression": "false"}],
    }));
    assert_eq!(gated.validate(&vars(&obj)), vec![]);
    let with_vars = policy(json!({
        "variables": [{"name": "n", "expression": "object.metadata.name"}],
        "validations": [{"expression": "variables.n == 'x'", "messageExpression": "'got ' + variables.n"}],
    }));
    assert_eq!(with_vars.validate(&vars(&obj)), d("got c", "Invalid"));
    let params = policy(json!({"validations": [{"expression": "size(object.data) <= params.data.max"}]}));
    let mut v = vars(&obj);
    v.set("params", &json!({"data": {"max": 0}}));
    assert_eq!(params.validate(&v), d("failed expression: size(object.data) <= params.data.max", "Invalid"));
}

#[test]
fn params_are_found_or_refused_as_upstream_says() {
    let r = |v: Value| v;
    assert_eq!(param_source(false, true, Some(&r(json!({"name": "x"}))), "ns"), Ok(ParamSource::None));
    assert_eq!(param_source(true, true, None, "ns"), Ok(ParamSource::None));
    assert_eq!(
        param_source(true, true, Some(&json!({"name": "x"})), "ns"),
        Ok(ParamSource::Named { namespace: "ns".into(), name: "x".into() })
    );
    assert_eq!(
        param_source(true, true, Some(&json!({"name": "x", "namespace": "other"})), ""),
        Ok(ParamSource::Named { namespace: "other".into(), name: "x".into() })
    );
    let cases: Vec<(bool, Value, &str, &str)> = vec![
        (
            true,
            json!({"name": "x"}),
            "",
            "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources",
        ),
        (
            false,
            json!({"name": "x", "namespace": "n"}),
            "n",
            "paramRef.namespace must not be provided for a cluster-scoped `paramKind`",
        ),
        (true, json!({}), "n", "one of name or selector must be provided"),
        (true, json!({"name": "x", "selector": {}}), "n", "paramRef.name and paramRef.selector are mutually exclusive"),
    ];
    for (namespaced, param_ref, ns, want) in cases {
        assert_eq!(param_source(true, namespaced, Some(&param_ref), ns), Err(want.to_string()), "{param_ref}");
    }
    assert_eq!(
        no_params(Some(&json!({"parameterNotFoundAction": "Deny"}))),
        Err("no params found for policy binding with `Deny` parameterNotFoundAction".into())
    );
    assert_eq!(no_params(Some(&json!({"parameterNotFoundAction": "Allow"}))), Ok(()));
    assert_eq!(guess_plural("ConfigMap"), "configmaps");
    assert_eq!(guess_plural("Policy"), "policies");
    assert_eq!(guess_plural("Ingress"), "ingresses");
}

#[test]
fn match_resources_include_and_exclude_by_rules() {
    let cm = Resource::core("ConfigMap", "configmaps");
    let a = Attributes {
        operation: Operation::Create,
        resource: &cm,
        subresource: "",
        namespace: "ns",
        name: "c",
        dry_run: false,
    };
    let rule = |names: Value| json!({"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"], "resourceNames": names});
    assert!(resource_rules_match(&json!({}), &a));
    assert!(resource_rules_match(&json!({"resourceRules": [rule(json!([]))]}), &a));
    assert!(!resource_rules_match(&json!({"resourceRules": [rule(json!(["other"]))]}), &a));
    assert!(resource_rules_match(&json!({"resourceRules": [rule(json!(["c"]))]}), &a));
    assert!(!resource_rules_match(
        &json!({"resourceRules": [rule(json!([]))], "excludeResourceRules": [rule(json!(["c"]))]}),
        &a
    ));
}

#[test]
fn denials_are_upstreams_statuses() {
    let cm = Resource::core("ConfigMap", "configmaps");
    let mut a = Attributes {
        operation: Operation::Create,
        resource: &cm,
        subresource: "",
        namespace: "ns",
        name: "",
        dry_run: false,
    };
    let obj = json!({"metadata": {"generateName": "gen-"}});
    let decision = Decision { message: "failed expression: false".into(), reason: "Invalid".into() };
    let s = denial(&a, &obj, "p", Some("b"), &decision);
    let message = "configmaps \"gen-\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: false";
    assert_eq!((s.code, s.reason.as_deref(), s.message.as_deref()), (Some(422), Some("Invalid"), Some(message)));
    let details = s.details.expect("details");
    assert_eq!((details.kind.as_deref(), details.name.as_deref()), (Some("configmaps"), Some("gen-")));
    // The cause is the policy's message alone, as upstream appends it.
    let cause = "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: false";
    assert_eq!(details.causes.expect("causes")[0].message.as_deref(), Some(cause));

    a.name = "c";
    let forbidden = Decision { message: "m".into(), reason: "Forbidden".into() };
    let s = denial(&a, &Value::Null, "p", None, &forbidden);
    assert_eq!(s.code, Some(403));
    assert_eq!(
        s.message.as_deref(),
        Some("configmaps \"c\" is forbidden: ValidatingAdmissionPolicy 'p' denied request: m")
    );
    a.name = "";
    let s = denial(&a, &Value::Null, "p", None, &forbidden);
    assert_eq!(
        s.message.as_deref(),
        Some("configmaps \"Unknown\" is forbidden: ValidatingAdmissionPolicy 'p' denied request: m")
    );
}
