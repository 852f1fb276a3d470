//! Test support that more than one kubesim crate needs, in one crate the dependency rules can see (rather
//! than source files compiled into another crate's tests through `#[path]`).
//!
//! - [`ports`]: loopback ports no other server of the process uses.
//! - [`bench`]: what every benchmark's `main` reads first (full run or smoke run, seconds per measurement).
//! - [`diff`]: the diff a transcript test prints when two sides differ.
//! - [`real_etcd`]: Debian's etcd 3.4.23 as a child process, for comparisons against the real peer.
//!
//! Real processes and sockets only: nothing here runs under the simulation build.

pub mod bench;
pub mod diff;
pub mod ports;
pub mod real_etcd;

pub use bench::{bench_run, BenchRun};
pub use diff::line_diff;
pub use ports::free_port;
pub use real_etcd::RealEtcd;
