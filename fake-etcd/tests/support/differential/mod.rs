//! The differential harness over etcd-client: the seeded operation mix, executing an operation and
//! normalizing its answer, and the known 3.4.23 bugs. Used by `tests/differential.rs` only.

pub mod exec;
pub mod gen;
pub mod known_bugs;
