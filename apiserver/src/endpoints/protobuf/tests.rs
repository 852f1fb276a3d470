//! Round trips of every field shape through protobuf, and decode errors in kube's words.

use serde_json::json;

use super::*;

#[test]
fn objects_round_trip_through_protobuf() {
    let cases = [
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "ns", "labels": {"x": "1"}, "creationTimestamp": "2024-01-02T03:04:05Z", "resourceVersion": "7", "uid": "u"},
            "data": {"k": "v"}, "binaryData": {"b": "AAEC"}, "immutable": true}),
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "deletionGracePeriodSeconds": 30},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}},
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "livenessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 5},
                "env": [{"name": "E", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}]}],
                "volumes": [{"name": "v", "configMap": {"name": "cm", "defaultMode": 420}}],
                "terminationGracePeriodSeconds": 0},
            "status": {"phase": "Running", "startTime": "2024-01-02T03:04:05Z"}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "generation": 3},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "d"}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
                "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}}),
        json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "e"}, "eventTime": "2024-01-02T03:04:05.123456Z", "reason": "Started"}),
    ];
    for obj in cases {
        let bytes = encode(&obj).unwrap();
        let back = decode(&bytes, "Object").unwrap();
        assert_eq!(back, obj, "round trip of {}", obj["kind"]);
    }
}

/// The body kubectl 1.32 POSTs for `kubectl create configmap x --from-literal=a=b`, byte for byte.
#[test]
fn kubectls_create_configmap_body_decodes() {
    let body = [
        0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0f, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x09, 0x43, 0x6f, 0x6e, 0x66, 0x69, 0x67,
        0x4d, 0x61, 0x70, 0x12, 0x1b, 0x0a, 0x11, 0x0a, 0x01, 0x78, 0x12, 0x00, 0x1a, 0x00, 0x22, 0x00, 0x2a, 0x00,
        0x32, 0x00, 0x38, 0x00, 0x42, 0x00, 0x12, 0x06, 0x0a, 0x01, 0x61, 0x12, 0x01, 0x62, 0x1a, 0x00, 0x22, 0x00,
    ];
    assert_eq!(
        decode(&body, "ConfigMap").unwrap(),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "b"}})
    );
}

#[test]
fn a_watch_frame_carries_an_enveloped_object() {
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}});
    let frame = watch_frame("MODIFIED", &obj, "v1", "ConfigMap").unwrap();
    let (kind, back) = read_watch_frame(&frame[4..]).unwrap();
    assert_eq!(kind, "MODIFIED");
    assert_eq!(back, obj);
}

#[test]
fn bodies_that_are_not_protobuf_are_refused_in_kubes_words() {
    let err = decode(b"{\"kind\":\"ConfigMap\"}", "ConfigMap").unwrap_err();
    assert_eq!(
        err.to_status().message.unwrap(),
        "the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({\"kind\":\"ConfigMap\"})"
    );
    let unknown_kind = envelope::seal("v1", "Widget", b"");
    assert_eq!(
        decode(&unknown_kind, "ConfigMap").unwrap_err().to_status().message.unwrap(),
        r#"Widget in version "v1" cannot be handled as a ConfigMap: no kind "Widget" is registered for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30""#
    );
    let truncated = envelope::seal("v1", "ConfigMap", b"\x0a\x05ab");
    assert!(decode(&truncated, "ConfigMap")
        .unwrap_err()
        .to_status()
        .message
        .unwrap()
        .starts_with(r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: proto: "#));
}

#[test]
fn times_durations_and_metadata_read_as_go_writes_them() {
    use super::convert::{go_duration, parse_go_duration, parse_rfc3339};
    assert_eq!(parse_rfc3339("2026-11-21T11:35:07+00:00"), Some((1_795_260_907, 0)));
    assert_eq!(parse_rfc3339("2026-11-21T12:35:07+01:00"), Some((1_795_260_907, 0)));
    assert_eq!(parse_rfc3339("2026-11-21T11:35:07.5Z"), Some((1_795_260_907, 500_000_000)));
    for (nanos, text) in [
        (0, "0s"),
        (1_500_000_000, "1.5s"),
        (90_000_000_000, "1m30s"),
        (3_600_000_000_000, "1h0m0s"),
        (500_000_000, "500ms"),
    ] {
        assert_eq!(go_duration(nanos), text);
        assert_eq!(parse_go_duration(text), Some(nanos), "{text}");
    }
    // What a Go client's protobuf carries for an object it has not named yet: empty metadata strings.
    let desc = descriptors::message("v1", "ConfigMap").unwrap();
    let meta_only = json!({"metadata": {"name": "x", "namespace": "", "generateName": "", "generation": 0}});
    let bytes = convert::encode(&desc, &meta_only).unwrap();
    assert_eq!(convert::decode(&desc, &bytes).unwrap(), json!({"metadata": {"name": "x"}}));
}

/// Fields k8s-openapi's schemas have that Kubernetes 1.32's `.proto` files do not yet (added in 1.33 and
/// later); a 1.32 server does not know them either, so their protobuf form drops them.
const NEWER_THAN_1_32: &[(&str, &str)] = &[
    ("api.apps.v1.DeploymentStatus", "terminatingReplicas"),
    ("api.apps.v1.ReplicaSetStatus", "terminatingReplicas"),
    ("api.core.v1.ContainerStatus", "stopSignal"),
    ("api.core.v1.Lifecycle", "stopSignal"),
    ("api.core.v1.NodeSystemInfo", "swap"),
    ("api.core.v1.PodCondition", "observedGeneration"),
    ("api.core.v1.PodStatus", "observedGeneration"),
    ("api.autoscaling.v2.HPAScalingRules", "tolerance"),
    ("api.discovery.v1.EndpointHints", "forNodes"),
    ("api.storage.v1.CSIDriverSpec", "nodeAllocatableUpdatePeriodSeconds"),
    ("api.storage.v1.VolumeError", "errorCode"),
];

/// The JSON properties an inline field brings into its message: its message's fields, and theirs where they
/// are inline too (an admission webhook's rule inlines a rule with operations, which inlines a rule).
fn flattened(desc: &protobuf::reflect::MessageDescriptor, field: &protobuf::reflect::FieldDescriptor) -> Vec<String> {
    let protobuf::reflect::RuntimeFieldType::Singular(protobuf::reflect::RuntimeType::Message(inner)) =
        field.runtime_field_type()
    else {
        panic!("{}.{} is inline but not a message", desc.full_name(), field.name());
    };
    let mut names = Vec::new();
    for f in inner.fields() {
        if convert::INLINE.iter().any(|(m, n)| *m == inner.full_name() && *n == f.name()) {
            names.extend(flattened(&inner, &f));
        } else {
            names.push(convert::json_name(&inner, f.name()).to_string());
        }
    }
    names
}

/// Every message of a built-in kind in the OpenAPI table, and every message those reach, against the
/// kind's JSON schema (k8s-openapi's, from the Go types): each field is a JSON property of the same name,
/// unless it is an embedded struct in `convert::INLINE`, whose own fields are properties of the outer
/// object instead. A missing or wrong `INLINE` entry, or a field whose JSON name differs, fails here.
#[test]
fn inline_fields_are_the_ones_json_flattens() {
    use k8s_openapi::schemars::generate::SchemaSettings;
    let mut generator = SchemaSettings::openapi3().into_generator();
    for kind in crate::registry::kinds::all() {
        (kind.schema)(&mut generator);
    }
    let definitions = generator.take_definitions(true);
    let mut checked = 0;
    let mut mismatches = Vec::new();
    for (name, schema) in &definitions {
        let Some(proto_name) = name.strip_prefix("io.k8s.") else { continue };
        let Some(desc) =
            descriptors::by_full_name(&proto_name.replace("apiextensions-apiserver", "apiextensions_apiserver"))
        else {
            continue;
        };
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else { continue };
        let mut covered = std::collections::BTreeSet::new();
        for field in desc.fields() {
            let is_inline = convert::INLINE.iter().any(|(m, f)| *m == desc.full_name() && *f == field.name());
            let names: Vec<String> = if is_inline {
                flattened(&desc, &field)
            } else {
                vec![convert::json_name(&desc, field.name()).to_string()]
            };
            for n in names {
                if !properties.contains_key(&n) {
                    mismatches.push(format!("{}.{n}: no such JSON property", desc.full_name()));
                }
                covered.insert(n);
            }
        }
        for property in properties.keys() {
            let newer = NEWER_THAN_1_32.contains(&(desc.full_name(), property.as_str()));
            if !covered.contains(property) && property != "apiVersion" && property != "kind" && !newer {
                mismatches.push(format!("{}: JSON property {property} has no field", desc.full_name()));
            }
        }
        checked += 1;
    }
    assert!(checked > 250, "only {checked} messages were compared");
    assert!(mismatches.is_empty(), "{mismatches:#?}");
}
