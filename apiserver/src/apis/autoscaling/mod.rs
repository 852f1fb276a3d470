//! The `autoscaling` group: HorizontalPodAutoscalers, stored once as `autoscaling/v2` and served as
//! `autoscaling/v2` (preferred) and `autoscaling/v1`, which converts to and from the stored form.

pub(crate) mod horizontalpodautoscalers;
pub(crate) mod horizontalpodautoscalers_v1;

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::apis::{compare_kube_aware_versions, Catalog};
    use crate::endpoints::openapi::build::{build, doc_path};
    use crate::registry::kinds;

    #[test]
    fn versions_are_listed_in_kube_priority_order() {
        let mut versions =
            vec!["v1alpha1", "foo", "v1", "v1beta1", "v2", "v1beta2", "v10", "bar", "v2alpha1", "v1beta"];
        versions.sort_by(|a, b| compare_kube_aware_versions(a, b));
        assert_eq!(versions, ["v10", "v2", "v1", "v1beta2", "v1beta1", "v2alpha1", "v1alpha1", "bar", "foo", "v1beta"]);
        let groups = Catalog::builtin().groups();
        let autoscaling = groups.iter().find(|(g, _)| g == "autoscaling").expect("autoscaling is served");
        assert_eq!(autoscaling.1, ["v2", "v1"]);
    }

    #[test]
    fn both_versions_are_known_kinds_with_their_openapi_schemas() {
        let catalog = Catalog::builtin();
        let docs = build(&catalog).expect("the built-in documents build");
        for version in ["v2", "v1"] {
            let info = catalog.get("autoscaling", version, "horizontalpodautoscalers").expect("served");
            assert!(kinds::find("autoscaling", version, "HorizontalPodAutoscaler").is_some());
            let doc: Value = serde_json::from_slice(&docs.docs[&doc_path("autoscaling", version)].bytes).expect("JSON");
            for kind in ["HorizontalPodAutoscaler", "HorizontalPodAutoscalerList"] {
                let gvk = json!({"group": "autoscaling", "kind": kind, "version": version});
                let tagged = doc["components"]["schemas"]
                    .as_object()
                    .expect("schemas")
                    .values()
                    .filter(|s| s["x-kubernetes-group-version-kind"].as_array().is_some_and(|a| a.contains(&gvk)))
                    .count();
                assert_eq!(tagged, 1, "{version} {kind}");
            }
            assert_eq!(info.short_names, ["hpa"]);
            assert_eq!(info.subresources[0].name, "status");
        }
    }
}
