//! Shared parts of kubesim's fuzz targets (`fuzz_targets/`, one binary each, run by cargo-fuzz and
//! libFuzzer): a fake-etcd member served in-process ([`etcd`]), requests to it built from fuzz input
//! ([`ops`] structure-aware through `arbitrary`, [`raw`] decoded from protobuf bytes), Raft messages and
//! batches from a peer ([`peer`]), data dirs written from fuzz input ([`disk`]), and HTTP requests to an
//! apiserver ([`http`]).
//!
//! Every target's oracle is the same: whatever the input, the code under test answers (with an error if
//! the input deserves one) and never panics or hangs. The etcd targets run on a paused tokio clock, so a
//! request that would wait (a proposal without a leader, a lease TTL) moves time on instead of sleeping,
//! and a run is a function of its input alone.

// The scenario target alone is built with `--cfg madsim` (the scenario language lives in the simulation
// build) and needs none of these, which drive real tokio.
#[cfg(not(madsim))]
pub mod disk;
#[cfg(not(madsim))]
pub mod etcd;
#[cfg(not(madsim))]
pub mod http;
#[cfg(not(madsim))]
pub mod ops;
#[cfg(not(madsim))]
pub mod peer;
#[cfg(not(madsim))]
pub mod raw;

/// A current-thread runtime whose clock only moves when every task waits on a timer.
#[cfg(not(madsim))]
pub fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime builds")
}
