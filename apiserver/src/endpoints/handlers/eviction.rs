//! `POST .../pods/NAME/eviction` (kube's `EvictionREST.Create`): reads the pod and its namespace's
//! disruption budgets, lets [`evictions::judge`] decide, writes the budget it spends (again from the
//! start when another writer got there first), marks the pod `DisruptionTarget` and deletes it with the
//! eviction's `deleteOptions`. Answers a Success `Status`, or the verdict's refusal (a 429 for a spent
//! budget).

use http::{Response, StatusCode};
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use serde_json::{json, Value};

use crate::apis::policy::evictions::{self, Verdict};
use crate::endpoints::error::ApiError;
use crate::endpoints::handlers::{delete, Target};
use crate::endpoints::query::WriteQuery;
use crate::endpoints::response::Responder;
use crate::endpoints::{ApiServer, Body};
use crate::registry::options::UpdateOptions;
use crate::registry::system::rfc3339;
use crate::registry::{ListRequest, RegistryError, Subresource};
use crate::storage::GetOptions;

/// How many times a budget written by someone else in between is read again (`EvictionsRetry`).
const ATTEMPTS: usize = 20;

pub(crate) async fn evict(
    server: &ApiServer,
    target: &Target<'_>,
    eviction: Value,
    options: &WriteQuery,
    responder: &Responder,
) -> Result<Response<Body>, ApiError> {
    evictions::check_name(&eviction, &target.name)?;
    let wire = match eviction.get("deleteOptions").filter(|d| d.is_object()) {
        Some(d) => serde_json::from_value::<meta::DeleteOptions>(d.clone())
            .map_err(|err| ApiError::BadRequest(err.to_string()))?,
        None => meta::DeleteOptions::default(),
    };
    let mut delete_options = delete::from_wire(wire)?;
    // The create's dryRun applies to the deletion too (`propagateDryRun`).
    if delete_options.dry_run.is_empty() {
        delete_options.dry_run = options.dry_run.clone();
    }
    let dry_run = !delete_options.dry_run.is_empty();
    let (ns, name) = (&target.namespace, &target.name);
    let budgets = server.served().rest("policy", "v1", "poddisruptionbudgets").cloned();
    for _ in 0..ATTEMPTS {
        let pod = target.rest.get(ns, name, &GetOptions::default()).await?;
        let all = match &budgets {
            Some(rest) => {
                rest.list(ns, &ListRequest::default()).await?.items.iter().map(|b| b.value().clone()).collect()
            }
            None => Vec::new(),
        };
        let now = rfc3339(server.clock.now_unix_s());
        if let Verdict::Spend(budget) = evictions::judge(&pod, &all, &now)? {
            let rest = budgets.as_ref().expect("a budget was read, so budgets are served");
            let budget_name = budget["metadata"]["name"].as_str().unwrap_or("").to_string();
            if !dry_run {
                let opts = UpdateOptions::default();
                match rest.update_subresource(ns, &budget_name, Subresource::Status, budget, &opts).await {
                    Ok(_) => {}
                    Err(err) if is_conflict(&err) => continue,
                    Err(err) => return Err(err.into()),
                }
            }
        }
        if !dry_run {
            let mut mark = |current: &Value| Ok(evictions::mark_disrupted(current, &now));
            let opts = UpdateOptions::default();
            target.rest.patch(ns, name, Some(Subresource::Status), &mut mark, &opts).await?;
        }
        target.rest.delete(ns, name, &delete_options).await?;
        let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
        return responder.object(StatusCode::CREATED, &status);
    }
    Err(RegistryError::TooManyRequests {
        message: "Cannot evict pod as it would violate the pod's disruption budget.".into(),
        retry_after_s: 0,
        causes: Vec::new(),
    }
    .into())
}

/// A write that lost to another writer (409 Conflict), worth another read.
fn is_conflict(err: &RegistryError) -> bool {
    err.to_status().reason.as_deref() == Some("Conflict")
}
