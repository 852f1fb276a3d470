//! Leases in real simulated runs: the Kubernetes-like traffic grants leases and writes Events under them,
//! the member expires the ones nobody keeps alive, and the expiry reaches the trace (member-side lines) and
//! the history (a `LeaseRevoke` by `c0`, which the linearizability checker must fit in).
#![cfg(madsim)]

use sim::history::{ClientId, Outcome, Request};
use sim::run::{run, RunConfig};

#[test]
fn expired_leases_are_traced_recorded_and_linearized() {
    let report = run(&RunConfig::standard(2)).unwrap();
    let trace = &report.run.trace;
    let expired = trace.iter().filter(|l| l.contains("etcd-1 lease-expired ")).count();
    let revoked = trace.iter().filter(|l| l.contains("etcd-1 lease-revoked ")).count();
    assert!(expired > 0 && revoked > 0, "no lease expired in the run");
    assert!(trace.iter().any(|l| l.contains("etcd-1 compacted rev=")), "no member-side compaction line");
    let recorded: Vec<_> = report
        .run
        .history
        .ops
        .iter()
        .filter(|op| op.client == ClientId::MEMBERS && matches!(op.request, Request::LeaseRevoke(_)))
        .collect();
    assert_eq!(recorded.len(), expired, "every expiry is filed in the history");
    assert_eq!(recorded.iter().filter(|op| matches!(op.outcome(), Outcome::Ok(_))).count(), revoked);
    // Revoked leases took their Events with them, and the events informers saw the deletes (clients never
    // delete Events themselves).
    assert!(trace.iter().any(|l| l.contains(" event delete /registry/events/")), "no Event deleted by a revoke");
    assert!(report.passed(), "{:?}", report.verdict_lines());
}
