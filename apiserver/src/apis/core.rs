//! The core group's resources (`/api/v1`): what discovery says of each, its strategy and its printer, as
//! kube-apiserver 1.32 serves them.

pub(crate) mod bindings;
pub(crate) mod componentstatuses;
pub(crate) mod persistentvolumes;
pub(crate) mod podtemplates;
pub(crate) mod replicationcontrollers;

use std::sync::Arc;

use super::{printers, status, ResourceInfo, SubresourceInfo, Verb};
use crate::registry::strategies::{
    configmaps, endpoints, events, namespaces, nodes, persistentvolumeclaims, pods, quotas, secrets, serviceaccounts,
    services,
};
use crate::registry::strategy::Subresource;

/// The core group's resources (`/api/v1`).
pub(crate) fn resources() -> Vec<ResourceInfo> {
    vec![
        ResourceInfo {
            short_names: &["cm"],
            ..ResourceInfo::new(
                configmaps::resource(),
                "configmap",
                Arc::new(configmaps::ConfigMaps),
                printers::core::configmaps(),
            )
        },
        ResourceInfo {
            short_names: &["ep"],
            ..ResourceInfo::new(
                endpoints::resource(),
                "endpoints",
                Arc::new(endpoints::Endpoints),
                printers::core::endpoints(),
            )
        },
        ResourceInfo {
            short_names: &["ev"],
            ..ResourceInfo::new(events::resource(), "event", Arc::new(events::Events), printers::core::events())
        },
        ResourceInfo {
            short_names: &["limits"],
            ..ResourceInfo::new(
                quotas::limitranges(),
                "limitrange",
                Arc::new(quotas::LimitRanges),
                printers::core::limitranges(),
            )
        },
        ResourceInfo {
            short_names: &["ns"],
            namespaced: false,
            verbs: &[Verb::Create, Verb::Delete, Verb::Get, Verb::List, Verb::Patch, Verb::Update, Verb::Watch],
            subresources: vec![
                SubresourceInfo {
                    name: "finalize",
                    sub: Subresource::Finalize,
                    kind: "Namespace",
                    kind_group_version: None,
                    verbs: &[Verb::Update],
                },
                status("Namespace"),
            ],
            ..ResourceInfo::new(
                namespaces::resource(),
                "namespace",
                Arc::new(namespaces::Namespaces),
                printers::core::namespaces(),
            )
        },
        ResourceInfo {
            short_names: &["no"],
            namespaced: false,
            subresources: vec![status("Node")],
            ..ResourceInfo::new(nodes::resource(), "node", Arc::new(nodes::Nodes), printers::core::nodes())
        },
        ResourceInfo {
            short_names: &["pvc"],
            subresources: vec![status("PersistentVolumeClaim")],
            ..ResourceInfo::new(
                persistentvolumeclaims::resource(),
                "persistentvolumeclaim",
                Arc::new(persistentvolumeclaims::PersistentVolumeClaims),
                printers::core::persistentvolumeclaims(),
            )
        },
        ResourceInfo {
            short_names: &["po"],
            categories: &["all"],
            subresources: vec![
                SubresourceInfo {
                    name: "binding",
                    sub: Subresource::Binding,
                    kind: "Binding",
                    kind_group_version: None,
                    verbs: &[Verb::Create],
                },
                SubresourceInfo {
                    name: "eviction",
                    sub: Subresource::Eviction,
                    kind: "Eviction",
                    kind_group_version: Some(("policy", "v1")),
                    verbs: &[Verb::Create],
                },
                status("Pod"),
            ],
            ..ResourceInfo::new(pods::resource(), "pod", Arc::new(pods::Pods), printers::core::pods())
        },
        ResourceInfo {
            short_names: &["quota"],
            subresources: vec![status("ResourceQuota")],
            ..ResourceInfo::new(
                quotas::resourcequotas(),
                "resourcequota",
                Arc::new(quotas::ResourceQuotas),
                printers::core::resourcequotas(),
            )
        },
        ResourceInfo::new(secrets::resource(), "secret", Arc::new(secrets::Secrets), printers::core::secrets()),
        ResourceInfo {
            short_names: &["sa"],
            subresources: vec![SubresourceInfo {
                name: "token",
                sub: Subresource::Token,
                kind: "TokenRequest",
                kind_group_version: Some(("authentication.k8s.io", "v1")),
                verbs: &[Verb::Create],
            }],
            ..ResourceInfo::new(
                serviceaccounts::resource(),
                "serviceaccount",
                Arc::new(serviceaccounts::ServiceAccounts),
                printers::core::serviceaccounts(),
            )
        },
        ResourceInfo {
            short_names: &["svc"],
            categories: &["all"],
            subresources: vec![status("Service")],
            ..ResourceInfo::new(
                services::resource(),
                "service",
                Arc::new(services::Services),
                printers::core::services(),
            )
        },
    ]
}
