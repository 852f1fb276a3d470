//! Random but valid histories for tests: clients issue random requests against a server (the model
//! itself, or fake-etcd's state machine in `differential`), with a random interleaving of invocations,
//! linearization points and returns, so every history made against a correct server is linearizable. Some requests lose their answer (an unknown outcome) after or before they
//! took effect. Values are unique per write, as etcd's robustness traffic makes them.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::checker::model::KvModel;
use crate::history::*;

#[derive(Clone, Debug)]
pub(crate) struct Shape {
    pub clients: usize,
    pub ops: usize,
    pub keys: usize,
    /// Probability that a request loses its answer.
    pub unknown_rate: f64,
}

enum Client {
    Idle,
    Invoked(OpId),
    Answered(OpId, Outcome),
}

/// Something that answers requests at their linearization point.
pub(crate) trait Server {
    /// The current store revision (the generator picks request revisions around it).
    fn revision(&self) -> Revision;
    /// Applies `request` and answers it; `rng` picks how stale a serializable read may be.
    fn serve(&mut self, rng: &mut ChaCha8Rng, request: &Request) -> Outcome;
}

impl Server for KvModel {
    fn revision(&self) -> Revision {
        KvModel::revision(self)
    }

    fn serve(&mut self, rng: &mut ChaCha8Rng, request: &Request) -> Outcome {
        serve(rng, self, request)
    }
}

/// A history made against the model.
pub(crate) fn history(seed: u64, shape: &Shape) -> History {
    history_against(seed, shape, &mut KvModel::new())
}

/// A history made against `server`.
pub(crate) fn history_against(seed: u64, shape: &Shape, server: &mut impl Server) -> History {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut h = History::new();
    let mut clients: Vec<Client> = (0..shape.clients).map(|_| Client::Idle).collect();
    let mut issued = 0;
    let mut now = 0u64;
    let mut values = 0u64;
    loop {
        let ready: Vec<usize> =
            (0..clients.len()).filter(|&c| !matches!(clients[c], Client::Idle) || issued < shape.ops).collect();
        if ready.is_empty() {
            return h;
        }
        let c = ready[rng.random_range(0..ready.len())];
        // Zero-length steps are common in simulation; they must not confuse real-time order.
        now += rng.random_range(0..3) * 1_000_000;
        let t = Nanos(now);
        clients[c] = match std::mem::replace(&mut clients[c], Client::Idle) {
            Client::Idle => {
                issued += 1;
                let request = request(&mut rng, server.revision(), shape.keys, &mut values);
                Client::Invoked(h.invoke(ClientId(c as u32), request, t))
            }
            Client::Invoked(op) => {
                let request = h.ops[op.0].request.clone();
                if rng.random_bool(shape.unknown_rate) {
                    if rng.random_bool(0.5) {
                        let _ = server.serve(&mut rng, &request);
                    }
                    h.complete(op, t, Outcome::Unknown { reason: "timeout".to_string() });
                    Client::Idle
                } else {
                    Client::Answered(op, server.serve(&mut rng, &request))
                }
            }
            Client::Answered(op, outcome) => {
                h.complete(op, t, outcome);
                Client::Idle
            }
        };
    }
}

/// The model acting as the server: this is the request's linearization point.
fn serve(rng: &mut ChaCha8Rng, model: &mut KvModel, request: &Request) -> Outcome {
    match request {
        Request::Range(r) if r.serializable => {
            let floor = model.compact_revision().max(Revision(1)).0;
            let served_at = Revision(rng.random_range(floor..=model.revision().0));
            let result = model.stale_range(r, served_at).expect("a committed revision");
            return Outcome::Ok(Response { header_revision: served_at, body: ResponseBody::Range(result) });
        }
        _ => {}
    }
    match model.apply(request, None).0 {
        Ok(response) => Outcome::Ok(response),
        Err(refusal) => Outcome::Err(refusal.status()),
    }
}

fn request(rng: &mut ChaCha8Rng, current: Revision, keys: usize, values: &mut u64) -> Request {
    let key = |rng: &mut ChaCha8Rng| format!("/k{}", rng.random_range(0..keys));
    let mut value = || {
        *values += 1;
        format!("v{values}")
    };
    let lease = |rng: &mut ChaCha8Rng| LeaseId(rng.random_range(1..=3));
    match rng.random_range(0..100) {
        0..30 => Request::Range(RangeRequest::key(key(rng))),
        30..38 => Request::Range(RangeRequest { limit: 2, ..RangeRequest::span(KeySpan::prefix("/k")) }),
        38..42 => Request::Range(RangeRequest { serializable: true, ..RangeRequest::key(key(rng)) }),
        42..45 => {
            // Now and then one revision too far, for etcd's future-revision error.
            let revision =
                if rng.random_bool(0.2) { current.next() } else { Revision(rng.random_range(1..=current.0)) };
            Request::Range(RangeRequest { revision, ..RangeRequest::span(KeySpan::prefix("/k")) })
        }
        45..68 => Request::Put(PutRequest { prev_kv: rng.random_bool(0.3), ..PutRequest::new(key(rng), value()) }),
        68..75 => Request::DeleteRange(DeleteRangeRequest { span: KeySpan::single(key(rng)), prev_kv: false }),
        75..90 => {
            // The apiserver's optimistic update: put if the key is unchanged since a revision, else read it.
            let k = key(rng);
            let expected = Revision(rng.random_range(0..=current.0));
            Request::Txn(TxnRequest {
                compare: vec![Compare {
                    span: KeySpan::single(k.as_str()),
                    result: CompareResult::Equal,
                    target: CompareTarget::Mod(if rng.random_bool(0.5) { Revision::ZERO } else { expected }),
                }],
                success: vec![TxnOp::Put(PutRequest::new(k.as_str(), value()))],
                failure: vec![TxnOp::Range(RangeRequest::key(k.as_str()))],
            })
        }
        90..93 => {
            let revision = Revision(rng.random_range(1..=current.0));
            Request::Compact(CompactRequest { revision, physical: false })
        }
        93..95 => Request::LeaseGrant(LeaseGrantRequest { ttl_s: 10, id: lease(rng) }),
        95..97 => Request::LeaseRevoke(LeaseRevokeRequest { id: lease(rng) }),
        _ => Request::Put(PutRequest { lease: lease(rng), ..PutRequest::new(key(rng), value()) }),
    }
}

/// Ways to corrupt one observed result so that no linearization can explain it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Corruption {
    /// A header revision the store never reaches.
    UnreachableRevision,
    /// A read returns a value nobody wrote.
    ForeignValue,
    /// A read returns a value with the wrong mod revision (the value's write has a known revision).
    ShiftedModRevision,
    /// A txn reports the other branch.
    FlippedTxn,
}

/// Applies `corruption` to the `pick`-th op it fits (modulo their number); `None` if it fits none.
pub(crate) fn corrupt(history: &History, corruption: Corruption, pick: usize) -> Option<(History, OpId)> {
    let definite_writes: std::collections::BTreeMap<Bytes, Revision> = history
        .ops
        .iter()
        .filter_map(|op| match (&op.request, op.outcome()) {
            (Request::Put(p), Outcome::Ok(r)) => Some((p.value.clone(), r.header_revision)),
            _ => None,
        })
        .collect();
    let fits = |op: &Operation| -> bool {
        let Outcome::Ok(response) = op.outcome() else { return false };
        match (corruption, &op.request, &response.body) {
            (Corruption::UnreachableRevision, _, _) => true,
            (Corruption::ForeignValue, _, ResponseBody::Range(r)) => !r.kvs.is_empty(),
            (Corruption::ShiftedModRevision, Request::Range(req), ResponseBody::Range(r)) => {
                !req.serializable && r.kvs.first().is_some_and(|kv| definite_writes.contains_key(&kv.value))
            }
            (Corruption::FlippedTxn, _, ResponseBody::Txn(_)) => true,
            _ => false,
        }
    };
    let candidates: Vec<usize> = (0..history.ops.len()).filter(|&i| fits(&history.ops[i])).collect();
    if candidates.is_empty() {
        return None;
    }
    let i = candidates[pick % candidates.len()];
    let mut corrupted = history.clone();
    let returned = corrupted.ops[i].returned.as_mut().expect("fits only returned ops");
    let Outcome::Ok(response) = &mut returned.outcome else { unreachable!() };
    match (corruption, &mut response.body) {
        (Corruption::UnreachableRevision, _) => {
            response.header_revision = Revision(10 * history.ops.len() as i64 + 10);
        }
        (Corruption::ForeignValue, ResponseBody::Range(r)) => r.kvs[0].value = Bytes::from("never-written"),
        (Corruption::ShiftedModRevision, ResponseBody::Range(r)) => r.kvs[0].mod_revision.0 += 1,
        (Corruption::FlippedTxn, ResponseBody::Txn(t)) => t.succeeded = !t.succeeded,
        _ => unreachable!(),
    }
    Some((corrupted, OpId(i)))
}

/// Moves one observed number of one definite response by one (header revision, a kv's version, create or
/// mod revision, a count, a deleted count), chosen by `pick`; `None` if the history has no response.
pub(crate) fn nudge(history: &History, pick: usize) -> Option<(History, OpId)> {
    let answered: Vec<usize> =
        (0..history.ops.len()).filter(|&i| matches!(history.ops[i].outcome(), Outcome::Ok(_))).collect();
    if answered.is_empty() {
        return None;
    }
    let i = answered[pick % answered.len()];
    let mut nudged = history.clone();
    let returned = nudged.ops[i].returned.as_mut().expect("answered");
    let Outcome::Ok(response) = &mut returned.outcome else { unreachable!() };
    let by = if (pick / 7).is_multiple_of(2) { 1 } else { -1 };
    let field = pick / 3;
    match &mut response.body {
        ResponseBody::Range(r) if !r.kvs.is_empty() && field.is_multiple_of(2) => {
            let kv = &mut r.kvs[0];
            match field % 3 {
                0 => kv.version += by,
                1 => kv.create_revision.0 += by,
                _ => kv.mod_revision.0 += by,
            }
        }
        ResponseBody::Range(r) if field % 3 == 1 => r.count += 1,
        ResponseBody::DeleteRange(d) if field.is_multiple_of(2) => d.deleted += 1,
        _ => response.header_revision.0 += by,
    }
    Some((nudged, OpId(i)))
}
