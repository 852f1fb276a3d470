//! Requests and outcomes as short, stable trace text: `put /a=1`, `txn [mod(/a)==5] ? put /a=2 : get /a`,
//! `ok rev=17`. Values are printed as text when they are printable, and in hex otherwise.
//!
//! Everything is a `Display` that writes straight into the trace line: a run writes thousands of these,
//! and building each part as its own `String` first was a visible share of a run's cost.

use std::fmt::{self, Display, Formatter};

use crate::history::{
    Bytes, Compare, CompareResult, CompareTarget, KeySpan, Outcome, PutRequest, RangeRequest, Request, ResponseBody,
    SortOrder, SortTarget, TxnOp, TxnOpResult, TxnRequest,
};

struct Text<'a>(&'a [u8]);

impl Display for Text<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.0;
        if s.iter().all(|c| c.is_ascii_graphic()) {
            // All ASCII, so valid UTF-8.
            f.write_str(std::str::from_utf8(s).map_err(|_| fmt::Error)?)
        } else {
            f.write_str("0x")?;
            s.iter().try_for_each(|c| write!(f, "{c:02x}"))
        }
    }
}

fn text(b: &Bytes) -> Text<'_> {
    Text(b.as_slice())
}

struct Span<'a>(&'a KeySpan);

impl Display for Span<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.0;
        if s.range_end.is_empty() {
            write!(f, "{}", text(&s.key))
        } else if s.range_end.0 == fake_etcd::mvcc::prefix_end(s.key.as_slice()) {
            write!(f, "{}*", text(&s.key))
        } else if s.range_end.as_slice() == [0] {
            write!(f, "{}..", text(&s.key))
        } else {
            write!(f, "{}..{}", text(&s.key), text(&s.range_end))
        }
    }
}

fn compare(f: &mut Formatter<'_>, c: &Compare) -> fmt::Result {
    let op = match c.result {
        CompareResult::Equal => "==",
        CompareResult::Greater => ">",
        CompareResult::Less => "<",
        CompareResult::NotEqual => "!=",
    };
    let span = Span(&c.span);
    match &c.target {
        CompareTarget::Version(v) => write!(f, "version({span}){op}{v}"),
        CompareTarget::Create(r) => write!(f, "create({span}){op}{r}"),
        CompareTarget::Mod(r) => write!(f, "mod({span}){op}{r}"),
        CompareTarget::Value(v) => write!(f, "value({span}){op}{}", text(v)),
        CompareTarget::Lease(l) => write!(f, "lease({span}){op}{l}"),
    }
}

fn txn_op(f: &mut Formatter<'_>, op: &TxnOp) -> fmt::Result {
    match op {
        TxnOp::Range(r) if r.revision.0 > 0 => write!(f, "get {} rev={}", Span(&r.span), r.revision),
        TxnOp::Range(r) => write!(f, "get {}", Span(&r.span)),
        TxnOp::Put(p) => write!(f, "put {}={}", text(&p.key), text(&p.value)),
        TxnOp::DeleteRange(d) => write!(f, "del {}", Span(&d.span)),
        TxnOp::Txn(t) => {
            f.write_str("(")?;
            txn(f, t)?;
            f.write_str(")")
        }
    }
}

fn txn(f: &mut Formatter<'_>, t: &TxnRequest) -> fmt::Result {
    f.write_str("txn [")?;
    for (i, c) in t.compare.iter().enumerate() {
        if i > 0 {
            f.write_str(" ")?;
        }
        compare(f, c)?;
    }
    f.write_str("] ? ")?;
    ops(f, &t.success)?;
    f.write_str(" : ")?;
    ops(f, &t.failure)
}

/// A range's options beyond its span and revision, each only when set: `keys_only`, `count_only`,
/// `sort=mod:descend`, `mod>=5`, `create<=9`.
fn range_options(f: &mut Formatter<'_>, r: &RangeRequest) -> fmt::Result {
    if r.keys_only {
        f.write_str(" keys_only")?;
    }
    if r.count_only {
        f.write_str(" count_only")?;
    }
    if r.sort_order != SortOrder::None || r.sort_target != SortTarget::Key {
        let target = match r.sort_target {
            SortTarget::Key => "key",
            SortTarget::Version => "version",
            SortTarget::Create => "create",
            SortTarget::Mod => "mod",
            SortTarget::Value => "value",
        };
        let order = match r.sort_order {
            SortOrder::None => "none",
            SortOrder::Ascend => "ascend",
            SortOrder::Descend => "descend",
        };
        write!(f, " sort={target}:{order}")?;
    }
    for (name, bound, rev) in [
        ("mod", ">=", r.min_mod_revision),
        ("mod", "<=", r.max_mod_revision),
        ("create", ">=", r.min_create_revision),
        ("create", "<=", r.max_create_revision),
    ] {
        if rev.0 != 0 {
            write!(f, " {name}{bound}{rev}")?;
        }
    }
    Ok(())
}

fn put(f: &mut Formatter<'_>, p: &PutRequest) -> fmt::Result {
    write!(f, "put {}={}", text(&p.key), text(&p.value))?;
    if !p.lease.is_none() {
        write!(f, " lease={}", p.lease)?;
    }
    if p.ignore_value {
        f.write_str(" ignore_value")?;
    }
    if p.ignore_lease {
        f.write_str(" ignore_lease")?;
    }
    Ok(())
}

fn ops(f: &mut Formatter<'_>, list: &[TxnOp]) -> fmt::Result {
    if list.is_empty() {
        return f.write_str("-");
    }
    for (i, op) in list.iter().enumerate() {
        if i > 0 {
            f.write_str("; ")?;
        }
        txn_op(f, op)?;
    }
    Ok(())
}

/// A request as the trace shows it.
pub struct DescribeRequest<'a>(pub &'a Request);

impl Display for DescribeRequest<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            Request::Range(r) => {
                write!(f, "get {}", Span(&r.span))?;
                if r.limit > 0 {
                    write!(f, " limit={}", r.limit)?;
                }
                if r.revision.0 > 0 {
                    write!(f, " rev={}", r.revision)?;
                }
                if r.serializable {
                    // A serializable read may be served stale by the member asked; the trace must say so.
                    f.write_str(" serializable")?;
                }
                range_options(f, r)
            }
            Request::Put(p) => put(f, p),
            Request::DeleteRange(d) => write!(f, "del {}", Span(&d.span)),
            Request::Txn(t) => txn(f, t),
            Request::Compact(c) => write!(f, "compact rev={}", c.revision),
            Request::LeaseGrant(g) => write!(f, "lease-grant ttl={}s", g.ttl_s),
            Request::LeaseRevoke(r) => write!(f, "lease-revoke {}", r.id),
        }
    }
}

pub fn describe_request(r: &Request) -> String {
    DescribeRequest(r).to_string()
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

/// An outcome as the trace shows it.
pub struct DescribeOutcome<'a>(pub &'a Outcome);

impl Display for DescribeOutcome<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            Outcome::Ok(r) => {
                let rev = r.header_revision;
                match &r.body {
                    ResponseBody::Range(g) => {
                        let more = if g.more { " more" } else { "" };
                        write!(f, "ok rev={rev} kvs={} count={}{more}", g.kvs.len(), g.count)
                    }
                    ResponseBody::DeleteRange(d) => write!(f, "ok rev={rev} deleted={}", d.deleted),
                    ResponseBody::Txn(t) => {
                        let branch = if t.succeeded { "then" } else { "else" };
                        write!(f, "ok rev={rev} {branch} [")?;
                        txn_results(f, &t.responses)?;
                        f.write_str("]")
                    }
                    ResponseBody::LeaseGrant(g) => write!(f, "ok rev={rev} id={}", g.id),
                    ResponseBody::Put(_) | ResponseBody::Compact | ResponseBody::LeaseRevoke => {
                        write!(f, "ok rev={rev}")
                    }
                }
            }
            Outcome::Err(e) => write!(f, "err {:?} {:?}", e.code, e.message),
            Outcome::Unknown { reason } => write!(f, "unknown ({reason})"),
            Outcome::NotSent { reason } => write!(f, "not sent ({reason})"),
        }
    }
}

pub fn describe_outcome(o: &Outcome) -> String {
    DescribeOutcome(o).to_string()
}
