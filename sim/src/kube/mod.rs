//! client-go's behaviour where races depend on it, as sans-IO models the simulation's Kubernetes clients
//! drive over HTTP: the reflector's list and watch choices ([`reflector`]), the informer's store and the
//! notifications its handlers get, tombstones included ([`store`]), and `RetryOnConflict` ([`retry`]).
//! They live in the controller runtime (`kubesim-controllers`), whose informers and controllers run on the
//! same rules; the scenario language's informers and `controller` steps use them from here.

pub use controllers::runtime::{reflector, retry, store};
