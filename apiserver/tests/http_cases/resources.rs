//! The resources beyond configmaps, namespaces and pods, one or a few cases each: what their strategies
//! default, allocate, convert and refuse, over HTTP, with kube-apiserver 1.32's codes and texts. Service
//! cases ask for explicit cluster IPs and node ports (from the top of the ranges) so that they do not
//! depend on what the other cases allocated.

use serde_json::json;

use super::{case, delete, get, patch, post, put, Case};

const SVCS: &str = "/api/v1/namespaces/{ns}/services";
const DEPLOYS: &str = "/apis/apps/v1/namespaces/{ns}/deployments";

fn service(name: &str, spec: &str) -> String {
    format!(r#"{{"metadata":{{"name":"{name}"}},"spec":{spec}}}"#)
}

fn deployment(name: &str, replicas: i64) -> String {
    format!(
        r#"{{"metadata":{{"name":"{name}"}},"spec":{{"replicas":{replicas},"selector":{{"matchLabels":{{"app":"{name}"}}}},"template":{{"metadata":{{"labels":{{"app":"{name}"}}}},"spec":{{"containers":[{{"name":"c","image":"nginx:1.27"}}]}}}}}}}}"#
    )
}

const PCS: &str = "/apis/scheduling.k8s.io/v1/priorityclasses";
const APISVCS: &str = "/apis/apiregistration.k8s.io/v1/apiservices";

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "api services: named version.group, defaulted, checked, refused twice, deleted",
            vec![
                post(
                    APISVCS,
                    r#"{"metadata":{"name":"v1alpha1.wardle.example.com"},"spec":{"group":"wardle.example.com","version":"v1alpha1","groupPriorityMinimum":1000,"versionPriority":15,"service":{"namespace":"wardle","name":"api"}}}"#,
                )
                .code(201)
                .field("/spec/service/port", json!(443))
                .field("/status", json!({})),
                post(
                    APISVCS,
                    r#"{"metadata":{"name":"v1alpha1.wardle.example.com"},"spec":{"group":"wardle.example.com","version":"v1alpha1","groupPriorityMinimum":1000,"versionPriority":15}}"#,
                )
                .status(409, "AlreadyExists", r#"apiservices.apiregistration.k8s.io "v1alpha1.wardle.example.com" already exists"#),
                post(APISVCS, r#"{"metadata":{"name":"v1.wrong"},"spec":{"group":"right.io","version":"v1","groupPriorityMinimum":1,"versionPriority":1}}"#).status(
                    422,
                    "Invalid",
                    r#"APIService.apiregistration.k8s.io "v1.wrong" is invalid: metadata.name: Invalid value: "v1.wrong": must be `spec.version+"."+spec.group`: "v1.right.io""#,
                ),
                delete(&format!("{APISVCS}/v1alpha1.wardle.example.com")).field("/kind", json!("Status")),
            ],
        ),
        case(
            "priority classes: the system classes exist and stay; a user's is defaulted, checked and deleted",
            vec![
                get(&format!("{PCS}/system-node-critical"))
                    .field("/value", json!(2000001000))
                    .field("/preemptionPolicy", json!("PreemptLowerPriority")),
                delete(&format!("{PCS}/system-node-critical")).status(
                    403,
                    "Forbidden",
                    r#"priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted"#,
                ),
                post(PCS, r#"{"metadata":{"name":"pc-high"},"value":1000}"#)
                    .code(201)
                    .field("/preemptionPolicy", json!("PreemptLowerPriority")),
                post(PCS, r#"{"metadata":{"name":"pc-huge"},"value":1000000001}"#).status(
                    422,
                    "Invalid",
                    r#"PriorityClass.scheduling.k8s.io "pc-huge" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000"#,
                ),
                put(&format!("{PCS}/pc-high"), r#"{"metadata":{"name":"pc-high"},"value":7}"#).status(
                    422,
                    "Invalid",
                    r#"PriorityClass.scheduling.k8s.io "pc-high" is invalid: value: Forbidden: may not be changed in an update."#,
                ),
                delete(&format!("{PCS}/pc-high")).field("/kind", json!("Status")),
            ],
        ),
        case(
            "a service gets v1's defaults and the cluster IP it asks for; a second asking for it is refused until the first is deleted",
            vec![
                post(SVCS, &service("a", r#"{"clusterIP":"10.0.0.250","ports":[{"port":80}]}"#))
                    .field("/spec/clusterIPs", json!(["10.0.0.250"]))
                    .field("/spec/type", json!("ClusterIP"))
                    .field("/spec/sessionAffinity", json!("None"))
                    .field("/spec/ports/0", json!({"port": 80, "protocol": "TCP", "targetPort": 80}))
                    .field("/spec/ipFamilies", json!(["IPv4"]))
                    .field("/status", json!({"loadBalancer": {}})),
                post(SVCS, &service("b", r#"{"clusterIP":"10.0.0.250","ports":[{"port":80}]}"#)).status(
                    422,
                    "Invalid",
                    r#"Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.250"}: failed to allocate IP 10.0.0.250: provided IP is already allocated"#,
                ),
                delete(&format!("{SVCS}/a")),
                post(SVCS, &service("b", r#"{"clusterIP":"10.0.0.250","ports":[{"port":80}]}"#))
                    .field("/spec/clusterIP", json!("10.0.0.250")),
            ],
        ),
        case(
            "a cluster IP outside the range, a changed cluster IP, a bad name and type",
            vec![
                post(SVCS, &service("out", r#"{"clusterIP":"10.1.0.5","ports":[{"port":80}]}"#)).status(
                    422,
                    "Invalid",
                    r#"Service "out" is invalid: spec.clusterIPs: Invalid value: []string{"10.1.0.5"}: failed to allocate IP 10.1.0.5: the provided IP (10.1.0.5) is not in the valid range. The range of valid IPs is 10.0.0.0/24"#,
                ),
                post(SVCS, &service("keep", r#"{"clusterIP":"10.0.0.249","ports":[{"port":80}]}"#)),
                put(&format!("{SVCS}/keep"), &service("keep", r#"{"ports":[{"port":81}]}"#))
                    .field("/spec/clusterIP", json!("10.0.0.249"))
                    .field("/spec/ports/0/port", json!(81)),
                put(&format!("{SVCS}/keep"), &service("keep", r#"{"clusterIP":"10.0.0.248","ports":[{"port":81}]}"#))
                    .status(
                        422,
                        "Invalid",
                        r#"Service "keep" is invalid: spec.clusterIPs[0]: Invalid value: "10.0.0.248": may not change once set"#,
                    ),
                post(SVCS, &service("1svc", r#"{"ports":[{"port":80}]}"#)).status(
                    422,
                    "Invalid",
                    r#"Service "1svc" is invalid: metadata.name: Invalid value: "1svc": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
                ),
                post(SVCS, &service("t", r#"{"type":"Mesh","clusterIP":"None","ports":[{"port":80}]}"#)).status(
                    422,
                    "Invalid",
                    r#"Service "t" is invalid: spec.type: Unsupported value: "Mesh": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort""#,
                ),
            ],
        ),
        case(
            "node ports: the one asked for, once; a headless service has no cluster IP",
            vec![
                post(SVCS, &service("np", r#"{"type":"NodePort","clusterIP":"10.0.0.247","ports":[{"port":80,"nodePort":32760}]}"#))
                    .field("/spec/ports/0/nodePort", json!(32760))
                    .field("/spec/externalTrafficPolicy", json!("Cluster")),
                post(SVCS, &service("np2", r#"{"type":"NodePort","clusterIP":"10.0.0.246","ports":[{"port":80,"nodePort":32760}]}"#))
                    .status(
                        422,
                        "Invalid",
                        r#"Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: 32760: provided port is already allocated"#,
                    ),
                post(SVCS, &service("headless", r#"{"clusterIP":"None","selector":{"app":"x"}}"#))
                    .field("/spec/clusterIP", json!("None"))
                    .field("/spec/clusterIPs", json!(["None"])),
                get("/api/v1/namespaces/default/services/kubernetes")
                    .field("/spec/clusterIP", json!("10.0.0.1"))
                    .field("/spec/ports/0/port", json!(443)),
            ],
        ),
        case(
            "a scheduler binds a pod to a node once",
            vec![
                // The ServiceAccount admission plugin wants the namespace's `default` account (no controller makes it).
                post("/api/v1/namespaces/{ns}/serviceaccounts", r#"{"metadata":{"name":"default"}}"#),
                post("/api/v1/namespaces/{ns}/pods", r#"{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}"#),
                post("/api/v1/namespaces/{ns}/pods/p/binding", r#"{"metadata":{"name":"p"},"target":{"kind":"Node","name":"n1"}}"#)
                    .field("/kind", json!("Status"))
                    .field("/status", json!("Success"))
                    .field("/code", json!(201)),
                get("/api/v1/namespaces/{ns}/pods/p")
                    .field("/spec/nodeName", json!("n1"))
                    .field("/status/conditions/0/type", json!("PodScheduled"))
                    .field("/status/conditions/0/lastTransitionTime", json!("2023-11-14T22:13:20Z")),
                post("/api/v1/namespaces/{ns}/pods/p/binding", r#"{"metadata":{"name":"p"},"target":{"name":"n2"}}"#).status(
                    409,
                    "Conflict",
                    r#"Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1""#,
                ),
                post("/api/v1/namespaces/{ns}/pods/p/binding", r#"{"metadata":{"name":"q"},"target":{"name":"n2"}}"#)
                    .status(400, "BadRequest", "name in URL does not match name in Binding object"),
                post("/api/v1/namespaces/{ns}/pods/nope/binding", r#"{"metadata":{"name":"nope"},"target":{"name":"n2"}}"#)
                    .status(404, "NotFound", r#"pods "nope" not found"#),
                get("/api/v1/namespaces/{ns}/pods/p/binding").code(405),
            ],
        ),
        case(
            "a deployment's defaults, and /scale read and written as a Scale",
            vec![
                post(DEPLOYS, &deployment("web", 2))
                    .field("/metadata/generation", json!(1))
                    .field("/spec/strategy", json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}))
                    .field("/spec/revisionHistoryLimit", json!(10))
                    .field("/spec/progressDeadlineSeconds", json!(600))
                    .field("/spec/template/spec/restartPolicy", json!("Always"))
                    .field("/spec/template/spec/containers/0/imagePullPolicy", json!("IfNotPresent"))
                    .field("/status", json!({})),
                get(&format!("{DEPLOYS}/web/scale"))
                    .field("/kind", json!("Scale"))
                    .field("/apiVersion", json!("autoscaling/v1"))
                    .field("/spec/replicas", json!(2))
                    .field("/status", json!({"replicas": 0, "selector": "app=web"})),
                put(&format!("{DEPLOYS}/web/scale"), r#"{"metadata":{"name":"web"},"spec":{"replicas":5}}"#)
                    .field("/kind", json!("Scale"))
                    .field("/spec/replicas", json!(5)),
                get(&format!("{DEPLOYS}/web")).field("/spec/replicas", json!(5)).field("/metadata/generation", json!(2)),
                patch(&format!("{DEPLOYS}/web/scale"), "application/merge-patch+json", r#"{"spec":{"replicas":1}}"#)
                    .field("/spec/replicas", json!(1)),
                put(&format!("{DEPLOYS}/web/scale"), r#"{"metadata":{"name":"web"},"spec":{"replicas":-1}}"#).status(
                    422,
                    "Invalid",
                    r#"Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"#,
                ),
                put(&format!("{DEPLOYS}/web/scale"), r#"{"metadata":{"name":"web","resourceVersion":"1"},"spec":{"replicas":4}}"#)
                    .status(
                        409,
                        "Conflict",
                        "Operation cannot be fulfilled on deployments.apps \"web\": the object has been modified; please apply your changes to the latest version and try again",
                    ),
                get("/apis/apps/v1/namespaces/{ns}/daemonsets/web/scale")
                    .status(404, "NotFound", "the server could not find the requested resource"),
            ],
        ),
        case(
            "a deployment whose template does not match its selector, and a selector that changes",
            vec![
                post(DEPLOYS, &deployment("web", 1).replace(r#""labels":{"app":"web"}"#, r#""labels":{"app":"db"}"#)).status(
                    422,
                    "Invalid",
                    r#"Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"db"}: `selector` does not match template `labels`"#,
                ),
                post(DEPLOYS, &deployment("web", 1)),
                patch(
                    &format!("{DEPLOYS}/web"),
                    "application/merge-patch+json",
                    r#"{"spec":{"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}}}}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"Deployment.apps "web" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"#,
                ),
            ],
        ),
        case(
            "a job gets a selector of its own uid, and refuses restartPolicy Always",
            vec![
                post(
                    "/apis/batch/v1/namespaces/{ns}/jobs",
                    r#"{"metadata":{"name":"j"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}"#,
                )
                .field("/spec/completions", json!(1))
                .field("/spec/backoffLimit", json!(6))
                .field("/spec/template/metadata/labels/batch.kubernetes.io~1job-name", json!("j"))
                .field("/status", json!({})),
                post(
                    "/apis/batch/v1/namespaces/{ns}/jobs",
                    r#"{"metadata":{"name":"k"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"Job.batch "k" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never""#,
                ),
            ],
        ),
        case(
            "events.k8s.io and core events are the same objects in two shapes",
            vec![
                post(
                    "/apis/events.k8s.io/v1/namespaces/{ns}/events",
                    r#"{"metadata":{"name":"e1"},"eventTime":"2023-11-14T22:13:20.000000Z","type":"Normal","reason":"Started","action":"Start","reportingController":"kubesim.io/test","reportingInstance":"i","regarding":{"kind":"Pod","name":"p","namespace":"{ns}"},"note":"started"}"#,
                )
                .field("/apiVersion", json!("events.k8s.io/v1"))
                .field("/regarding/name", json!("p")),
                get("/api/v1/namespaces/{ns}/events/e1")
                    .field("/apiVersion", json!("v1"))
                    .field("/involvedObject/name", json!("p"))
                    .field("/message", json!("started"))
                    .field("/reportingComponent", json!("kubesim.io/test")),
                post(
                    "/api/v1/namespaces/{ns}/events",
                    r#"{"metadata":{"name":"e2"},"involvedObject":{"kind":"Pod","name":"q","namespace":"{ns}"},"reason":"Pulled","message":"pulled","count":2,"type":"Normal"}"#,
                ),
                get("/apis/events.k8s.io/v1/namespaces/{ns}/events/e2")
                    .field("/regarding/name", json!("q"))
                    .field("/note", json!("pulled"))
                    .field("/deprecatedCount", json!(2)),
                get("/apis/events.k8s.io/v1/namespaces/{ns}/events?fieldSelector=regarding.name%3Dq")
                    .field("/items/0/metadata/name", json!("e2"))
                    .field("/items/1", json!(null)),
                post("/apis/events.k8s.io/v1/namespaces/{ns}/events", r#"{"metadata":{"name":"e3"},"type":"Normal"}"#).status(
                    422,
                    "Invalid",
                    r#"Event.events.k8s.io "e3" is invalid: [eventTime: Required value, reportingController: Required value, reportingInstance: Required value, action: Required value, reason: Required value]"#,
                ),
            ],
        ),
        case(
            "a secret's stringData is folded into data; its type never changes",
            vec![
                post("/api/v1/namespaces/{ns}/secrets", r#"{"metadata":{"name":"s"},"stringData":{"k":"v"}}"#)
                    .field("/data/k", json!("dg=="))
                    .field("/type", json!("Opaque"))
                    .field("/stringData", json!(null)),
                put("/api/v1/namespaces/{ns}/secrets/s", r#"{"metadata":{"name":"s"},"type":"kubernetes.io/tls","data":{"tls.crt":"","tls.key":""}}"#)
                    .status(
                        422,
                        "Invalid",
                        r#"Secret "s" is invalid: type: Invalid value: "kubernetes.io/tls": field is immutable"#,
                    ),
            ],
        ),
        case(
            "nodes are cluster-scoped with a status of their own; leases validate their duration",
            vec![
                post("/api/v1/nodes", r#"{"metadata":{"name":"{ns}-node"},"status":{"capacity":{"cpu":"2"}}}"#)
                    .field("/metadata/namespace", json!(null))
                    .field("/status/capacity/cpu", json!("2")),
                put("/api/v1/nodes/{ns}-node/status", r#"{"metadata":{"name":"{ns}-node"},"spec":{"unschedulable":true},"status":{"capacity":{"cpu":"4"}}}"#)
                    .field("/status/capacity/cpu", json!("4"))
                    .field("/spec/unschedulable", json!(null)),
                post(
                    "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
                    r#"{"metadata":{"name":"l"},"spec":{"holderIdentity":"a","leaseDurationSeconds":0}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"Lease.coordination.k8s.io "l" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"#,
                ),
            ],
        ),
    ]
}
