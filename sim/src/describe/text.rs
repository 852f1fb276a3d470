//! Keys, values, key spans and key-values as text: the words every other description is made of.

use std::fmt::{self, Display, Formatter};

use crate::history::{Bytes, KeySpan, KeyValue};

/// Bytes as text when every byte is printable ASCII, else `0x` and hex.
pub struct Text<'a>(pub &'a [u8]);

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

pub fn text(b: &Bytes) -> Text<'_> {
    Text(b.as_slice())
}

/// A key span: `/a`, `/a*` (a prefix), `/a..` (from a key on), `/a../b` (a range).
pub struct Span<'a>(pub &'a KeySpan);

impl Display for Span<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.0;
        if s.range_end.is_empty() {
            write!(f, "{}", text(&s.key))
        } else if is_prefix_end(s.key.as_slice(), s.range_end.as_slice()) {
            write!(f, "{}*", text(&s.key))
        } else if s.range_end.as_slice() == [0] {
            write!(f, "{}..", text(&s.key))
        } else {
            write!(f, "{}..{}", text(&s.key), text(&s.range_end))
        }
    }
}

pub fn span(s: &KeySpan) -> Span<'_> {
    Span(s)
}

/// Whether `end` is the end of the range of keys prefixed by `key`, as etcd computes it
/// (`clientv3.GetPrefixRangeEnd`): the key with its last byte below 0xff incremented and what follows
/// dropped, or `\0` when every byte is 0xff. Checked here without building the end, since the trace asks
/// for every span it writes.
fn is_prefix_end(key: &[u8], end: &[u8]) -> bool {
    match key.iter().rposition(|&b| b < 0xff) {
        Some(i) => end.len() == i + 1 && end[..i] == key[..i] && end[i] == key[i] + 1,
        None => end == [0],
    }
}

/// A key-value with the facts a reader needs to place it in the history: `/a=1 create=2 mod=3 ver=2`, and
/// ` lease=7` when it is attached to one.
pub struct Kv<'a>(pub &'a KeyValue);

impl Display for Kv<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let kv = self.0;
        write!(
            f,
            "{}={} create={} mod={} ver={}",
            text(&kv.key),
            text(&kv.value),
            kv.create_revision,
            kv.mod_revision,
            kv.version
        )?;
        if !kv.lease.is_none() {
            write!(f, " lease={}", kv.lease)?;
        }
        Ok(())
    }
}

pub fn kv(kv: &KeyValue) -> Kv<'_> {
    Kv(kv)
}
