//! The `apiextensions.k8s.io/v1` resources: customresourcedefinitions. The resources a CRD defines are
//! added to the catalog by the CRD controller (`crate::apiextensions::controller`, above this layer) once
//! it is established.

use std::sync::Arc;

use super::{printers, status, ResourceInfo};
use crate::registry::strategies::customresourcedefinitions as crd;

/// The `apiextensions.k8s.io/v1` resources.
pub(crate) fn resources() -> Vec<ResourceInfo> {
    vec![ResourceInfo {
        namespaced: false,
        short_names: &["crd", "crds"],
        categories: &["api-extensions"],
        subresources: vec![status("CustomResourceDefinition")],
        // The schema's unions have no protobuf conversion in kubesim (`endpoints::protobuf::convert`).
        protobuf: false,
        ..ResourceInfo::new(
            crd::resource(),
            "customresourcedefinition",
            Arc::new(crd::Crds),
            printers::default_printer(),
        )
    }]
}
