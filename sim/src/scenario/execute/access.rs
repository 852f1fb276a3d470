//! Identities and admission in a run: once the apiservers serve and before any client starts, the harness
//! waits, under an RBAC authorization mode, until the bootstrap policy (the default ClusterRoles and
//! bindings kube-apiserver's `rbac/bootstrap-roles` post-start hook writes) is in place, as upstream's
//! `/readyz` waits for that hook; then it creates each webhook's configuration through the first apiserver,
//! as its own user (a member of `system:masters`, so that any authorization mode lets it). At the end, what
//! each webhook saw goes into the run's record, for the report and the snapshot.

use std::collections::BTreeSet;
use std::time::Duration;

use http::Method;

use crate::apiserver::rest_client::KubeClient;
use crate::cluster::access::{token_of, HARNESS_USER};
use crate::cluster::webhook::{FailurePolicy, WebhookKind};
use crate::cluster::{Cluster, ClusterSpec};
use crate::trace::Trace;

/// How long the harness waits for one create of a configuration before it asks again.
const CREATE_TIMEOUT: Duration = Duration::from_secs(5);
/// How often it asks again after no answer or a 5xx.
const RETRY_EVERY: Duration = Duration::from_millis(100);
/// How many times it asks before giving up (and saying so in the trace).
const ATTEMPTS: usize = 50;

/// How long the harness waits for the RBAC bootstrap policy before it says so and lets the clients start.
const POLICY_LIMIT: Duration = Duration::from_secs(60);

/// Under an RBAC mode, waits until the first apiserver lists every object of the RBAC bootstrap policy
/// (consistent lists, so every apiserver's authorizer reads them too); one line in the trace.
pub(super) async fn wait_for_rbac_policy(cluster: &Cluster, spec: &ClusterSpec, trace: &Trace) {
    let rbac = apiserver::registry::authorizer::Modes::parse(&spec.authorization_mode).is_ok_and(|m| m.rbac());
    let Some(first) = cluster.apiservers.first().filter(|_| rbac) else { return };
    // What each served RBAC kind's bootstrap writes, as `namespace/name`, by its collection path.
    let mut wanted: Vec<(String, BTreeSet<String>)> = Vec::new();
    for info in crate::cluster::apiserver::catalog(spec).all() {
        let r = &info.resource;
        let names: BTreeSet<String> = (info.bootstrap)().iter().map(object_key).collect();
        if r.group == "rbac.authorization.k8s.io" && !names.is_empty() {
            wanted.push((format!("/apis/{}/{}/{}", r.group, r.version, r.plural), names));
        }
    }
    let total: usize = wanted.iter().map(|(_, names)| names.len()).sum();
    let client = KubeClient::new(first.addr).with_token(Some(token_of(HARNESS_USER)));
    let waiting = trace.clone();
    let task = cluster.control.spawn(async move {
        let start = madsim::time::Instant::now();
        for (path, names) in wanted {
            let mut missing: Vec<String> = names.iter().cloned().collect();
            loop {
                let listed = madsim::time::timeout(CREATE_TIMEOUT, client.exchange(Method::GET, &path, None, "")).await;
                if let Ok(Ok((200, list))) = listed {
                    let items = list["items"].as_array().cloned().unwrap_or_default();
                    let have: BTreeSet<String> = items.iter().map(object_key).collect();
                    missing = names.difference(&have).cloned().collect();
                    if missing.is_empty() {
                        break;
                    }
                }
                if start.elapsed() > POLICY_LIMIT {
                    let missing = missing.join(", ");
                    waiting.event(
                        "sim",
                        format_args!(
                            "rbac bootstrap policy NOT in place after {POLICY_LIMIT:?}: {path} lacks {missing}"
                        ),
                    );
                    return;
                }
                madsim::time::sleep(RETRY_EVERY).await;
            }
        }
        waiting.event("sim", format_args!("rbac bootstrap policy in place ({total} objects)"));
    });
    task.await.expect("the policy wait panicked");
}

/// `namespace/name` of an object (`/name` when cluster-scoped).
fn object_key(obj: &serde_json::Value) -> String {
    let text = |p: &str| obj.pointer(p).and_then(serde_json::Value::as_str).unwrap_or("").to_string();
    format!("{}/{}", text("/metadata/namespace"), text("/metadata/name"))
}

/// What one webhook saw during a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookLog {
    pub name: String,
    /// Its configuration in a few words: `validating configmaps CREATE,UPDATE answer=deny failurePolicy=Ignore
    /// timeout=2s`.
    pub config: String,
    /// One line per review it was sent, in order.
    pub seen: Vec<String>,
}

/// Creates every webhook's configuration from the control node, each create asked again until the
/// apiserver answers it (201, or 409 for a configuration an earlier try created); one line each in the
/// trace.
pub(super) async fn install(cluster: &Cluster, trace: &Trace) {
    // Without webhooks nothing is spawned: a task more would move the scheduler's draws of every run.
    let Some(first) = cluster.apiservers.first().filter(|_| !cluster.webhooks.is_empty()) else { return };
    let client = KubeClient::new(first.addr).with_token(Some(token_of(HARNESS_USER)));
    let hooks: Vec<_> = cluster.webhooks.iter().map(|w| (w.spec.clone(), w.url())).collect();
    let (trace, apiserver) = (trace.clone(), first.name.clone());
    let task = cluster.control.spawn(async move {
        for (spec, url) in hooks {
            let body = spec.configuration(&url);
            let kind = body["kind"].as_str().unwrap_or_default().to_string();
            let mut last = String::new();
            let mut done = false;
            for _ in 0..ATTEMPTS {
                let call = client.exchange(Method::POST, spec.configuration_path(), Some(&body), "application/json");
                match madsim::time::timeout(CREATE_TIMEOUT, call).await {
                    Ok(Ok((code @ (201 | 409), _))) => {
                        trace.event("sim", format_args!("webhook {} {kind} created -> {url} ({code})", spec.name));
                        done = true;
                        break;
                    }
                    Ok(Ok((code, answer))) if code < 500 && code != 429 => {
                        let message = answer["message"].as_str().unwrap_or_default().to_string();
                        last = format!("{code} {message}");
                        break;
                    }
                    Ok(Ok((code, _))) => last = format!("{code}"),
                    Ok(Err(e)) => last = format!("{e:?}"),
                    Err(_) => last = format!("no answer within {}s", CREATE_TIMEOUT.as_secs()),
                }
                madsim::time::sleep(RETRY_EVERY).await;
            }
            if !done {
                let name = &spec.name;
                trace.event("sim", format_args!("webhook {name} {kind} NOT created through {apiserver}: {last}"));
            }
        }
    });
    task.await.expect("the webhook installer panicked");
}

/// What every webhook saw, in file order.
pub(super) fn logs(cluster: &Cluster) -> Vec<WebhookLog> {
    cluster
        .webhooks
        .iter()
        .map(|w| {
            let s = &w.spec;
            let kind = match s.kind {
                WebhookKind::Validating => "validating",
                WebhookKind::Mutating => "mutating",
            };
            let policy = match s.failure_policy {
                FailurePolicy::Fail => "Fail",
                FailurePolicy::Ignore => "Ignore",
            };
            let answer = format!("{:?}", s.answer).to_lowercase();
            let names = if s.names.is_empty() { String::new() } else { format!(" names={}", s.names.join(",")) };
            let config = format!(
                "{kind} {} {} answer={answer}{names} failurePolicy={policy} timeout={}s",
                s.resources.join(","),
                s.operations.join(","),
                s.timeout_s
            );
            let seen = w.seen.lock().expect("the log lock is never poisoned").clone();
            WebhookLog { name: s.name.clone(), config, seen }
        })
        .collect()
}
