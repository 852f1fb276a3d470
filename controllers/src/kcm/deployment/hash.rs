//! The `pod-template-hash` of a Deployment's template (kube-controller-manager 1.32,
//! `pkg/controller/controller_utils.go` `ComputeHash`; apimachinery's `rand.SafeEncodeString`).
//!
//! Upstream feeds FNV-32a with the template as go-spew prints the Go struct (`%#v`), then with the
//! collision count as four little-endian bytes padded to eight (the count, when set, so that a collision
//! gives a new name), and writes the decimal sum in the alphabet of `SafeEncodeString`, which has no
//! vowels (no words) and no look-alike characters. The hash only has to be stable and to change with the
//! template: the new ReplicaSet is found by comparing templates, never by hash. Here the printed form is
//! the template's JSON with sorted keys, not go-spew's dump of the Go type, so names differ from a real
//! cluster's for the same template while keeping every other property.

use serde_json::Value;

/// `rand.alphanums`.
const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// FNV-1a, 32 bits.
#[derive(Clone, Copy, Debug)]
pub struct Fnv32a(u32);

impl Default for Fnv32a {
    fn default() -> Fnv32a {
        Fnv32a(0x811c_9dc5)
    }
}

impl Fnv32a {
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u32::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0193);
        }
    }

    pub fn sum32(self) -> u32 {
        self.0
    }
}

/// `rand.SafeEncodeString`: each byte of `s` mapped into [`ALPHANUMS`].
pub fn safe_encode_string(s: &str) -> String {
    s.bytes().map(|b| char::from(ALPHANUMS[usize::from(b) % ALPHANUMS.len()])).collect()
}

/// `ComputeHash(template, collisionCount)`.
pub fn compute_hash(template: Option<&Value>, collision_count: Option<i32>) -> String {
    let mut hasher = Fnv32a::default();
    // serde_json keeps object keys sorted, so the text is canonical for a given template.
    let text = template.map(Value::to_string).unwrap_or_default();
    hasher.write(text.as_bytes());
    if let Some(count) = collision_count {
        // `binary.LittleEndian.PutUint32` into an eight-byte buffer: the upper four stay zero.
        let mut bytes = [0u8; 8];
        bytes[..4].copy_from_slice(&(count as u32).to_le_bytes());
        hasher.write(&bytes);
    }
    safe_encode_string(&hasher.sum32().to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fnv32a_and_the_safe_alphabet() {
        // FNV-1a's published test vectors.
        let cases = [("", 0x811c_9dc5u32), ("a", 0xe40c_292c), ("foobar", 0xbf9c_f968)];
        for (text, want) in cases {
            let mut h = Fnv32a::default();
            h.write(text.as_bytes());
            assert_eq!(h.sum32(), want, "{text}");
        }
        // Each byte modulo 27 picks a character; a hash is decimal digits, so the digits' images matter.
        let cases = [("", ""), ("a", "v"), ("xyz", "qrs"), ("0123456789", "456789bcdf")];
        for (text, want) in cases {
            assert_eq!(safe_encode_string(text), want, "{text}");
        }
    }

    #[test]
    fn the_hash_follows_the_template_and_the_collision_count() {
        let a = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}});
        let b = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx:2"}]}});
        let ha = compute_hash(Some(&a), None);
        assert_eq!(ha, compute_hash(Some(&a.clone()), None), "stable");
        assert_ne!(ha, compute_hash(Some(&b), None));
        assert_ne!(ha, compute_hash(Some(&a), Some(0)), "a set count, even 0, changes the hash");
        assert_ne!(compute_hash(Some(&a), Some(0)), compute_hash(Some(&a), Some(1)));
        assert!(ha.bytes().all(|c| ALPHANUMS.contains(&c)) && !ha.is_empty() && ha.len() <= 10, "{ha}");
    }
}
