//! kube-controller-manager's controllers for kubesim, and the controller runtime they are written on.
//!
//! The runtime (`runtime`) is client-go's, rebuilt to run in both of kubesim's builds: shared informers
//! over list and watch, a rate-limited work queue with client-go's dedup and backoff, leader election over a
//! `coordination.k8s.io` Lease. Everything it does reaches the apiserver through `client`, its HTTP API, so
//! that a controller here acts exactly as a separate process would: in the `kubesim-apiserver` binary the
//! requests go in-process through `ApiServer::handle`, in the simulation over the simulated network from a
//! node of its own, which faults reach.
//!
//! `kcm` holds the controllers, one module each, named after kube-controller-manager's (1.32); `manager`
//! starts the ones `--controllers` selects, behind leader election.
//!
//! Never: a read or write around the HTTP API (no registry, no storage); the wall clock or a thread (time is
//! the runtime's, randomness a seeded generator handed in); a controller that acts while it does not hold
//! the lease.

#![warn(unreachable_pub)]

pub mod bug;
pub mod client;
pub mod kcm;
pub mod manager;
pub mod nodes;
pub mod runtime;
pub mod scheduler;
