//! Tests of the LimitRanger plugin: defaults and their annotation, and each constraint's refusal with
//! upstream's text.

use serde_json::{json, Value};

use super::*;
use crate::admission::plugins::testing::{admin, attrs, message, pod, registry, run};
use crate::registry::resource::Resource;

fn range(name: &str, limits: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name, "namespace": "ns"}, "spec": {"limits": limits}})
}

fn sized(requests: Value, limits: Value) -> Value {
    let mut p = pod("ns", "web", &["c"]);
    p["spec"]["containers"][0]["resources"] = json!({"requests": requests, "limits": limits});
    p
}

#[tokio::test]
async fn containers_take_the_range_defaults_and_the_pod_says_so() {
    let pods = Resource::core("Pod", "pods");
    let user = admin();
    let registry = registry(vec![range(
        "defaults",
        json!([{"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"}, "defaultRequest": {"cpu": "100m"}}]),
    )]);
    let req = Request {
        attrs: attrs(&pods, Operation::Create, "ns", "web"),
        user: &user,
        registry: &registry,
        now_unix_s: 0,
    };
    let cases: Vec<(&str, Value, Value, &str)> = vec![
        (
            "nothing stated",
            pod("ns", "web", &["c"]),
            json!({"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}}),
            "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c",
        ),
        (
            // The request defaults to the pod's own limit first, as v1 decoding defaults it upstream.
            "a limit stated",
            sized(json!(null), json!({"cpu": "2"})),
            json!({"requests": {"cpu": "2", "memory": "256Mi"}, "limits": {"cpu": "2", "memory": "256Mi"}}),
            "LimitRanger plugin set: memory request for container c; memory limit for container c",
        ),
        (
            "everything stated",
            sized(json!({"cpu": "1", "memory": "1Gi"}), json!({"cpu": "1", "memory": "1Gi"})),
            json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}),
            "",
        ),
    ];
    for (what, mut obj, want, note) in cases {
        run(&LimitRanger, &req, &mut obj, &Value::Null).await.expect(what);
        assert_eq!(obj["spec"]["containers"][0]["resources"], want, "{what}");
        assert_eq!(text(&obj, "/metadata/annotations/kubernetes.io~1limit-ranger"), note, "{what}");
    }
}

#[tokio::test]
async fn pods_and_claims_outside_the_ranges_are_refused() {
    let pods = Resource::core("Pod", "pods");
    let pvcs = Resource::core("PersistentVolumeClaim", "persistentvolumeclaims");
    let user = admin();
    let claim = |size: &str| json!({"metadata": {"name": "data", "namespace": "ns"}, "spec": {"resources": {"requests": {"storage": size}}}});
    let cases: Vec<(&str, Value, &Resource, Value, &str)> = vec![
        (
            "over the max",
            json!([{"type": "Container", "max": {"cpu": "1"}}]),
            &pods,
            sized(json!({"cpu": "500m"}), json!({"cpu": "2"})),
            r#"pods "web" is forbidden: maximum cpu usage per Container is 1, but limit is 2"#,
        ),
        (
            "under the min",
            json!([{"type": "Container", "min": {"memory": "64Mi"}}]),
            &pods,
            sized(json!({"memory": "32Mi"}), json!({})),
            r#"pods "web" is forbidden: minimum memory usage per Container is 64Mi, but request is 32Mi"#,
        ),
        (
            "the ratio",
            json!([{"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}}]),
            &pods,
            sized(json!({"cpu": "100m"}), json!({"cpu": "500m"})),
            r#"pods "web" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 5.000000"#,
        ),
        (
            "the ratio without a limit",
            json!([{"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}}]),
            &pods,
            sized(json!({"cpu": "100m"}), json!({})),
            r#"pods "web" is forbidden: cpu max limit to request ratio per Container is 2, but no limit is specified or limit is 0"#,
        ),
        (
            "two at once",
            json!([{"type": "Pod", "max": {"cpu": "1", "memory": "1Gi"}}]),
            &pods,
            sized(json!({"cpu": "2", "memory": "2Gi"}), json!({"cpu": "2", "memory": "2Gi"})),
            r#"pods "web" is forbidden: [maximum cpu usage per Pod is 1, but limit is 2, maximum memory usage per Pod is 1Gi, but limit is 2Gi]"#,
        ),
        (
            "a pod max without limits",
            json!([{"type": "Pod", "max": {"cpu": "1"}}]),
            &pods,
            sized(json!({"cpu": "500m"}), json!({})),
            r#"pods "web" is forbidden: maximum cpu usage per Pod is 1.  No limit is specified"#,
        ),
        (
            "a claim too large",
            json!([{"type": "PersistentVolumeClaim", "max": {"storage": "2Gi"}}]),
            &pvcs,
            claim("5Gi"),
            r#"persistentvolumeclaims "data" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi"#,
        ),
        (
            "a claim too small",
            json!([{"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}}]),
            &pvcs,
            claim("100Mi"),
            r#"persistentvolumeclaims "data" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 100Mi"#,
        ),
        (
            "within",
            json!([{"type": "Container", "max": {"cpu": "1"}, "min": {"cpu": "100m"}}]),
            &pods,
            sized(json!({"cpu": "500m"}), json!({"cpu": "1"})),
            "",
        ),
    ];
    for (what, limits, resource, mut obj, want) in cases {
        let registry = registry(vec![range("r", limits)]);
        let req = Request {
            attrs: attrs(resource, Operation::Create, "ns", ""),
            user: &user,
            registry: &registry,
            now_unix_s: 0,
        };
        assert_eq!(message(&run(&LimitRanger, &req, &mut obj, &Value::Null).await), want, "{what}");
    }
}

#[test]
fn container_items_default_as_v1_defaults_them() {
    let items = range_items(&range("r", json!([{"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "1Mi"}}])));
    let text = |u: &Usage| u.iter().map(|(k, v)| format!("{k}={}", v.to_text())).collect::<Vec<_>>().join(",");
    assert_eq!(text(&items[0].default), "cpu=2");
    assert_eq!(text(&items[0].default_request), "cpu=2,memory=1Mi");
}
