//! `EndpointSliceTracker` (1.32, `staging/src/k8s.io/endpointslice/util/endpointslice_tracker.go`): the
//! generation of every slice this controller last wrote, per Service, so that it can tell its own writes
//! coming back through the informer (no resync needed) from someone else's (resync), and a cache that
//! lags behind its writes (the sync must wait, or it would act twice). A deletion it made is remembered as
//! expected until the informer reports it.

use std::collections::BTreeMap;

use serde_json::Value;

use super::endpoint::LABEL_SERVICE_NAME;
use super::util::meta;
use crate::bug::{Bug, Bugs};

/// A slice whose deletion this controller asked for.
const DELETION_EXPECTED: i64 = -1;

fn service_of(slice: &Value) -> (String, String) {
    let name = slice.pointer("/metadata/labels").and_then(|l| l.get(LABEL_SERVICE_NAME)).and_then(Value::as_str);
    (meta(slice, "namespace").to_string(), name.unwrap_or("").to_string())
}

fn generation(slice: &Value) -> i64 {
    slice.pointer("/metadata/generation").and_then(Value::as_i64).unwrap_or(0)
}

/// Expected generations by slice UID, by Service (`namespace`, `name`).
#[derive(Debug, Default)]
pub struct Tracker {
    by_service: BTreeMap<(String, String), BTreeMap<String, i64>>,
}

impl Tracker {
    /// `Has`: the slice is tracked.
    pub fn has(&self, slice: &Value) -> bool {
        self.by_service.get(&service_of(slice)).is_some_and(|g| g.contains_key(meta(slice, "uid")))
    }

    /// `ShouldSync`: the slice is not one this controller wrote last (untracked, or newer than tracked).
    pub fn should_sync(&self, slice: &Value) -> bool {
        match self.by_service.get(&service_of(slice)).and_then(|g| g.get(meta(slice, "uid"))) {
            None => true,
            Some(tracked) => generation(slice) > *tracked,
        }
    }

    /// `StaleSlices`: the informer's `slices` of the Service lag behind this controller's writes: one is
    /// older than written, one expected deleted is still there, or one written is missing.
    pub fn stale_slices(&self, namespace: &str, service: &str, slices: &[Value]) -> bool {
        let Some(tracked) = self.by_service.get(&(namespace.to_string(), service.to_string())) else {
            return false;
        };
        for slice in slices {
            if let Some(g) = tracked.get(meta(slice, "uid")) {
                if *g == DELETION_EXPECTED || *g > generation(slice) {
                    return true;
                }
            }
        }
        tracked.iter().any(|(uid, g)| *g != DELETION_EXPECTED && !slices.iter().any(|s| meta(s, "uid") == uid))
    }

    /// Whether the sync must wait for the informer (see [`stale_slices`](Self::stale_slices)); never with
    /// the switch `endpointslices-from-stale-cache`, which reconciles from whatever the cache holds.
    pub fn must_wait(&self, namespace: &str, service: &str, slices: &[Value], bugs: &Bugs) -> bool {
        !bugs.has(Bug::StaleEndpointSlices) && self.stale_slices(namespace, service, slices)
    }

    /// `Update`: the slice as this controller just wrote it.
    pub fn update(&mut self, slice: &Value) {
        self.by_service.entry(service_of(slice)).or_default().insert(meta(slice, "uid").to_string(), generation(slice));
    }

    /// `ExpectDeletion`.
    pub fn expect_deletion(&mut self, slice: &Value) {
        self.by_service.entry(service_of(slice)).or_default().insert(meta(slice, "uid").to_string(), DELETION_EXPECTED);
    }

    /// `HandleDeletion`: forgets the slice; false if its deletion was not this controller's doing.
    pub fn handle_deletion(&mut self, slice: &Value) -> bool {
        if let Some(tracked) = self.by_service.get_mut(&service_of(slice)) {
            if let Some(g) = tracked.remove(meta(slice, "uid")) {
                return g == DELETION_EXPECTED;
            }
        }
        true
    }

    /// `DeleteService`.
    pub fn delete_service(&mut self, namespace: &str, name: &str) {
        self.by_service.remove(&(namespace.to_string(), name.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn slice(uid: &str, generation: i64) -> Value {
        json!({"metadata": {"namespace": "ns", "uid": uid, "generation": generation,
                            "labels": {LABEL_SERVICE_NAME: "web"}}})
    }

    #[test]
    fn own_writes_are_not_resynced_and_lagging_caches_are_stale() {
        let mut t = Tracker::default();
        assert!(t.should_sync(&slice("a", 1)), "untracked");
        assert!(!t.stale_slices("ns", "web", &[]), "nothing tracked");
        t.update(&slice("a", 2));
        assert!(t.has(&slice("a", 2)));
        assert!(!t.should_sync(&slice("a", 2)), "our own write");
        assert!(t.should_sync(&slice("a", 3)), "someone else's");
        assert!(t.stale_slices("ns", "web", &[slice("a", 1)]), "older than written");
        assert!(t.stale_slices("ns", "web", &[]), "written but not seen");
        assert!(!t.stale_slices("ns", "web", &[slice("a", 2)]));
        t.expect_deletion(&slice("a", 2));
        assert!(t.stale_slices("ns", "web", &[slice("a", 2)]), "deleted but still seen");
        assert!(!t.stale_slices("ns", "web", &[]));
        assert!(t.handle_deletion(&slice("a", 2)), "expected");
        t.update(&slice("b", 1));
        assert!(!t.handle_deletion(&slice("b", 1)), "not ours: resync");
        t.update(&slice("c", 1));
        t.delete_service("ns", "web");
        assert!(!t.has(&slice("c", 1)));
    }

    #[test]
    fn the_switch_reconciles_from_a_lagging_cache() {
        let mut t = Tracker::default();
        t.update(&slice("a", 1));
        let cases = [("off", Bugs::none(), true), ("on", Bugs::of(&[Bug::StaleEndpointSlices]), false)];
        for (name, bugs, want) in cases {
            assert_eq!(t.must_wait("ns", "web", &[], &bugs), want, "{name}: written but not seen");
            assert!(!t.must_wait("ns", "web", &[slice("a", 1)], &bugs), "{name}: caught up");
        }
    }
}
