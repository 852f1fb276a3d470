//! client-go's behaviour where races depend on it, as sans-IO models the simulation's Kubernetes clients
//! drive over HTTP: the reflector's list and watch choices ([`reflector`]), the informer's store and the
//! notifications its handlers get, tombstones included ([`store`]), and `RetryOnConflict` ([`retry`]).
//! Each follows client-go 1.32 and cites the file it models; bug switches that put back old client-go
//! behaviour live here, beside the rule they change.

pub mod reflector;
pub mod retry;
pub mod store;
