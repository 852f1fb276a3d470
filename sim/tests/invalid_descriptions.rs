//! A cluster description that cannot work is rejected before the run starts, with a message naming the
//! problem.
#![cfg(madsim)]

use fake_etcd::failpoint::Action;
use sim::fault::{Fault, ScheduledFault};
use sim::run::{failpoint, simulate, RunConfig};
use sim::SimError;

fn error_of(config: RunConfig) -> String {
    let err = simulate(&config).map(|_| ()).unwrap_err();
    err.to_string()
}

#[test]
fn zero_members_is_rejected() {
    let mut c = RunConfig::standard(1);
    c.cluster.members = 0;
    assert_eq!(simulate(&c).map(|_| ()), Err(SimError::NoMembers));
    assert!(error_of(c).contains("zero fake-etcd members"));
}

#[test]
fn a_fault_naming_an_unknown_node_is_rejected() {
    let mut c = RunConfig::standard(1);
    c.faults = vec![ScheduledFault { at_ms: 100, fault: Fault::Kill("etcd-7".into()) }];
    let msg = error_of(c);
    assert!(msg.contains("\"etcd-7\"") && msg.contains("kill etcd-7") && msg.contains("etcd-1 c1"), "{msg}");
}

#[test]
fn an_unknown_failpoint_is_rejected() {
    let mut c = RunConfig::standard(1);
    c.failpoints = vec![failpoint("etcd-1", "before-lunch", Action::Drop, 0, None)];
    let msg = error_of(c);
    assert!(msg.contains("\"before-lunch\"") && msg.contains("before-watch-response-send"), "{msg}");
}

#[test]
fn a_failpoint_on_an_unknown_or_client_node_is_rejected() {
    let mut c = RunConfig::standard(1);
    c.failpoints = vec![failpoint("etcd-2", "before-write-ack", Action::Drop, 0, None)];
    assert!(error_of(c.clone()).contains("\"etcd-2\""));
    c.failpoints = vec![failpoint("c1", "before-write-ack", Action::Drop, 0, None)];
    assert!(error_of(c).contains("c1, which is a client"));
}
