//! What the KV steps (`get`, `put`, `delete`, `txn`, `compact`, and the lease requests filed in the
//! history) share: the key ranges they cover ([`span_of`]), resolving what an earlier step returned
//! ([`Known`]), how a request filed in the history ends ([`finish`]) and how its outcome is judged
//! ([`judge`]): the outcome, etcd's error, the header revision, and the response body's keys (`kvs`,
//! `count`, `more`, `prev_value`, `succeeded`, a txn's `responses`).

use crate::checker::model::Refusal;
use crate::describe;
use crate::history::{self as h, KeySpan, Outcome, ResponseBody};
use crate::scenario::lang::expectations::{Expectations, KvExpect, ResponseExpect, ResponseKind};
use crate::scenario::lang::source::{Result, Source};
use crate::scenario::lang::value::KeyFields;

use super::ctx::Finished;
use super::judging::StepJudge;
use super::observed::Observed;

/// A key span's key and range end, as a request carries them.
pub fn wire_span(s: &KeySpan) -> (Vec<u8>, Vec<u8>) {
    (s.key.0.clone(), s.range_end.0.clone())
}

/// The keys a table covers: `key` alone, or with one of `prefix`, `from_key` and `range_end`.
pub fn span_of(src: &Source, k: &KeyFields) -> Result<KeySpan> {
    let key = k.key.get_ref();
    let set = usize::from(k.prefix) + usize::from(k.from_key) + usize::from(k.range_end.is_some());
    if set > 1 {
        return Err(src.err(k.key.span(), "give at most one of `prefix`, `from_key` and `range_end`"));
    }
    if key.is_empty() && !k.from_key {
        return Err(src.err(
            k.key.span(),
            "`key` is empty; expected a key (use `from_key = true` with `key = \"\\u0000\"` for every key)",
        ));
    }
    Ok(if k.prefix {
        KeySpan::prefix(key.as_str())
    } else if k.from_key {
        KeySpan::range(key.as_str(), "\0")
    } else if let Some(end) = k.range_end {
        if end.get_ref().as_str() <= key.as_str() {
            return Err(src.err(
                end.span(),
                format!("`range_end` {:?} is not after `key` {key:?}; the range would be empty", end.get_ref()),
            ));
        }
        KeySpan::range(key.as_str(), end.get_ref().as_str())
    } else {
        KeySpan::single(key.as_str())
    })
}

/// How a request filed in the history ends: its outcome, its header revision for `rev_of`, and a grant's
/// lease.
pub fn finish(outcome: Outcome) -> Finished {
    let revision = match &outcome {
        Outcome::Ok(r) => Some(r.header_revision.0),
        _ => None,
    };
    let lease = match &outcome {
        Outcome::Ok(h::Response { body: ResponseBody::LeaseGrant(g), .. }) => Some(g.id.0),
        _ => None,
    };
    (Observed::Kv(outcome), revision, lease)
}

/// Judges a KV (or filed lease) request's outcome against its expectations.
pub fn judge(j: &mut StepJudge<'_>, observed: &Observed, e: Option<&Expectations>) {
    let (Observed::Kv(outcome), Some(e)) = (observed, e) else { return };
    let got = describe::outcome(outcome).to_string();
    if let Some(want) = e.outcome {
        let (ok, err, unknown, not_sent) = match outcome {
            Outcome::Ok(_) => (true, false, false, false),
            // An availability error leaves the outcome as unknown as no answer does (the linearizability
            // checker reads it so too), so `ok-or-unknown` accepts it; `error` accepts every error.
            Outcome::Err(status) if Refusal::of(status).is_none() => (false, true, true, false),
            Outcome::Err(_) => (false, true, false, false),
            Outcome::Unknown { .. } => (false, false, true, false),
            Outcome::NotSent { .. } => (false, false, false, true),
        };
        j.outcome(want, &got, ok, unknown, err, not_sent);
    }
    if let Some(want) = &e.error {
        let status = match outcome {
            Outcome::Err(status) => Some(status),
            _ => None,
        };
        j.error(want, status, &got);
    }
    let Outcome::Ok(resp) = outcome else {
        // Body expectations need a response; the outcome finding above already says there was none.
        if has_body_expectations(e) && e.outcome.is_none() {
            j.fail("", "a response", format!("got {got}"));
        }
        return;
    };
    if let Some(r) = &e.revision {
        j.number("revision", r, resp.header_revision.0);
    }
    let body = match &resp.body {
        ResponseBody::Range(r) => Body::Range(r),
        ResponseBody::Put(p) => Body::Put(p),
        ResponseBody::DeleteRange(d) => Body::Delete(d),
        ResponseBody::Txn(t) => Body::Txn(t),
        ResponseBody::LeaseGrant(g) => {
            if let Some(t) = &e.ttl_s {
                j.number("ttl_s", t, g.ttl_s);
            }
            return;
        }
        ResponseBody::Compact | ResponseBody::LeaseRevoke => return,
    };
    body_findings(j, "", "", &e.body, body);
    if let (Some(want), ResponseBody::Txn(t)) = (&e.responses, &resp.body) {
        responses(j, want, &t.responses);
    }
}

/// `want` against one response body; `at` prefixes each finding's name (empty for a step's own response,
/// `responses[2].` for an operation in a txn's branch) and `key` overrides its key (`responses` for those).
/// Validation has made sure each key fits the operation; inside a txn it fits at least one branch, and
/// [`responses`] reports the branch that ran something else.
fn body_findings(j: &mut StepJudge<'_>, key: &'static str, at: &str, want: &ResponseExpect, got: Body<'_>) {
    let prev_value = |kv: Option<&h::KeyValue>| kv.map(|kv| kv.value.escaped()).unwrap_or_default();
    let k = |own: &'static str| if key.is_empty() { own } else { key };
    match got {
        Body::Range(r) => {
            if let Some(c) = &want.count {
                j.number_named(k("count"), &format!("{at}count"), c, r.count);
            }
            if let Some(m) = want.more {
                j.push(k("more"), format!("{at}more {m}"), r.more == m, format!("got {}", r.more));
            }
            if let Some(kvs) = &want.kvs {
                kvs_finding(j, k("kvs"), &format!("{at}kvs"), kvs, &r.kvs);
            }
        }
        Body::Put(p) => {
            if let Some(pv) = &want.prev_value {
                j.text(k("prev_value"), &format!("{at}prev_value"), pv, &prev_value(p.prev_kv.as_ref()));
            }
        }
        Body::Delete(d) => {
            if let Some(c) = &want.count {
                j.number_named(k("count"), &format!("{at}count"), c, d.deleted);
            }
            if let Some(pv) = &want.prev_value {
                j.text(k("prev_value"), &format!("{at}prev_value"), pv, &prev_value(d.prev_kvs.first()));
            }
        }
        Body::Txn(t) => {
            if let Some(s) = want.succeeded {
                j.push(k("succeeded"), format!("{at}succeeded {s}"), t.succeeded == s, format!("got {}", t.succeeded));
            }
        }
    }
}

/// A txn's responses, position by position, each judged as a finding of its own (`responses[i].<key>`).
fn responses(j: &mut StepJudge<'_>, want: &[ResponseExpect], got: &[h::TxnOpResult]) {
    let before = j.out.len();
    if want.len() != got.len() {
        j.fail("responses", &format!("responses: {}", want.len()), format!("got {} responses", got.len()));
    }
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        let at = format!("responses[{}]", i + 1);
        let body = match g {
            h::TxnOpResult::Range(r) => Body::Range(r),
            h::TxnOpResult::Put(p) => Body::Put(p),
            h::TxnOpResult::DeleteRange(d) => Body::Delete(d),
            h::TxnOpResult::Txn(t) => Body::Txn(t),
        };
        // The other branch's operation at this position may take keys this one cannot meet.
        if let Some(key) = w.misfit(body.kind()) {
            let kind = body.kind().keyword();
            j.fail("responses", &at, format!("got a {kind} response, which cannot have the `{key}` expected of it"));
        }
        body_findings(j, "responses", &format!("{at}."), w, body);
    }
    // A list of empty entries (`[{}, {}]`) still judges how many responses came back.
    if j.out.len() == before {
        j.push("responses", format!("responses: {}", want.len()), true, format!("got {} responses", got.len()));
    }
}

fn kvs_finding(j: &mut StepJudge<'_>, key: &'static str, name: &str, want: &[KvExpect], got: &[h::KeyValue]) {
    let expected: Vec<String> = want.iter().map(|k| show_kv_expect(j, k)).collect();
    let actual: Vec<String> = got.iter().map(|kv| describe::kv(kv).to_string()).collect();
    let matches: Vec<bool> = want.iter().zip(got).map(|(w, g)| kv_matches(j, w, g)).collect();
    j.sequence(key, name, "kvs", &expected, &actual, &|i| matches.get(i).copied().unwrap_or(false));
}

fn kv_matches(j: &StepJudge<'_>, w: &KvExpect, g: &h::KeyValue) -> bool {
    w.key.as_bytes() == g.key.as_slice()
        && w.value.as_ref().is_none_or(|v| v.as_bytes() == g.value.as_slice())
        && j.satisfies(&w.create_revision, g.create_revision.0)
        && j.satisfies(&w.mod_revision, g.mod_revision.0)
        && j.satisfies(&w.version, g.version)
        && w.lease.as_ref().is_none_or(|l| j.leases.get(l) == Some(&g.lease.0))
}

fn show_kv_expect(j: &StepJudge<'_>, k: &KvExpect) -> String {
    let mut s = format!("{}={}", k.key, k.value.as_deref().unwrap_or("*"));
    j.show_num(&mut s, "create", &k.create_revision);
    j.show_num(&mut s, "mod", &k.mod_revision);
    j.show_num(&mut s, "ver", &k.version);
    if let Some(l) = &k.lease {
        s.push_str(&format!(" lease={l}"));
    }
    s
}

/// A response body the expectations of [`ResponseExpect`] apply to.
#[derive(Clone, Copy)]
enum Body<'a> {
    Range(&'a h::RangeResult),
    Put(&'a h::PutResult),
    Delete(&'a h::DeleteResult),
    Txn(&'a h::TxnResult),
}

impl Body<'_> {
    fn kind(self) -> ResponseKind {
        match self {
            Body::Range(_) => ResponseKind::Get,
            Body::Put(_) => ResponseKind::Put,
            Body::Delete(_) => ResponseKind::Delete,
            Body::Txn(_) => ResponseKind::Txn,
        }
    }
}

fn has_body_expectations(e: &Expectations) -> bool {
    e.revision.is_some()
        || e.body.kvs.is_some()
        || e.body.count.is_some()
        || e.body.more.is_some()
        || e.body.succeeded.is_some()
        || e.body.prev_value.is_some()
        || e.ttl_s.is_some()
        || e.responses.is_some()
}
