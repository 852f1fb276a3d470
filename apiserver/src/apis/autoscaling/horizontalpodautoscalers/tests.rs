//! The tests of [`super`]: its upstream validation messages, defaults, update rules and printer.

use super::*;
use crate::registry::field_error::messages;

fn hpa(spec: Value) -> Value {
    json!({"metadata": {"name": "web", "namespace": "ns"}, "spec": spec})
}

fn valid_spec() -> Value {
    json!({"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": 1, "maxReplicas": 3,
        "metrics": [cpu_utilization_metric(80)]})
}

fn with(changes: &[(&str, Value)]) -> Value {
    let mut spec = valid_spec();
    for (pointer, value) in changes {
        *spec.pointer_mut(pointer).expect("the pointer exists in the valid spec") = value.clone();
    }
    hpa(spec)
}

fn metric(m: Value) -> Value {
    with(&[("/metrics", json!([m]))])
}

#[test]
fn autoscalers_are_validated_as_upstream_validates_them() {
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (hpa(valid_spec()), vec![]),
        (
            metric(json!({"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}})),
            vec![],
        ),
        (with(&[("/minReplicas", json!(0))]), vec![
            "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
            "spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas",
        ]),
        (with(&[("/maxReplicas", json!(0))]), vec![
            "spec.maxReplicas: Invalid value: 0: must be greater than 0",
            "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`",
        ]),
        (with(&[("/minReplicas", json!(5))]), vec!["spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`"]),
        (with(&[("/scaleTargetRef", json!({"name": "a/b"}))]), vec![
            "spec.scaleTargetRef.kind: Required value",
            "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'",
        ]),
        (metric(json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 0}}})),
            vec!["spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"]),
        (metric(json!({"type": "Resource", "resource": {"target": {"type": "Percent"}}})), vec![
            "spec.metrics[0].resource.name: Required value: must specify a resource name",
            "spec.metrics[0].resource.target.type: Invalid value: \"Percent\": must be either Utilization, Value, or AverageValue",
            "spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization",
        ]),
        (metric(json!({"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi", "averageUtilization": 50}}})),
            vec!["spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization"]),
        (metric(json!({"type": "Pods", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}})),
            vec!["spec.metrics[0].pods: Required value: must populate information for the given metric source"]),
        (
            metric(json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
                "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1"}}})),
            vec!["spec.metrics[0].pods: Forbidden: must populate the given metric source only"],
        ),
        (metric(json!({"type": "Memory"})), vec![
            "spec.metrics[0].type: Unsupported value: \"Memory\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\"",
            "spec.metrics[0].type: Unsupported value: \"Memory\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\"",
        ]),
        (metric(json!({"type": "Pods", "pods": {"metric": {}, "target": {"type": "AverageValue"}}})), vec![
            "spec.metrics[0].pods.metric.name: Required value: must specify a metric name",
            "spec.metrics[0].pods.target.averageValue: Required value: must specify a positive target averageValue",
        ]),
        (metric(json!({"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "web"}, "metric": {"name": "rps"}, "target": {"type": "Value"}}})),
            vec!["spec.metrics[0].object.target.averageValue: Required value: must set either a target value or averageValue"]),
        (metric(json!({"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "1", "averageValue": "2"}}})),
            vec!["spec.metrics[0].external.target.value: Forbidden: may not set both a target value for metric and a per-pod target"]),
        (metric(json!({"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "Value"}}})),
            vec!["spec.metrics[0].external.target.averageValue: Required value: must set either a target value for metric or a per-pod target"]),
        (metric(json!({"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "Web_1", "target": {"type": "Utilization", "averageUtilization": 60}}})),
            vec!["spec.metrics[0].containerResource.container: Invalid value: \"Web_1\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]),
        (metric(json!({"type": "ContainerResource", "containerResource": {"target": {"type": "Utilization", "averageUtilization": 60}}})), vec![
            "spec.metrics[0].containerResource.name: Required value: must specify a resource name",
            "spec.metrics[0].containerResource.container: Required value: must specify a container",
        ]),
        (
            with(&[("/metrics", json!([{"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1"}}}]))])
                .pointer("/spec")
                .map(|s| {
                    let mut s = s.clone();
                    s["behavior"] = json!({"scaleUp": {"stabilizationWindowSeconds": 3601, "selectPolicy": "Fastest", "policies": [{"type": "Nodes", "value": 0, "periodSeconds": 1801}]},
                        "scaleDown": {"stabilizationWindowSeconds": -1, "policies": []}});
                    hpa(s)
                })
                .expect("a spec"),
            vec![
                "spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600",
                "spec.behavior.scaleUp.selectPolicy: Unsupported value: \"Fastest\": supported values: \"Disabled\", \"Max\", \"Min\"",
                "spec.behavior.scaleUp.policies[0].type: Unsupported value: \"Nodes\": supported values: \"Percent\", \"Pods\"",
                "spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero",
                "spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800",
                "spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: -1: must be greater than or equal to zero",
                "spec.behavior.scaleDown.policies: Required value: must specify at least one Policy",
            ],
        ),
        (
            json!({"metadata": {"name": "Web", "namespace": "ns"}, "spec": valid_spec()}),
            vec!["metadata.name: Invalid value: \"Web\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"],
        ),
    ];
    for (obj, want) in cases {
        assert_eq!(messages(validate_hpa(&obj, None)), want, "{obj}");
    }
}

#[test]
fn zero_min_replicas_stays_allowed_on_objects_that_have_it() {
    let mut old = with(&[("/minReplicas", json!(0))]);
    old["spec"]["metrics"] = json!([{"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "10"}}}]);
    let mut new = old.clone();
    new["spec"]["maxReplicas"] = json!(4);
    assert_eq!(messages(validate_hpa(&new, Some(&old))), Vec::<String>::new());
    let one = with(&[]);
    assert_eq!(
        messages(validate_hpa(&new, Some(&one))),
        ["spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"]
    );
}

#[test]
fn requests_are_defaulted_as_v2_decodes_them() {
    let mut obj = json!({"metadata": {"name": "web", "annotations": {METRICS_ANNOTATION: "[]", BEHAVIOR_ANNOTATION: "{}"}},
        "spec": {"maxReplicas": 3, "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}});
    decode_v2(&mut obj);
    assert_eq!(obj["metadata"].get("annotations"), None);
    assert_eq!(obj["spec"]["minReplicas"], 1);
    assert_eq!(obj["spec"]["metrics"], json!([cpu_utilization_metric(80)]));
    assert_eq!(obj["spec"]["behavior"]["scaleUp"], scale_up_defaults());
    assert_eq!(
        obj["spec"]["behavior"]["scaleDown"],
        json!({"stabilizationWindowSeconds": 60, "selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]})
    );
    let mut kept = json!({"metadata": {"annotations": {"a": "b", CONDITIONS_ANNOTATION: "[]"}}, "spec": {"minReplicas": 2, "metrics": [{"type": "Pods"}]}});
    decode_v2(&mut kept);
    assert_eq!(kept["metadata"]["annotations"], json!({"a": "b"}));
    assert_eq!(kept["spec"]["minReplicas"], 2);
    assert_eq!(kept["spec"]["metrics"], json!([{"type": "Pods"}]));
    assert_eq!(kept["spec"].get("behavior"), None);
}

#[test]
fn status_belongs_to_its_subresource() {
    let s = HorizontalPodAutoscalers;
    let mut obj = hpa(valid_spec());
    obj["status"] = json!({"currentReplicas": 3, "desiredReplicas": 4});
    s.prepare_for_create(&mut obj);
    assert_eq!(obj["status"], json!({"desiredReplicas": 0, "currentMetrics": null}));
    let mut stored = obj.clone();
    stored["status"] = json!({"currentReplicas": 2, "desiredReplicas": 2, "currentMetrics": null});
    let mut new = stored.clone();
    new["spec"]["maxReplicas"] = json!(9);
    new["status"] = json!({"desiredReplicas": 7});
    s.prepare_for_update(&mut new, &stored);
    assert_eq!(new["status"], stored["status"]);
    let mut via_status = stored.clone();
    via_status["spec"]["maxReplicas"] = json!(9);
    via_status["status"] = json!({"currentReplicas": 0, "desiredReplicas": -1, "currentMetrics": []});
    s.prepare_for_subresource_update(Subresource::Status, &mut via_status, &stored);
    assert_eq!(via_status["spec"], stored["spec"]);
    assert_eq!(via_status["status"], json!({"desiredReplicas": -1, "currentMetrics": null}));
    assert_eq!(
        messages(s.validate_subresource_update(Subresource::Status, &via_status, &stored)),
        ["status.desiredReplicas: Invalid value: -1: must be greater than or equal to 0"]
    );
}

#[test]
fn the_targets_cell_follows_format_hpa_metrics() {
    let cpu = cpu_utilization_metric(80);
    let pods = json!({"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}});
    let memory = json!({"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}}});
    let external = json!({"type": "External", "external": {"metric": {"name": "q"}, "target": {"type": "AverageValue", "averageValue": "30"}}});
    let object =
        json!({"type": "Object", "object": {"metric": {"name": "rps"}, "target": {"type": "Value", "value": "5"}}});
    let cases: Vec<(Vec<Value>, Vec<Value>, &str)> = vec![
        (vec![], vec![], "<none>"),
        (vec![cpu.clone()], vec![], "cpu: <unknown>/80%"),
        (
            vec![cpu.clone()],
            vec![
                json!({"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 42, "averageValue": "100m"}}}),
            ],
            "cpu: 42%/80%",
        ),
        (
            vec![json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}})],
            vec![],
            "cpu: <unknown>/<auto>",
        ),
        (vec![pods.clone(), memory.clone()], vec![], "<unknown>/10, memory: <unknown>/1Gi"),
        (
            vec![pods.clone(), memory.clone()],
            vec![
                json!({"type": "Pods", "pods": {"current": {"averageValue": "7"}}}),
                json!({"type": "Resource", "resource": {"current": {"averageValue": "512Mi"}}}),
            ],
            "7/10, memory: 512Mi/1Gi",
        ),
        (vec![external, object, cpu.clone()], vec![], "<unknown>/30 (avg), <unknown>/5 + 1 more..."),
        (vec![json!({"type": "Bogus"})], vec![], "<unknown type>"),
    ];
    for (specs, statuses, want) in cases {
        assert_eq!(format_metrics(&specs, &statuses), want);
    }
}

#[test]
fn the_printer_shows_reference_bounds_and_replicas() {
    let mut obj = hpa(valid_spec());
    obj["status"] = json!({"currentReplicas": 2, "desiredReplicas": 2, "currentMetrics": null});
    assert_eq!(
        (printer().cells)(&obj, 0, &[]),
        vec![
            json!("web"),
            json!("Deployment/web"),
            json!("cpu: <unknown>/80%"),
            json!("1"),
            json!(3),
            json!(2),
            json!("<unknown>")
        ]
    );
    obj["spec"].as_object_mut().map(|s| s.remove("minReplicas"));
    assert_eq!((printer().cells)(&obj, 0, &[])[3], json!("<unset>"));
    let names: Vec<String> = columns().iter().map(|c| c.name.to_string()).collect();
    assert_eq!(names, ["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"]);
    assert!(columns().iter().all(|c| c.kind == "string" && c.priority == 0));
}
