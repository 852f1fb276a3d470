//! Seeds: one root seed per simulation, and a separate, reproducible random stream for each purpose
//! (the workload of each client, the nemesis, ...) derived from it.
//!
//! madsim's own scheduler and network draw from the runtime seeded with the root seed itself. Each purpose
//! gets ChaCha8 seeded with the root and a stream number derived from the purpose's name, so that adding a
//! new purpose, or drawing more from one, never shifts what another purpose draws.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seeds {
    pub root: u64,
}

impl Seeds {
    pub fn new(root: u64) -> Seeds {
        Seeds { root }
    }

    /// The random stream for `purpose` (e.g. `"nemesis"`, `"workload/c3"`).
    pub fn rng(&self, purpose: &str) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::seed_from_u64(self.root);
        rng.set_stream(fnv1a(purpose.as_bytes()));
        rng
    }
}

/// FNV-1a, 64 bits: a stable hash (std's hashers promise no stability across releases).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn purposes_are_independent_and_reproducible() {
        let s = Seeds::new(42);
        let a: u64 = s.rng("nemesis").random();
        assert_eq!(a, s.rng("nemesis").random::<u64>());
        assert_ne!(a, s.rng("workload/c1").random::<u64>());
        assert_ne!(a, Seeds::new(43).rng("nemesis").random::<u64>());
    }
}
