//! Bindings, `POST /api/v1/namespaces/NS/bindings` (`KK/pkg/registry/core/pod/storage/storage.go`,
//! `LegacyBindingREST`): the older form of `pods/NAME/binding`, where the pod is the one the `Binding`
//! names. Only created, never stored: the pod is assigned to the binding's node, once, and the answer is a
//! Success `Status`.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::{printers, ResourceInfo, Verb};
use crate::registry::error::RegistryError;
use crate::registry::meta;
use crate::registry::options::UpdateOptions;
use crate::registry::resource::Resource;
use crate::registry::rest::BoxFuture;
use crate::registry::review::{Review, ReviewContext, Unstored};
use crate::registry::strategies::pod_binding;
use crate::registry::strategy::Subresource;
use crate::registry::system::rfc3339;

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        verbs: &[Verb::Create],
        review: Some(Arc::new(Bindings)),
        ..ResourceInfo::new(resource(), "binding", Arc::new(Unstored { namespaced: true }), printers::default_printer())
    }
}

fn resource() -> Resource {
    Resource {
        group: String::new(),
        version: "v1".into(),
        kind: "Binding".into(),
        plural: "bindings".into(),
        etcd_prefix: "bindings".into(),
    }
}

struct Bindings;

impl Review for Bindings {
    fn review<'a>(&'a self, ctx: ReviewContext<'a>, binding: Value) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(async move {
            let name = meta::get_str(&binding, "name").to_string();
            pod_binding::validate(&binding, &name)?;
            let pods = ctx.store("", "v1", "pods").ok_or(RegistryError::NoSuchPath)?;
            let now = rfc3339(ctx.now_unix_s);
            let mut apply = |current: &Value| pod_binding::bind(current, &binding, &now);
            // As `pods/binding`: one guaranteed update of its own, which tracks no fields.
            let opts = UpdateOptions { dry_run: ctx.dry_run.to_vec(), ..UpdateOptions::default() };
            pods.patch(ctx.namespace, &name, Some(Subresource::Binding), &mut apply, &opts).await?;
            Ok(json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}))
        })
    }
}
