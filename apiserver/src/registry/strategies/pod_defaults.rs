//! The v1 defaults of a pod spec (`KK/pkg/apis/core/v1/defaults.go`: `SetDefaults_PodSpec`,
//! `SetDefaults_Container`, `SetDefaults_ContainerPort`), applied to pods and to the pod templates of
//! workloads, so that what a client reads back has the fields kube-apiserver fills in. What the admission
//! plugins add to a new pod (the service account's token volume, its priority, default tolerations, a
//! limit range's defaults) is theirs (`crate::admission::plugins`), and runs before these defaults.

use serde_json::{json, Map, Value};

/// `DefaultTerminationGracePeriodSeconds`: what a pod without `spec.terminationGracePeriodSeconds` gets.
pub(crate) const DEFAULT_TERMINATION_GRACE_PERIOD_S: i64 = 30;

/// Fills in what a pod spec leaves out.
pub(crate) fn default_pod_spec(spec: &mut Value) {
    let Some(spec) = spec.as_object_mut() else { return };
    let mut default = |key: &str, value: Value| {
        let missing = match spec.get(key) {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            _ => false,
        };
        if missing {
            spec.insert(key.to_string(), value);
        }
    };
    default("dnsPolicy", json!("ClusterFirst"));
    default("restartPolicy", json!("Always"));
    default("terminationGracePeriodSeconds", json!(DEFAULT_TERMINATION_GRACE_PERIOD_S));
    default("securityContext", json!({}));
    default("schedulerName", json!("default-scheduler"));
    for list in ["initContainers", "containers"] {
        if let Some(Value::Array(containers)) = spec.get_mut(list) {
            for container in containers.iter_mut().filter_map(Value::as_object_mut) {
                default_container(container);
            }
        }
    }
}

/// `SetDefaults_Pod`, beyond its spec's defaults: service links on, and every container's requests
/// defaulted to its limits where it names none (pods only, not the templates of workloads).
pub(crate) fn default_pod(spec: &mut Value) {
    let Some(spec) = spec.as_object_mut() else { return };
    spec.entry("enableServiceLinks").or_insert(json!(true));
    for list in ["initContainers", "containers"] {
        let Some(Value::Array(containers)) = spec.get_mut(list) else { continue };
        for resources in containers.iter_mut().filter_map(|c| c.get_mut("resources")) {
            let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else { continue };
            let Some(resources) = resources.as_object_mut() else { continue };
            let requests = resources.entry("requests").or_insert_with(|| json!({}));
            if let Some(requests) = requests.as_object_mut() {
                for (name, quantity) in limits {
                    requests.entry(name).or_insert(quantity);
                }
            }
        }
    }
}

/// `SetDefaults_Container` and its ports.
fn default_container(container: &mut Map<String, Value>) {
    let image = container.get("image").and_then(Value::as_str).unwrap_or("").to_string();
    let missing = |c: &Map<String, Value>, key: &str| c.get(key).and_then(Value::as_str).unwrap_or("").is_empty();
    if missing(container, "imagePullPolicy") {
        container.insert("imagePullPolicy".into(), Value::from(image_pull_policy(&image)));
    }
    if missing(container, "terminationMessagePath") {
        container.insert("terminationMessagePath".into(), Value::from("/dev/termination-log"));
    }
    if missing(container, "terminationMessagePolicy") {
        container.insert("terminationMessagePolicy".into(), Value::from("File"));
    }
    container.entry("resources").or_insert_with(|| json!({}));
    if let Some(Value::Array(ports)) = container.get_mut("ports") {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            if port.get("protocol").and_then(Value::as_str).unwrap_or("").is_empty() {
                port.insert("protocol".into(), Value::from("TCP"));
            }
        }
    }
}

/// `Always` for an image without a tag or tagged `latest` (and not pinned by digest), else `IfNotPresent`.
fn image_pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    // The tag is what follows the last ':' after the last '/' (a registry's port is not a tag).
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.rsplit_once(':') {
        Some((_, tag)) if tag != "latest" => "IfNotPresent",
        _ => "Always",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policy_follows_the_tag() {
        assert_eq!(image_pull_policy("nginx"), "Always");
        assert_eq!(image_pull_policy("nginx:latest"), "Always");
        assert_eq!(image_pull_policy("nginx:1.27"), "IfNotPresent");
        assert_eq!(image_pull_policy("localhost:5000/nginx"), "Always");
        assert_eq!(image_pull_policy("nginx@sha256:abc"), "IfNotPresent");
    }

    #[test]
    fn a_spec_gets_v1s_defaults() {
        let mut spec =
            json!({"containers": [{"name": "c", "image": "busybox:1.36", "ports": [{"containerPort": 80}]}]});
        default_pod_spec(&mut spec);
        assert_eq!(spec["restartPolicy"], "Always");
        assert_eq!(spec["dnsPolicy"], "ClusterFirst");
        assert_eq!(spec["containers"][0]["imagePullPolicy"], "IfNotPresent");
        assert_eq!(spec["containers"][0]["ports"][0]["protocol"], "TCP");
        let mut kept = json!({"restartPolicy": "Never", "containers": []});
        default_pod_spec(&mut kept);
        assert_eq!(kept["restartPolicy"], "Never");
    }
}
