//! One sync of one Service's EndpointSlices, with its requests (1.32,
//! `pkg/controller/endpointslice/endpointslice_controller.go` `syncService`;
//! `staging/src/k8s.io/endpointslice/reconciler.go` `finalize`, `deleteEndpointSlice`).
//!
//! A Service that is gone is forgotten: its slices go with it through the garbage collector, which their
//! owner references name the Service to. An `ExternalName` Service or one without a selector is left
//! alone. Otherwise the slices this controller manages for it (by the `kubernetes.io/service-name` and
//! `managed-by` labels; those being deleted aside) are checked against the tracker, which fails the sync
//! while the informer lags behind this controller's own writes; then the reconciler's plan is written:
//! creates (none while the Service is being deleted, so as not to race the garbage collector), updates,
//! deletes, in that order, each recorded in the tracker. A failure records a `FailedToUpdateEndpointSlices`
//! warning on the Service and fails the sync.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::endpoint::{LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY};
use super::reconciler::{reconcile, set_trigger_time, Plan};
use super::tracker::Tracker;
use super::util::{self, meta, receives_no_endpoints, TriggerTimeTracker};
use crate::client::resource::builtin;
use crate::client::Client;
use crate::kcm::replicaset::sync::error_text;
use crate::kcm::serviceaccount::{has_cause, NAMESPACE_TERMINATING_CAUSE};
use crate::runtime::events::{EventType, Recorder};
use crate::runtime::informer::Informer;
use crate::runtime::worker::Outcome;

/// Whether this controller manages `slice` (its `managed-by` label).
pub fn managed_by_controller(slice: &Value) -> bool {
    slice.pointer("/metadata/labels").and_then(|l| l.get(LABEL_MANAGED_BY)).and_then(Value::as_str) == Some(MANAGED_BY)
}

/// `ServiceControllerKey`: the key of the Service a slice belongs to, by its label.
pub fn service_key(slice: &Value) -> Option<String> {
    let name = slice.pointer("/metadata/labels").and_then(|l| l.get(LABEL_SERVICE_NAME)).and_then(Value::as_str)?;
    (!name.is_empty()).then(|| format!("{}/{name}", meta(slice, "namespace")))
}

/// The controller's state, shared by its handlers and workers.
pub struct Controller {
    pub client: Arc<Client>,
    pub services: Informer,
    pub pods: Informer,
    pub nodes: Informer,
    pub slices: Informer,
    pub events: Recorder,
    pub max_endpoints_per_slice: usize,
    pub tracker: Mutex<Tracker>,
    pub trigger_times: Mutex<TriggerTimeTracker>,
    /// The switches on (`endpointslices-from-stale-cache`).
    pub bugs: crate::bug::Bugs,
}

impl Controller {
    fn tracker(&self) -> std::sync::MutexGuard<'_, Tracker> {
        self.tracker.lock().expect("the tracker is never poisoned")
    }

    /// `syncService` for `key` (`namespace/name`).
    pub async fn sync(&self, key: String) -> Result<Outcome, String> {
        let (namespace, name) = key.split_once('/').unwrap_or(("", key.as_str()));
        let Some(service) = self.services.get(&key) else {
            self.trigger_times.lock().expect("never poisoned").delete_service(namespace, name);
            self.tracker().delete_service(namespace, name);
            return Ok(Outcome::Done);
        };
        if receives_no_endpoints(&service) {
            return Ok(Outcome::Done);
        }
        let selector = util::service_selector(&service).expect("a Service with endpoints has a selector");
        let candidates = self.pods.list_namespace(namespace);
        let pods: Vec<&Value> = candidates.iter().filter(|p| selector.matches(p.pointer("/metadata/labels"))).collect();
        let slices: Vec<Value> = self
            .slices
            .list_namespace(namespace)
            .into_iter()
            .filter(|s| managed_by_controller(s) && service_key(s).as_deref() == Some(key.as_str()))
            .filter(|s| s.pointer("/metadata/deletionTimestamp").is_none_or(Value::is_null))
            .collect();
        if self.tracker().must_wait(namespace, name, &slices, &self.bugs) {
            return Err("EndpointSlice informer cache is out of date".into());
        }
        let trigger = self.trigger_times.lock().expect("never poisoned").compute(namespace, &service, &pods);
        let node = |name: &str| self.nodes.get(name);
        let (plan, mut errors) = reconcile(&service, &pods, &node, &slices, self.max_endpoints_per_slice);
        if let Err(err) = self.finalize(&service, plan, trigger).await {
            errors.push(err);
        }
        if errors.is_empty() {
            return Ok(Outcome::Done);
        }
        let err = if errors.len() == 1 { errors.remove(0) } else { format!("[{}]", errors.join(", ")) };
        let message = format!(
            "Error updating Endpoint Slices for Service {}/{}: {err}",
            meta(&service, "namespace"),
            meta(&service, "name")
        );
        self.events.record(&service, EventType::Warning, "FailedToUpdateEndpointSlices", &message).await;
        Err(err)
    }

    /// `finalize`'s requests: creates, updates, deletes.
    async fn finalize(&self, service: &Value, plan: Plan, trigger: Option<i64>) -> Result<(), String> {
        let (ns, name) = (meta(service, "namespace"), meta(service, "name"));
        let resource = builtin::endpoint_slices();
        let deleting = service.pointer("/metadata/deletionTimestamp").is_some_and(|d| !d.is_null());
        if !deleting {
            for mut slice in plan.create {
                set_trigger_time(&mut slice, trigger);
                match self.client.create(&resource.collection_path(Some(ns)), &slice).await {
                    Ok(created) => self.tracker().update(&created),
                    // Nothing can be created in a namespace being deleted: drop the key.
                    Err(err) if has_cause(&err, NAMESPACE_TERMINATING_CAUSE) => return Ok(()),
                    Err(err) => {
                        return Err(format!(
                            "failed to create EndpointSlice for Service {ns}/{name}: {}",
                            error_text(&err)
                        ))
                    }
                }
            }
        }
        for mut slice in plan.update {
            set_trigger_time(&mut slice, trigger);
            let slice_name = meta(&slice, "name").to_string();
            match self.client.update(&resource.object_path(Some(ns), &slice_name), &slice).await {
                Ok(updated) => self.tracker().update(&updated),
                Err(err) => {
                    return Err(format!(
                        "failed to update {slice_name} EndpointSlice for Service {ns}/{name}: {}",
                        error_text(&err)
                    ))
                }
            }
        }
        for slice in plan.delete {
            let slice_name = meta(&slice, "name");
            match self.client.delete(&resource.object_path(Some(ns), slice_name), None).await {
                Ok(_) => self.tracker().expect_deletion(&slice),
                Err(err) if err.is_not_found() => {}
                Err(err) => {
                    return Err(format!(
                        "failed to delete {slice_name} EndpointSlice for Service {ns}/{name}: {}",
                        error_text(&err)
                    ))
                }
            }
        }
        Ok(())
    }
}
