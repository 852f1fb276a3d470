//! The root CA certificate publisher (`root-ca-certificate-publisher-controller`, kube-controller-manager
//! 1.32, `pkg/controller/certificates/rootcacertpublisher/publisher.go`): every namespace has a ConfigMap
//! `kube-root-ca.crt` holding the CA bundle clients in pods verify the apiserver with. A namespace added
//! or updated while active is synced; the ConfigMap updated or deleted makes its namespace synced again,
//! which puts back its data and its description. One worker, as upstream starts it.

use std::sync::Arc;

use serde_json::{json, Value};

use super::serviceaccount::{has_cause, NAMESPACE_TERMINATING_CAUSE};
use super::Context;
use crate::client::resource::builtin;
use crate::client::{Client, ClientError};
use crate::runtime::informer::Informer;
use crate::runtime::selection::Descriptor;
use crate::runtime::store::Notice;
use crate::runtime::worker::{self, Outcome};
use crate::runtime::workqueue::{RateLimiter, WorkQueue};

pub const DESCRIPTOR: Descriptor = Descriptor {
    name: "root-ca-certificate-publisher-controller",
    aliases: &["root-ca-cert-publisher"],
    disabled_by_default: false,
};

/// `RootCACertConfigMapName`.
pub const CONFIG_MAP: &str = "kube-root-ca.crt";
/// `DescriptionAnnotation` and `Description`.
const DESCRIPTION_ANNOTATION: &str = "kubernetes.io/description";
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

pub async fn run(ctx: Context) {
    let namespaces = ctx.informers.get(&builtin::namespaces());
    let config_maps = ctx.informers.get(&builtin::config_maps());
    let queue = WorkQueue::new(RateLimiter::default_controller());
    let mut ns_events = namespaces.subscribe();
    let mut cm_events = config_maps.subscribe();
    let feed = async {
        loop {
            tokio::select! {
                biased;
                Some(delta) = ns_events.recv() => {
                    let active = delta.object.pointer("/status/phase").and_then(Value::as_str) == Some("Active");
                    match delta.notice {
                        Notice::Add => queue.add(delta.key),
                        Notice::Update if active => queue.add(delta.key),
                        _ => {}
                    }
                }
                Some(delta) = cm_events.recv() => {
                    let name = delta.object.pointer("/metadata/name").and_then(Value::as_str);
                    if name == Some(CONFIG_MAP) && delta.notice != Notice::Add {
                        if let Some(ns) = delta.object.pointer("/metadata/namespace").and_then(Value::as_str) {
                            queue.add(ns.to_string());
                        }
                    }
                }
                else => break,
            }
        }
    };
    let work = async {
        namespaces.wait_synced().await;
        config_maps.wait_synced().await;
        let client = ctx.client.clone();
        let ca = ctx.root_ca.clone();
        worker::run(DESCRIPTOR.name, &queue, 1, |ns| sync_namespace(&client, &config_maps, &ca, ns)).await;
    };
    tokio::select! {
        biased;
        _ = feed => {}
        _ = work => {}
    }
}

/// What the ConfigMap must hold.
fn data(root_ca: &str) -> Value {
    json!({"ca.crt": root_ca})
}

/// `syncNamespace`.
async fn sync_namespace(
    client: &Arc<Client>,
    config_maps: &Informer,
    root_ca: &str,
    ns: String,
) -> Result<Outcome, ClientError> {
    let Some(mut cm) = config_maps.get(&format!("{ns}/{CONFIG_MAP}")) else {
        let cm = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": CONFIG_MAP, "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
            "data": data(root_ca),
        });
        return match client.create(&builtin::config_maps().collection_path(Some(&ns)), &cm).await {
            Ok(_) => Ok(Outcome::Done),
            // A namespace gone or terminating is not retried.
            Err(err) if err.is_not_found() || has_cause(&err, NAMESPACE_TERMINATING_CAUSE) => Ok(Outcome::Done),
            Err(err) => Err(err),
        };
    };
    let described = cm
        .pointer(&format!("/metadata/annotations/{}", DESCRIPTION_ANNOTATION.replace('/', "~1")))
        .and_then(Value::as_str)
        .is_some_and(|d| !d.is_empty());
    if cm.get("data") == Some(&data(root_ca)) && described {
        return Ok(Outcome::Done);
    }
    cm["data"] = data(root_ca);
    let meta = cm["metadata"].as_object_mut().expect("a cached object has metadata");
    let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
    if !annotations.is_object() {
        *annotations = json!({});
    }
    annotations[DESCRIPTION_ANNOTATION] = json!(DESCRIPTION);
    client.update(&builtin::config_maps().object_path(Some(&ns), CONFIG_MAP), &cm).await?;
    Ok(Outcome::Done)
}
