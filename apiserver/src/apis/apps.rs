//! The `apps/v1` resources: deployments, replicasets and statefulsets (with `/status` and `/scale`) and
//! daemonsets (with `/status`), as kube-apiserver 1.32's discovery lists them.

pub(crate) mod controllerrevisions;

use std::sync::Arc;

use super::{printers, scale, status, ResourceInfo};
use crate::registry::strategies::{daemonsets, deployments, replicasets, statefulsets};

/// The `apps/v1` resources.
pub(crate) fn resources() -> Vec<ResourceInfo> {
    vec![
        ResourceInfo {
            short_names: &["ds"],
            categories: &["all"],
            subresources: vec![status("DaemonSet")],
            ..ResourceInfo::new(
                daemonsets::resource(),
                "daemonset",
                Arc::new(daemonsets::DaemonSets),
                printers::apps::daemonsets(),
            )
        },
        ResourceInfo {
            short_names: &["deploy"],
            categories: &["all"],
            subresources: vec![scale(), status("Deployment")],
            ..ResourceInfo::new(
                deployments::resource(),
                "deployment",
                Arc::new(deployments::Deployments),
                printers::apps::deployments(),
            )
        },
        ResourceInfo {
            short_names: &["rs"],
            categories: &["all"],
            subresources: vec![scale(), status("ReplicaSet")],
            ..ResourceInfo::new(
                replicasets::resource(),
                "replicaset",
                Arc::new(replicasets::ReplicaSets),
                printers::apps::replicasets(),
            )
        },
        ResourceInfo {
            short_names: &["sts"],
            categories: &["all"],
            subresources: vec![scale(), status("StatefulSet")],
            ..ResourceInfo::new(
                statefulsets::resource(),
                "statefulset",
                Arc::new(statefulsets::StatefulSets),
                printers::apps::statefulsets(),
            )
        },
    ]
}
