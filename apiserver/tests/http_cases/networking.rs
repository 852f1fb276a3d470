//! networking.k8s.io (Ingress and its `/status`, IngressClass, NetworkPolicy), policy (PodDisruptionBudget
//! and its `/status`), discovery.k8s.io (EndpointSlice) and node.k8s.io (RuntimeClass) over HTTP: what
//! their strategies default, reset and refuse, with kube-apiserver 1.32's codes and texts, and their
//! Table columns. Cluster-scoped objects are named `net-*` so that no other file's cases meet them.

use serde_json::json;

use super::{case, delete, get, post, put, Case};

const INGS: &str = "/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses";
const CLASSES: &str = "/apis/networking.k8s.io/v1/ingressclasses";
const NETPOLS: &str = "/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies";
const PDBS: &str = "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets";
const SLICES: &str = "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices";
const RCS: &str = "/apis/node.k8s.io/v1/runtimeclasses";
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

const INGRESS: &str = r#"{"metadata":{"name":"web"},"spec":{"rules":[{"host":"web.example.com","http":{"paths":[{"path":"/","pathType":"Prefix","backend":{"service":{"name":"web","port":{"number":80}}}}]}}]},"status":{"loadBalancer":{"ingress":[{"ip":"10.0.0.9"}]}}}"#;

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "an ingress: status reset on create, kept by the main endpoint, written by /status; generation follows the spec",
            vec![
                post(INGS, INGRESS)
                    .field("/status", json!({"loadBalancer": {}}))
                    .field("/metadata/generation", json!(1)),
                get(&format!("{INGS}/web")).field("/spec/rules/0/host", json!("web.example.com")),
                get(INGS).field("/kind", json!("IngressList")).field("/items/0/metadata/name", json!("web")),
                put(
                    &format!("{INGS}/web/status"),
                    r#"{"metadata":{"name":"web"},"spec":{"defaultBackend":{"service":{"name":"other","port":{"number":1}}}},"status":{"loadBalancer":{"ingress":[{"ip":"10.0.0.9"}]}}}"#,
                )
                .field("/status/loadBalancer/ingress/0/ip", json!("10.0.0.9"))
                .field("/spec/rules/0/host", json!("web.example.com"))
                .field("/metadata/generation", json!(1)),
                put(
                    &format!("{INGS}/web/status"),
                    r#"{"metadata":{"name":"web"},"status":{"loadBalancer":{"ingress":[{"hostname":"10.0.0.1"}]}}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"Ingress.networking.k8s.io "web" is invalid: status.loadBalancer.ingress[0].hostname: Invalid value: "10.0.0.1": must be a DNS name, not an IP address"#,
                ),
                put(
                    &format!("{INGS}/web"),
                    r#"{"metadata":{"name":"web"},"spec":{"ingressClassName":"nginx","rules":[{"host":"web.example.com","http":{"paths":[{"path":"/","pathType":"Prefix","backend":{"service":{"name":"web","port":{"number":80}}}}]}}]}}"#,
                )
                .field("/status/loadBalancer/ingress/0/ip", json!("10.0.0.9"))
                .field("/metadata/generation", json!(2)),
                get(&format!("{INGS}/web"))
                    .header("Accept", TABLE)
                    .field("/columnDefinitions/1/name", json!("Class"))
                    .field("/rows/0/cells/1", json!("nginx"))
                    .field("/rows/0/cells/2", json!("web.example.com"))
                    .field("/rows/0/cells/3", json!("10.0.0.9"))
                    .field("/rows/0/cells/4", json!("80")),
                delete(&format!("{INGS}/web")).field("/kind", json!("Status")).field("/status", json!("Success")),
                get(&format!("{INGS}/web")).code(404),
            ],
        ),
        case(
            "an ingress path needs a pathType; a backend needs a port",
            vec![
                post(
                    INGS,
                    r#"{"metadata":{"name":"bad"},"spec":{"rules":[{"host":"a.example.com","http":{"paths":[{"path":"/","backend":{"service":{"name":"web","port":{"number":80}}}}]}}]}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"Ingress.networking.k8s.io "bad" is invalid: spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"#,
                ),
                post(INGS, r#"{"metadata":{"name":"bad"},"spec":{"defaultBackend":{"service":{"name":"web","port":{}}}}}"#)
                    .status(
                        422,
                        "Invalid",
                        r#"Ingress.networking.k8s.io "bad" is invalid: spec.defaultBackend: Required value: port name or number is required"#,
                    ),
                post(INGS, r#"{"metadata":{"name":"bad"},"spec":{}}"#).status(
                    422,
                    "Invalid",
                    r#"Ingress.networking.k8s.io "bad" is invalid: spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified"#,
                ),
            ],
        ),
        case(
            "an ingress class: the parameters' scope defaults, the controller never changes",
            vec![
                post(
                    CLASSES,
                    r#"{"metadata":{"name":"net-nginx"},"spec":{"controller":"example.com/ingress","parameters":{"kind":"Params","name":"p"}}}"#,
                )
                .field("/spec/parameters/scope", json!("Cluster"))
                .field("/metadata/generation", json!(1)),
                get(&format!("{CLASSES}/net-nginx")).field("/spec/controller", json!("example.com/ingress")),
                get(CLASSES).field("/kind", json!("IngressClassList")),
                put(&format!("{CLASSES}/net-nginx"), r#"{"metadata":{"name":"net-nginx"},"spec":{"controller":"example.com/other"}}"#)
                    .status(
                        422,
                        "Invalid",
                        r#"IngressClass.networking.k8s.io "net-nginx" is invalid: spec.controller: Invalid value: "example.com/other": field is immutable"#,
                    ),
                put(&format!("{CLASSES}/net-nginx"), r#"{"metadata":{"name":"net-nginx","labels":{"a":"b"}},"spec":{"controller":"example.com/ingress"}}"#)
                    .field("/metadata/labels/a", json!("b"))
                    .field("/metadata/generation", json!(2)),
                post(CLASSES, r#"{"metadata":{"name":"net-bad"},"spec":{"controller":"nginx"}}"#).status(
                    422,
                    "Invalid",
                    r#"IngressClass.networking.k8s.io "net-bad" is invalid: spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")"#,
                ),
                delete(&format!("{CLASSES}/net-nginx")).field("/kind", json!("Status")),
            ],
        ),
        case(
            "a network policy: policy types and port protocols default; a peer is an ipBlock or selectors",
            vec![
                post(NETPOLS, r#"{"metadata":{"name":"allow"},"spec":{"podSelector":{"matchLabels":{"app":"web"}},"ingress":[{"ports":[{"port":80}]}],"egress":[{}]}}"#)
                    .field("/spec/policyTypes", json!(["Ingress", "Egress"]))
                    .field("/spec/ingress/0/ports/0", json!({"port": 80, "protocol": "TCP"}))
                    .field("/metadata/generation", json!(1)),
                get(&format!("{NETPOLS}/allow")).header("Accept", TABLE).field("/rows/0/cells/1", json!("app=web")),
                get(NETPOLS).field("/kind", json!("NetworkPolicyList")),
                put(&format!("{NETPOLS}/allow"), r#"{"metadata":{"name":"allow"},"spec":{"podSelector":{}}}"#)
                    .field("/spec/policyTypes", json!(["Ingress"]))
                    .field("/metadata/generation", json!(2)),
                post(
                    NETPOLS,
                    r#"{"metadata":{"name":"bad"},"spec":{"podSelector":{},"ingress":[{"from":[{"ipBlock":{"cidr":"10.0.0.0/8"},"podSelector":{}}]}]}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"NetworkPolicy.networking.k8s.io "bad" is invalid: spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer"#,
                ),
                delete(&format!("{NETPOLS}/allow")).field("/kind", json!("Status")),
            ],
        ),
        case(
            "a disruption budget: zero counts on create, the status through /status only, percentages checked",
            vec![
                post(PDBS, r#"{"metadata":{"name":"web"},"spec":{"minAvailable":"50%","selector":{"matchLabels":{"app":"web"}}},"status":{"disruptionsAllowed":3}}"#)
                    .field("/status", json!({"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}))
                    .field("/metadata/generation", json!(1)),
                get(PDBS).field("/kind", json!("PodDisruptionBudgetList")),
                put(
                    &format!("{PDBS}/web/status"),
                    r#"{"metadata":{"name":"web"},"spec":{"minAvailable":1},"status":{"disruptionsAllowed":2,"currentHealthy":3,"desiredHealthy":1,"expectedPods":3}}"#,
                )
                .field("/status/disruptionsAllowed", json!(2))
                .field("/spec/minAvailable", json!("50%")),
                put(&format!("{PDBS}/web/status"), r#"{"metadata":{"name":"web"},"status":{"disruptionsAllowed":-1}}"#).status(
                    422,
                    "Invalid",
                    r#"PodDisruptionBudget.policy "web" is invalid: status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0"#,
                ),
                put(&format!("{PDBS}/web"), r#"{"metadata":{"name":"web"},"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":"web"}}},"status":{}}"#)
                    .field("/status/disruptionsAllowed", json!(2))
                    .field("/metadata/generation", json!(2)),
                get(&format!("{PDBS}/web"))
                    .header("Accept", TABLE)
                    .field("/columnDefinitions/3/name", json!("Allowed Disruptions"))
                    .field("/rows/0/cells/1", json!("N/A"))
                    .field("/rows/0/cells/2", json!("1"))
                    .field("/rows/0/cells/3", json!(2)),
                post(PDBS, r#"{"metadata":{"name":"bad"},"spec":{"minAvailable":"150%"}}"#).status(
                    422,
                    "Invalid",
                    r#"PodDisruptionBudget.policy "bad" is invalid: spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%"#,
                ),
                delete(&format!("{PDBS}/web")).field("/kind", json!("Status")),
            ],
        ),
        case(
            "an endpoint slice: ports default, addresses fit the type, the type never changes",
            vec![
                post(
                    SLICES,
                    r#"{"metadata":{"name":"web-1","labels":{"kubernetes.io/service-name":"web"}},"addressType":"IPv4","endpoints":[{"addresses":["10.1.0.1"]},{"addresses":["10.1.0.2"]}],"ports":[{"port":8080}]}"#,
                )
                .field("/ports/0", json!({"name": "", "port": 8080, "protocol": "TCP"}))
                .field("/metadata/generation", json!(1)),
                get(&format!("{SLICES}?labelSelector=kubernetes.io/service-name%3Dweb"))
                    .field("/kind", json!("EndpointSliceList"))
                    .field("/items/0/metadata/name", json!("web-1")),
                get(&format!("{SLICES}/web-1"))
                    .header("Accept", TABLE)
                    .field("/rows/0/cells/1", json!("IPv4"))
                    .field("/rows/0/cells/2", json!("8080"))
                    .field("/rows/0/cells/3", json!("10.1.0.1,10.1.0.2")),
                put(&format!("{SLICES}/web-1"), r#"{"metadata":{"name":"web-1"},"addressType":"IPv6","endpoints":[]}"#).status(
                    422,
                    "Invalid",
                    r#"EndpointSlice.discovery.k8s.io "web-1" is invalid: addressType: Invalid value: "IPv6": field is immutable"#,
                ),
                put(&format!("{SLICES}/web-1"), r#"{"metadata":{"name":"web-1"},"addressType":"IPv4","endpoints":[{"addresses":["10.1.0.3"]}]}"#)
                    .field("/metadata/generation", json!(2)),
                post(SLICES, r#"{"metadata":{"name":"bad"},"addressType":"IPv4","endpoints":[{"addresses":["127.0.0.1"]}]}"#).status(
                    422,
                    "Invalid",
                    r#"EndpointSlice.discovery.k8s.io "bad" is invalid: endpoints[0].addresses[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)"#,
                ),
                delete(&format!("{SLICES}/web-1")).field("/kind", json!("Status")),
            ],
        ),
        case(
            "a runtime class: the handler is a DNS label and never changes",
            vec![
                post(RCS, r#"{"metadata":{"name":"net-gvisor"},"handler":"runsc"}"#).field("/handler", json!("runsc")),
                get(&format!("{RCS}/net-gvisor")).header("Accept", TABLE).field("/rows/0/cells/1", json!("runsc")),
                get(RCS).field("/kind", json!("RuntimeClassList")),
                put(&format!("{RCS}/net-gvisor"), r#"{"metadata":{"name":"net-gvisor"},"handler":"kata"}"#).status(
                    422,
                    "Invalid",
                    r#"RuntimeClass.node.k8s.io "net-gvisor" is invalid: handler: Invalid value: "kata": field is immutable"#,
                ),
                put(&format!("{RCS}/net-gvisor"), r#"{"metadata":{"name":"net-gvisor","labels":{"a":"b"}},"handler":"runsc"}"#)
                    .field("/metadata/labels/a", json!("b")),
                post(RCS, r#"{"metadata":{"name":"net-bad"},"handler":"run.sc"}"#).status(
                    422,
                    "Invalid",
                    r#"RuntimeClass.node.k8s.io "net-bad" is invalid: handler: Invalid value: "run.sc": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"#,
                ),
                delete(&format!("{RCS}/net-gvisor")).field("/kind", json!("Status")),
            ],
        ),
    ]
}
