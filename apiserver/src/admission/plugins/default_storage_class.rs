//! The DefaultStorageClass plugin (`KK/plugin/pkg/admission/storage/storageclass/setdefault/admission.go`,
//! `KK/pkg/volume/util/storageclass.go` `GetDefaultClass`): a new claim that names no class (neither
//! `spec.storageClassName`, even empty, nor the beta annotation) gets the default class: the one annotated
//! `storageclass.kubernetes.io/is-default-class: "true"` (or the beta annotation), the newest of several,
//! by name among equally new ones. With no default class the claim is left as it is.

use std::sync::Arc;

use serde_json::Value;

use super::support::{self, meta_map, text};
use crate::admission::{Plugin, Request};
use crate::registry::admission::Operation;
use crate::registry::error::RegistryError;
use crate::registry::rest::BoxFuture;

const CLASSES: (&str, &str, &str) = ("storage.k8s.io", "v1", "storageclasses");
/// `IsDefaultStorageClassAnnotation`, `BetaIsDefaultStorageClassAnnotation`.
const DEFAULT_ANNOTATIONS: [&str; 2] =
    ["storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"];
/// `BetaStorageClassAnnotation`: the class a claim named before `storageClassName` existed.
const BETA_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

pub(crate) struct DefaultStorageClass;

pub(crate) fn make() -> Arc<dyn Plugin> {
    Arc::new(DefaultStorageClass)
}

/// `GetDefaultClass`: the newest class marked default, ties broken by name.
pub(crate) fn default_class(classes: &[Value]) -> Option<&Value> {
    let is_default = |c: &Value| {
        DEFAULT_ANNOTATIONS.iter().any(|a| meta_map(c, "annotations").get(*a) == Some(&Value::from("true")))
    };
    let mut defaults: Vec<&Value> = classes.iter().filter(|c| is_default(c)).collect();
    // RFC 3339 timestamps in UTC order as text does.
    defaults.sort_by(|a, b| {
        let created = |c: &Value| text(c, "/metadata/creationTimestamp").to_string();
        created(b).cmp(&created(a)).then_with(|| text(a, "/metadata/name").cmp(text(b, "/metadata/name")))
    });
    defaults.first().copied()
}

/// `PersistentVolumeClaimHasClass`.
fn has_class(pvc: &Value) -> bool {
    let named = pvc.pointer("/spec/storageClassName").is_some_and(|c| !c.is_null());
    named || meta_map(pvc, "annotations").contains_key(BETA_CLASS_ANNOTATION)
}

impl Plugin for DefaultStorageClass {
    fn name(&self) -> &'static str {
        "DefaultStorageClass"
    }

    fn admit<'a>(
        &'a self,
        req: &'a Request<'a>,
        pvc: &'a mut Value,
        _old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move {
            let create = req.attrs.operation == Operation::Create;
            if !create || !support::is_main(req, "", "persistentvolumeclaims") || has_class(pvc) {
                return Ok(());
            }
            let classes = support::list_cached(req.registry, CLASSES, "").await?;
            let Some(class) = default_class(&classes).map(|c| text(c, "/metadata/name").to_string()) else {
                return Ok(());
            };
            if let Some(spec) = pvc.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("storageClassName".into(), Value::from(class));
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::admission::plugins::testing::{admin, attrs, registry, run};
    use crate::registry::resource::Resource;

    fn class(name: &str, created: &str, default: Option<&str>) -> Value {
        let mut c = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name, "creationTimestamp": created}, "provisioner": "p"});
        if let Some(value) = default {
            c["metadata"]["annotations"] = json!({DEFAULT_ANNOTATIONS[0]: value});
        }
        c
    }

    #[tokio::test]
    async fn claims_without_a_class_get_the_default() {
        let pvcs = Resource::core("PersistentVolumeClaim", "persistentvolumeclaims");
        let user = admin();
        let old = "2024-01-01T00:00:00Z";
        let new = "2024-06-01T00:00:00Z";
        let claim = |spec: Value| json!({"metadata": {"name": "c", "namespace": "ns"}, "spec": spec});
        let cases: Vec<(&str, Vec<Value>, Value, Value)> = vec![
            (
                "one default",
                vec![class("std", old, Some("true")), class("slow", old, None)],
                claim(json!({})),
                json!("std"),
            ),
            (
                "the newest default",
                vec![class("a", old, Some("true")), class("b", new, Some("true"))],
                claim(json!({})),
                json!("b"),
            ),
            (
                "equally new: by name",
                vec![class("b", old, Some("true")), class("a", old, Some("true"))],
                claim(json!({})),
                json!("a"),
            ),
            ("not \"true\"", vec![class("std", old, Some("yes"))], claim(json!({})), Value::Null),
            ("no default", vec![], claim(json!({})), Value::Null),
            (
                "its own class",
                vec![class("std", old, Some("true"))],
                claim(json!({"storageClassName": "fast"})),
                json!("fast"),
            ),
            (
                "an empty class is a class",
                vec![class("std", old, Some("true"))],
                claim(json!({"storageClassName": ""})),
                json!(""),
            ),
        ];
        for (what, classes, mut obj, want) in cases {
            let registry = registry(classes);
            let req = Request {
                attrs: attrs(&pvcs, Operation::Create, "ns", "c"),
                user: &user,
                registry: &registry,
                now_unix_s: 0,
            };
            run(&DefaultStorageClass, &req, &mut obj, &Value::Null).await.expect(what);
            assert_eq!(obj["spec"].get("storageClassName").cloned().unwrap_or(Value::Null), want, "{what}");
        }
    }
}
