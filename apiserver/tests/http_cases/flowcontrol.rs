//! `flowcontrol.apiserver.k8s.io/v1` over HTTP: the flow schemas and priority levels kube-apiserver creates
//! at start, a FlowSchema and a PriorityLevelConfiguration with their defaults, status reset on create,
//! kept by the main endpoint and written by `/status`, the generation following the spec, their tables,
//! refusals with upstream's messages, and deletes answering a Status. Names start with `fc-`: cluster-scoped
//! objects are shared by every case of the server.

use serde_json::json;

use super::{case, delete, get, patch, post, put, Case};

const FS: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas";
const PL: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations";
const MERGE: &str = "application/merge-patch+json";
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
const SCHEMA: &str = r#"{"metadata":{"name":"fc-web"},"spec":{"priorityLevelConfiguration":{"name":"fc-level"},"distinguisherMethod":{"type":"ByUser"},"rules":[{"subjects":[{"kind":"Group","group":{"name":"system:authenticated"}}],"nonResourceRules":[{"verbs":["get"],"nonResourceURLs":["/healthz"]}]}]},"status":{"conditions":[{"type":"Dangling","status":"True"}]}}"#;

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "the bootstrap flow schemas and priority levels exist, annotated for auto-update",
            vec![
                get(&format!("{FS}/exempt"))
                    .field("/metadata/annotations/apf.kubernetes.io~1autoupdate-spec", json!("true"))
                    .field("/metadata/generation", json!(1))
                    .field("/spec/matchingPrecedence", json!(1))
                    .field("/spec/rules/0/subjects/0/group/name", json!("system:masters"))
                    .field("/status", json!({})),
                get(&format!("{FS}/catch-all")).field("/spec/distinguisherMethod/type", json!("ByUser")),
                get(&format!("{FS}/probes")).field("/spec/rules/0/nonResourceRules/0/nonResourceURLs/2", json!("/livez")),
                get(&format!("{FS}/kube-scheduler")).field("/spec/distinguisherMethod/type", json!("ByNamespace")),
                get(&format!("{PL}/exempt"))
                    .field("/spec", json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}})),
                get(&format!("{PL}/workload-low"))
                    .field("/spec/limited/nominalConcurrencyShares", json!(100))
                    .field("/spec/limited/lendablePercent", json!(90))
                    .field("/spec/limited/limitResponse/queuing/queues", json!(128)),
                get(&format!("{PL}/catch-all"))
                    .header("Accept", TABLE)
                    .field("/columnDefinitions/2/name", json!("NominalConcurrencyShares"))
                    .field("/rows/0/cells/1", json!("Limited"))
                    .field("/rows/0/cells/2", json!(5))
                    .field("/rows/0/cells/3", json!("<none>")),
                get(&format!("{FS}/global-default"))
                    .header("Accept", TABLE)
                    .field("/columnDefinitions/5/name", json!("MissingPL"))
                    .field("/rows/0/cells/1", json!("global-default"))
                    .field("/rows/0/cells/2", json!(9900))
                    .field("/rows/0/cells/3", json!("ByUser"))
                    .field("/rows/0/cells/5", json!("?")),
            ],
        ),
        case(
            "the mandatory objects keep their spec; exempt's shares may change",
            vec![
                patch(&format!("{FS}/catch-all"), MERGE, r#"{"spec":{"matchingPrecedence":9000}}"#)
                    .code(422)
                    .contains("spec of 'catch-all' must equal the fixed value"),
                patch(&format!("{PL}/catch-all"), MERGE, r#"{"spec":{"limited":{"lendablePercent":10}}}"#)
                    .status(
                        422,
                        "Invalid",
                        r#"PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "catch-all" is invalid: spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:"Limited", Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(0xc000000000), Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(nil)}: spec of 'catch-all' must equal the fixed value"#,
                    ),
                patch(&format!("{PL}/exempt"), MERGE, r#"{"spec":{"exempt":{"nominalConcurrencyShares":10}}}"#)
                    .field("/spec/exempt/nominalConcurrencyShares", json!(10))
                    .field("/metadata/generation", json!(2)),
                patch(&format!("{PL}/exempt"), MERGE, r#"{"spec":{"exempt":{"nominalConcurrencyShares":0}}}"#)
                    .field("/metadata/generation", json!(3)),
            ],
        ),
        case(
            "a flow schema: defaults, status reset on create, kept by the main endpoint, written by /status; a delete answers a Status",
            vec![
                post(FS, SCHEMA)
                    .field("/spec/matchingPrecedence", json!(1000))
                    .field("/status", json!({}))
                    .field("/metadata/generation", json!(1)),
                get(&format!("{FS}/fc-web")).field("/spec/priorityLevelConfiguration/name", json!("fc-level")),
                get(FS).field("/kind", json!("FlowSchemaList")),
                get(&format!("{FS}/fc-web"))
                    .header("Accept", TABLE)
                    .field("/rows/0/cells/1", json!("fc-level"))
                    .field("/rows/0/cells/2", json!(1000))
                    .field("/rows/0/cells/5", json!("?")),
                put(
                    &format!("{FS}/fc-web/status"),
                    r#"{"metadata":{"name":"fc-web","labels":{"a":"b"}},"spec":{"matchingPrecedence":5},"status":{"conditions":[{"type":"Dangling","status":"True","reason":"NotFound"}]}}"#,
                )
                .field("/status/conditions/0/reason", json!("NotFound"))
                .field("/spec/matchingPrecedence", json!(1000))
                .field("/metadata/labels", json!(null))
                .field("/metadata/generation", json!(1)),
                get(&format!("{FS}/fc-web")).header("Accept", TABLE).field("/rows/0/cells/5", json!("True")),
                patch(&format!("{FS}/fc-web"), MERGE, r#"{"spec":{"matchingPrecedence":200},"status":null}"#)
                    .field("/spec/matchingPrecedence", json!(200))
                    .field("/status/conditions/0/type", json!("Dangling"))
                    .field("/metadata/generation", json!(2)),
                put(
                    &format!("{FS}/fc-web/status"),
                    r#"{"metadata":{"name":"fc-web"},"status":{"conditions":[{"type":"Dangling"},{"type":"Dangling"}]}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"FlowSchema.flowcontrol.apiserver.k8s.io "fc-web" is invalid: status.conditions[1].type: Duplicate value: "Dangling""#,
                ),
                delete(&format!("{FS}/fc-web"))
                    .field("/kind", json!("Status"))
                    .field("/status", json!("Success"))
                    .field("/details/name", json!("fc-web"))
                    .field("/details/kind", json!("flowschemas")),
                get(&format!("{FS}/fc-web")).code(404),
            ],
        ),
        case(
            "a flow schema's spec is checked",
            vec![post(
                FS,
                r#"{"metadata":{"name":"fc-bad"},"spec":{"matchingPrecedence":1,"priorityLevelConfiguration":{"name":"fc-level"},"rules":[{"subjects":[{"kind":"User","group":{"name":"g"}}],"resourceRules":[{"verbs":["get","fly"],"apiGroups":["*","apps"],"resources":["pods"]}]}]}}"#,
            )
            .status(
                422,
                "Invalid",
                r#"FlowSchema.flowcontrol.apiserver.k8s.io "fc-bad" is invalid: [spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1, spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User', spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind is not 'Group', spec.rules[0].resourceRules[0].verbs: Unsupported value: []string{"get", "fly"}: supported values: "create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch", spec.rules[0].resourceRules[0].apiGroups: Invalid value: []string{"*", "apps"}: if '*' is present, must not specify other api groups, spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace]"#,
            )],
        ),
        case(
            "a priority level: v1 defaults, status reset on create and kept, generation follows the spec; a delete answers a Status",
            vec![
                post(
                    PL,
                    r#"{"metadata":{"name":"fc-level"},"spec":{"type":"Limited","limited":{"limitResponse":{"type":"Queue","queuing":{"handSize":4}}}},"status":{"conditions":[{"type":"X"}]}}"#,
                )
                .field("/spec/limited/nominalConcurrencyShares", json!(30))
                .field("/spec/limited/lendablePercent", json!(0))
                .field("/spec/limited/limitResponse/queuing", json!({"queues": 64, "handSize": 4, "queueLengthLimit": 50}))
                .field("/status", json!({}))
                .field("/metadata/generation", json!(1)),
                get(&format!("{PL}/fc-level"))
                    .header("Accept", TABLE)
                    .field("/rows/0/cells/2", json!(30))
                    .field("/rows/0/cells/3", json!(64))
                    .field("/rows/0/cells/4", json!(4))
                    .field("/rows/0/cells/5", json!(50)),
                put(&format!("{PL}/fc-level/status"), r#"{"metadata":{"name":"fc-level"},"status":{"conditions":[{"type":"X","status":"True"}]}}"#)
                    .field("/status/conditions/0/status", json!("True"))
                    .field("/spec/limited/nominalConcurrencyShares", json!(30)),
                patch(&format!("{PL}/fc-level"), MERGE, r#"{"spec":{"limited":{"borrowingLimitPercent":10}}}"#)
                    .field("/spec/limited/borrowingLimitPercent", json!(10))
                    .field("/status/conditions/0/type", json!("X"))
                    .field("/metadata/generation", json!(2)),
                get(PL).field("/kind", json!("PriorityLevelConfigurationList")),
                delete(&format!("{PL}/fc-level"))
                    .field("/kind", json!("Status"))
                    .field("/status", json!("Success"))
                    .field("/details/kind", json!("prioritylevelconfigurations")),
                get(&format!("{PL}/fc-level")).code(404),
            ],
        ),
        case(
            "a priority level's spec is checked; an explicit zero share count stays zero and is refused",
            vec![
                post(
                    PL,
                    r#"{"metadata":{"name":"fc-zero"},"spec":{"type":"Limited","limited":{"nominalConcurrencyShares":0,"lendablePercent":101,"limitResponse":{"type":"Queue","queuing":{"queues":512,"handSize":8}}}}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "fc-zero" is invalid: [spec.limited.nominalConcurrencyShares: Invalid value: 0: must be positive, spec.limited.limitResponse.queuing.handSize: Invalid value: 8: required entropy bits of deckSize 512 and handSize 8 should not be greater than 60, spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive]"#,
                ),
                post(PL, r#"{"metadata":{"name":"fc-exempt"},"spec":{"type":"Exempt","exempt":{}}}"#).status(
                    422,
                    "Invalid",
                    r#"PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "fc-exempt" is invalid: spec.type: Invalid value: "Exempt": type must be 'Exempt' if and only if name is 'exempt'"#,
                ),
            ],
        ),
    ]
}
