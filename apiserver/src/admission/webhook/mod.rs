//! The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins: the webhooks of the stored
//! `admissionregistration.k8s.io/v1` configurations, called for the requests they match, as kube-apiserver
//! 1.32 calls them (`staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/`: `generic/webhook.go`,
//! `mutating/dispatcher.go`, `validating/dispatcher.go`).
//!
//! Files: [`matching`] (rules and selectors), [`cel`] (match conditions, shared with policies), [`review`]
//! (the `AdmissionReview` exchange and its errors), [`client`] (the HTTP call). This file reads the
//! configurations, namespaces and services from the registry and runs the dispatchers.
//!
//! What differs from upstream: `matchPolicy: Equivalent` matches as `Exact` (one version per resource
//! here); validating webhooks are called concurrently but the first refusal *in configuration order* is
//! the answer (upstream's is whichever arrives first); warnings and audit annotations a webhook returns are
//! dropped (the plugin interface carries neither); mutating webhooks are reinvoked (`IfNeeded`) when a
//! later webhook changed the object, but not when an in-tree plugin did, since the chain runs plugins once.

pub(crate) mod cel;
mod client;
pub(crate) mod matching;
mod review;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, Status, StatusDetails};
use serde_json::Value;

use self::cel::{ConditionsResult, Expression, Variables};
use self::matching::NamespaceLabels;
use self::review::{PatchError, Patched, Verified};
use crate::admission::{Plugin, Request};
use crate::registry::admission::Attributes;
use crate::registry::error::RegistryError;
use crate::registry::rest::{BoxFuture, Registry};
use crate::registry::store::ListRequest;
use crate::storage::GetOptions;

/// A webhook's `timeoutSeconds` (defaulted to 10 when a configuration is written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimeoutSeconds(pub(crate) u64);

/// One webhook of a configuration, as the dispatchers use it.
#[derive(Debug)]
pub(crate) struct Hook {
    pub(crate) name: String,
    /// `<configuration>/<webhook>/<index>`: upstream's webhook UID, which reinvocation tracks.
    pub(crate) uid: String,
    pub(crate) rules: Vec<Value>,
    /// `failurePolicy: Ignore`: a failure to call the webhook admits the request.
    pub(crate) ignore_failures: bool,
    pub(crate) namespace_selector: Value,
    pub(crate) object_selector: Value,
    pub(crate) side_effects: Option<String>,
    pub(crate) timeout: TimeoutSeconds,
    pub(crate) review_versions: Vec<Value>,
    /// `reinvocationPolicy: IfNeeded` (mutating webhooks).
    pub(crate) reinvoke_if_needed: bool,
    pub(crate) client_config: Value,
    pub(crate) conditions: Vec<(String, Expression)>,
}

impl Hook {
    /// The webhook at `index` of the configuration `config`.
    pub(crate) fn parse(config: &Value, index: usize, hook: &Value) -> Hook {
        let config_name = config.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
        let text = |k: &str| hook.get(k).and_then(Value::as_str);
        let name = text("name").unwrap_or("").to_string();
        let items = |k: &str| hook.get(k).and_then(Value::as_array).cloned().unwrap_or_default();
        Hook {
            uid: format!("{config_name}/{name}/{index}"),
            name,
            rules: items("rules"),
            ignore_failures: text("failurePolicy") == Some("Ignore"),
            namespace_selector: hook.get("namespaceSelector").cloned().unwrap_or(Value::Null),
            object_selector: hook.get("objectSelector").cloned().unwrap_or(Value::Null),
            side_effects: text("sideEffects").map(str::to_string),
            timeout: TimeoutSeconds(hook.get("timeoutSeconds").and_then(Value::as_u64).unwrap_or(10)),
            review_versions: items("admissionReviewVersions"),
            reinvoke_if_needed: text("reinvocationPolicy") == Some("IfNeeded"),
            client_config: hook.get("clientConfig").cloned().unwrap_or(Value::Null),
            conditions: cel::compile_conditions(&items("matchConditions")),
        }
    }

    /// Every webhook of the configurations, in the order upstream runs them: configurations by name, then
    /// each one's webhooks in their order.
    pub(crate) fn all(configs: &[Value]) -> Vec<Hook> {
        let mut configs: Vec<&Value> = configs.iter().collect();
        configs.sort_by_key(|c| c.pointer("/metadata/name").and_then(Value::as_str).unwrap_or(""));
        configs
            .into_iter()
            .flat_map(|c| {
                let hooks = c.get("webhooks").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
                hooks.iter().enumerate().map(move |(i, h)| Hook::parse(c, i, h))
            })
            .collect()
    }
}

/// `apierrors.NewForbidden` of the request's resource: `<resource> "<name>" is forbidden: <why>`.
pub(crate) fn forbidden_status(attrs: &Attributes<'_>, name: &str, why: &str) -> Status {
    let r = attrs.resource;
    let resource = if r.group.is_empty() { r.plural.clone() } else { format!("{}.{}", r.plural, r.group) };
    let message = if name.is_empty() {
        format!("{resource} is forbidden: {why}")
    } else {
        format!("{resource} {} is forbidden: {why}", crate::go_text::quote(name))
    };
    Status {
        code: Some(403),
        details: Some(StatusDetails {
            group: Some(r.group.clone()).filter(|g| !g.is_empty()),
            kind: Some(r.plural.clone()),
            name: Some(name.to_string()).filter(|n| !n.is_empty()),
            ..StatusDetails::default()
        }),
        message: Some(message),
        metadata: ListMeta::default(),
        reason: Some("Forbidden".into()),
        status: Some("Failure".into()),
    }
}

/// The `request` variable of admission CEL expressions (`CreateAdmissionRequest`).
pub(crate) fn cel_request(attrs: &Attributes<'_>, user: &crate::registry::user::UserInfo) -> Value {
    review::admission_request(attrs, user)
}

/// Reads one object from the watch cache; `None` when it does not exist or its resource is not served.
pub(crate) async fn read(
    registry: &Registry,
    gvr: (&str, &str, &str),
    ns: &str,
    name: &str,
) -> Result<Option<Value>, RegistryError> {
    // From the watch cache (resourceVersion "0"), as upstream's plugins read their informers.
    read_at(registry, gvr, ns, name, "0").await
}

/// Reads one object at `resource_version` ("0": the watch cache; "": storage itself).
pub(crate) async fn read_at(
    registry: &Registry,
    (group, version, plural): (&str, &str, &str),
    ns: &str,
    name: &str,
    resource_version: &str,
) -> Result<Option<Value>, RegistryError> {
    let Some(rest) = registry.get(&(group.to_string(), version.to_string(), plural.to_string())) else {
        return Ok(None);
    };
    match rest.get(ns, name, &GetOptions { resource_version: resource_version.into() }).await {
        Ok(obj) => Ok(Some(obj)),
        Err(e) if e.to_status().code == Some(404) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Lists every object of a resource in `ns` ("" for all); none when the resource is not served.
pub(crate) async fn list(
    registry: &Registry,
    (group, version, plural): (&str, &str, &str),
    ns: &str,
) -> Result<Vec<Value>, RegistryError> {
    let Some(rest) = registry.get(&(group.to_string(), version.to_string(), plural.to_string())) else {
        return Ok(Vec::new());
    };
    // From the watch cache, as upstream's plugins read their informers: a configuration a moment old may not
    // apply yet, in both.
    let list = rest.list(ns, &ListRequest { resource_version: "0".into(), ..ListRequest::default() }).await?;
    Ok(list.items.iter().map(|o| o.value().clone()).collect())
}

/// `MatchNamespaceSelector`: whether the namespace of the request has labels the selector selects. A
/// namespace that does not exist is the request's 404.
pub(crate) async fn namespace_matches(req: &Request<'_>, selector: &Value, obj: &Value) -> Result<bool, RegistryError> {
    match matching::namespace_labels(selector, &req.attrs, obj) {
        NamespaceLabels::Matches => Ok(true),
        NamespaceLabels::Own(labels) => Ok(crate::registry::strategies::workloads::selector_matches(selector, &labels)),
        NamespaceLabels::Lookup(name) => match read(req.registry, ("", "v1", "namespaces"), "", &name).await {
            Ok(Some(ns)) => {
                Ok(crate::registry::strategies::workloads::selector_matches(selector, &matching::labels_of(&ns)))
            }
            Ok(None) => Err(RegistryError::NamespaceNotFound { namespace: name }),
            Err(e) => Err(RegistryError::Internal(e.to_string())),
        },
    }
}

/// What calling one webhook came to.
#[derive(Debug)]
enum Outcome {
    Allowed(Verified),
    /// The webhook refused: its status is the answer.
    Rejected(Status),
    /// The webhook could not be called or answered nonsense: the reason, which the failure policy judges.
    CallFailed(String),
    /// An error that fails the request whatever the failure policy.
    Fatal(RegistryError),
}

/// One of the two webhook plugins.
pub(crate) struct Webhooks {
    mutating: bool,
    /// Numbers the calls, from which request uids are derived.
    calls: AtomicU64,
}

/// The MutatingAdmissionWebhook plugin.
pub(crate) fn make_mutating() -> Arc<dyn Plugin> {
    Arc::new(Webhooks { mutating: true, calls: AtomicU64::new(0) })
}

/// The ValidatingAdmissionWebhook plugin.
pub(crate) fn make_validating() -> Arc<dyn Plugin> {
    Arc::new(Webhooks { mutating: false, calls: AtomicU64::new(0) })
}

impl Webhooks {
    /// The webhooks of the stored configurations of this plugin's kind.
    async fn hooks(&self, registry: &Registry) -> Result<Vec<Hook>, RegistryError> {
        let plural = if self.mutating { "mutatingwebhookconfigurations" } else { "validatingwebhookconfigurations" };
        let configs = list(registry, ("admissionregistration.k8s.io", "v1", plural), "").await?;
        Ok(Hook::all(&configs))
    }

    /// `ShouldCallHook`: rules, object selector, namespace selector, then match conditions.
    async fn should_call(
        &self,
        req: &Request<'_>,
        hook: &Hook,
        obj: &Value,
        old: &Value,
    ) -> Result<bool, RegistryError> {
        if !hook.rules.iter().any(|r| matching::rule_matches(r, &req.attrs)) {
            return Ok(false);
        }
        if !matching::object_selector_matches(&hook.object_selector, obj, old) {
            return Ok(false);
        }
        if !namespace_matches(req, &hook.namespace_selector, obj).await? {
            return Ok(false);
        }
        if hook.conditions.is_empty() {
            return Ok(true);
        }
        let request = review::admission_request(&req.attrs, req.user);
        match cel::eval_conditions(&hook.conditions, &Variables::new(obj, old, &request)) {
            ConditionsResult::Match => Ok(true),
            ConditionsResult::NoMatch(_) => Ok(false),
            ConditionsResult::Error(_) if hook.ignore_failures => Ok(false),
            ConditionsResult::Error(e) => {
                Err(RegistryError::Admission(Box::new(forbidden_status(&req.attrs, req.attrs.name, &e))))
            }
        }
    }

    /// Where the webhook's `clientConfig` points, its service resolved through the registry.
    async fn endpoint(&self, req: &Request<'_>, hook: &Hook) -> Result<client::Endpoint, String> {
        let cc = &hook.client_config;
        let ca = cc
            .get("caBundle")
            .and_then(Value::as_str)
            .and_then(|b| base64::Engine::decode(&base64::engine::general_purpose::STANDARD, b).ok())
            .unwrap_or_default();
        let timeout = hook.timeout.0;
        if let Some(url) = cc.get("url").and_then(Value::as_str) {
            return Ok(client::from_url(url, ca, timeout));
        }
        let Some(service) = cc.get("service").filter(|s| s.is_object()) else {
            let reason = review::calling_error(&hook.name, "webhook configuration must have either service or URL");
            return Err(format!("could not get REST client: {reason}"));
        };
        let field = |k: &str| service.get(k).and_then(Value::as_str).unwrap_or("");
        let (ns, name) = (field("namespace"), field("name"));
        let port = service.get("port").and_then(Value::as_i64).unwrap_or(443);
        let svc = read(req.registry, ("", "v1", "services"), ns, name).await;
        let eps = read(req.registry, ("", "v1", "endpoints"), ns, name).await;
        let dial = match (svc, eps) {
            (Ok(svc), Ok(eps)) => client::resolve_service(name, port, svc.as_ref(), eps.as_ref()),
            (Err(e), _) | (_, Err(e)) => Err(e.to_string()),
        };
        Ok(client::from_service(service, ca, timeout, dial))
    }

    /// `callHook` / `callAttrMutatingHook` up to the webhook's verdict.
    async fn call(&self, req: &Request<'_>, hook: &Hook, obj: &Value, old: &Value) -> Outcome {
        if req.attrs.dry_run {
            match hook.side_effects.as_deref() {
                None => return Outcome::CallFailed("Webhook SideEffects is nil".into()),
                Some("None" | "NoneOnDryRun") => {}
                Some(_) => return Outcome::Fatal(review::dry_run_unsupported(&hook.name)),
            }
        }
        let version = match review::pick_version(&hook.review_versions) {
            Ok(v) => v,
            Err(e) => return Outcome::CallFailed(format!("could not create admission objects: {e}")),
        };
        let seq = self.calls.fetch_add(1, Ordering::Relaxed);
        let uid = review::request_uid(seq, &req.attrs, &hook.name);
        let body = crate::go_json::to_vec(&review::review(version, &uid, &req.attrs, req.user, obj, old));
        let endpoint = match self.endpoint(req, hook).await {
            Ok(e) => e,
            Err(reason) => return Outcome::CallFailed(reason),
        };
        let answer = match client::post(&endpoint, body, Duration::from_secs(hook.timeout.0)).await {
            Ok(a) => a,
            Err(e) => return Outcome::CallFailed(format!("failed to call webhook: {e}")),
        };
        let decoded = match review::decode_answer(&answer) {
            Ok(d) => d,
            Err(e) => return Outcome::CallFailed(format!("failed to call webhook: {e}")),
        };
        match review::verify(&uid, version, self.mutating, &decoded) {
            Err(e) => Outcome::CallFailed(format!("received invalid webhook response: {e}")),
            Ok(v) if !v.allowed => Outcome::Rejected(review::denial(&hook.name, v.result.as_ref())),
            Ok(v) => Outcome::Allowed(v),
        }
    }

    /// The mutating dispatcher: webhooks one after another, each seeing the object the previous ones made,
    /// and one more round for the `IfNeeded` webhooks called before a webhook changed the object.
    async fn admit_all(&self, req: &Request<'_>, obj: &mut Value, old: &Value) -> Result<(), RegistryError> {
        let hooks = self.hooks(req.registry).await?;
        self.admit_with(req, &hooks, obj, old).await
    }

    /// The mutating dispatcher over the given webhooks.
    async fn admit_with(
        &self,
        req: &Request<'_>,
        hooks: &[Hook],
        obj: &mut Value,
        old: &Value,
    ) -> Result<(), RegistryError> {
        let mut previously_invoked: BTreeSet<String> = BTreeSet::new();
        let mut reinvoke: BTreeSet<String> = BTreeSet::new();
        let mut should_reinvoke = false;
        for round in 0..2 {
            if round == 1 && !should_reinvoke {
                break;
            }
            for hook in hooks {
                if !self.should_call(req, hook, obj, old).await? {
                    continue;
                }
                if round == 1 && !reinvoke.contains(&hook.uid) {
                    continue;
                }
                let mut changed = false;
                let outcome = match self.call(req, hook, obj, old).await {
                    Outcome::Allowed(verified) => match review::apply_patch(&hook.name, &verified, obj) {
                        Ok(Patched::Unchanged) => Outcome::Allowed(verified),
                        Ok(Patched::Object(patched, did_change)) => {
                            *obj = patched;
                            changed = did_change;
                            Outcome::Allowed(verified)
                        }
                        Err(PatchError::Internal(why)) => Outcome::Fatal(RegistryError::Internal(why)),
                        Err(PatchError::UnsupportedType(why)) => Outcome::CallFailed(why),
                    },
                    other => other,
                };
                if changed {
                    reinvoke.append(&mut previously_invoked);
                    should_reinvoke = true;
                }
                if hook.reinvoke_if_needed {
                    previously_invoked.insert(hook.uid.clone());
                }
                judge(hook, outcome)?;
            }
        }
        Ok(())
    }

    /// The validating dispatcher: every matching webhook called at once; the first failure in order decides.
    async fn validate_all(&self, req: &Request<'_>, obj: &Value, old: &Value) -> Result<(), RegistryError> {
        let hooks = self.hooks(req.registry).await?;
        self.validate_with(req, &hooks, obj, old).await
    }

    /// The validating dispatcher over the given webhooks.
    async fn validate_with(
        &self,
        req: &Request<'_>,
        hooks: &[Hook],
        obj: &Value,
        old: &Value,
    ) -> Result<(), RegistryError> {
        let mut relevant = Vec::new();
        for hook in hooks {
            if self.should_call(req, hook, obj, old).await? {
                relevant.push(hook);
            }
        }
        let outcomes = futures::future::join_all(relevant.iter().map(|h| self.call(req, h, obj, old))).await;
        for (hook, outcome) in relevant.into_iter().zip(outcomes) {
            judge(hook, outcome)?;
        }
        Ok(())
    }
}

/// A call's outcome as the request's answer, under the webhook's failure policy.
fn judge(hook: &Hook, outcome: Outcome) -> Result<(), RegistryError> {
    match outcome {
        Outcome::Allowed(_) => Ok(()),
        Outcome::CallFailed(_) if hook.ignore_failures => Ok(()),
        Outcome::CallFailed(reason) => Err(review::call_failed(&hook.name, &reason)),
        Outcome::Rejected(status) => Err(RegistryError::Admission(Box::new(status))),
        Outcome::Fatal(e) => Err(e),
    }
}

impl Plugin for Webhooks {
    fn name(&self) -> &'static str {
        if self.mutating {
            "MutatingAdmissionWebhook"
        } else {
            "ValidatingAdmissionWebhook"
        }
    }

    fn admit<'a>(
        &'a self,
        req: &'a Request<'a>,
        obj: &'a mut Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move {
            if !self.mutating || matching::is_exempt_configuration(&req.attrs) {
                return Ok(());
            }
            self.admit_all(req, obj, old).await
        })
    }

    fn validate<'a>(
        &'a self,
        req: &'a Request<'a>,
        obj: &'a Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move {
            if self.mutating || matching::is_exempt_configuration(&req.attrs) {
                return Ok(());
            }
            self.validate_all(req, obj, old).await
        })
    }
}
