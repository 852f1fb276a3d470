//! Leases: the lease table (`Lessor`) and the id generator. Sans IO: time is passed in as [`Millis`].
//!
//! Semantics are etcd 3.4's `lease` package (`lease/lessor.go`): a TTL below the
//! minimum is raised to it; a keep-alive resets the deadline to `now + TTL`; revoking or expiring a lease
//! deletes every attached key (that deletion is the `apply` layer's job, which asks [`Lessor::revoke`] for
//! the keys). What this module must not do: touch the key-value store, or decide on its own that time passed.

mod id_gen;
mod lessor;

pub(crate) use id_gen::LeaseIdGen;
pub(crate) use lessor::{Lessor, TimeToLive};

/// etcd refuses TTLs above this (`MaxLeaseTTL`, 9,000,000,000 s).
pub(crate) const MAX_LEASE_TTL_S: i64 = 9_000_000_000;
