//! `Fingerprint`: a 128-bit hash that adds up, so a set of parts can be fingerprinted incrementally.
//!
//! The hash is SipHash-1-3 with fixed keys (std's `DefaultHasher::new()`), run twice with different
//! domain tags for 128 bits. It is deterministic within one build, which is all the memo table needs;
//! fingerprints are never stored or compared across builds.

use std::hash::{DefaultHasher, Hash, Hasher};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint(u128);

impl Fingerprint {
    pub const ZERO: Fingerprint = Fingerprint(0);

    pub fn of<T: Hash + ?Sized>(value: &T) -> Fingerprint {
        let half = |tag: u8| {
            let mut h = DefaultHasher::new();
            tag.hash(&mut h);
            value.hash(&mut h);
            h.finish()
        };
        Fingerprint((u128::from(half(1)) << 64) | u128::from(half(2)))
    }

    pub fn plus(self, other: Fingerprint) -> Fingerprint {
        Fingerprint(self.0.wrapping_add(other.0))
    }

    pub fn minus(self, other: Fingerprint) -> Fingerprint {
        Fingerprint(self.0.wrapping_sub(other.0))
    }
}
