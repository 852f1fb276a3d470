//! kubesim's deterministic testbed. Today: the smallest simulation that proves fake-etcd serves its gRPC API
//! over madsim's simulated network ([`demo`]). The cluster builder, faults, trace, history and checkers
//! come with the sim-harness issue.

pub mod checker;
#[cfg(madsim)]
pub mod demo;
pub mod history;
