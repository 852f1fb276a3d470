//! kubesim's deterministic testbed: a fake-etcd cluster and recording clients on madsim's simulated
//! network, faults and failpoints, a trace of what happened, the history of what clients saw, and the
//! checkers that judge it.
//!
//! - [`cluster`]: nodes, names, addresses, seeds; [`fault`]: faults and the random nemesis;
//! - [`client`]: the recording client; [`workload`]: traffic generators; [`trace`]: the event trace;
//! - [`scenario`]: the scenario language and the one runner every simulation goes through; [`run`]: the
//!   traffic preset (generated etcd traffic from a few knobs) on that runner; [`history`] and [`checker`]: what was seen, and the
//!   guarantees it must keep; [`describe`]: the one text form of what was asked and seen, which the trace,
//!   the checkers' verdicts and the scenario reports share;
//! - [`bugs`]: every bug switch of every component, for the scenario language and the CLI;
//! - [`kube`]: client-go's reflector, informer store and retry rules, as models simulated clients drive;
//! - [`report`]: a run's HTML timeline and Perfetto trace, built after the run from its trace and history;
//! - [`apiserver`]: the clients, history recorder and etcd-side record of scenarios' apiserver workloads,
//!   judged by [`checker::apiserver`] over [`history::apiserver`].
//!
//! Everything that touches madsim's runtime exists only in the simulation build (`--cfg madsim`).

#[cfg(madsim)]
pub mod apiserver;
pub mod bugs;
pub mod checker;
pub mod describe;
pub mod error;
pub mod history;
pub mod kube;
pub mod report;

#[cfg(madsim)]
pub mod client;
#[cfg(madsim)]
pub mod cluster;
#[cfg(madsim)]
pub mod fault;
#[cfg(madsim)]
pub mod run;
#[cfg(madsim)]
pub mod scenario;
#[cfg(madsim)]
pub mod testing;
#[cfg(madsim)]
pub mod trace;
#[cfg(madsim)]
pub mod workload;

pub use error::SimError;
