//! Test support that more than one kubesim crate needs, in one crate the dependency rules can see (rather
//! than source files compiled into another crate's tests through `#[path]`).
//!
//! - [`ports`]: loopback ports no other server of the process uses.
//! - [`bench`]: what every benchmark's `main` reads first (full run or smoke run, seconds per measurement).
//!
//! Real processes and sockets only: nothing here runs under the simulation build.

pub mod bench;
pub mod ports;

pub use bench::{bench_run, BenchRun};
pub use ports::free_port;
