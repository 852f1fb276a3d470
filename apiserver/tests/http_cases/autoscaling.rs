//! autoscaling (HorizontalPodAutoscaler) over HTTP: one resource stored as `autoscaling/v2` and served as
//! v2 and v1, each reading what the other wrote (v1 carrying v2's extra metrics, behavior, current
//! metrics and conditions in annotations); v2's defaults, the status subresource of both, the 422 texts,
//! the Table columns, a v1 watch of v2 writes, and discovery's version order (v2 preferred).

use serde_json::json;

use super::{case, delete, get, post, put, Case};

const V2: &str = "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers";
const V1: &str = "/apis/autoscaling/v1/namespaces/{ns}/horizontalpodautoscalers";
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// A v2 autoscaler with a Pods metric, a CPU target and half a behavior.
const WEB_V2: &str = r#"{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5,"metrics":[{"type":"Pods","pods":{"metric":{"name":"qps"},"target":{"type":"AverageValue","averageValue":"10"}}},{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}],"behavior":{"scaleDown":{"stabilizationWindowSeconds":60}}},"status":{"desiredReplicas":9}}"#;

/// What v1 carries of WEB_V2's metrics and defaulted behavior.
const WEB_METRICS: &str = r#"[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]"#;
const WEB_BEHAVIOR: &str = r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}]},"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}]}}"#;

/// What `kubectl autoscale deployment api --min=2 --max=5 --cpu-percent=80` sends.
const API_V1: &str = r#"{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"api"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"api"},"minReplicas":2,"maxReplicas":5,"targetCPUUtilizationPercentage":80}}"#;

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "an autoscaler written in v2 is defaulted, and v1 reads it with its extra metrics and behavior in annotations",
            vec![
                post(V2, WEB_V2)
                    .field("/spec/minReplicas", json!(1))
                    .field("/spec/behavior/scaleUp/policies/0", json!({"type": "Pods", "value": 4, "periodSeconds": 15}))
                    .field("/spec/behavior/scaleDown/selectPolicy", json!("Max"))
                    .field("/spec/behavior/scaleDown/stabilizationWindowSeconds", json!(60))
                    .field("/status", json!({"desiredReplicas": 0, "currentMetrics": null}))
                    .field("/metadata/generation", json!(null)),
                get(&format!("{V1}/web"))
                    .field("/apiVersion", json!("autoscaling/v1"))
                    .field(
                        "/spec",
                        json!({"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": 1, "maxReplicas": 5, "targetCPUUtilizationPercentage": 50}),
                    )
                    .field("/status", json!({"currentReplicas": 0, "desiredReplicas": 0}))
                    .field("/metadata/annotations/autoscaling.alpha.kubernetes.io~1metrics", json!(WEB_METRICS))
                    .field("/metadata/annotations/autoscaling.alpha.kubernetes.io~1behavior", json!(WEB_BEHAVIOR)),
                get(V1).field("/kind", json!("HorizontalPodAutoscalerList")).field("/items/0/spec/targetCPUUtilizationPercentage", json!(50)),
                get(&format!("{V1}?watch=true&resourceVersion=0&timeoutSeconds=1"))
                    .contains(r#""type":"ADDED""#)
                    .contains(r#""apiVersion":"autoscaling/v1""#)
                    .contains(r#""targetCPUUtilizationPercentage":50"#),
                get(V2)
                    .header("Accept", TABLE)
                    .field("/columnDefinitions/1/name", json!("Reference"))
                    .field("/columnDefinitions/2/name", json!("Targets"))
                    .field("/columnDefinitions/4/type", json!("string"))
                    .field("/rows/0/cells/1", json!("Deployment/web"))
                    .field("/rows/0/cells/2", json!("<unknown>/10, cpu: <unknown>/50%"))
                    .field("/rows/0/cells/3", json!("1"))
                    .field("/rows/0/cells/4", json!(5))
                    .field("/rows/0/cells/5", json!(0)),
                put(
                    &format!("{V2}/web/status"),
                    r#"{"metadata":{"name":"web"},"spec":{"maxReplicas":1},"status":{"currentReplicas":2,"desiredReplicas":3,"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":40,"averageValue":"120m"}}}],"conditions":[{"type":"AbleToScale","status":"True","lastTransitionTime":"2024-01-02T03:04:05Z","reason":"ReadyForNewScale"}]}}"#,
                )
                .field("/spec/maxReplicas", json!(5))
                .field("/status/currentReplicas", json!(2)),
                get(&format!("{V1}/web"))
                    .field("/status", json!({"currentReplicas": 2, "desiredReplicas": 3, "currentCPUUtilizationPercentage": 40}))
                    .field(
                        "/metadata/annotations/autoscaling.alpha.kubernetes.io~1current-metrics",
                        json!(r#"[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":40,"currentAverageValue":"120m"}}]"#),
                    )
                    .field(
                        "/metadata/annotations/autoscaling.alpha.kubernetes.io~1conditions",
                        json!(r#"[{"type":"AbleToScale","status":"True","lastTransitionTime":"2024-01-02T03:04:05Z","reason":"ReadyForNewScale"}]"#),
                    ),
                put(
                    &format!("{V2}/web"),
                    r#"{"metadata":{"name":"web","annotations":{"autoscaling.alpha.kubernetes.io/metrics":"[]"}},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":2,"maxReplicas":6},"status":{"desiredReplicas":0}}"#,
                )
                .field("/metadata/annotations", json!(null))
                .field("/spec/metrics", json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]))
                .field("/spec/behavior", json!(null))
                .field("/status/desiredReplicas", json!(3)),
                get(&format!("{V2}/web")).header("Accept", TABLE).field("/rows/0/cells/2", json!("cpu: 40%/80%")),
                delete(&format!("{V1}/web")).field("/kind", json!("Status")).field("/status", json!("Success")),
                get(&format!("{V2}/web")).code(404),
            ],
        ),
        case(
            "an autoscaler written in v1 reads back in v2; v1's annotated metrics come first and no metric means CPU at 80%",
            vec![
                post(V1, API_V1)
                    .field("/spec/targetCPUUtilizationPercentage", json!(80))
                    .field("/status", json!({"currentReplicas": 0, "desiredReplicas": 0}))
                    .field("/metadata/annotations", json!(null)),
                get(&format!("{V2}/api"))
                    .field("/spec/minReplicas", json!(2))
                    .field("/spec/metrics", json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]))
                    .field("/status", json!({"desiredReplicas": 0, "currentMetrics": null})),
                post(
                    V1,
                    r#"{"metadata":{"name":"plain"},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"plain"},"maxReplicas":2}}"#,
                )
                .field("/spec/minReplicas", json!(1))
                .field("/spec/targetCPUUtilizationPercentage", json!(80)),
                post(
                    V1,
                    r#"{"metadata":{"name":"queue","annotations":{"autoscaling.alpha.kubernetes.io/metrics":"[{\"type\":\"External\",\"external\":{\"metricName\":\"depth\",\"targetAverageValue\":\"30\"}}]","autoscaling.alpha.kubernetes.io/behavior":"{\"ScaleDown\":{\"Policies\":[{\"Type\":\"Pods\",\"Value\":1,\"PeriodSeconds\":60}]}}","autoscaling.alpha.kubernetes.io/conditions":"[{\"type\":\"AbleToScale\",\"status\":\"True\"}]"}},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"queue"},"maxReplicas":4,"targetCPUUtilizationPercentage":70}}"#,
                )
                .field("/metadata/annotations/autoscaling.alpha.kubernetes.io~1conditions", json!(null)),
                get(&format!("{V2}/queue"))
                    .field("/metadata/annotations", json!(null))
                    .field(
                        "/spec/metrics",
                        json!([
                            {"type": "External", "external": {"metric": {"name": "depth"}, "target": {"type": "AverageValue", "averageValue": "30"}}},
                            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}
                        ]),
                    )
                    .field("/spec/behavior/scaleDown", json!({"selectPolicy": "Max", "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}))
                    .field("/spec/behavior/scaleUp/stabilizationWindowSeconds", json!(0))
                    .field("/status/conditions", json!(null)),
                put(
                    &format!("{V1}/queue/status"),
                    r#"{"metadata":{"name":"queue","annotations":{"autoscaling.alpha.kubernetes.io/conditions":"[{\"type\":\"ScalingActive\",\"status\":\"False\",\"reason\":\"FailedGetExternalMetric\"}]"}},"spec":{"maxReplicas":1},"status":{"currentReplicas":1,"desiredReplicas":1,"currentCPUUtilizationPercentage":12}}"#,
                )
                .field("/spec/maxReplicas", json!(4))
                .field("/status/currentCPUUtilizationPercentage", json!(12)),
                get(&format!("{V2}/queue"))
                    .field("/spec/maxReplicas", json!(4))
                    .field("/spec/metrics/0/type", json!("External"))
                    .field("/status/conditions", json!([{"type": "ScalingActive", "status": "False", "reason": "FailedGetExternalMetric"}]))
                    .field("/status/currentMetrics", json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 12}}}])),
                get(&format!("{V1}/queue")).header("Accept", TABLE).field("/rows/0/cells/2", json!("<unknown>/30 (avg), cpu: <unknown>/70%")),
                delete(&format!("{V2}/api")).field("/kind", json!("Status")),
                get(&format!("{V1}/api")).code(404),
            ],
        ),
        case(
            "an invalid autoscaler is refused with v2's paths in both versions",
            vec![
                post(
                    V2,
                    r#"{"metadata":{"name":"bad"},"spec":{"scaleTargetRef":{"name":"web"},"minReplicas":3,"maxReplicas":2,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":0}}}],"behavior":{"scaleUp":{"selectPolicy":"Fastest"}}}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"HorizontalPodAutoscaler.autoscaling "bad" is invalid: [spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`, spec.scaleTargetRef.kind: Required value, spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0, spec.behavior.scaleUp.selectPolicy: Unsupported value: "Fastest": supported values: "Disabled", "Max", "Min"]"#,
                ),
                post(
                    V1,
                    r#"{"metadata":{"name":"bad"},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":2,"targetCPUUtilizationPercentage":0}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"HorizontalPodAutoscaler.autoscaling "bad" is invalid: spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"#,
                ),
                post(V1, r#"{"metadata":{"name":"ok"},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":2}}"#),
                put(
                    &format!("{V1}/ok/status"),
                    r#"{"metadata":{"name":"ok"},"status":{"currentReplicas":-1,"desiredReplicas":0}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"HorizontalPodAutoscaler.autoscaling "ok" is invalid: status.currentReplicas: Invalid value: -1: must be greater than or equal to 0"#,
                ),
            ],
        ),
        case(
            "discovery lists autoscaling v2 first and prefers it; both versions serve hpa with /status",
            vec![
                get("/apis/autoscaling")
                    .field("/versions", json!([{"groupVersion": "autoscaling/v2", "version": "v2"}, {"groupVersion": "autoscaling/v1", "version": "v1"}]))
                    .field("/preferredVersion/version", json!("v2")),
                get("/apis/autoscaling/v2")
                    .contains(r#""name":"horizontalpodautoscalers","singularName":"horizontalpodautoscaler","namespaced":true,"kind":"HorizontalPodAutoscaler""#)
                    .contains(r#""shortNames":["hpa"],"categories":["all"]"#)
                    .contains(r#""name":"horizontalpodautoscalers/status""#),
                get("/apis/autoscaling/v1").contains(r#""name":"horizontalpodautoscalers/status""#),
            ],
        ),
    ]
}
