//! The ServiceAccount plugin (`KK/plugin/pkg/admission/serviceaccount/admission.go`): a new pod runs as
//! its namespace's `default` account unless it names one, the account must exist, and every container
//! gets the account's API credentials as the projected `kube-api-access-<suffix>` volume (a bound token,
//! the cluster's CA bundle, the namespace), unless the pod or its account turns automounting off. Mirror
//! pods are left as they are, and may reference no account, secret or token projection. An account
//! annotated `kubernetes.io/enforce-mountable-secrets: "true"` limits the secrets the pod may use to its
//! own.
//!
//! The volume's random suffix is drawn from a hash of the pod's namespace, name, `generateName` and the
//! request's time (see [`support::name_suffix`]), not from a global generator. Upstream retries a missing
//! `default` account ten times over one or two seconds, waiting for the controller that makes it; no such
//! controller runs here, so one live lookup after the cache misses stands in for those retries.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Value};

use super::support::{self, forbidden, items, text};
use crate::admission::{Plugin, Request};
use crate::registry::admission::Operation;
use crate::registry::error::RegistryError;
use crate::registry::rest::BoxFuture;

/// `DefaultServiceAccountName`.
const DEFAULT_ACCOUNT: &str = "default";
/// `DefaultAPITokenMountPath`.
pub(crate) const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// `ServiceAccountVolumeName`, the prefix of the volume's name.
const VOLUME_PREFIX: &str = "kube-api-access-";
/// `EnforceMountableSecretsAnnotation`.
const ENFORCE_MOUNTABLE_SECRETS: &str = "kubernetes.io/enforce-mountable-secrets";
/// `MirrorPodAnnotationKey`.
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// `WarnOnlyBoundTokenExpirationSeconds`: a token projected into a pod lives one hour and seven seconds.
const TOKEN_EXPIRATION_S: i64 = 3607;

pub(crate) struct ServiceAccount;

pub(crate) fn make() -> Arc<dyn Plugin> {
    Arc::new(ServiceAccount)
}

/// `shouldIgnore`: pods themselves, created (the plugin changes nothing on update: the fields it sets are
/// immutable).
fn applies(req: &Request<'_>) -> bool {
    support::is_main(req, "", "pods") && req.attrs.operation == Operation::Create
}

fn is_mirror(pod: &Value) -> bool {
    support::meta_map(pod, "annotations").contains_key(MIRROR_ANNOTATION)
}

/// `TokenVolumeSource`, with the defaults v1 fills in (`defaultMode`).
pub(crate) fn token_volume(name: &str) -> Value {
    json!({"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_S, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ]}})
}

/// `shouldAutomount`: the pod's preference, else its account's, else yes.
fn should_automount(account: &Value, pod: &Value) -> bool {
    let pod_says = pod.pointer("/spec/automountServiceAccountToken").and_then(Value::as_bool);
    pod_says.or_else(|| account.get("automountServiceAccountToken").and_then(Value::as_bool)).unwrap_or(true)
}

/// `mountServiceAccountToken`: every container and init container without something at the token's path
/// mounts the token volume, which is added when some container needs it and the pod has none yet.
fn mount_token(pod: &mut Value, volume_name: &str) {
    let existing = items(pod, "/spec/volumes")
        .iter()
        .map(|v| text(v, "/name"))
        .find(|n| n.starts_with(VOLUME_PREFIX))
        .map(str::to_string);
    let name = existing.clone().unwrap_or_else(|| volume_name.to_string());
    let mount = json!({"name": name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
    let mut needs_volume = false;
    for list in ["initContainers", "containers"] {
        let Some(containers) = pod.pointer_mut(&format!("/spec/{list}")).and_then(Value::as_array_mut) else {
            continue;
        };
        for container in containers.iter_mut().filter(|c| c.is_object()) {
            let mounted = items(container, "/volumeMounts").iter().any(|m| text(m, "/mountPath") == TOKEN_MOUNT_PATH);
            if mounted {
                continue;
            }
            let mounts = container.as_object_mut().and_then(|c| {
                let mounts = c.entry("volumeMounts").or_insert_with(|| json!([]));
                if !mounts.is_array() {
                    *mounts = json!([]);
                }
                mounts.as_array_mut()
            });
            if let Some(mounts) = mounts {
                mounts.push(mount.clone());
                needs_volume = true;
            }
        }
    }
    if existing.is_none() && needs_volume {
        if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
            let volumes = spec.entry("volumes").or_insert_with(|| json!([]));
            if !volumes.is_array() {
                *volumes = json!([]);
            }
            if let Some(volumes) = volumes.as_array_mut() {
                volumes.push(token_volume(&name));
            }
        }
    }
}

/// `VisitPodSecretNames` over every container kind: whether the pod references any secret.
fn references_secrets(pod: &Value) -> bool {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    if !items(spec, "/imagePullSecrets").is_empty() {
        return true;
    }
    let volume_secret = items(spec, "/volumes").iter().any(|v| {
        v.get("secret").is_some()
            || ["cephfs", "cinder", "flexVolume", "rbd", "scaleIO", "iscsi", "storageos", "azureFile", "csi"]
                .iter()
                .any(|k| {
                    v.pointer(&format!("/{k}/secretRef")).is_some()
                        || v.pointer(&format!("/{k}/nodePublishSecretRef")).is_some()
                })
            || items(v, "/projected/sources").iter().any(|s| s.get("secret").is_some())
    });
    let container_secret = ["initContainers", "containers", "ephemeralContainers"].iter().any(|list| {
        items(spec, &format!("/{list}")).iter().any(|c| {
            items(c, "/envFrom").iter().any(|e| e.get("secretRef").is_some())
                || items(c, "/env").iter().any(|e| e.pointer("/valueFrom/secretKeyRef").is_some())
        })
    });
    volume_secret || container_secret
}

/// The mirror pod checks of `Validate`.
fn check_mirror(pod: &Value) -> Option<&'static str> {
    if !text(pod, "/spec/serviceAccountName").is_empty() {
        return Some("a mirror pod may not reference service accounts");
    }
    if references_secrets(pod) {
        return Some("a mirror pod may not reference secrets");
    }
    let projects_token = items(pod, "/spec/volumes")
        .iter()
        .any(|v| items(v, "/projected/sources").iter().any(|s| s.get("serviceAccountToken").is_some()));
    projects_token.then_some("a mirror pod may not use ServiceAccountToken volume projections")
}

/// `limitSecretReferences`: the secrets the pod uses must be among its account's `secrets`, its pull
/// secrets among the account's `imagePullSecrets`.
fn limit_secret_references(account: &Value, pod: &Value) -> Option<String> {
    let account_name = text(account, "/metadata/name");
    let names = |field: &str| -> BTreeSet<&str> { items(account, field).iter().map(|s| text(s, "/name")).collect() };
    let mountable = names("/secrets");
    for volume in items(pod, "/spec/volumes") {
        if let Some(secret) = volume.get("secret") {
            let name = text(secret, "/secretName");
            if !mountable.contains(name) {
                return Some(format!(
                    "volume with secret.secretName=\"{name}\" is not allowed because service account {account_name} does not reference that secret"
                ));
            }
        }
    }
    for (list, kind) in [("initContainers", "init container"), ("containers", "container")] {
        for container in items(pod, &format!("/spec/{list}")) {
            let cname = text(container, "/name");
            for env in items(container, "/env") {
                let secret = text(env, "/valueFrom/secretKeyRef/name");
                if env.pointer("/valueFrom/secretKeyRef").is_some() && !mountable.contains(secret) {
                    return Some(format!(
                        "{kind} {cname} with envVar {} referencing secret.secretName=\"{secret}\" is not allowed because service account {account_name} does not reference that secret",
                        text(env, "/name")
                    ));
                }
            }
            for from in items(container, "/envFrom") {
                let secret = text(from, "/secretRef/name");
                if from.get("secretRef").is_some() && !mountable.contains(secret) {
                    return Some(format!(
                        "{kind} {cname} with envFrom referencing secret.secretName=\"{secret}\" is not allowed because service account {account_name} does not reference that secret"
                    ));
                }
            }
        }
    }
    let pull = names("/imagePullSecrets");
    for (i, reference) in items(pod, "/spec/imagePullSecrets").iter().enumerate() {
        let name = text(reference, "/name");
        if !pull.contains(name) {
            return Some(format!(
                "imagePullSecrets[{i}].name=\"{name}\" is not allowed because service account {account_name} does not reference that imagePullSecret"
            ));
        }
    }
    None
}

impl ServiceAccount {
    /// `getServiceAccount`: the cache, then storage; upstream's `NotFound` for the singular `serviceaccount`.
    async fn account(&self, req: &Request<'_>, pod: &Value, name: &str) -> Result<Value, RegistryError> {
        let ns = req.attrs.namespace;
        let gvr = ("", "v1", "serviceaccounts");
        let found = match support::read_cached(req.registry, gvr, ns, name).await? {
            Some(account) => Some(account),
            None => support::read_live(req.registry, gvr, ns, name).await?,
        };
        found.ok_or_else(|| {
            forbidden(
                req,
                pod,
                format!(
                    "error looking up service account {ns}/{name}: serviceaccount {} not found",
                    crate::go_text::quote(name)
                ),
            )
        })
    }

    /// `Validate` on create: mirror pods' limits, the account's existence and its mountable secrets.
    async fn check(&self, req: &Request<'_>, pod: &Value) -> Result<(), RegistryError> {
        if is_mirror(pod) {
            return match check_mirror(pod) {
                Some(why) => Err(forbidden(req, pod, why)),
                None => Ok(()),
            };
        }
        let name = text(pod, "/spec/serviceAccountName");
        if name.is_empty() {
            let why =
                format!("no service account specified for pod {}/{}", req.attrs.namespace, text(pod, "/metadata/name"));
            return Err(forbidden(req, pod, why));
        }
        let account = self.account(req, pod, name).await?;
        let enforce = support::meta_map(&account, "annotations").get(ENFORCE_MOUNTABLE_SECRETS).and_then(Value::as_str);
        // `strconv.ParseBool`'s true values.
        if matches!(enforce, Some("1" | "t" | "T" | "true" | "TRUE" | "True")) {
            if let Some(why) = limit_secret_references(&account, pod) {
                return Err(forbidden(req, pod, why));
            }
        }
        Ok(())
    }
}

impl Plugin for ServiceAccount {
    fn name(&self) -> &'static str {
        "ServiceAccount"
    }

    fn admit<'a>(
        &'a self,
        req: &'a Request<'a>,
        pod: &'a mut Value,
        _old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move {
            if !applies(req) || !pod.is_object() {
                return Ok(());
            }
            if is_mirror(pod) {
                return self.check(req, pod).await;
            }
            // v1's deprecated `serviceAccount` names the account when `serviceAccountName` does not
            // (conversion), and always repeats it.
            let mut name = text(pod, "/spec/serviceAccountName").to_string();
            if name.is_empty() {
                name = text(pod, "/spec/serviceAccount").to_string();
            }
            if name.is_empty() {
                name = DEFAULT_ACCOUNT.to_string();
            }
            let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else { return Ok(()) };
            spec.insert("serviceAccountName".into(), Value::from(name.clone()));
            spec.insert("serviceAccount".into(), Value::from(name.clone()));
            let account = self.account(req, pod, &name).await?;
            if should_automount(&account, pod) {
                let seed = format!(
                    "{}/{}/{}/{}",
                    req.attrs.namespace,
                    text(pod, "/metadata/name"),
                    text(pod, "/metadata/generateName"),
                    req.now_unix_s
                );
                mount_token(pod, &format!("{VOLUME_PREFIX}{}", support::name_suffix(&seed, 5)));
            }
            let pull_secrets: Vec<Value> =
                items(&account, "/imagePullSecrets").iter().map(|s| json!({"name": text(s, "/name")})).collect();
            if items(pod, "/spec/imagePullSecrets").is_empty() && !pull_secrets.is_empty() {
                pod["spec"]["imagePullSecrets"] = Value::Array(pull_secrets);
            }
            self.check(req, pod).await
        })
    }

    fn validate<'a>(
        &'a self,
        req: &'a Request<'a>,
        pod: &'a Value,
        _old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move {
            if !applies(req) || !pod.is_object() {
                return Ok(());
            }
            self.check(req, pod).await
        })
    }
}

#[cfg(test)]
#[path = "service_account_tests.rs"]
mod tests;
