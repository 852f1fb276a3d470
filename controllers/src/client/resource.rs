//! Which resource a request is about and where it lives: `ApiResource` (group, version, plural, kind,
//! scope) and its REST paths, and the built-in resources the controllers use.

use super::query_escape;

/// One resource of one group version, as discovery describes it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApiResource {
    /// "" for the core group.
    pub group: String,
    pub version: String,
    /// The plural, lower case (`pods`, `replicasets`).
    pub resource: String,
    pub kind: String,
    pub namespaced: bool,
}

impl ApiResource {
    pub fn new(group: &str, version: &str, resource: &str, kind: &str, namespaced: bool) -> ApiResource {
        ApiResource {
            group: group.into(),
            version: version.into(),
            resource: resource.into(),
            kind: kind.into(),
            namespaced,
        }
    }

    /// `v1` for the core group, `group/version` otherwise.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `/api/v1` or `/apis/group/version`.
    fn prefix(&self) -> String {
        if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        }
    }

    /// The collection: every namespace's with `None` (or a cluster-scoped resource's), one namespace's
    /// otherwise.
    pub fn collection_path(&self, namespace: Option<&str>) -> String {
        match namespace.filter(|_| self.namespaced) {
            Some(ns) => format!("{}/namespaces/{}/{}", self.prefix(), query_escape(ns), self.resource),
            None => format!("{}/{}", self.prefix(), self.resource),
        }
    }

    /// One object.
    pub fn object_path(&self, namespace: Option<&str>, name: &str) -> String {
        format!("{}/{}", self.collection_path(namespace), query_escape(name))
    }

    /// One object's subresource (`status`, `finalize`, `binding`).
    pub fn subresource_path(&self, namespace: Option<&str>, name: &str, subresource: &str) -> String {
        format!("{}/{subresource}", self.object_path(namespace, name))
    }

    /// `resource.group` (`deployments.apps`, `pods`), as RBAC and messages name it.
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
}

/// The built-in resources the controllers read and write.
pub mod builtin {
    use super::ApiResource;

    pub fn namespaces() -> ApiResource {
        ApiResource::new("", "v1", "namespaces", "Namespace", false)
    }
    pub fn service_accounts() -> ApiResource {
        ApiResource::new("", "v1", "serviceaccounts", "ServiceAccount", true)
    }
    pub fn config_maps() -> ApiResource {
        ApiResource::new("", "v1", "configmaps", "ConfigMap", true)
    }
    pub fn pods() -> ApiResource {
        ApiResource::new("", "v1", "pods", "Pod", true)
    }
    pub fn events() -> ApiResource {
        ApiResource::new("", "v1", "events", "Event", true)
    }
    pub fn leases() -> ApiResource {
        ApiResource::new("coordination.k8s.io", "v1", "leases", "Lease", true)
    }
    pub fn replica_sets() -> ApiResource {
        ApiResource::new("apps", "v1", "replicasets", "ReplicaSet", true)
    }
    pub fn deployments() -> ApiResource {
        ApiResource::new("apps", "v1", "deployments", "Deployment", true)
    }
    pub fn jobs() -> ApiResource {
        ApiResource::new("batch", "v1", "jobs", "Job", true)
    }
    pub fn nodes() -> ApiResource {
        ApiResource::new("", "v1", "nodes", "Node", false)
    }
    pub fn services() -> ApiResource {
        ApiResource::new("", "v1", "services", "Service", true)
    }
    pub fn endpoints() -> ApiResource {
        ApiResource::new("", "v1", "endpoints", "Endpoints", true)
    }
    pub fn persistent_volume_claims() -> ApiResource {
        ApiResource::new("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true)
    }
    pub fn endpoint_slices() -> ApiResource {
        ApiResource::new("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", true)
    }
    pub fn stateful_sets() -> ApiResource {
        ApiResource::new("apps", "v1", "statefulsets", "StatefulSet", true)
    }
    pub fn controller_revisions() -> ApiResource {
        ApiResource::new("apps", "v1", "controllerrevisions", "ControllerRevision", true)
    }
    pub fn daemon_sets() -> ApiResource {
        ApiResource::new("apps", "v1", "daemonsets", "DaemonSet", true)
    }
    pub fn cron_jobs() -> ApiResource {
        ApiResource::new("batch", "v1", "cronjobs", "CronJob", true)
    }
    pub fn pod_disruption_budgets() -> ApiResource {
        ApiResource::new("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true)
    }
    pub fn resource_quotas() -> ApiResource {
        ApiResource::new("", "v1", "resourcequotas", "ResourceQuota", true)
    }
    pub fn cluster_roles() -> ApiResource {
        ApiResource::new("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_of_core_and_grouped_resources() {
        let cases = [
            (builtin::pods(), Some("ns"), "p", "/api/v1/namespaces/ns/pods/p"),
            (builtin::namespaces(), Some("ignored"), "n", "/api/v1/namespaces/n"),
            (
                builtin::leases(),
                Some("kube-system"),
                "kcm",
                "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kcm",
            ),
            (
                ApiResource::new("apps", "v1", "deployments", "Deployment", true),
                None,
                "d",
                "/apis/apps/v1/deployments/d",
            ),
        ];
        for (resource, ns, name, want) in cases {
            assert_eq!(resource.object_path(ns, name), want);
        }
        assert_eq!(builtin::leases().api_version(), "coordination.k8s.io/v1");
        assert_eq!(builtin::pods().group_resource(), "pods");
    }
}
