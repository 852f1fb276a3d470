//! Election timeouts drawn from a seed. raft-rs re-draws a node's randomised election timeout whenever it
//! resets its election clock (a new term, a new role), from `thread_rng`, which a simulation cannot
//! control. A fixed timeout per node was the first answer, and it livelocked: two members that drew the
//! same value split their votes in every later term, and a 3-member cluster never elected a leader again
//! after a partition healed. [`ElectionTimeouts`] gives each reset a fresh value in
//! `[election_tick, 2 * election_tick)` from a SplitMix64 stream seeded by the caller, as etcd-raft draws
//! from its own generator, so that ties break and every run of a seed draws the same values.

/// The stream of election timeouts of one member, from one seed.
#[derive(Clone, Debug)]
pub(crate) struct ElectionTimeouts {
    state: u64,
    election_tick: usize,
}

impl ElectionTimeouts {
    pub(crate) fn new(seed: u64, election_tick: usize) -> ElectionTimeouts {
        assert!(election_tick > 0, "an election timeout of 0 ticks (validated by RaftConfig)");
        ElectionTimeouts { state: seed, election_tick }
    }

    /// The next timeout, in `[election_tick, 2 * election_tick)`.
    pub(crate) fn next_ticks(&mut self) -> usize {
        // SplitMix64 (Steele, Lea, Flood 2014): a full-period 64-bit generator whose outputs pass BigCrush;
        // plenty for spreading a handful of timeouts, and three lines with no dependency.
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        self.election_tick + (z % self.election_tick as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_stay_in_range_cover_it_and_repeat_for_a_seed() {
        let mut a = ElectionTimeouts::new(7, 10);
        let draws: Vec<usize> = (0..1000).map(|_| a.next_ticks()).collect();
        assert!(draws.iter().all(|t| (10..20).contains(t)));
        for t in 10..20 {
            assert!(draws.contains(&t), "{t} never drawn");
        }
        let mut b = ElectionTimeouts::new(7, 10);
        assert_eq!(draws, (0..1000).map(|_| b.next_ticks()).collect::<Vec<_>>());
        let mut c = ElectionTimeouts::new(8, 10);
        assert_ne!(draws[..20], (0..20).map(|_| c.next_ticks()).collect::<Vec<_>>()[..]);
    }

    #[test]
    fn two_members_that_tie_once_do_not_tie_for_ever() {
        // Two streams from different seeds: within a few resets their timeouts differ.
        let (mut a, mut b) = (ElectionTimeouts::new(1, 10), ElectionTimeouts::new(2, 10));
        assert!((0..5).any(|_| a.next_ticks() != b.next_ticks()));
    }
}
