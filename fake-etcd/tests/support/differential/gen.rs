//! The seeded random operation mix of the differential test, and the little it needs to know about the
//! store (its revision, its compaction revision) to aim requests at interesting places.
//!
//! Operations are etcd-client request values, so what is sent is exactly what is printed when a case fails.
//! The generator draws from one ChaCha stream; given the same observations it yields the same operations,
//! and the observations come from real etcd, which answers a sequential client deterministically.

use etcd_client::{
    Compare, CompareOp, DeleteOptions, GetOptions, PutOptions, SortOrder, SortTarget, Txn, TxnOp, WatchFilterType,
    WatchOptions,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One request of the mix.
#[derive(Clone, Debug)]
pub enum Op {
    Put {
        key: Vec<u8>,
        value: Vec<u8>,
        options: PutOptions,
    },
    Get {
        key: Vec<u8>,
        options: GetOptions,
    },
    Delete {
        key: Vec<u8>,
        options: DeleteOptions,
    },
    Txn(Txn),
    Compact {
        revision: i64,
        physical: bool,
    },
    LeaseGrant {
        id: i64,
        ttl: i64,
    },
    LeaseRevoke {
        id: i64,
    },
    LeaseTimeToLive {
        id: i64,
        keys: bool,
    },
    LeaseLeases,
    /// A watch created on its own stream; its first responses are collected and compared.
    Watch {
        key: Vec<u8>,
        options: WatchOptions,
        start_revision: i64,
    },
}

/// What the generator knows about the store, as real etcd reported it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Model {
    /// The highest header revision seen.
    pub revision: i64,
    /// The revision of the last successful compaction (0: none).
    pub compacted: i64,
}

/// Keys overlap on purpose: `k/1` and `k/10` share a prefix, `k/2/x` is under `k/2`, so prefixes, ranges and
/// txn key-overlap checks have something to bite on.
const KEYS: &[&str] = &["a", "b", "c", "k/0", "k/1", "k/10", "k/2", "k/2/x", "z"];
const PREFIXES: &[&str] = &["k/", "k/1", "k/2", "a", "z"];
const VALUES: &[&str] = &["", "v0", "v1", "v2", "v3", "a longer value with spaces"];
/// Leases are granted with explicit ids, so both servers hold the same ids; 7 and 8 are never granted.
const LEASE_IDS: &[i64] = &[1, 2, 3, 4, 5, 6, 7, 8];

/// The seeded generator.
pub struct Generator {
    rng: ChaCha8Rng,
}

impl Generator {
    pub fn new(seed: u64) -> Generator {
        Generator { rng: ChaCha8Rng::seed_from_u64(seed) }
    }

    /// The next operation, aimed at the store described by `model`.
    pub fn next(&mut self, model: &Model) -> Op {
        match self.rng.random_range(0..100) {
            0..25 => self.put(),
            25..35 => self.delete(),
            35..58 => self.get(model),
            58..78 => Op::Txn(self.txn(model, 0)),
            78..81 => self.compact(model),
            81..86 => Op::LeaseGrant {
                id: self.lease_id(),
                // Long TTLs: nothing may expire during the run, or the two servers would expire at different
                // moments. A TTL over etcd's maximum (9e9 s) tests that error.
                ttl: if self.rng.random_bool(0.1) { 9_000_000_001 } else { self.rng.random_range(600..1200) },
            },
            86..89 => Op::LeaseRevoke { id: self.lease_id() },
            89..93 => Op::LeaseTimeToLive { id: self.lease_id(), keys: self.rng.random_bool(0.5) },
            93..94 => Op::LeaseLeases,
            _ => self.watch(model),
        }
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.rng.random_range(0..items.len())]
    }

    fn key(&mut self) -> Vec<u8> {
        // An empty key now and then: every request kind must reject it the same way.
        if self.rng.random_bool(0.01) {
            return Vec::new();
        }
        self.pick(KEYS).as_bytes().to_vec()
    }

    fn value(&mut self) -> Vec<u8> {
        self.pick(VALUES).as_bytes().to_vec()
    }

    fn lease_id(&mut self) -> i64 {
        LEASE_IDS[self.rng.random_range(0..LEASE_IDS.len())]
    }

    /// A revision near the interesting edges: latest (0), around the compaction, inside the history, the
    /// current revision, and the future.
    fn revision(&mut self, model: &Model) -> i64 {
        let current = model.revision.max(1);
        match self.rng.random_range(0..8) {
            0 => 0,
            1 => (model.compacted - 1).max(1),
            2 => model.compacted.max(1),
            3 => model.compacted + 1,
            4 | 5 => self.rng.random_range(1..=current),
            6 => current,
            _ => current + self.rng.random_range(1..4),
        }
    }

    fn range(&mut self) -> (Vec<u8>, Range) {
        match self.rng.random_range(0..10) {
            0..4 => (self.key(), Range::Single),
            4..7 => (self.pick(PREFIXES).as_bytes().to_vec(), Range::Prefix),
            7 => {
                let (a, b) = (self.key(), self.key());
                (a, Range::To(b))
            }
            8 => (self.key(), Range::FromKey),
            _ => (b"\0".to_vec(), Range::All),
        }
    }

    fn put_options(&mut self, in_txn: bool) -> (Vec<u8>, PutOptions) {
        let mut options = PutOptions::new();
        let mut value = self.value();
        if self.rng.random_bool(0.4) {
            options = options.with_prev_key();
        }
        if self.rng.random_bool(0.25) {
            options = options.with_lease(self.lease_id());
        }
        // The server checks ignore_value and ignore_lease inside txns too, so they are drawn in both places,
        // more rarely inside txns, where an error fails the whole txn.
        let p = if in_txn { 0.05 } else { 0.1 };
        if self.rng.random_bool(p) {
            options = options.with_ignore_value();
            if self.rng.random_bool(0.8) {
                value.clear();
            }
        }
        if self.rng.random_bool(p) {
            options = options.with_ignore_lease();
            if self.rng.random_bool(0.8) {
                options = options.with_lease(0);
            }
        }
        (value, options)
    }

    fn put(&mut self) -> Op {
        let key = self.key();
        let (value, options) = self.put_options(false);
        Op::Put { key, value, options }
    }

    fn delete_options(&mut self) -> (Vec<u8>, DeleteOptions) {
        let (key, range) = self.range();
        let mut options = match range {
            Range::Single => DeleteOptions::new(),
            Range::Prefix => DeleteOptions::new().with_prefix(),
            Range::To(end) => DeleteOptions::new().with_range(end),
            Range::FromKey => DeleteOptions::new().with_from_key(),
            Range::All => DeleteOptions::new().with_all_keys(),
        };
        if self.rng.random_bool(0.5) {
            options = options.with_prev_key();
        }
        (key, options)
    }

    fn delete(&mut self) -> Op {
        let (key, options) = self.delete_options();
        Op::Delete { key, options }
    }

    fn get_options(&mut self, model: &Model, in_txn: bool) -> (Vec<u8>, GetOptions) {
        let (key, range) = self.range();
        let mut options = match range {
            Range::Single => GetOptions::new(),
            Range::Prefix => GetOptions::new().with_prefix(),
            Range::To(end) => GetOptions::new().with_range(end),
            Range::FromKey => GetOptions::new().with_from_key(),
            Range::All => GetOptions::new().with_all_keys(),
        };
        if self.rng.random_bool(0.3) {
            options = options.with_limit(self.rng.random_range(0..4));
        }
        // Inside a txn a past revision fails the whole txn when compacted, which is worth having, but rarely.
        if self.rng.random_bool(if in_txn { 0.05 } else { 0.4 }) {
            options = options.with_revision(self.revision(model));
        }
        if self.rng.random_bool(0.3) {
            let targets =
                [SortTarget::Key, SortTarget::Version, SortTarget::Create, SortTarget::Mod, SortTarget::Value];
            let orders = [SortOrder::None, SortOrder::Ascend, SortOrder::Descend];
            let target = targets[self.rng.random_range(0..targets.len())];
            let order = orders[self.rng.random_range(0..orders.len())];
            options = options.with_sort(target, order);
        }
        if self.rng.random_bool(0.15) {
            options = options.with_keys_only();
        }
        if self.rng.random_bool(0.1) {
            options = options.with_count_only();
        }
        if self.rng.random_bool(0.1) {
            options = options.with_min_mod_revision(self.revision(model));
        }
        if self.rng.random_bool(0.1) {
            options = options.with_max_mod_revision(self.revision(model));
        }
        if self.rng.random_bool(0.1) {
            options = options.with_min_create_revision(self.revision(model));
        }
        if self.rng.random_bool(0.1) {
            options = options.with_max_create_revision(self.revision(model));
        }
        if self.rng.random_bool(0.2) {
            options = options.with_serializable();
        }
        (key, options)
    }

    fn get(&mut self, model: &Model) -> Op {
        let (key, options) = self.get_options(model, false);
        Op::Get { key, options }
    }

    fn compare(&mut self, model: &Model) -> Compare {
        let ops = [CompareOp::Equal, CompareOp::Greater, CompareOp::Less, CompareOp::NotEqual];
        let op = ops[self.rng.random_range(0..ops.len())];
        let key = self.key();
        let compare = match self.rng.random_range(0..5) {
            0 => Compare::version(key, op, self.rng.random_range(0..4)),
            1 => Compare::create_revision(key, op, self.revision(model)),
            2 => Compare::mod_revision(key, op, self.revision(model)),
            3 => Compare::value(key, op, self.value()),
            _ => Compare::lease(key, op, if self.rng.random_bool(0.5) { 0 } else { self.lease_id() }),
        };
        match self.rng.random_range(0..10) {
            0 => compare.with_prefix(),
            1 => compare.with_range(self.key()),
            _ => compare,
        }
    }

    fn txn_op(&mut self, model: &Model, depth: u32) -> TxnOp {
        match self.rng.random_range(0..10) {
            0..4 => {
                let key = self.key();
                let (value, options) = self.put_options(true);
                TxnOp::put(key, value, Some(options))
            }
            4..7 => {
                let (key, options) = self.get_options(model, true);
                TxnOp::get(key, Some(options))
            }
            7..9 => {
                let (key, options) = self.delete_options();
                TxnOp::delete(key, Some(options))
            }
            _ if depth < 2 => TxnOp::txn(self.txn(model, depth + 1)),
            _ => TxnOp::get(self.key(), None),
        }
    }

    fn txn(&mut self, model: &Model, depth: u32) -> Txn {
        let compares: Vec<Compare> = (0..self.rng.random_range(0..3)).map(|_| self.compare(model)).collect();
        let success: Vec<TxnOp> = (0..self.rng.random_range(0..4)).map(|_| self.txn_op(model, depth)).collect();
        let failure: Vec<TxnOp> = (0..self.rng.random_range(0..3)).map(|_| self.txn_op(model, depth)).collect();
        Txn::new().when(compares).and_then(success).or_else(failure)
    }

    fn compact(&mut self, model: &Model) -> Op {
        // Mostly a step forward in the history; sometimes the current revision, an old or a future one.
        let revision = match self.rng.random_range(0..10) {
            0 => model.compacted,
            1 => model.revision + 1,
            2 => model.revision,
            _ => {
                let low = model.compacted + 1;
                if low >= model.revision {
                    model.revision
                } else {
                    self.rng.random_range(low..=model.revision)
                }
            }
        };
        Op::Compact { revision, physical: self.rng.random_bool(0.5) }
    }

    fn watch(&mut self, model: &Model) -> Op {
        let (key, range) = self.range();
        let mut options = match range {
            Range::Single => WatchOptions::new(),
            Range::Prefix => WatchOptions::new().with_prefix(),
            Range::To(end) => WatchOptions::new().with_range(end),
            Range::FromKey => WatchOptions::new().with_from_key(),
            Range::All => WatchOptions::new().with_all_keys(),
        };
        let start_revision = self.revision(model);
        options = options.with_start_revision(start_revision);
        if self.rng.random_bool(0.4) {
            options = options.with_prev_key();
        }
        if self.rng.random_bool(0.15) {
            let filter = if self.rng.random_bool(0.5) { WatchFilterType::NoPut } else { WatchFilterType::NoDelete };
            options = options.with_filters([filter]);
        }
        Op::Watch { key, options, start_revision }
    }
}

/// The key-range shapes of Range, DeleteRange, Compare and Watch.
enum Range {
    Single,
    Prefix,
    To(Vec<u8>),
    FromKey,
    All,
}
