//! Outcomes as text. The short form, which the trace writes: `ok rev=17`, `ok rev=3 kvs=1 count=1 more`,
//! `ok rev=5 deleted=2`, `ok rev=4 then [got 1,put]`, `ok rev=9 id=7`, `err OutOfRange "etcdserver: ..."`,
//! `unknown (no answer within 1000ms)`, `not sent (transport error)`.
//!
//! The full form adds the key-values the response carried, in braces, each labelled by where it was:
//! `ok rev=3 kvs=1 count=1 {/a=1 create=2 mod=3 ver=1}`, `ok rev=4 {prev /a=1 create=2 mod=3 ver=1}`,
//! `ok rev=5 then [got 1,put] {[1] /a=1 create=2 mod=3 ver=1}` (`[2.1]`: the first operation of a txn that
//! is the second of its parent). Two answers that differ in any field a client reads differ in full form,
//! which is what a checker's verdict needs to show.

use std::fmt::{self, Display, Formatter};

use super::text::Kv;
use crate::history::{ErrorStatus, KeyValue, Outcome, Response, ResponseBody, TxnOpResult, TxnResult};

/// An outcome, short or in full (see the module doc).
pub struct DescribeOutcome<'a> {
    outcome: &'a Outcome,
    full: bool,
}

pub fn outcome(o: &Outcome) -> DescribeOutcome<'_> {
    DescribeOutcome { outcome: o, full: false }
}

pub fn outcome_in_full(o: &Outcome) -> DescribeOutcome<'_> {
    DescribeOutcome { outcome: o, full: true }
}

impl Display for DescribeOutcome<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.outcome {
            Outcome::Ok(r) => write_response(f, r, self.full),
            Outcome::Err(e) => write!(f, "{}", error(e)),
            Outcome::Unknown { reason } => write!(f, "unknown ({reason})"),
            Outcome::NotSent { reason } => write!(f, "not sent ({reason})"),
        }
    }
}

/// A successful response in full, as [`outcome_in_full`] shows it.
pub fn response_in_full(r: &Response) -> impl Display + '_ {
    super::FromFn(move |f: &mut Formatter<'_>| write_response(f, r, true))
}

/// An error status: `err CODE "MESSAGE"`.
pub fn error(e: &ErrorStatus) -> impl Display + '_ {
    super::FromFn(move |f: &mut Formatter<'_>| write!(f, "err {:?} {:?}", e.code, e.message))
}

fn write_response(f: &mut Formatter<'_>, r: &Response, full: bool) -> fmt::Result {
    let rev = r.header_revision;
    match &r.body {
        ResponseBody::Range(g) => {
            let more = if g.more { " more" } else { "" };
            write!(f, "ok rev={rev} kvs={} count={}{more}", g.kvs.len(), g.count)?;
        }
        ResponseBody::DeleteRange(d) => write!(f, "ok rev={rev} deleted={}", d.deleted)?,
        ResponseBody::Txn(t) => {
            let branch = if t.succeeded { "then" } else { "else" };
            write!(f, "ok rev={rev} {branch} [")?;
            txn_results(f, &t.responses)?;
            f.write_str("]")?;
        }
        ResponseBody::LeaseGrant(g) => write!(f, "ok rev={rev} id={}", g.id)?,
        ResponseBody::Put(_) | ResponseBody::Compact | ResponseBody::LeaseRevoke => write!(f, "ok rev={rev}")?,
    }
    if full {
        let mut carried = Carried { f, first: true };
        carried.body(&r.body)?;
        carried.close()?;
    }
    Ok(())
}

fn txn_results(f: &mut Formatter<'_>, rs: &[TxnOpResult]) -> fmt::Result {
    for (i, r) in rs.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        match r {
            TxnOpResult::Range(r) => write!(f, "got {}", r.kvs.len())?,
            TxnOpResult::Put(_) => f.write_str("put")?,
            TxnOpResult::DeleteRange(d) => write!(f, "deleted {}", d.deleted)?,
            TxnOpResult::Txn(_) => f.write_str("txn")?,
        }
    }
    Ok(())
}

/// Writes the key-values a response carried, ` {a; b}`, each after its label; nothing if there are none.
struct Carried<'a, 'f> {
    f: &'a mut Formatter<'f>,
    first: bool,
}

impl Carried<'_, '_> {
    /// One key-value: `[2.1] prev /a=1 ...` for a previous value at the first operation of a txn that is the
    /// second of its parent; no position for a request's own body.
    fn kv(&mut self, at: &[usize], prev: bool, kv: &KeyValue) -> fmt::Result {
        self.f.write_str(if self.first { " {" } else { "; " })?;
        self.first = false;
        if let Some((first, rest)) = at.split_first() {
            write!(self.f, "[{first}")?;
            rest.iter().try_for_each(|i| write!(self.f, ".{i}"))?;
            self.f.write_str("] ")?;
        }
        if prev {
            self.f.write_str("prev ")?;
        }
        write!(self.f, "{}", Kv(kv))
    }

    fn body(&mut self, body: &ResponseBody) -> fmt::Result {
        match body {
            ResponseBody::Range(r) => r.kvs.iter().try_for_each(|kv| self.kv(&[], false, kv)),
            ResponseBody::Put(p) => p.prev_kv.iter().try_for_each(|kv| self.kv(&[], true, kv)),
            ResponseBody::DeleteRange(d) => d.prev_kvs.iter().try_for_each(|kv| self.kv(&[], true, kv)),
            ResponseBody::Txn(t) => self.txn(t, &mut Vec::new()),
            ResponseBody::Compact | ResponseBody::LeaseGrant(_) | ResponseBody::LeaseRevoke => Ok(()),
        }
    }

    /// A txn's operations' key-values; `at` is the txn's own position, empty for a request's own txn.
    fn txn(&mut self, t: &TxnResult, at: &mut Vec<usize>) -> fmt::Result {
        for (i, r) in t.responses.iter().enumerate() {
            at.push(i + 1);
            match r {
                TxnOpResult::Range(r) => r.kvs.iter().try_for_each(|kv| self.kv(at, false, kv))?,
                TxnOpResult::Put(p) => p.prev_kv.iter().try_for_each(|kv| self.kv(at, true, kv))?,
                TxnOpResult::DeleteRange(d) => d.prev_kvs.iter().try_for_each(|kv| self.kv(at, true, kv))?,
                TxnOpResult::Txn(inner) => self.txn(inner, at)?,
            }
            at.pop();
        }
        Ok(())
    }

    fn close(self) -> fmt::Result {
        if self.first {
            Ok(())
        } else {
            self.f.write_str("}")
        }
    }
}
