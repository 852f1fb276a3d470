//! Each apiserver checker passes a history that keeps its guarantee and fails one that breaks it.

use std::collections::BTreeMap;

use super::{cache_parity, consistent_read, watch_from_rv, ApiGuarantee};
use crate::history::apiserver::{
    ApiCall, ApiHistory, ApiOp, ApiOutcome, ApiWatch, Change, ChangeKind, Refusal, WatchEnd, WatchedEvent, WatchedKind,
};
use crate::history::Nanos;

const A: &str = "/registry/configmaps/ns/a";
const B: &str = "/registry/configmaps/ns/b";
const PREFIX: &str = "/registry/configmaps/ns/";

/// a created at 2, b created at 3, a modified at 4, b deleted at 5.
fn changes() -> Vec<Change> {
    let c = |rev, key: &str, kind| Change { rev, key: key.into(), kind };
    vec![c(2, A, ChangeKind::Put), c(3, B, ChangeKind::Put), c(4, A, ChangeKind::Put), c(5, B, ChangeKind::Delete)]
}

fn event(kind: WatchedKind, key: &str, rv: u64) -> WatchedEvent {
    WatchedEvent { kind, key: key.into(), rv, at: Nanos(0) }
}

fn watch(from: u64, events: Vec<WatchedEvent>, end: WatchEnd) -> ApiWatch {
    ApiWatch { client: "c1".into(), prefix: PREFIX.into(), from, events, end, opened_at: Nanos(0), ended_at: Nanos(0) }
}

fn history(ops: Vec<ApiOp>, watches: Vec<ApiWatch>) -> ApiHistory {
    ApiHistory { ops, watches, changes: changes(), changes_through: 5 }
}

fn op(invoked: u64, returned: u64, call: ApiCall, outcome: ApiOutcome) -> ApiOp {
    let (invoked_at, returned_at) = (Nanos(invoked), Nanos(returned));
    ApiOp { client: "c1".into(), invoked, returned, invoked_at, returned_at, call, outcome }
}

#[test]
fn a_watch_from_n_must_deliver_every_later_change_in_order_once() {
    use WatchedKind::*;
    let good = vec![
        watch(
            1,
            vec![event(Added, A, 2), event(Added, B, 3), event(Modified, A, 4), event(Deleted, B, 5)],
            WatchEnd::Stopped,
        ),
        // Ending early (a relist closes it, or 410) is allowed; so is an empty watch.
        watch(3, vec![event(Modified, A, 4)], WatchEnd::Closed),
        watch(0, vec![], WatchEnd::Expired),
    ];
    assert_eq!(watch_from_rv::check(&history(vec![], good)), vec![]);
    let bad = [
        ("a gap", vec![event(Added, A, 2), event(Modified, A, 4)]),
        ("a repeat", vec![event(Added, A, 2), event(Added, A, 2)]),
        ("the change at N itself", vec![event(Added, B, 3)]),
        ("ADDED for an existing key", vec![event(Added, A, 2), event(Added, B, 3), event(Added, A, 4)]),
        (
            "an event etcd never recorded",
            vec![
                event(Added, A, 2),
                event(Added, B, 3),
                event(Modified, A, 4),
                event(Deleted, B, 5),
                event(Added, B, 6),
            ],
        ),
    ];
    for (what, events) in bad {
        let from = if what == "the change at N itself" { 3 } else { 1 };
        // The record is complete through rv=6: nothing happened at 6.
        let mut h = history(vec![], vec![watch(from, events, WatchEnd::Stopped)]);
        h.changes_through = 6;
        let found = watch_from_rv::check(&h);
        assert_eq!(found.len(), 1, "{what}: {found:?}");
        assert_eq!(found[0].guarantee, ApiGuarantee::WatchFromResourceVersion);
    }
}

#[test]
fn a_consistent_read_must_see_every_acknowledged_write() {
    let write_a =
        op(1, 2, ApiCall::Update { key: A.into(), rv: Some(2) }, ApiOutcome::Written { rv: 4, data: "x".into() });
    let delete_b = op(3, 4, ApiCall::Delete { key: B.into(), rv: None }, ApiOutcome::Deleted { rv: 5 });
    let list = |rv, items: &[(&str, u64)]| ApiOutcome::Listed {
        rv,
        items: items.iter().map(|(k, r)| (k.to_string(), *r)).collect::<BTreeMap<_, _>>(),
    };
    let good = vec![
        write_a.clone(),
        delete_b.clone(),
        op(5, 6, ApiCall::List { prefix: PREFIX.into() }, list(5, &[(A, 4)])),
        op(7, 8, ApiCall::Get { key: A.into() }, ApiOutcome::Found { rv: 4, data: "x".into() }),
        op(9, 10, ApiCall::Get { key: B.into() }, ApiOutcome::Refused(Refusal::NotFound)),
        // Concurrent with the write: the older state is fine.
        op(2, 11, ApiCall::Get { key: A.into() }, ApiOutcome::Found { rv: 2, data: "w".into() }),
    ];
    assert_eq!(consistent_read::check(&history(good, vec![])), vec![]);
    let bad = [
        (
            "a list older than an acknowledged write",
            op(5, 6, ApiCall::List { prefix: PREFIX.into() }, list(4, &[(A, 4), (B, 3)])),
        ),
        (
            "a list that differs from etcd at its revision",
            op(5, 6, ApiCall::List { prefix: PREFIX.into() }, list(5, &[(A, 4), (B, 3)])),
        ),
        ("a stale get", op(5, 6, ApiCall::Get { key: A.into() }, ApiOutcome::Found { rv: 2, data: "w".into() })),
        (
            "a get of a deleted key",
            op(5, 6, ApiCall::Get { key: B.into() }, ApiOutcome::Found { rv: 3, data: "b".into() }),
        ),
        ("a lost object", op(5, 6, ApiCall::Get { key: A.into() }, ApiOutcome::Refused(Refusal::NotFound))),
    ];
    for (what, read) in bad {
        let found = consistent_read::check(&history(vec![write_a.clone(), delete_b.clone(), read], vec![]));
        assert_eq!(found.len(), 1, "{what}: {found:?}");
        assert_eq!(found[0].guarantee, ApiGuarantee::ConsistentReadSeesAcknowledgedWrites);
    }
}

#[test]
fn scripted_write_outcomes_must_agree_except_after_ambiguity() {
    let step = |call: ApiCall, outcome: ApiOutcome| op(0, 0, call, outcome);
    let create = |outcome| step(ApiCall::Create { key: A.into() }, outcome);
    let update = |rv, outcome| step(ApiCall::Update { key: A.into(), rv: Some(rv) }, outcome);
    let created = |rv| ApiOutcome::Written { rv, data: "1".into() };
    let updated = |rv| ApiOutcome::Written { rv, data: "2".into() };
    // Revisions differ between the runs; outcomes do not.
    let cached = vec![create(created(7)), update(7, updated(9)), create(ApiOutcome::Refused(Refusal::AlreadyExists))];
    let uncached = vec![create(created(3)), update(3, updated(4)), create(ApiOutcome::Refused(Refusal::AlreadyExists))];
    assert_eq!(cache_parity::check(&cached, &uncached), vec![]);

    // The bug this guards against (kubernetes #82303): a stale cached copy turns an up-to-date update into 409.
    let spurious = vec![
        create(created(7)),
        update(7, ApiOutcome::Refused(Refusal::Conflict)),
        create(ApiOutcome::Refused(Refusal::AlreadyExists)),
    ];
    let found = cache_parity::check(&spurious, &uncached);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].guarantee, ApiGuarantee::WriteOutcomesSameWithoutWatchCache);

    // After an ambiguous write the key's later outcomes may differ.
    let ambiguous =
        vec![create(created(7)), update(7, ApiOutcome::Unknown), create(ApiOutcome::Refused(Refusal::Conflict))];
    assert_eq!(cache_parity::check(&ambiguous, &uncached), vec![]);
}
