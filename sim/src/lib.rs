//! kubesim's deterministic testbed. Today: the smallest simulation that proves fake-etcd serves its gRPC API
//! over madsim's simulated network ([`demo`]), the history of a run and the checkers that judge it. The
//! cluster builder, faults, trace and workloads come with the sim-harness issue.

pub mod checker;
#[cfg(madsim)]
pub mod demo;
pub mod history;
