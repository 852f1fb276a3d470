//! The tests of [`super`]: its upstream validation messages, defaults, update rules and printer.

use super::*;
use crate::registry::field_error::messages;
use crate::registry::meta;

fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    meta::get(obj, "annotations").and_then(|a| a.get(key)).and_then(Value::as_str)
}

fn v2_object(spec: Value, status: Value) -> Value {
    json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "ns", "annotations": {"team": "a"}}, "spec": spec, "status": status})
}

fn reference() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"})
}

fn pods_metric() -> Value {
    json!({"type": "Pods", "pods": {"metric": {"name": "qps", "selector": {"matchLabels": {"app": "web"}}}, "target": {"type": "AverageValue", "averageValue": "10"}}})
}

fn behavior() -> Value {
    json!({"scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}]},
        "scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Min", "policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}]}})
}

#[test]
fn v2_objects_survive_a_trip_through_v1() {
    let status_full = json!({"currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": [
        {"type": "Pods", "pods": {"metric": {"name": "qps"}, "current": {"averageValue": "7"}}},
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageValue": "120m", "averageUtilization": 40}}}],
        "conditions": [{"type": "AbleToScale", "status": "True", "lastTransitionTime": "2024-01-02T03:04:05Z", "reason": "ReadyForNewScale"}]});
    let cases: Vec<(&str, Value, Value)> = vec![
        (
            "two metrics and a behavior",
            json!({"scaleTargetRef": reference(), "minReplicas": 2, "maxReplicas": 5, "metrics": [pods_metric(), cpu_utilization_metric(50)], "behavior": behavior()}),
            json!({"desiredReplicas": 0, "currentMetrics": null}),
        ),
        (
            "the CPU target alone",
            json!({"scaleTargetRef": reference(), "minReplicas": 1, "maxReplicas": 3, "metrics": [cpu_utilization_metric(80)]}),
            json!({"desiredReplicas": 0, "currentMetrics": null}),
        ),
        (
            "memory by value, an external metric, a status with metrics and conditions",
            json!({"scaleTargetRef": reference(), "minReplicas": 1, "maxReplicas": 3, "metrics": [
                {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}}},
                {"type": "External", "external": {"metric": {"name": "queue", "selector": {"matchExpressions": [{"key": "q", "operator": "In", "values": ["a"]}]}}, "target": {"type": "Value", "value": "30"}}}]}),
            status_full,
        ),
    ];
    for (name, spec, status) in cases {
        let original = v2_object(spec, status);
        let v1 = to_v1(original.clone());
        assert_eq!(v1["apiVersion"], "autoscaling/v1", "{name}");
        assert_eq!(to_storage(v1), original, "{name}");
    }
}

#[test]
fn v2_converts_to_v1_with_upstream_annotations() {
    let spec = json!({"scaleTargetRef": reference(), "minReplicas": 2, "maxReplicas": 5, "metrics": [pods_metric(), cpu_utilization_metric(50)], "behavior": behavior()});
    let status = json!({"desiredReplicas": 3, "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40}}}],
        "conditions": [{"type": "ScalingActive", "status": "False", "reason": "FailedGetResourceMetric", "message": "no <metrics>"}]});
    let v1 = to_v1(v2_object(spec, status));
    assert_eq!(
        v1["spec"],
        json!({"scaleTargetRef": reference(), "minReplicas": 2, "maxReplicas": 5, "targetCPUUtilizationPercentage": 50})
    );
    assert_eq!(
        v1["status"],
        json!({"currentReplicas": 0, "desiredReplicas": 3, "currentCPUUtilizationPercentage": 40})
    );
    let cases = [
        ("team", "a"),
        (
            METRICS_ANNOTATION,
            r#"[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10","selector":{"matchLabels":{"app":"web"}}}}]"#,
        ),
        (
            BEHAVIOR_ANNOTATION,
            r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15}]},"ScaleDown":{"StabilizationWindowSeconds":300,"SelectPolicy":"Min","Policies":[{"Type":"Percent","Value":10,"PeriodSeconds":60}]}}"#,
        ),
        (
            CURRENT_METRICS_ANNOTATION,
            r#"[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":40,"currentAverageValue":"0"}}]"#,
        ),
        (
            CONDITIONS_ANNOTATION,
            r#"[{"type":"ScalingActive","status":"False","lastTransitionTime":null,"reason":"FailedGetResourceMetric","message":"no \u003cmetrics\u003e"}]"#,
        ),
    ];
    for (key, want) in cases {
        assert_eq!(annotation(&v1, key), Some(want), "{key}");
    }
    let plain = to_v1(v2_object(
        json!({"scaleTargetRef": reference(), "maxReplicas": 1, "metrics": [cpu_utilization_metric(80)]}),
        json!({}),
    ));
    assert_eq!(plain["metadata"]["annotations"], json!({"team": "a"}));
    assert_eq!(plain["spec"].get("minReplicas"), None);
}

#[test]
fn v1_converts_to_v2_as_upstream_reads_it() {
    let v1 = |annotations: Value, spec: Value| json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web", "annotations": annotations}, "spec": spec});
    let base = json!({"scaleTargetRef": reference(), "maxReplicas": 3});
    let with_cpu = json!({"scaleTargetRef": reference(), "maxReplicas": 3, "targetCPUUtilizationPercentage": 60});
    let cases: Vec<(&str, Value, Value)> = vec![
        ("no metric: the CPU default", v1(json!({}), base.clone()), json!([cpu_utilization_metric(80)])),
        ("the CPU target", v1(json!({}), with_cpu.clone()), json!([cpu_utilization_metric(60)])),
        (
            "annotated metrics first, the CPU target last",
            v1(
                json!({METRICS_ANNOTATION: r#"[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]"#}),
                with_cpu.clone(),
            ),
            json!([{"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}}, cpu_utilization_metric(60)]),
        ),
        (
            "an object metric gets a value of 0 beside its average",
            v1(
                json!({METRICS_ANNOTATION: r#"[{"type":"Object","object":{"target":{"kind":"Service","name":"web"},"metricName":"rps","averageValue":"5"}}]"#}),
                base.clone(),
            ),
            json!([{"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "web"}, "metric": {"name": "rps"}, "target": {"type": "AverageValue", "value": "0", "averageValue": "5"}}}]),
        ),
        (
            "an annotation that does not parse is ignored",
            v1(json!({METRICS_ANNOTATION: "abc"}), base.clone()),
            json!([cpu_utilization_metric(80)]),
        ),
    ];
    for (name, obj, want) in cases {
        let converted = to_v2(obj);
        assert_eq!(converted["spec"]["metrics"], want, "{name}");
        let annotations = converted["metadata"].get("annotations").and_then(Value::as_object);
        assert!(annotations.is_none_or(Map::is_empty), "{name}: {converted}");
    }
    let behaviors: Vec<(&str, Option<Value>)> = vec![
        (
            r#"{"ScaleUp":{"StabilizationWindowSeconds":30,"SelectPolicy":"Min","Policies":null},"ScaleDown":null}"#,
            Some(json!({"scaleUp": {"stabilizationWindowSeconds": 30, "selectPolicy": "Min"}})),
        ),
        (
            r#"{"scaleDown":{"policies":[{"type":"Pods","value":1,"periodSeconds":60}]}}"#,
            Some(json!({"scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}})),
        ),
        ("{}", None),
        (r#"{"ScaleUp":{"StabilizationWindowSeconds":"long"}}"#, None),
        ("[]", None),
    ];
    for (text, want) in behaviors {
        assert_eq!(behavior_v2(text), want, "{text}");
    }
}

#[test]
fn v1_requests_are_defaulted_and_validated_as_their_v2_object() {
    let s = HorizontalPodAutoscalersV1;
    let mut obj = json!({"metadata": {"name": "web", "namespace": "ns"}, "spec": {"scaleTargetRef": reference(), "maxReplicas": 3}});
    s.decode(&mut obj);
    assert_eq!(obj["spec"]["minReplicas"], 1);
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"targetCPUUtilizationPercentage": 0}),
            vec!["spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"],
        ),
        (
            json!({"maxReplicas": 0}),
            vec![
                "spec.maxReplicas: Invalid value: 0: must be greater than 0",
                "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`",
            ],
        ),
    ];
    for (changes, want) in cases {
        let mut bad = obj.clone();
        for (k, v) in changes.as_object().expect("an object") {
            bad["spec"][k] = v.clone();
        }
        assert_eq!(messages(s.validate(&bad)), want);
    }
    let mut unfinished = obj.clone();
    unfinished["metadata"]["annotations"] =
        json!({BEHAVIOR_ANNOTATION: r#"{"ScaleUp":{"StabilizationWindowSeconds":30}}"#});
    assert_eq!(
        messages(s.validate(&unfinished)),
        ["spec.behavior.scaleUp.policies: Required value: must specify at least one Policy"]
    );
    assert_eq!(messages(s.validate(&obj)), Vec::<String>::new());
}

#[test]
fn status_and_its_annotations_belong_to_the_subresource() {
    let s = HorizontalPodAutoscalersV1;
    let stored = to_v1(v2_object(
        json!({"scaleTargetRef": reference(), "minReplicas": 1, "maxReplicas": 3, "metrics": [pods_metric()]}),
        json!({"desiredReplicas": 2, "conditions": [{"type": "AbleToScale", "status": "True", "lastTransitionTime": "2024-01-02T03:04:05Z"}]}),
    ));
    let mut created = stored.clone();
    s.prepare_for_create(&mut created);
    assert_eq!(created["status"], json!({"currentReplicas": 0, "desiredReplicas": 0}));
    assert_eq!(annotation(&created, CONDITIONS_ANNOTATION), None);
    assert!(annotation(&created, METRICS_ANNOTATION).is_some());
    let mut update = stored.clone();
    update["status"] = json!({"desiredReplicas": 9});
    set_annotation(&mut update, CONDITIONS_ANNOTATION, None);
    s.prepare_for_update(&mut update, &stored);
    assert_eq!(update["status"], stored["status"]);
    assert_eq!(annotation(&update, CONDITIONS_ANNOTATION), annotation(&stored, CONDITIONS_ANNOTATION));
    let mut via_status = stored.clone();
    via_status["spec"]["maxReplicas"] = json!(7);
    via_status["status"]["desiredReplicas"] = json!(-1);
    set_annotation(&mut via_status, METRICS_ANNOTATION, None);
    s.prepare_for_subresource_update(Subresource::Status, &mut via_status, &stored);
    assert_eq!(via_status["spec"], stored["spec"]);
    assert_eq!(annotation(&via_status, METRICS_ANNOTATION), annotation(&stored, METRICS_ANNOTATION));
    assert_eq!(
        messages(s.validate_subresource_update(Subresource::Status, &via_status, &stored)),
        ["status.desiredReplicas: Invalid value: -1: must be greater than or equal to 0"]
    );
}

#[test]
fn v1_prints_as_v2_does() {
    let v1 = to_v1(v2_object(
        json!({"scaleTargetRef": reference(), "minReplicas": 2, "maxReplicas": 5, "metrics": [cpu_utilization_metric(80)]}),
        json!({}),
    ));
    assert_eq!(
        (info().printer.cells)(&v1, 0, &[]),
        vec![
            json!("web"),
            json!("Deployment/web"),
            json!("cpu: <unknown>/80%"),
            json!("2"),
            json!(5),
            json!(0),
            json!("<unknown>")
        ]
    );
}
