//! Which protobuf message a kind is: the descriptors of Kubernetes' `.proto` contract for the served API
//! groups (gathered by `build.rs` from the `k8s-rs-pb` crate), looked up by `apiVersion` and `kind`.
//!
//! The crate names its packages after the source tree (`api.core.v1`, `api.apps.v1`,
//! `apimachinery.pkg.apis.meta.v1`) rather than upstream's `k8s.io.api.core.v1`; names never travel on the
//! wire, only field numbers do, so the bytes are upstream's.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use protobuf::descriptor::FileDescriptorSet;
use protobuf::reflect::{FileDescriptor, MessageDescriptor};
use protobuf::Message as _;

/// protoc's descriptors of every Kubernetes `generated.proto`, dependencies before dependents.
static DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/k8s-descriptors.pb"));

/// Every file of the contract, linked. Built once; the set is fixed at compile time, so a failure is a
/// build defect and panics.
fn files() -> &'static [FileDescriptor] {
    static FILES: OnceLock<Vec<FileDescriptor>> = OnceLock::new();
    FILES.get_or_init(|| {
        let set =
            FileDescriptorSet::parse_from_bytes(DESCRIPTOR_SET).expect("build.rs writes a valid FileDescriptorSet");
        FileDescriptor::new_dynamic_fds(set.file, &[]).expect("Kubernetes' descriptors link")
    })
}

/// The file key of a package: the group's short name and the version, as `file_key` derives them from an
/// `apiVersion` (`api.core.v1` is `core/v1`, `apimachinery.pkg.apis.meta.v1` is `meta/v1`). Packages of no
/// served group (`apimachinery.pkg.runtime`, `metrics.…`, `kube_aggregator.…`) have none.
fn package_key(package: &str) -> Option<String> {
    let rest = package
        .strip_prefix("api.")
        .or_else(|| package.strip_prefix("apimachinery.pkg.apis."))
        .or_else(|| package.strip_prefix("apiextensions_apiserver.pkg.apis."))?;
    let (group, version) = rest.split_once('.')?;
    (!version.contains('.')).then(|| format!("{group}/{version}"))
}

/// The file key of an `apiVersion`: `v1` is the core group, `meta.k8s.io/v1` apimachinery's meta, and a
/// named group is known by its first label (`rbac.authorization.k8s.io/v1` is `rbac/v1`).
fn file_key(api_version: &str) -> String {
    match api_version.split_once('/') {
        None => format!("core/{api_version}"),
        Some(("meta.k8s.io", version)) => format!("meta/{version}"),
        Some((group, version)) => format!("{}/{version}", group.split('.').next().unwrap_or(group)),
    }
}

/// Every message by (file key, kind).
fn index() -> &'static BTreeMap<(String, String), MessageDescriptor> {
    static INDEX: OnceLock<BTreeMap<(String, String), MessageDescriptor>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index = BTreeMap::new();
        for file in files() {
            let Some(key) = package_key(file.proto().package()) else { continue };
            for message in file.messages() {
                index.insert((key.clone(), message.name().to_string()), message);
            }
        }
        index
    })
}

/// The message named `full_name` (`api.core.v1.Probe`), in any file: the tests look messages up by name,
/// the conversion walks them from the kinds' descriptors.
#[cfg(test)]
pub(crate) fn by_full_name(full_name: &str) -> Option<MessageDescriptor> {
    let dotted = format!(".{full_name}");
    files().iter().find_map(|f| f.message_by_full_name(&dotted))
}

/// The message of `kind` in `api_version`. `Status`, `DeleteOptions`, `WatchEvent` and the other meta
/// types are found in any group's version, as kube registers them in every group.
pub(crate) fn message(api_version: &str, kind: &str) -> Option<MessageDescriptor> {
    let index = index();
    index
        .get(&(file_key(api_version), kind.to_string()))
        .or_else(|| index.get(&("meta/v1".to_string(), kind.to_string())))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_find_their_messages() {
        let cases = [
            ("v1", "ConfigMap", "api.core.v1.ConfigMap"),
            ("apps/v1", "Deployment", "api.apps.v1.Deployment"),
            ("coordination.k8s.io/v1", "Lease", "api.coordination.v1.Lease"),
            ("events.k8s.io/v1", "Event", "api.events.v1.Event"),
            ("rbac.authorization.k8s.io/v1", "Role", "api.rbac.v1.Role"),
            ("v1", "Status", "apimachinery.pkg.apis.meta.v1.Status"),
            ("v1", "DeleteOptions", "apimachinery.pkg.apis.meta.v1.DeleteOptions"),
            (
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                "apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
            ),
        ];
        for (api_version, kind, want) in cases {
            let found = message(api_version, kind).map(|m| m.full_name().to_string());
            assert_eq!(found.as_deref(), Some(want), "{api_version} {kind}");
        }
        assert!(message("example.com/v1", "Widget").is_none());
        // Tables are JSON only upstream too (metav1.Table is `+protobuf=false`).
        assert!(message("meta.k8s.io/v1", "Table").is_none());
    }
}
