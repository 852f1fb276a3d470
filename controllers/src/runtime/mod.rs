//! The controller runtime: what every controller is built from. `workqueue` (client-go's rate-limited,
//! deduplicating queue, sans IO, and its async shell), `informer` (list and watch into a local cache, with
//! handlers), `leader` (leader election over a Lease), `events` (the Events controllers record), `worker`
//! (the loop that takes keys to reconcile), `selection` (kube-controller-manager's `--controllers` syntax);
//! `reflector`, `store` and `retry` are client-go's rules as sans-IO models, which the informers here and
//! the simulation's scenario informers share.

pub mod context;
pub mod events;
pub mod informer;
pub mod leader;
pub mod reflector;
pub mod retry;
pub mod selection;
pub mod store;
pub mod time;
pub mod worker;
pub mod workqueue;
