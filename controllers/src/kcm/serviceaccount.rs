//! The service account controller (`serviceaccount-controller`, kube-controller-manager 1.32,
//! `pkg/controller/serviceaccount/serviceaccounts_controller.go`): every active namespace has a `default`
//! ServiceAccount. A namespace added or updated is synced; a deleted `default` account makes its namespace
//! synced again, so that it comes back. One worker, as upstream starts it.

use std::sync::Arc;

use serde_json::{json, Value};

use super::Context;
use crate::client::resource::builtin;
use crate::client::{Client, ClientError};
use crate::runtime::informer::Informer;
use crate::runtime::selection::Descriptor;
use crate::runtime::store::Notice;
use crate::runtime::worker::{self, Outcome};
use crate::runtime::workqueue::{RateLimiter, WorkQueue};

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "serviceaccount-controller", aliases: &["serviceaccount"], disabled_by_default: false };

/// `serviceAccountsToEnsure`: kube-controller-manager's default list.
const TO_ENSURE: &[&str] = &["default"];

/// `v1.NamespaceTerminatingCause`: a create refused because its namespace is being deleted.
pub(crate) const NAMESPACE_TERMINATING_CAUSE: &str = "NamespaceTerminating";

/// Whether `err` carries the cause `cause` (`apierrors.HasStatusCause`).
pub(crate) fn has_cause(err: &ClientError, cause: &str) -> bool {
    match err {
        ClientError::Status { status, .. } => status
            .details
            .as_ref()
            .and_then(|d| d.causes.as_ref())
            .is_some_and(|causes| causes.iter().any(|c| c.reason.as_deref() == Some(cause))),
        ClientError::Transport(_) | ClientError::Fenced => false,
    }
}

pub async fn run(ctx: Context) {
    let namespaces = ctx.informers.get(&builtin::namespaces());
    let accounts = ctx.informers.get(&builtin::service_accounts());
    let queue = WorkQueue::new(RateLimiter::default_controller());
    let mut ns_events = namespaces.subscribe();
    let mut sa_events = accounts.subscribe();
    let feed = async {
        loop {
            tokio::select! {
                biased;
                Some(delta) = ns_events.recv() => {
                    if matches!(delta.notice, Notice::Add | Notice::Update) {
                        queue.add(delta.key);
                    }
                }
                Some(delta) = sa_events.recv() => {
                    // `serviceAccountDeleted`: the account's namespace is synced again.
                    if matches!(delta.notice, Notice::Delete | Notice::DeleteTombstone) {
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
        accounts.wait_synced().await;
        let client = ctx.client.clone();
        worker::run(DESCRIPTOR.name, &queue, 1, |ns| sync_namespace(&client, &namespaces, &accounts, ns)).await;
    };
    tokio::select! {
        biased;
        _ = feed => {}
        _ = work => {}
    }
}

/// `syncNamespace`: creates each account to ensure that the cache lacks, in an active namespace.
async fn sync_namespace(
    client: &Arc<Client>,
    namespaces: &Informer,
    accounts: &Informer,
    ns: String,
) -> Result<Outcome, ClientError> {
    let Some(namespace) = namespaces.get(&ns) else { return Ok(Outcome::Done) };
    if namespace.pointer("/status/phase").and_then(Value::as_str) != Some("Active") {
        return Ok(Outcome::Done);
    }
    let mut failure = None;
    for name in TO_ENSURE {
        if accounts.get(&format!("{ns}/{name}")).is_some() {
            continue;
        }
        let account =
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": ns}});
        match client.create(&builtin::service_accounts().collection_path(Some(&ns)), &account).await {
            Ok(_) => {}
            Err(err) if err.is_already_exists() || has_cause(&err, NAMESPACE_TERMINATING_CAUSE) => {}
            Err(err) => failure = Some(err),
        }
    }
    failure.map_or(Ok(Outcome::Done), Err)
}
