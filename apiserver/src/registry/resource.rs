//! [`Resource`]: the small descriptor that names a resource (group, version, kind, plural, etcd prefix), shared
//! by the strategies, the decoder's type check and the store.

use crate::storage::status::GroupResource;

/// A resource as the registry names it: API group and version, kind, plural, and where its objects live
/// in etcd (relative to the store's path prefix, kube's `/registry/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    pub group: String,
    pub version: String,
    pub kind: String,
    /// The plural (`configmaps`): what URLs and most error messages name.
    pub plural: String,
    /// The etcd key prefix, usually the plural (`/registry/configmaps/...`).
    pub etcd_prefix: String,
}

impl Resource {
    /// A core-group (`v1`) resource stored under its plural.
    pub(crate) fn core(kind: &str, plural: &str) -> Resource {
        Resource {
            group: String::new(),
            version: "v1".into(),
            kind: kind.into(),
            plural: plural.into(),
            etcd_prefix: plural.into(),
        }
    }

    /// A resource of a named group stored under its plural.
    pub(crate) fn group(group: &str, version: &str, kind: &str, plural: &str) -> Resource {
        Resource {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
            etcd_prefix: plural.into(),
        }
    }

    /// An `apps/v1` resource stored under its plural.
    pub(crate) fn apps(kind: &str, plural: &str) -> Resource {
        Resource::group("apps", "v1", kind, plural)
    }

    pub fn group_resource(&self) -> GroupResource {
        GroupResource::new(&self.group, &self.plural)
    }

    /// `apiVersion` as objects carry it (`v1`, `apps/v1`).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}
