//! Discovery as a controller reads it (client-go's `ServerPreferredNamespacedResources` and
//! `ServerPreferredResources`): every group's preferred version's resources, subresources left out, with
//! their verbs, so that the namespace controller can empty a namespace of every kind and the garbage
//! collector can watch every kind that can be deleted.

use serde_json::Value;

use super::{ApiResource, Client, ClientError};

/// One discovered resource and the verbs it supports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Discovered {
    pub resource: ApiResource,
    pub verbs: Vec<String>,
}

impl Discovered {
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }
}

/// Why discovery was partial: the group versions that failed, with their errors (client-go's
/// `ErrGroupDiscoveryFailed`), beside what was found.
#[derive(Clone, Debug, Default)]
pub struct Discovery {
    pub resources: Vec<Discovered>,
    pub failed: Vec<(String, ClientError)>,
}

/// The resources of one group version's `APIResourceList`.
fn resources_of(group: &str, version: &str, list: &Value) -> Vec<Discovered> {
    let mut out = Vec::new();
    for r in list.get("resources").and_then(Value::as_array).into_iter().flatten() {
        let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
        if name.is_empty() || name.contains('/') {
            continue;
        }
        let kind = r.get("kind").and_then(Value::as_str).unwrap_or_default();
        let namespaced = r.get("namespaced").and_then(Value::as_bool).unwrap_or(false);
        let verbs = r
            .get("verbs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect();
        out.push(Discovered { resource: ApiResource::new(group, version, name, kind, namespaced), verbs });
    }
    out
}

/// Every group's preferred version's resources. A group version whose list fails is reported in `failed`
/// and the rest is still returned; only failing to read the group lists themselves is an error.
pub async fn preferred_resources(client: &Client) -> Result<Discovery, ClientError> {
    let mut versions: Vec<(String, String)> = Vec::new();
    let core = client.get("/api").await?;
    if let Some(v) = core.pointer("/versions/0").and_then(Value::as_str) {
        versions.push((String::new(), v.to_string()));
    }
    let groups = client.get("/apis").await?;
    for g in groups.get("groups").and_then(Value::as_array).into_iter().flatten() {
        let name = g.get("name").and_then(Value::as_str).unwrap_or_default();
        let preferred = g.pointer("/preferredVersion/version").and_then(Value::as_str);
        let first = g.pointer("/versions/0/version").and_then(Value::as_str);
        if let Some(version) = preferred.or(first) {
            versions.push((name.to_string(), version.to_string()));
        }
    }
    let mut discovery = Discovery::default();
    for (group, version) in versions {
        let path = if group.is_empty() { format!("/api/{version}") } else { format!("/apis/{group}/{version}") };
        match client.get(&path).await {
            Ok(list) => discovery.resources.extend(resources_of(&group, &version, &list)),
            Err(err) => {
                let gv = if group.is_empty() { version } else { format!("{group}/{version}") };
                discovery.failed.push((gv, err));
            }
        }
    }
    Ok(discovery)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn subresources_are_left_out_and_scope_is_kept() {
        let list = json!({"resources": [
            {"name": "pods", "kind": "Pod", "namespaced": true, "verbs": ["get", "delete", "deletecollection"]},
            {"name": "pods/status", "kind": "Pod", "namespaced": true, "verbs": ["get"]},
            {"name": "nodes", "kind": "Node", "namespaced": false, "verbs": ["get"]},
        ]});
        let found = resources_of("", "v1", &list);
        assert_eq!(found.len(), 2);
        assert!(found[0].resource.namespaced && found[0].supports("deletecollection"));
        assert!(!found[1].resource.namespaced && !found[1].supports("delete"));
    }
}
