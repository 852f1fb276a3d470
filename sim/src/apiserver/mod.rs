//! The pieces an `apiserver` workload of a scenario is made of (`scenario::execute::api_workload`): clients
//! that reach kubesim's apiservers over HTTP through the simulated network, the history they record, and the
//! etcd-side record of every change under `/registry/` that the apiserver checkers
//! (`checker::apiserver`) compare their view with.
//!
//! Files: `record` (the history recorder and its error classes), `traffic` (the random and scripted
//! clients), `rest_client` (the clients' REST client), `reference` (the etcd-side record).
//!
//! There is no runner here: the apiserver simulation is the scenario
//! `scenarios/apiserver-watch-cache-under-nemesis.toml`, run through the one front door every run takes
//! (`scenario::execute::run`).

pub mod record;
pub mod reference;
pub mod rest_client;
pub mod traffic;
