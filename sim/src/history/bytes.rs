//! `Bytes`: a key or a value as the client sent or saw it.
//!
//! etcd keys and values are arbitrary bytes, but almost every key a test uses is printable text. `Bytes`
//! therefore prints and serializes as a string, escaping what is not printable ASCII as `\xNN` (and a
//! backslash as `\\`), so that histories read well in traces and snapshots and still round-trip exactly.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub Vec<u8>);

impl Bytes {
    pub fn as_slice(&self) -> &[u8] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The escaped text form (see the module doc).
    pub fn escaped(&self) -> String {
        let mut out = String::with_capacity(self.0.len());
        for &b in &self.0 {
            match b {
                b'\\' => out.push_str("\\\\"),
                0x20..=0x7e => out.push(b as char),
                _ => out.push_str(&format!("\\x{b:02x}")),
            }
        }
        out
    }

    /// Parses the escaped text form back; `None` if an escape is malformed.
    pub fn unescape(text: &str) -> Option<Bytes> {
        let raw = text.as_bytes();
        let mut out = Vec::with_capacity(raw.len());
        let mut i = 0;
        while i < raw.len() {
            if raw[i] != b'\\' {
                out.push(raw[i]);
                i += 1;
                continue;
            }
            match raw.get(i + 1) {
                Some(b'\\') => {
                    out.push(b'\\');
                    i += 2;
                }
                Some(b'x') => {
                    let hex = text.get(i + 2..i + 4)?;
                    out.push(u8::from_str_radix(hex, 16).ok()?);
                    i += 4;
                }
                _ => return None,
            }
        }
        Some(Bytes(out))
    }
}

// `Bytes` orders exactly as its byte slice does (both are lexicographic), which `Borrow` requires, so ordered
// maps keyed by `Bytes` can be scanned by `&[u8]` bounds.
impl std::borrow::Borrow<[u8]> for Bytes {
    fn borrow(&self) -> &[u8] {
        &self.0
    }
}

impl From<&str> for Bytes {
    fn from(s: &str) -> Bytes {
        Bytes(s.as_bytes().to_vec())
    }
}

impl From<String> for Bytes {
    fn from(s: String) -> Bytes {
        Bytes(s.into_bytes())
    }
}

impl From<&[u8]> for Bytes {
    fn from(s: &[u8]) -> Bytes {
        Bytes(s.to_vec())
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(v: Vec<u8>) -> Bytes {
        Bytes(v)
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.escaped())
    }
}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.escaped())
    }
}

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.escaped())
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Bytes, D::Error> {
        let text = String::deserialize(deserializer)?;
        Bytes::unescape(&text).ok_or_else(|| serde::de::Error::custom(format!("malformed escape in {text:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_form_round_trips() {
        let raw = Bytes(vec![b'/', b'a', 0, 0xff, b'\\', b'x']);
        assert_eq!(raw.escaped(), "/a\\x00\\xff\\\\x");
        assert_eq!(Bytes::unescape(&raw.escaped()), Some(raw));
        assert_eq!(Bytes::unescape("\\q"), None);
    }
}
