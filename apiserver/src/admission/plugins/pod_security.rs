//! The PodSecurity plugin (`KK/staging/src/k8s.io/pod-security-admission/admission/admission.go`, in tree
//! as `KK/plugin/pkg/admission/security/podsecurity`): a namespace's
//! `pod-security.kubernetes.io/enforce` label (`privileged`, `baseline`, `restricted`; privileged when
//! absent) holds every pod created in it, or updated in a way that matters (a container added or its image
//! changed), to that Pod Security Standard, refusing the rest with upstream's
//! `violates PodSecurity "<level>:<version>": ...`; a namespace's policy labels must be valid.
//!
//! What differs: the `warn` and `audit` labels are validated but have no effect (the plugin interface
//! carries neither warnings nor audit annotations), so workloads' pod templates, which upstream only
//! warns about, are not evaluated, nor are a namespace's pods when its enforce level is raised; every
//! version (`enforce-version`) is judged by the latest checks, and some checks are left out (see
//! [`checks`]). No user, namespace or runtime class is exempt (upstream's default configuration).

use std::sync::Arc;

use serde_json::Value;

use super::pod_security_checks::{self as checks, Level};
use super::support::{self, items, meta_map, text};
use crate::admission::webhook::forbidden_status;
use crate::admission::{Plugin, Request};
use crate::registry::admission::Operation;
use crate::registry::error::RegistryError;
use crate::registry::field_error::FieldError;
use crate::registry::rest::BoxFuture;

const LABEL_PREFIX: &str = "pod-security.kubernetes.io/";

pub(crate) struct PodSecurity;

pub(crate) fn make() -> Arc<dyn Plugin> {
    Arc::new(PodSecurity)
}

/// The enforced level and version as upstream prints them (`restricted:latest`), from the namespace's
/// labels (`PolicyToEvaluate`): an invalid level enforces `restricted`, an invalid version `latest`.
pub(crate) fn enforced(labels: &serde_json::Map<String, Value>) -> (Level, String) {
    let label = |k: &str| labels.get(&format!("{LABEL_PREFIX}{k}")).and_then(Value::as_str);
    let level = label("enforce").map_or(Level::Privileged, |l| Level::parse(l).unwrap_or(Level::Restricted));
    let version = label("enforce-version").filter(|v| version_is_valid(v)).unwrap_or("latest");
    (level, version.to_string())
}

/// `ParseVersion`: `latest` or `v1.<minor>`.
fn version_is_valid(v: &str) -> bool {
    v == "latest"
        || v.strip_prefix("v1.").is_some_and(|m| {
            m == "0" || (!m.is_empty() && !m.starts_with('0') && m.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// `PolicyToEvaluate`'s errors: each policy label with a value that is not one.
pub(crate) fn label_errors(labels: &serde_json::Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for mode in ["enforce", "audit", "warn"] {
        let key = format!("{LABEL_PREFIX}{mode}");
        if let Some(level) = labels.get(&key).and_then(Value::as_str) {
            if Level::parse(level).is_none() {
                let field = format!("metadata.labels[{key}]");
                errs.push(FieldError::invalid(&field, level, "must be one of privileged, baseline, restricted"));
            }
        }
        let key = format!("{LABEL_PREFIX}{mode}-version");
        if let Some(version) = labels.get(&key).and_then(Value::as_str) {
            if !version_is_valid(version) {
                errs.push(FieldError::invalid(
                    &format!("metadata.labels[{key}]"),
                    version,
                    "must be \"latest\" or \"v1.x\"",
                ));
            }
        }
    }
    errs
}

/// `isSignificantPodUpdate`: whether an update can change what the checks see.
fn significant_update(pod: &Value, old: &Value) -> bool {
    const SECCOMP_POD: &str = "seccomp.security.alpha.kubernetes.io/pod";
    let annotation = |p: &Value, k: &str| meta_map(p, "annotations").get(k).cloned();
    if annotation(pod, SECCOMP_POD) != annotation(old, SECCOMP_POD) {
        return true;
    }
    ["/spec/containers", "/spec/initContainers", "/spec/ephemeralContainers"].iter().any(|list| {
        let (new, before) = (items(pod, list), items(old, list));
        new.len() != before.len()
            || new.iter().zip(before).any(|(c, o)| {
                let key = format!("container.seccomp.security.alpha.kubernetes.io/{}", text(c, "/name"));
                text(c, "/image") != text(o, "/image") || annotation(pod, &key) != annotation(old, &key)
            })
    })
}

/// The pod subresources upstream does not evaluate (`ignoredPodSubresources`).
const IGNORED_SUBRESOURCES: &[&str] =
    &["exec", "attach", "binding", "eviction", "log", "portforward", "proxy", "status"];

impl PodSecurity {
    /// `ValidateNamespace`: the policy labels must be valid on create, and on an update that changes them.
    fn validate_namespace(&self, req: &Request<'_>, ns: &Value, old: &Value) -> Result<(), RegistryError> {
        if !req.attrs.subresource.is_empty() {
            return Ok(());
        }
        let errs = label_errors(meta_map(ns, "labels"));
        let refuse = match req.attrs.operation {
            Operation::Create => !errs.is_empty(),
            Operation::Update => {
                let before = label_errors(meta_map(old, "labels"));
                !errs.is_empty() && (before.is_empty() || before != errs)
            }
            _ => false,
        };
        if !refuse {
            return Ok(());
        }
        Err(RegistryError::Invalid {
            group: String::new(),
            kind: "Namespace".into(),
            name: req.attrs.name.to_string(),
            errors: errs,
        })
    }

    /// `ValidatePod`.
    async fn validate_pod(&self, req: &Request<'_>, pod: &Value, old: &Value) -> Result<(), RegistryError> {
        if IGNORED_SUBRESOURCES.contains(&req.attrs.subresource) {
            return Ok(());
        }
        let gvr = ("", "v1", "namespaces");
        let ns = req.attrs.namespace;
        let namespace = match support::read_cached(req.registry, gvr, "", ns).await? {
            Some(n) => n,
            None => match support::read_live(req.registry, gvr, "", ns).await? {
                Some(n) => n,
                None => {
                    return Err(RegistryError::Internal(format!(
                        "failed to lookup namespace {}",
                        crate::go_text::quote(ns)
                    )))
                }
            },
        };
        let (level, version) = enforced(meta_map(&namespace, "labels"));
        if level == Level::Privileged {
            return Ok(());
        }
        if req.attrs.operation == Operation::Update && !significant_update(pod, old) {
            return Ok(());
        }
        let Some(why) = checks::violations(level, pod) else { return Ok(()) };
        let why = format!("violates PodSecurity \"{}:{version}\": {why}", level.as_str());
        Err(RegistryError::Admission(Box::new(forbidden_status(&req.attrs, req.attrs.name, &why))))
    }
}

impl Plugin for PodSecurity {
    fn name(&self) -> &'static str {
        "PodSecurity"
    }

    fn validate<'a>(
        &'a self,
        req: &'a Request<'a>,
        obj: &'a Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move {
            if !matches!(req.attrs.operation, Operation::Create | Operation::Update)
                || !req.attrs.resource.group.is_empty()
            {
                return Ok(());
            }
            match req.attrs.resource.plural.as_str() {
                "namespaces" => self.validate_namespace(req, obj, old),
                "pods" => self.validate_pod(req, obj, old).await,
                _ => Ok(()),
            }
        })
    }
}

#[cfg(test)]
#[path = "pod_security_tests.rs"]
mod tests;
