//! The garbage collector's absent-owner cache: owners an attempt-to-delete found missing (or saw deleted),
//! so that the next dependent of the same owner is collected without another GET.
//!
//! Upstream: kube-controller-manager 1.32, `pkg/controller/garbagecollector/uid_cache.go`
//! (`ReferenceCache`, keyed by the whole `objectReference`: coordinates, namespace and UID, since
//! kubernetes #92743). Before 1.20 it was keyed by UID alone, so an owner reference that could not resolve
//! (a dependent naming an owner in another namespace) put a live owner's UID in the cache and the owner's
//! valid dependents were collected (kubernetes #65200); the `gc-absent-owner-by-uid` switch puts that back.

use std::collections::BTreeMap;

use super::object_ref::ObjectRef;

/// Upstream's `ReferenceCache`: a least-recently-used set of owners known not to exist. Both `add` and a
/// hit in `has` make an entry the most recent, as groupcache's `lru` does.
#[derive(Clone, Debug)]
pub struct AbsentOwnerCache {
    capacity: usize,
    tick: u64,
    by_ref: BTreeMap<ObjectRef, u64>,
    by_tick: BTreeMap<u64, ObjectRef>,
    /// The `gc-absent-owner-by-uid` switch: a lookup matches any entry with the same UID, whatever its
    /// coordinates and namespace (upstream's `UIDCache` before 1.20).
    by_uid_only: bool,
}

impl AbsentOwnerCache {
    pub fn new(capacity: usize) -> Self {
        AbsentOwnerCache { capacity, tick: 0, by_ref: BTreeMap::new(), by_tick: BTreeMap::new(), by_uid_only: false }
    }

    /// Makes lookups match by UID alone (the `gc-absent-owner-by-uid` bug switch).
    pub fn match_by_uid_only(&mut self) {
        self.by_uid_only = true;
    }

    fn touch(&mut self, reference: &ObjectRef) {
        self.tick += 1;
        if let Some(old) = self.by_ref.insert(reference.clone(), self.tick) {
            self.by_tick.remove(&old);
        }
        self.by_tick.insert(self.tick, reference.clone());
    }

    pub fn add(&mut self, reference: ObjectRef) {
        self.touch(&reference);
        while self.by_ref.len() > self.capacity {
            let Some((_, oldest)) = self.by_tick.pop_first() else { break };
            self.by_ref.remove(&oldest);
        }
    }

    pub fn has(&mut self, reference: &ObjectRef) -> bool {
        let hit = if self.by_uid_only {
            self.by_ref.keys().find(|cached| cached.uid == reference.uid).cloned()
        } else {
            self.by_ref.contains_key(reference).then(|| reference.clone())
        };
        match hit {
            Some(entry) => {
                self.touch(&entry);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_owner_cache_evicts_least_recent() {
        let key = |n: u32| ObjectRef { uid: n.to_string(), ..Default::default() };
        let mut cache = AbsentOwnerCache::new(2);
        cache.add(key(1));
        cache.add(key(2));
        assert!(cache.has(&key(1)));
        cache.add(key(3));
        assert!(cache.has(&key(1)) && cache.has(&key(3)) && !cache.has(&key(2)));
    }

    #[test]
    fn an_owner_missing_in_one_namespace_is_absent_elsewhere_only_with_the_switch() {
        let owner = |namespace: &str| ObjectRef {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some(namespace.into()),
            name: "owner".into(),
            uid: "u1".into(),
        };
        // (switch on, the lookup's namespace, hit)
        let cases = [(false, "a", true), (false, "b", false), (true, "a", true), (true, "b", true)];
        for (switch, namespace, want) in cases {
            let mut cache = AbsentOwnerCache::new(10);
            if switch {
                cache.match_by_uid_only();
            }
            // A dependent in `a` named the owner, which lives in `b`: not found in `a`.
            cache.add(owner("a"));
            assert_eq!(cache.has(&owner(namespace)), want, "switch {switch}, looked up in {namespace}");
        }
    }
}
