//! The tests of [`super`]: its upstream validation messages, defaults, update rules and printer.

use super::*;
use crate::registry::field_error::messages;

fn fs(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": name},
        "spec": spec})
}

fn user_rule(extra: Value) -> Value {
    let mut rule = json!({"subjects": [{"kind": "User", "user": {"name": "noxu"}}]});
    for (k, v) in extra.as_object().unwrap() {
        rule[k] = v.clone();
    }
    rule
}

fn spec_with(rule: Value) -> Value {
    json!({"matchingPrecedence": 50, "priorityLevelConfiguration": {"name": "system-bar"}, "rules": [rule]})
}

fn all_resources() -> Value {
    json!({"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["*"]}]})
}

#[test]
fn schemas_are_validated_as_upstream_validates_them() {
    let s = FlowSchemas;
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (fs("system-foo", spec_with(user_rule(all_resources()))), vec![]),
        (
            fs("system-foo", spec_with(user_rule(json!({})))),
            vec!["spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty"],
        ),
        (
            fs("system-foo", spec_with(json!({"subjects": [{"kind": "ServiceAccount", "user": {"name": "fred"},
                "group": {"name": "fred"}}], "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}))),
            vec![
                "spec.rules[0].subjects[0].serviceAccount: Required value: serviceAccount is required when subject kind is 'ServiceAccount'",
                "spec.rules[0].subjects[0].user: Forbidden: user is forbidden when subject kind is not 'User'",
                "spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind is not 'Group'",
            ],
        ),
        (
            fs("system-foo", spec_with(json!({"subjects": [{"kind": "FooKind"}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*", "tik"]}]}))),
            vec![
                "spec.rules[0].subjects[0].kind: Unsupported value: \"FooKind\": supported values: \"Group\", \"ServiceAccount\", \"User\"",
                "spec.rules[0].nonResourceRules[0].nonResourceURLs: Invalid value: []string{\"*\", \"tik\"}: if '*' is present, must not specify other non-resource URLs",
            ],
        ),
        (
            fs("system-foo", spec_with(user_rule(json!({"resourceRules": [{"verbs": ["*", "create"],
                "apiGroups": ["*", "tak"], "resources": ["*", "tok"], "namespaces": ["foo", "*"]}]})))),
            vec![
                "spec.rules[0].resourceRules[0].verbs: Invalid value: []string{\"*\", \"create\"}: if '*' is present, must not specify other verbs",
                "spec.rules[0].resourceRules[0].apiGroups: Invalid value: []string{\"*\", \"tak\"}: if '*' is present, must not specify other api groups",
                "spec.rules[0].resourceRules[0].resources: Invalid value: []string{\"*\", \"tok\"}: if '*' is present, must not specify other resources",
                "spec.rules[0].resourceRules[0].namespaces: Invalid value: []string{\"foo\", \"*\"}: if '*' is present, must not specify other namespaces",
            ],
        ),
        (
            fs("system-foo", spec_with(user_rule(json!({"resourceRules": [{"verbs": ["feed"], "apiGroups": [],
                "resources": ["*"], "namespaces": ["-foo"]}, {"verbs": ["get"], "apiGroups": ["*"], "resources": []}]})))),
            vec![
                "spec.rules[0].resourceRules[0].verbs: Unsupported value: []string{\"feed\"}: supported values: \"create\", \"delete\", \"deletecollection\", \"get\", \"list\", \"patch\", \"proxy\", \"update\", \"watch\"",
                "spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group",
                "spec.rules[0].resourceRules[0].namespaces[0]: Invalid value: \"-foo\": each member of this list must be '*' or a DNS-1123 label; a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "spec.rules[0].resourceRules[1].resources: Required value: resource rules must supply at least one resource",
                "spec.rules[0].resourceRules[1].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace",
            ],
        ),
        (
            fs("system-foo", spec_with(json!({"subjects": [], "nonResourceRules": [{"verbs": [],
                "nonResourceURLs": ["foo", "/a b", "//", "/x*", "/ok/*", ""]}, {"verbs": ["get"]}]}))),
            vec![
                "spec.rules[0].subjects: Required value: subjects must contain at least one value",
                "spec.rules[0].nonResourceRules[0].verbs: Required value: verbs must contain at least one value",
                "spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: \"foo\": must start with slash",
                "spec.rules[0].nonResourceRules[0].nonResourceURLs[1]: Invalid value: \"/a b\": must not contain white-space",
                "spec.rules[0].nonResourceRules[0].nonResourceURLs[2]: Invalid value: \"//\": must not contain double slash",
                "spec.rules[0].nonResourceRules[0].nonResourceURLs[3]: Invalid value: \"/x*\": wildcard can only do suffix matching",
                "spec.rules[0].nonResourceRules[0].nonResourceURLs[5]: Invalid value: \"\": must not be empty",
                "spec.rules[0].nonResourceRules[1].nonResourceURLs: Required value: nonResourceURLs must contain at least one value",
            ],
        ),
        (
            fs("system-foo", spec_with(json!({"subjects": [
                {"kind": "ServiceAccount", "serviceAccount": {"name": "noxu"}},
                {"kind": "ServiceAccount", "serviceAccount": {"name": "No", "namespace": "Bad"}},
                {"kind": "ServiceAccount", "serviceAccount": {"name": "*", "namespace": "ns"}},
                {"kind": "User", "user": {}, "serviceAccount": {"name": "n", "namespace": "s"}},
                {"kind": "Group", "group": {"name": ""}}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["/"]}]}))),
            vec![
                "spec.rules[0].subjects[0].serviceAccount.namespace: Required value: must specify namespace for service account",
                "spec.rules[0].subjects[1].serviceAccount.name: Invalid value: \"No\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec.rules[0].subjects[1].serviceAccount.namespace: Invalid value: \"Bad\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "spec.rules[0].subjects[3].user.name: Required value",
                "spec.rules[0].subjects[3].serviceAccount: Forbidden: serviceAccount is forbidden when subject kind is not 'ServiceAccount'",
                "spec.rules[0].subjects[4].group.name: Required value",
            ],
        ),
        (
            fs("fred", json!({"matchingPrecedence": 1, "priorityLevelConfiguration": {"name": "system+++$$"},
                "distinguisherMethod": {"type": "ByGroup"},
                "rules": [user_rule(json!({"nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}))]})),
            vec![
                "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
                "spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:\"ByGroup\"}: supported values: \"ByNamespace\", \"ByUser\"",
                "spec.priorityLevelConfiguration.name: Invalid value: \"system+++$$\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ],
        ),
        (
            fs("big", json!({"matchingPrecedence": 10001, "rules": []})),
            vec![
                "spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000",
                "spec.priorityLevelConfiguration.name: Required value: must reference a priority level",
            ],
        ),
        (
            fs("neg", json!({"matchingPrecedence": -3, "priorityLevelConfiguration": {"name": "p"}})),
            vec!["spec.matchingPrecedence: Invalid value: -3: must be a positive value"],
        ),
    ];
    for (obj, want) in cases {
        assert_eq!(messages(s.validate(&obj)), want, "{obj}");
    }
}

#[test]
fn mandatory_schemas_keep_their_spec() {
    let s = FlowSchemas;
    for mut obj in bootstrap::flow_schemas() {
        s.prepare_for_create(&mut obj);
        assert_eq!(messages(s.validate(&obj)), Vec::<String>::new(), "{obj}");
    }
    // The same spec with explicit zero values and empty lists is the same spec.
    let mut exempt = fs("exempt", bootstrap::mandatory_flow_schema_spec("exempt").unwrap());
    exempt["spec"]["rules"][0]["resourceRules"][0]["clusterScope"] = json!(true);
    exempt["spec"]["distinguisherMethod"] = Value::Null;
    assert!(s.validate(&exempt).is_empty());
    let mut changed = fs("exempt", bootstrap::mandatory_flow_schema_spec("exempt").unwrap());
    changed["spec"]["rules"][0]["nonResourceRules"][0]["nonResourceURLs"] = json!(["/"]);
    assert_eq!(
        messages(s.validate(&changed)),
        ["spec: Invalid value: flowcontrol.FlowSchemaSpec{PriorityLevelConfiguration:flowcontrol.PriorityLevelConfigurationReference{Name:\"exempt\"}, MatchingPrecedence:1, DistinguisherMethod:(*flowcontrol.FlowDistinguisherMethod)(nil), Rules:[]flowcontrol.PolicyRulesWithSubjects{flowcontrol.PolicyRulesWithSubjects{Subjects:[]flowcontrol.Subject{flowcontrol.Subject{Kind:\"Group\", User:(*flowcontrol.UserSubject)(nil), Group:(*flowcontrol.GroupSubject)(0xc000000000), ServiceAccount:(*flowcontrol.ServiceAccountSubject)(nil)}}, ResourceRules:[]flowcontrol.ResourcePolicyRule{flowcontrol.ResourcePolicyRule{Verbs:[]string{\"*\"}, APIGroups:[]string{\"*\"}, Resources:[]string{\"*\"}, ClusterScope:true, Namespaces:[]string{\"*\"}}}, NonResourceRules:[]flowcontrol.NonResourcePolicyRule{flowcontrol.NonResourcePolicyRule{Verbs:[]string{\"*\"}, NonResourceURLs:[]string{\"/\"}}}}}}: spec of 'exempt' must equal the fixed value"]
    );
    let mut catch_all = fs("catch-all", bootstrap::mandatory_flow_schema_spec("catch-all").unwrap());
    catch_all["spec"]["matchingPrecedence"] = json!(9999);
    assert!(messages(s.validate(&catch_all))[0].ends_with("spec of 'catch-all' must equal the fixed value"));
}

#[test]
fn defaults_status_and_generation() {
    let s = FlowSchemas;
    let mut obj = fs("mine", json!({"priorityLevelConfiguration": {"name": "p"}}));
    obj["status"] = json!({"conditions": [{"type": "Dangling", "status": "True"}]});
    s.prepare_for_create(&mut obj);
    assert_eq!(obj["spec"]["matchingPrecedence"], 1000);
    assert_eq!(obj["status"], json!({}));
    assert_eq!(obj["metadata"]["generation"], 1);
    obj["status"] = json!({"conditions": [{"type": "Dangling", "status": "False"}]});

    // The main endpoint keeps the stored status and counts spec changes.
    let mut same = obj.clone();
    same["status"] = json!({});
    s.prepare_for_update(&mut same, &obj);
    assert_eq!(same["metadata"]["generation"], 1);
    assert_eq!(same["status"], obj["status"]);
    let mut moved = obj.clone();
    moved["spec"]["matchingPrecedence"] = json!(0);
    s.prepare_for_update(&mut moved, &obj);
    assert_eq!(moved["spec"]["matchingPrecedence"], 1000);
    assert_eq!(moved["metadata"]["generation"], 1);
    moved["spec"]["matchingPrecedence"] = json!(7);
    s.prepare_for_update(&mut moved, &obj);
    assert_eq!(moved["metadata"]["generation"], 2);

    // `/status` keeps everything else, labels included.
    let mut status = obj.clone();
    status["spec"]["matchingPrecedence"] = json!(5);
    status["metadata"]["labels"] = json!({"a": "b"});
    status["metadata"]["resourceVersion"] = json!("9");
    status["status"] = json!({"conditions": [{"type": "Dangling"}, {"type": "Dangling"}, {"type": ""}]});
    s.prepare_for_subresource_update(Subresource::Status, &mut status, &obj);
    assert_eq!(status["spec"], obj["spec"]);
    assert!(status["metadata"].get("labels").is_none());
    assert_eq!(status["metadata"]["resourceVersion"], "9");
    assert_eq!(
        messages(s.validate_subresource_update(Subresource::Status, &status, &obj)),
        [
            "status.conditions[1].type: Duplicate value: \"Dangling\"",
            "status.conditions[2].type: Required value: must not be empty"
        ]
    );
}

#[test]
fn empty_lists_read_back_as_upstream_stores_them() {
    let mut obj = fs(
        "mine",
        json!({"rules": [{"subjects": [], "nonResourceRules": [],
        "resourceRules": [{"verbs": ["*"], "clusterScope": true}, {"namespaces": []}]}]}),
    );
    obj["status"] = json!({"conditions": []});
    FlowSchemas.canonicalize(&mut obj);
    assert_eq!(
        obj["spec"]["rules"][0],
        json!({"subjects": [], "resourceRules": [{"verbs": ["*"], "clusterScope": true, "namespaces": null},
            {"namespaces": null}]})
    );
    assert_eq!(obj["status"], json!({}));
    let mut none = fs("none", json!({"rules": []}));
    FlowSchemas.canonicalize(&mut none);
    assert!(none["spec"].get("rules").is_none());
}

#[test]
fn the_printer_shows_level_precedence_method_and_dangling() {
    let mut obj = fs("mine", json!({"priorityLevelConfiguration": {"name": "p"}}));
    FlowSchemas.prepare_for_create(&mut obj);
    assert_eq!(
        (printer().cells)(&obj, 0, &[]),
        vec![json!("mine"), json!("p"), json!(1000), json!("<none>"), json!("<unknown>"), json!("?")]
    );
    obj["spec"]["distinguisherMethod"] = json!({"type": "ByUser"});
    obj["status"] =
        json!({"conditions": [{"type": "Other", "status": "True"}, {"type": "Dangling", "status": "False"}]});
    let cells = (printer().cells)(&obj, 0, &[]);
    assert_eq!((cells[3].clone(), cells[5].clone()), (json!("ByUser"), json!("False")));
    let names: Vec<String> = printer().columns.iter().map(|c| c.name.to_string()).collect();
    assert_eq!(names, ["Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", "Age", "MissingPL"]);
}
