//! The controller runtime's bug switches: client-go behaviour the runtime corrects by default and a
//! scenario can put back, each declared once here beside the rule it changes (`kubesim bugs` lists them).

kubesim_failpoints::bugs! {
    /// A client-go behaviour kubesim's controller managers correct, which a scenario can put back.
    pub enum Bug {
        /// A controller manager's controllers write whenever they run, whether or not the lease is still
        /// theirs: client-go's leader election has no fence, so a manager paused past its lease wakes and
        /// writes before its renew loop notices that another manager leads.
        UnfencedLeader => (
            "unfenced-leader",
            "kubernetes #67651",
            "a controller manager's controllers keep writing after its lease may have passed to another manager (client-go's leader election has no fence), so a manager paused past its lease acts beside the new leader when it wakes"
        ),
        /// The namespace controller takes a group version whose discovery failed as having no resources, as
        /// it did while an unavailable aggregated API answered discovery with 404: a pass that emptied every
        /// group it did discover removes the `kubernetes` finalizer, and the failing group's objects stay in
        /// etcd in a namespace that no longer exists.
        DiscoveryFailureIgnored => (
            "namespace-discovery-failure-ignored",
            "kubernetes #58577",
            "the namespace controller takes a group whose discovery failed as empty and releases the namespace, leaving that group's objects behind in a namespace that no longer exists"
        ),
        /// The ReplicaSet and Job controllers manage pods whether or not the informer has reported the
        /// creations and deletions of their last sync: without expectations a sync that follows its own
        /// creates too closely counts from a cache that lacks them and makes the same pods again.
        IgnoreExpectations => (
            "controller-ignores-expectations",
            "kubernetes #120790",
            "the ReplicaSet and Job controllers act on a pod informer cache that has not yet seen their own creates (no expectations), so they make too many pods: a Job's extra pods run to completion and it succeeds more often than it asked for"
        ),
        /// The EndpointSlice controller reconciles from its slice informer whether or not it has caught up
        /// with the controller's own writes (no `EndpointSliceTracker.StaleSlices` check).
        StaleEndpointSlices => (
            "endpointslices-from-stale-cache",
            "kubernetes #92928",
            "the EndpointSlice controller reconciles a Service from a slice cache that lags behind its own writes (no EndpointSliceTracker staleness check), so it creates duplicate slices or leaves slices naming pods that are gone"
        ),
        /// The garbage collector's absent-owner cache matches an owner by UID alone, as it did before 1.20:
        /// an owner reference that cannot resolve (an owner in another namespace) puts the owner's UID in
        /// the cache, and a valid dependent of that very owner is then collected without a lookup.
        AbsentOwnerByUid => (
            "gc-absent-owner-by-uid",
            "kubernetes #65200",
            "the garbage collector caches an owner as absent by its UID alone, so after a dependent in another namespace names it (an owner reference that cannot resolve), it deletes the owner's valid dependents while the owner exists"
        ),
    }
}

/// The switches on.
pub type Bugs = kubesim_failpoints::BugSet<Bug>;
