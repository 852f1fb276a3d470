//! admissionregistration.k8s.io/v1 over HTTP (MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
//! ValidatingAdmissionPolicy and its `/status`, ValidatingAdmissionPolicyBinding): what their strategies
//! default, reset and refuse, with kube-apiserver 1.32's codes and texts, and their Table columns. Nothing is
//! enforced. Every object is cluster-scoped and named `adm-*` so that no other file's cases meet them.

use serde_json::json;

use super::{case, delete, get, patch, post, put, Case};

const MERGE: &str = "application/merge-patch+json";

const MWCS: &str = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
const VWCS: &str = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const VAPS: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
const VAPBS: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings";
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

const MUTATING: &str = r#"{"metadata":{"name":"adm-mutating"},"webhooks":[{"name":"a.example.com","sideEffects":"None","admissionReviewVersions":["v1"],"clientConfig":{"service":{"namespace":"default","name":"hooks"}},"rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["pods"]}]}]}"#;
const VALIDATING: &str = r#"{"metadata":{"name":"adm-validating"},"webhooks":[{"name":"a.example.com","sideEffects":"NoneOnDryRun","admissionReviewVersions":["v1","v1beta1"],"clientConfig":{"url":"https://hooks.example.com/validate"}},{"name":"b.example.com","sideEffects":"None","admissionReviewVersions":["v1"],"clientConfig":{"url":"https://hooks.example.com/other"}}]}"#;
const POLICY: &str = r#"{"metadata":{"name":"adm-policy"},"spec":{"paramKind":{"apiVersion":"v1","kind":"ConfigMap"},"matchConstraints":{"resourceRules":[{"operations":["CREATE","UPDATE"],"apiGroups":["apps"],"apiVersions":["v1"],"resources":["deployments"]}]},"validations":[{"expression":"object.spec.replicas <= 5"}]},"status":{"observedGeneration":9}}"#;
const BINDING: &str = r#"{"metadata":{"name":"adm-binding"},"spec":{"policyName":"adm-policy","validationActions":["Deny"],"paramRef":{"name":"limits","namespace":"default","parameterNotFoundAction":"Deny"}}}"#;

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "a mutating webhook configuration: webhooks default, the generation follows them, updates need a resourceVersion",
            vec![
                post(MWCS, MUTATING)
                    .field("/metadata/generation", json!(1))
                    .field("/webhooks/0/failurePolicy", json!("Fail"))
                    .field("/webhooks/0/matchPolicy", json!("Equivalent"))
                    .field("/webhooks/0/namespaceSelector", json!({}))
                    .field("/webhooks/0/objectSelector", json!({}))
                    .field("/webhooks/0/timeoutSeconds", json!(10))
                    .field("/webhooks/0/reinvocationPolicy", json!("Never"))
                    .field("/webhooks/0/rules/0/scope", json!("*"))
                    .field("/webhooks/0/clientConfig/service/port", json!(443)),
                get(&format!("{MWCS}/adm-mutating")).field("/webhooks/0/name", json!("a.example.com")),
                get(MWCS).field("/kind", json!("MutatingWebhookConfigurationList")),
                put(&format!("{MWCS}/adm-mutating"), MUTATING).code(422).field("/reason", json!("Invalid")).field("/details/causes/0/field", json!("metadata.resourceVersion")),
                get(&format!("{MWCS}/adm-mutating"))
                    .header("Accept", TABLE)
                    .field("/columnDefinitions/1/name", json!("Webhooks"))
                    .field("/columnDefinitions/1/type", json!("integer"))
                    .field("/rows/0/cells/0", json!("adm-mutating"))
                    .field("/rows/0/cells/1", json!(1)),
                post(
                    MWCS,
                    r#"{"metadata":{"name":"adm-bad"},"webhooks":[{"name":"example.com","sideEffects":"None","admissionReviewVersions":["v1"],"clientConfig":{"url":"https://hooks.example.com/"}}]}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"MutatingWebhookConfiguration.admissionregistration.k8s.io "adm-bad" is invalid: webhooks[0].name: Invalid value: "example.com": should be a domain with at least three segments separated by dots"#,
                ),
                delete(&format!("{MWCS}/adm-mutating")).field("/kind", json!("Status")).field("/status", json!("Success")),
                get(&format!("{MWCS}/adm-mutating")).code(404),
            ],
        ),
        case(
            "a mutating webhook configuration's webhooks changed by a patch bump the generation; labels do not",
            vec![
                post(
                    MWCS,
                    r#"{"metadata":{"name":"adm-mutating-2"},"webhooks":[{"name":"a.example.com","sideEffects":"None","admissionReviewVersions":["v1"],"clientConfig":{"url":"https://hooks.example.com/"}}]}"#,
                )
                .field("/metadata/generation", json!(1)),
                patch(&format!("{MWCS}/adm-mutating-2"), MERGE, r#"{"metadata":{"labels":{"a":"b"}}}"#)
                    .field("/metadata/generation", json!(1)),
                patch(
                    &format!("{MWCS}/adm-mutating-2"),
                    MERGE,
                    r#"{"webhooks":[{"name":"b.example.com","sideEffects":"None","admissionReviewVersions":["v1"],"clientConfig":{"url":"https://hooks.example.com/"}}]}"#,
                )
                .field("/metadata/generation", json!(2))
                .field("/webhooks/0/timeoutSeconds", json!(10)),
                patch(&format!("{MWCS}/adm-mutating-2"), MERGE, r#"{"webhooks":[{"name":"b.example.com","sideEffects":"Some","admissionReviewVersions":["v1"],"clientConfig":{"url":"https://hooks.example.com/"}}]}"#)
                    .status(
                        422,
                        "Invalid",
                        r#"MutatingWebhookConfiguration.admissionregistration.k8s.io "adm-mutating-2" is invalid: webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun""#,
                    ),
                delete(&format!("{MWCS}/adm-mutating-2")).field("/kind", json!("Status")),
            ],
        ),
        case(
            "a validating webhook configuration: two webhooks, sideEffects required, duplicate names refused",
            vec![
                post(VWCS, VALIDATING)
                    .field("/webhooks/1/failurePolicy", json!("Fail"))
                    .field("/webhooks/1/timeoutSeconds", json!(10))
                    .field("/webhooks/1/reinvocationPolicy", json!(null)),
                get(VWCS).field("/kind", json!("ValidatingWebhookConfigurationList")),
                get(&format!("{VWCS}/adm-validating"))
                    .header("Accept", TABLE)
                    .field("/rows/0/cells/1", json!(2)),
                post(
                    VWCS,
                    r#"{"metadata":{"name":"adm-bad"},"webhooks":[{"name":"a.example.com","admissionReviewVersions":["v1"],"clientConfig":{"url":"https://hooks.example.com/"}}]}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"ValidatingWebhookConfiguration.admissionregistration.k8s.io "adm-bad" is invalid: webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"#,
                ),
                post(
                    VWCS,
                    r#"{"metadata":{"name":"adm-bad"},"webhooks":[{"name":"a.example.com","sideEffects":"None","admissionReviewVersions":["v1"],"clientConfig":{"url":"https://hooks.example.com/"}},{"name":"a.example.com","sideEffects":"None","admissionReviewVersions":["v1"],"clientConfig":{"url":"https://hooks.example.com/"}}]}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"ValidatingWebhookConfiguration.admissionregistration.k8s.io "adm-bad" is invalid: webhooks[1].name: Duplicate value: "a.example.com""#,
                ),
                delete(&format!("{VWCS}/adm-validating")).field("/kind", json!("Status")).field("/status", json!("Success")),
            ],
        ),
        case(
            "a validating admission policy: defaults, status reset on create and kept by the main endpoint, /status",
            vec![
                post(VAPS, POLICY)
                    .field("/spec/failurePolicy", json!("Fail"))
                    .field("/spec/matchConstraints/matchPolicy", json!("Equivalent"))
                    .field("/spec/matchConstraints/namespaceSelector", json!({}))
                    .field("/spec/matchConstraints/objectSelector", json!({}))
                    .field("/spec/matchConstraints/resourceRules/0/scope", json!("*"))
                    .field("/status", json!({}))
                    .field("/metadata/generation", json!(1)),
                get(VAPS).field("/kind", json!("ValidatingAdmissionPolicyList")),
                get(&format!("{VAPS}/adm-policy"))
                    .header("Accept", TABLE)
                    .field("/columnDefinitions/1/name", json!("Validations"))
                    .field("/columnDefinitions/2/name", json!("ParamKind"))
                    .field("/rows/0/cells/1", json!(1))
                    .field("/rows/0/cells/2", json!("v1/ConfigMap")),
                get(&format!("{VAPS}/adm-policy/status")).field("/spec/failurePolicy", json!("Fail")),
                put(
                    &format!("{VAPS}/adm-policy/status"),
                    r#"{"metadata":{"name":"adm-policy"},"spec":{"failurePolicy":"Ignore"},"status":{"observedGeneration":1}}"#,
                )
                .code(422).field("/reason", json!("Invalid")).field("/details/causes/0/field", json!("metadata.resourceVersion")),
                patch(
                    &format!("{VAPS}/adm-policy/status"),
                    MERGE,
                    r#"{"spec":{"failurePolicy":"Ignore"},"status":{"observedGeneration":1,"typeChecking":{"expressionWarnings":[{"fieldRef":"spec.validations[0].expression","warning":"checked"}]}}}"#,
                )
                .field("/spec/failurePolicy", json!("Fail"))
                .field("/status/observedGeneration", json!(1))
                .field("/status/typeChecking/expressionWarnings/0/warning", json!("checked"))
                .field("/metadata/generation", json!(1)),
                patch(&format!("{VAPS}/adm-policy/status"), MERGE, r#"{"status":{"typeChecking":{"expressionWarnings":[{"warning":"w"}]}}}"#)
                    .status(
                        422,
                        "Invalid",
                        r#"ValidatingAdmissionPolicy.admissionregistration.k8s.io "adm-policy" is invalid: status.typeChecking.expressionWarnings[0].fieldRef: Required value"#,
                    ),
                patch(&format!("{VAPS}/adm-policy"), MERGE, r#"{"spec":{"failurePolicy":"Ignore"},"status":{"observedGeneration":5}}"#)
                    .field("/spec/failurePolicy", json!("Ignore"))
                    .field("/status/observedGeneration", json!(1))
                    .field("/metadata/generation", json!(2)),
                post(
                    VAPS,
                    r#"{"metadata":{"name":"adm-bad"},"spec":{"matchConstraints":{"resourceRules":[{"operations":["CREATE"],"apiGroups":["apps"],"apiVersions":["v1"],"resources":["deployments"]}]}}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"ValidatingAdmissionPolicy.admissionregistration.k8s.io "adm-bad" is invalid: [spec.validations: Required value: validations or auditAnnotations must contain at least one item, spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item]"#,
                ),
                post(VAPS, r#"{"metadata":{"name":"adm-bad"},"spec":{"validations":[{"expression":"true"}]}}"#).status(
                    422,
                    "Invalid",
                    r#"ValidatingAdmissionPolicy.admissionregistration.k8s.io "adm-bad" is invalid: spec.matchConstraints: Required value"#,
                ),
                delete(&format!("{VAPS}/adm-policy")).field("/kind", json!("Status")).field("/status", json!("Success")),
                get(&format!("{VAPS}/adm-policy")).code(404),
            ],
        ),
        case(
            "a validating admission policy binding: matchResources default, validation actions refused, Table",
            vec![
                post(
                    VAPBS,
                    r#"{"metadata":{"name":"adm-binding"},"spec":{"policyName":"adm-policy","validationActions":["Deny"],"paramRef":{"name":"limits","namespace":"default","parameterNotFoundAction":"Deny"},"matchResources":{}}}"#,
                )
                .field("/spec/matchResources/matchPolicy", json!("Equivalent"))
                .field("/spec/matchResources/namespaceSelector", json!({}))
                .field("/metadata/generation", json!(1)),
                get(VAPBS).field("/kind", json!("ValidatingAdmissionPolicyBindingList")),
                get(&format!("{VAPBS}/adm-binding"))
                    .header("Accept", TABLE)
                    .field("/columnDefinitions/1/name", json!("PolicyName"))
                    .field("/columnDefinitions/2/name", json!("ParamRef"))
                    .field("/rows/0/cells/1", json!("adm-policy"))
                    .field("/rows/0/cells/2", json!("default/limits")),
                post(VAPBS, &BINDING.replace("adm-binding", "adm-bad").replace(r#"["Deny"]"#, r#"["Deny","Warn"]"#))
                    .status(
                        422,
                        "Invalid",
                        r#"ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "adm-bad" is invalid: spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"#,
                    ),
                delete(&format!("{VAPBS}/adm-binding")).field("/kind", json!("Status")).field("/status", json!("Success")),
                get(&format!("{VAPBS}/adm-binding")).code(404),
            ],
        ),
    ]
}
