//! Hand-built histories that must pass, histories with an injected bug that must fail, and property tests
//! over generated histories.

use proptest::prelude::*;

use super::generate::{self, Corruption, Shape};
use super::*;
use crate::checker::model::Refusal;
use crate::history::*;

/// Builds histories step by step; every call advances the clock by 1 ms.
#[derive(Default)]
struct Script {
    h: History,
    now: u64,
}

impl Script {
    fn tick(&mut self) -> Nanos {
        self.now += 1_000_000;
        Nanos(self.now)
    }

    fn call(&mut self, client: u32, request: Request) -> OpId {
        let t = self.tick();
        self.h.invoke(ClientId(client), request, t)
    }

    fn ok(&mut self, op: OpId, header_revision: i64, body: ResponseBody) {
        let t = self.tick();
        self.h.complete(op, t, Outcome::Ok(Response { header_revision: Revision(header_revision), body }));
    }

    fn err(&mut self, op: OpId, status: ErrorStatus) {
        let t = self.tick();
        self.h.complete(op, t, Outcome::Err(status));
    }

    fn lost(&mut self, op: OpId) {
        let t = self.tick();
        self.h.complete(op, t, Outcome::Unknown { reason: "deadline exceeded".to_string() });
    }

    /// A put that returned `rev`.
    fn put(&mut self, client: u32, key: &str, value: &str, rev: i64) -> OpId {
        let op = self.call(client, put(key, value));
        self.ok(op, rev, ResponseBody::Put(PutResult::default()));
        op
    }

    /// A read of one key that returned `rev` and `kvs`.
    fn get(&mut self, client: u32, key: &str, rev: i64, kvs: Vec<KeyValue>) -> OpId {
        let op = self.call(client, get(key));
        self.ok(op, rev, range(kvs));
        op
    }

    fn check(&self) -> Verdict {
        check(&self.h, &Options::default()).verdict
    }
}

fn put(key: &str, value: &str) -> Request {
    Request::Put(PutRequest::new(key, value))
}

fn get(key: &str) -> Request {
    Request::Range(RangeRequest::key(key))
}

fn range(kvs: Vec<KeyValue>) -> ResponseBody {
    let count = kvs.len() as i64;
    ResponseBody::Range(RangeResult { kvs, more: false, count })
}

fn kv(key: &str, value: &str, create: i64, modified: i64, version: i64) -> KeyValue {
    KeyValue {
        key: Bytes::from(key),
        create_revision: Revision(create),
        mod_revision: Revision(modified),
        version,
        value: Bytes::from(value),
        lease: LeaseId::NONE,
    }
}

fn assert_fails_at(verdict: &Verdict, op: OpId) {
    match verdict {
        Verdict::Fail(v) => {
            assert_eq!(v.guarantee, Guarantee::Linearizable);
            assert!(v.culprits.contains(&Culprit::Op(op)), "{op} not among the culprits of: {v}");
            assert!(v.to_string().contains("broke Linearizable"), "{v}");
        }
        other => panic!("expected a failure at {op}, got {other}"),
    }
}

#[test]
fn sequential_history_passes() {
    let mut s = Script::default();
    s.get(1, "a", 1, vec![]);
    s.put(1, "a", "1", 2);
    s.get(2, "a", 2, vec![kv("a", "1", 2, 2, 1)]);
    s.put(2, "a", "2", 3);
    s.get(1, "a", 3, vec![kv("a", "2", 2, 3, 2)]);
    assert_eq!(s.check(), Verdict::Pass);
}

#[test]
fn concurrent_writes_take_the_order_their_revisions_show() {
    let mut s = Script::default();
    let a = s.call(1, put("a", "1"));
    let b = s.call(2, put("a", "2"));
    s.ok(b, 2, ResponseBody::Put(PutResult::default()));
    s.ok(a, 3, ResponseBody::Put(PutResult::default()));
    s.get(3, "a", 3, vec![kv("a", "1", 2, 3, 2)]);
    assert_eq!(s.check(), Verdict::Pass);
}

#[test]
fn stale_read_fails() {
    let mut s = Script::default();
    s.put(1, "a", "1", 2);
    s.put(1, "a", "2", 3);
    // A linearizable read after both writes returned must see the second one.
    let stale = s.get(2, "a", 2, vec![kv("a", "1", 2, 2, 1)]);
    assert_fails_at(&s.check(), stale);
}

#[test]
fn lost_acknowledged_write_fails() {
    let mut s = Script::default();
    s.put(1, "a", "1", 2);
    s.put(1, "b", "1", 3);
    // The store lost the acknowledged put of `a` but kept the revision counter.
    let read = s.get(2, "a", 3, vec![]);
    assert_fails_at(&s.check(), read);
}

#[test]
fn revision_going_back_fails() {
    let mut s = Script::default();
    s.put(1, "a", "1", 2);
    s.put(1, "b", "1", 3);
    // etcd #14370's shape: after a crash the store answers from before an acknowledged write.
    let read = s.get(2, "c", 2, vec![]);
    assert_fails_at(&s.check(), read);
}

#[test]
fn real_time_order_is_enforced() {
    let mut s = Script::default();
    let first = s.put(1, "a", "1", 3);
    // Invoked after `first` returned, yet it claims the earlier revision.
    s.put(2, "b", "1", 2);
    let verdict = s.check();
    assert_fails_at(&verdict, first);
    assert!(verdict.to_string().contains(&format!("invoked after {first} returned must wait")), "{verdict}");
}

#[test]
fn unknown_outcome_may_have_taken_effect() {
    let mut s = Script::default();
    let lost = s.call(1, put("a", "1"));
    s.lost(lost);
    s.get(2, "a", 2, vec![kv("a", "1", 2, 2, 1)]);
    assert_eq!(s.check(), Verdict::Pass);
}

#[test]
fn unknown_outcome_may_never_take_effect() {
    let mut s = Script::default();
    let lost = s.call(1, put("a", "1"));
    s.lost(lost);
    s.get(2, "a", 1, vec![]);
    s.put(2, "b", "1", 2);
    assert_eq!(s.check(), Verdict::Pass);
}

#[test]
fn a_request_never_sent_cannot_fill_a_revision_gap() {
    // As in the test below, a gap at revision 2 that only `put a=1` could fill; but it never left the client.
    let mut s = Script::default();
    let unsent = s.call(1, put("a", "1"));
    let t = s.tick();
    s.h.complete(unsent, t, Outcome::NotSent { reason: "transport error".to_string() });
    s.put(2, "b", "1", 3);
    s.get(2, "a", 3, vec![kv("a", "1", 2, 2, 1)]);
    assert!(s.check().is_fail(), "a request that was never sent took effect");
}

#[test]
fn an_expiry_of_a_lease_nobody_learned_of_is_left_out() {
    // A grant whose answer was lost leaves its id to the server; the member's later expiry names that id.
    let mut s = Script::default();
    let grant = s.call(1, Request::LeaseGrant(LeaseGrantRequest { ttl_s: 2, id: LeaseId::NONE }));
    s.lost(grant);
    let expiry = s.call(0, Request::LeaseRevoke(LeaseRevokeRequest { id: LeaseId(42) }));
    s.ok(expiry, 1, ResponseBody::LeaseRevoke);
    s.put(2, "a", "1", 2);
    assert_eq!(s.check(), Verdict::Pass);

    // A client's revoke of an unknown lease is still held to etcd's error.
    let mut s = Script::default();
    let revoke = s.call(1, Request::LeaseRevoke(LeaseRevokeRequest { id: LeaseId(42) }));
    s.ok(revoke, 1, ResponseBody::LeaseRevoke);
    assert_fails_at(&s.check(), revoke);
}

#[test]
fn a_revision_gap_needs_an_unknown_write_to_fill_it() {
    let mut with_unknown = Script::default();
    let lost = with_unknown.call(1, put("a", "1"));
    with_unknown.lost(lost);
    with_unknown.put(2, "b", "1", 3);
    with_unknown.get(2, "a", 3, vec![kv("a", "1", 2, 2, 1)]);
    assert_eq!(with_unknown.check(), Verdict::Pass);

    let mut without = Script::default();
    let jump = without.put(2, "b", "1", 3);
    assert_fails_at(&without.check(), jump);
}

#[test]
fn unknown_outcome_cannot_take_effect_before_its_invocation() {
    let mut s = Script::default();
    let read = s.get(2, "a", 2, vec![kv("a", "1", 2, 2, 1)]);
    let late = s.call(1, put("a", "1"));
    s.lost(late);
    assert_fails_at(&s.check(), read);
}

#[test]
fn serializable_reads_may_lag_but_not_invent() {
    let serializable = |key: &str| Request::Range(RangeRequest { serializable: true, ..RangeRequest::key(key) });

    let mut lagging = Script::default();
    lagging.put(1, "a", "1", 2);
    lagging.put(1, "a", "2", 3);
    let read = lagging.call(2, serializable("a"));
    lagging.ok(read, 2, range(vec![kv("a", "1", 2, 2, 1)]));
    assert_eq!(lagging.check(), Verdict::Pass);

    let mut ahead = Script::default();
    ahead.put(1, "a", "1", 2);
    let read = ahead.call(2, serializable("a"));
    ahead.ok(read, 3, range(vec![kv("a", "1", 2, 2, 1)]));
    assert_fails_at(&ahead.check(), read);

    let mut invented = Script::default();
    invented.put(1, "a", "1", 2);
    invented.put(1, "a", "2", 3);
    let read = invented.call(2, serializable("a"));
    invented.ok(read, 2, range(vec![kv("a", "2", 2, 3, 2)]));
    assert_fails_at(&invented.check(), read);
}

#[test]
fn reads_at_a_past_revision_see_that_revision() {
    let at2 = Request::Range(RangeRequest { revision: Revision(2), ..RangeRequest::key("a") });
    let mut s = Script::default();
    s.put(1, "a", "1", 2);
    s.put(1, "a", "2", 3);
    let good = s.call(2, at2.clone());
    s.ok(good, 3, range(vec![kv("a", "1", 2, 2, 1)]));
    assert_eq!(s.check(), Verdict::Pass);
    let bad = s.call(2, at2);
    s.ok(bad, 3, range(vec![kv("a", "2", 2, 3, 2)]));
    assert_fails_at(&s.check(), bad);
}

#[test]
fn txn_must_take_the_branch_its_compares_choose() {
    let create = |value: &str| {
        Request::Txn(TxnRequest {
            compare: vec![Compare {
                span: KeySpan::single("a"),
                result: CompareResult::Equal,
                target: CompareTarget::Mod(Revision::ZERO),
            }],
            success: vec![TxnOp::Put(PutRequest::new("a", value))],
            failure: vec![TxnOp::Range(RangeRequest::key("a"))],
        })
    };
    let created = TxnResult { succeeded: true, responses: vec![TxnOpResult::Put(PutResult::default())] };
    let mut s = Script::default();
    let first = s.call(1, create("1"));
    s.ok(first, 2, ResponseBody::Txn(created.clone()));
    let lost_race = s.call(2, create("2"));
    let existing = RangeResult { kvs: vec![kv("a", "1", 2, 2, 1)], more: false, count: 1 };
    s.ok(
        lost_race,
        2,
        ResponseBody::Txn(TxnResult { succeeded: false, responses: vec![TxnOpResult::Range(existing)] }),
    );
    assert_eq!(s.check(), Verdict::Pass);
    // Two creates of the same key both succeeding is the classic lost update.
    let double = s.call(3, create("3"));
    s.ok(double, 3, ResponseBody::Txn(created));
    assert_fails_at(&s.check(), double);
}

#[test]
fn deterministic_errors_must_be_deserved() {
    let at1 = Request::Range(RangeRequest { revision: Revision(1), ..RangeRequest::key("a") });
    let mut s = Script::default();
    s.put(1, "a", "1", 2);
    s.put(1, "a", "2", 3);
    let compact = s.call(1, Request::Compact(CompactRequest { revision: Revision(2), physical: false }));
    s.ok(compact, 3, ResponseBody::Compact);
    let read = s.call(2, at1.clone());
    s.err(read, Refusal::Compacted.status());
    assert_eq!(s.check(), Verdict::Pass);

    let mut undeserved = Script::default();
    undeserved.put(1, "a", "1", 2);
    let read = undeserved.call(2, at1);
    undeserved.err(read, Refusal::Compacted.status());
    assert_fails_at(&undeserved.check(), read);
}

#[test]
fn availability_errors_are_unknown_outcomes() {
    let mut s = Script::default();
    let op = s.call(1, put("a", "1"));
    s.err(op, ErrorStatus::new(GrpcCode::Unavailable, "etcdserver: request timed out"));
    s.get(2, "a", 2, vec![kv("a", "1", 2, 2, 1)]);
    assert_eq!(s.check(), Verdict::Pass);
}

#[test]
fn leases_delete_their_keys_on_revoke() {
    let mut s = Script::default();
    let grant = s.call(1, Request::LeaseGrant(LeaseGrantRequest { ttl_s: 5, id: LeaseId::NONE }));
    s.ok(grant, 1, ResponseBody::LeaseGrant(LeaseGrantResult { id: LeaseId(77), ttl_s: 5 }));
    let attach = s.call(1, Request::Put(PutRequest { lease: LeaseId(77), ..PutRequest::new("a", "1") }));
    s.ok(attach, 2, ResponseBody::Put(PutResult::default()));
    let revoke = s.call(1, Request::LeaseRevoke(LeaseRevokeRequest { id: LeaseId(77) }));
    s.ok(revoke, 3, ResponseBody::LeaseRevoke);
    s.get(2, "a", 3, vec![]);
    assert_eq!(s.check(), Verdict::Pass);
    // A key that outlives its revoked lease.
    let survivor = s.get(2, "a", 3, vec![KeyValue { lease: LeaseId(77), ..kv("a", "1", 2, 2, 1) }]);
    assert_fails_at(&s.check(), survivor);
}

#[test]
fn an_exhausted_budget_is_unknown() {
    let h = generate::history(3, &Shape { clients: 4, ops: 60, keys: 3, unknown_rate: 0.05 });
    let checked = check(&h, &Options { max_steps: 5 });
    assert!(matches!(checked.verdict, Verdict::Unknown { .. }), "{}", checked.verdict);
}

#[test]
fn witness_lists_every_definite_op() {
    let h = generate::history(11, &Shape { clients: 3, ops: 40, keys: 3, unknown_rate: 0.0 });
    let checked = check(&h, &Options::default());
    assert_eq!(checked.verdict, Verdict::Pass);
    // With no unknown outcomes every op is definite, so every op is in the witness, once.
    let mut witness = checked.witness.unwrap();
    witness.sort();
    assert_eq!(witness, (0..h.ops.len()).map(OpId).collect::<Vec<_>>());
}

fn proptest_config() -> ProptestConfig {
    // A fixed seed keeps the suite deterministic from run to run, as everything else in kubesim.
    ProptestConfig {
        cases: 96,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x6b75_6265),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    fn generated_histories_are_linearizable(
        seed in any::<u64>(),
        clients in 1usize..6,
        ops in 1usize..80,
        keys in 1usize..5,
        unknown_rate in 0.0f64..0.15,
    ) {
        let h = generate::history(seed, &Shape { clients, ops, keys, unknown_rate });
        let checked = check(&h, &Options::default());
        prop_assert!(checked.verdict.is_pass(), "{}", checked.verdict);
    }

    #[test]
    fn corrupted_histories_are_not(
        seed in any::<u64>(),
        clients in 1usize..6,
        ops in 10usize..80,
        unknown_rate in 0.0f64..0.1,
        corruption in prop_oneof![
            Just(Corruption::UnreachableRevision),
            Just(Corruption::ForeignValue),
            Just(Corruption::ShiftedModRevision),
            Just(Corruption::FlippedTxn),
        ],
        pick in any::<usize>(),
    ) {
        let h = generate::history(seed, &Shape { clients, ops, keys: 3, unknown_rate });
        if let Some((corrupted, op)) = generate::corrupt(&h, corruption, pick) {
            let verdict = check(&corrupted, &Options::default()).verdict;
            prop_assert!(verdict.is_fail(), "{corruption:?} of {op} went unnoticed: {verdict}");
        }
    }
}

/// The generator must produce what the checker has to handle, or the property tests prove little.
#[test]
fn generated_histories_cover_every_kind_of_outcome() {
    let h = generate::history(5, &Shape { clients: 6, ops: 600, keys: 4, unknown_rate: 0.03 });
    let count = |f: &dyn Fn(&Operation) -> bool| h.ops.iter().filter(|op| f(op)).count();
    let error = |e: Refusal| move |op: &Operation| matches!(op.outcome(), Outcome::Err(s) if s.message == e.message());
    let unknown = count(&|op| matches!(op.outcome(), Outcome::Unknown { .. }));
    let serializable = count(&|op| matches!(&op.request, Request::Range(r) if r.serializable));
    let txn = |succeeded: bool| move |op: &Operation| matches!(op.outcome(), Outcome::Ok(Response { body: ResponseBody::Txn(t), .. }) if t.succeeded == succeeded);
    let overlapping =
        h.ops.windows(2).filter(|w| w[0].returned.as_ref().is_some_and(|r| r.at.seq > w[1].invoked.seq)).count();
    let counts = [
        ("unknown", unknown),
        ("serializable", serializable),
        ("compacted", count(&error(Refusal::Compacted))),
        ("future revision", count(&error(Refusal::FutureRev))),
        ("lease not found", count(&error(Refusal::LeaseNotFound))),
        ("lease exists", count(&error(Refusal::LeaseExist))),
        ("txn succeeded", count(&txn(true))),
        ("txn failed", count(&txn(false))),
        ("overlapping", overlapping),
    ];
    for (what, n) in counts {
        assert!(n > 0, "no {what} op in {counts:?}");
    }
    assert_eq!(check(&h, &Options::default()).verdict, Verdict::Pass);
}

/// Every kind of corruption, over many histories, is applied often and caught every time.
#[test]
fn every_corruption_is_caught() {
    for corruption in [
        Corruption::UnreachableRevision,
        Corruption::ForeignValue,
        Corruption::ShiftedModRevision,
        Corruption::FlippedTxn,
    ] {
        let mut applied = 0;
        for seed in 0..40 {
            let h = generate::history(seed, &Shape { clients: 4, ops: 60, keys: 3, unknown_rate: 0.05 });
            let Some((corrupted, op)) = generate::corrupt(&h, corruption, seed as usize) else { continue };
            applied += 1;
            let verdict = check(&corrupted, &Options::default()).verdict;
            assert!(verdict.is_fail(), "{corruption:?} of {op} (seed {seed}) went unnoticed: {verdict}");
        }
        assert!(applied >= 30, "{corruption:?} applied to only {applied} of 40 histories");
    }
}

/// Nudging any one observed number by one is caught almost always; the rest are nudges that another
/// linearization happens to explain (a read concurrent with an unrelated write may show either revision).
#[test]
fn nudged_results_are_almost_always_caught() {
    let (mut nudged, mut caught) = (0, 0);
    for seed in 0..300u64 {
        let h = generate::history(seed, &Shape { clients: 4, ops: 40, keys: 3, unknown_rate: 0.05 });
        let Some((corrupted, _)) = generate::nudge(&h, seed as usize) else { continue };
        nudged += 1;
        caught += usize::from(check(&corrupted, &Options::default()).verdict.is_fail());
    }
    let rate = caught as f64 / nudged as f64;
    println!("nudged results caught: {caught} of {nudged} ({:.1}%)", rate * 100.0);
    assert!(nudged >= 250 && rate >= 0.8, "caught {caught} of {nudged}");
}
