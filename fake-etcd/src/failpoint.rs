//! Failpoints: fake-etcd's named places in the member shell where a test harness can make things go wrong
//! on purpose (delay, drop, fail, crash the node, hold until released).
//!
//! The registry itself is the shared `kubesim-failpoints` crate; this module declares the member's points
//! ([`Point`]) and what each action means at each. A [`Failpoints`] registry belongs to one member of one
//! simulation. It is created by whoever builds the member (the `sim` harness, or nothing at all in the real
//! binary, which gets a registry with nothing armed) and handed in through [`crate::service::MemberConfig`];
//! it is never a process global, so two simulations in one process, or two members of one cluster, never see
//! each other's failpoints.
//!
//! The points ([`Point`]) and where each one sits:
//! - [`Point::BeforeWatchResponseSend`] — `service::api::watch`, after a watch response leaves the member's
//!   outbox and before gRPC sends it to the client. `Drop` loses that one response (the stream goes on),
//!   `Error` ends the stream with an `Unavailable` status, `Delay`/`Hold` stall the whole stream.
//! - [`Point::BeforeWriteAck`] — `service::api::kv`, after a Put, DeleteRange, Txn or Compaction has been applied
//!   and before its response is returned. The write has taken effect either way: `Error` and `Drop` (which
//!   answer `Unavailable`) therefore produce an ambiguous outcome for the client, as a leader crash after
//!   commit would.
//! - [`Point::BeforeProgressNotify`] — `service::server`, before the periodic progress notification is
//!   computed and queued. `Drop` skips one round of notifications.
//! - [`Point::BeforeCompact`] — `service::api::kv`, before a Compaction request is proposed (the compaction path's
//!   seam in the shell; the MVCC core stays free of IO). `Drop` and `Error` refuse the compaction with
//!   `Unavailable` before it takes effect.
//!
//! `Delay` and `Hold` stall whatever reached the point; `Crash` kills the member's node through the crash
//! hook the harness installed (see the `kubesim-failpoints` crate).

pub(crate) use kubesim_failpoints::Injected;
pub use kubesim_failpoints::{Action, Arm};

kubesim_failpoints::points! {
    /// A named place in fake-etcd where a failure can be injected.
    pub enum Point {
        BeforeWatchResponseSend => "before-watch-response-send",
        BeforeWriteAck => "before-write-ack",
        BeforeProgressNotify => "before-progress-notify",
        BeforeCompact => "before-compact",
    }
}

/// One member's failpoint registry; clones share it.
pub type Failpoints = kubesim_failpoints::Failpoints<Point>;

impl Point {
    /// The gRPC status a client sees for a failure injected here.
    pub(crate) fn status(self) -> tonic::Status {
        tonic::Status::unavailable(format!("fake-etcd: failpoint {self} injected a failure"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for &p in Point::ALL {
            assert_eq!(p.name().parse::<Point>(), Ok(p));
        }
        let err = "before-everything".parse::<Point>().unwrap_err();
        assert!(err.to_string().contains("before-everything"), "{err}");
        assert!(err.to_string().contains("before-write-ack"), "{err}");
    }

    #[tokio::test]
    async fn a_member_registry_fires_its_points_by_name() {
        let fp = Failpoints::new();
        fp.arm("before-write-ack".parse().unwrap(), Arm { action: Action::Drop, skip: 1, times: Some(1) });
        assert_eq!(fp.eval(Point::BeforeWriteAck).await, Ok(()));
        assert_eq!(fp.eval(Point::BeforeWriteAck).await, Err(Injected::Drop));
        assert_eq!(fp.eval(Point::BeforeCompact).await, Ok(()));
        assert_eq!(fp.fired(Point::BeforeWriteAck), 1);
    }
}
