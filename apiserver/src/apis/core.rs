//! The core group's resources (`/api/v1`): what discovery says of each, its strategy and its printer.

use std::sync::Arc;

use super::{printers, status, ResourceInfo, SubresourceInfo, ALL_VERBS};
use crate::endpoints::request_info::Verb;
use crate::registry::strategies::{configmaps, namespaces, pods};
use crate::registry::strategy::Subresource;

/// The core group's resources (`/api/v1`).
pub fn resources() -> Vec<ResourceInfo> {
    vec![
        ResourceInfo {
            resource: configmaps::resource(),
            singular: "configmap",
            short_names: &["cm"],
            categories: &[],
            namespaced: true,
            verbs: ALL_VERBS,
            subresources: vec![],
            strategy: Arc::new(configmaps::ConfigMaps),
            printer: printers::core::configmaps(),
            custom: false,
        },
        ResourceInfo {
            resource: namespaces::resource(),
            singular: "namespace",
            short_names: &["ns"],
            categories: &[],
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
            strategy: Arc::new(namespaces::Namespaces),
            printer: printers::core::namespaces(),
            custom: false,
        },
        ResourceInfo {
            resource: pods::resource(),
            singular: "pod",
            short_names: &["po"],
            categories: &["all"],
            namespaced: true,
            verbs: ALL_VERBS,
            subresources: vec![status("Pod")],
            strategy: Arc::new(pods::Pods),
            printer: printers::core::pods(),
            custom: false,
        },
    ]
}
