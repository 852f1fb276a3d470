//! What every run does around its clients, whatever started it (a scenario file or the traffic preset of
//! `run::RunConfig`): before them, file each member's own events and arm the failpoints ([`prepare`]), then
//! wait until every member serves its client API ([`members_listening`]); after them, let held failpoints
//! go and wait for pending restarts ([`finish`]). [`share`] spreads a workload's requests over its clients.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use etcd_proto::etcdserverpb::maintenance_client::MaintenanceClient;
use etcd_proto::etcdserverpb::StatusRequest;
use fake_etcd::failpoint::{Arm, Point};
use fake_etcd::service::{EventObserver, MemberEvent};

use crate::client::{channel, SharedHistory};
use crate::cluster::Cluster;
use crate::fault::FailpointSpec;
use crate::history as h;
use crate::trace::Trace;

/// Files each member's own events (see [`observe`]) and arms the failpoints, each with a trace line.
pub(crate) fn prepare(cluster: &Cluster, failpoints: &[FailpointSpec], trace: &Trace, history: &SharedHistory) {
    for m in &cluster.members {
        observe(&m.name, &m.events, trace, history);
    }
    for fp in failpoints {
        trace.event(&fp.node, format_args!("arm {} {}{}", fp.point, fp.arm.action, describe_arm(&fp.arm)));
        if let Some(member) = cluster.member(&fp.node) {
            let point: Point = fp.point.parse().expect("validated before the run");
            member.failpoints.arm(point, fp.arm.clone());
        } else {
            let apiserver = cluster.apiserver(&fp.node).expect("validated before the run");
            let point: apiserver::failpoint::Point = fp.point.parse().expect("validated before the run");
            apiserver.failpoints.arm(point, fp.arm.clone());
        }
    }
}

/// Waits until every member answers a Status request on its client address: the named condition a run's
/// first request waits on, instead of a guess at how long binding takes. Asked from the control node (the
/// runtime's main task has no address), each member in turn, every millisecond of simulated time until it
/// answers; a member listens from its first moment, so this ends within the network's latency.
pub(crate) async fn members_listening(cluster: &Cluster, trace: &Trace) {
    let endpoints = cluster.endpoints();
    let probe = cluster.control.spawn(async move {
        for endpoint in endpoints {
            loop {
                let mut maintenance = MaintenanceClient::new(channel(&endpoint));
                let answer = madsim::time::timeout(Duration::from_millis(50), maintenance.status(StatusRequest {}));
                if matches!(answer.await, Ok(Ok(_))) {
                    break;
                }
                madsim::time::sleep(Duration::from_millis(1)).await;
            }
        }
    });
    probe.await.expect("the listening probe panicked");
    trace.event("sim", "members listening");
}

/// What every run does last: lets held failpoints go, so that nothing waits forever past the run, waits for
/// the restarts crash hooks scheduled, files any server still down from a panic, and writes `sim end`.
pub(crate) async fn finish(cluster: &Cluster, trace: &Trace) {
    for m in &cluster.members {
        for &p in Point::ALL {
            m.failpoints.disarm(p);
        }
    }
    for a in &cluster.apiservers {
        for &p in apiserver::failpoint::Point::ALL {
            a.failpoints.disarm(p);
        }
    }
    cluster.wait_for_restarts().await;
    cluster.file_pending_panic_restarts();
    trace.event("sim", "end");
}

/// Client `i`'s share of `ops` requests spread evenly over `clients` (the first ones take the remainder).
pub(crate) fn share(ops: usize, clients: usize, i: usize) -> usize {
    ops / clients + usize::from(i < ops % clients)
}

/// Turns what a member does on its own into trace lines (`etcd-1 compacted rev=40`, `etcd-1 lease-expired
/// 6230..`), and files each lease expiry in the history as a `LeaseRevoke` by [`h::ClientId::MEMBERS`],
/// invoked when the member decided on it (before it proposed the revoke) and returned when the revoke was
/// applied, with the revoke's header revision; a revoke that never reports back (a client revoked the lease
/// first, or the member went down) stays an unknown outcome.
///
/// Why not an unknown outcome every time, which is all a black-box client could know: an unknown revoke may
/// go anywhere after its invocation, and with a dozen leases expiring per run the linearizability search
/// tried every subset of them at every dead end and gave up (2,000,000 steps) on one seed in ten. The
/// member's report is as trustworthy as a client's response, and no weaker a check: the model still has to
/// produce the revoke's revision and every read around it.
fn observe(name: &str, observer: &EventObserver, trace: &Trace, history: &SharedHistory) {
    let (name, trace, history) = (name.to_string(), trace.clone(), history.clone());
    // Expiries invoked and not yet applied, by lease.
    let pending = Mutex::new(BTreeMap::new());
    observer.set(move |event| match event {
        MemberEvent::Compacted { revision } => trace.event(&name, format_args!("compacted rev={revision}")),
        MemberEvent::LeaseExpired { id } => {
            trace.event(&name, format_args!("lease-expired {id}"));
            let revoke = h::Request::LeaseRevoke(h::LeaseRevokeRequest { id });
            let op = history.lock().invoke(h::ClientId::MEMBERS, revoke, Trace::now());
            pending.lock().expect("observer lock poisoned").insert(id, op);
        }
        MemberEvent::LeaseRevoked { id, revision } => {
            trace.event(&name, format_args!("lease-revoked {id} rev={revision}"));
            if let Some(op) = pending.lock().expect("observer lock poisoned").remove(&id) {
                let response = h::Response { header_revision: revision, body: h::ResponseBody::LeaseRevoke };
                history.lock().complete(op, Trace::now(), h::Outcome::Ok(response));
            }
        }
    });
}

fn describe_arm(arm: &Arm) -> String {
    let mut s = String::new();
    if arm.skip > 0 {
        s.push_str(&format!(" after {} hits", arm.skip));
    }
    if let Some(t) = arm.times {
        s.push_str(&format!(" {t} times"));
    }
    s
}
