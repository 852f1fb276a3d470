//! How long the linearizability check takes on a realistic history: printed, never asserted, so the
//! figure can be reported without making the suite depend on the machine's speed. The tidy test
//! (`sim/tests/tidy.rs`) allows `Instant` in this file and nowhere else.

use super::generate::{self, Shape};
use super::{check, Options};
use crate::checker::Verdict;
use crate::history::Outcome;

/// Not a timing assertion: prints how long a 1,000-op, 8-client history with a few unknown outcomes takes
/// (and one with many). Run it in release for the figure:
/// `cargo test -p sim --release --lib thousand_op -- --nocapture`.
#[test]
fn thousand_op_history_check_time() {
    for unknown_rate in [0.006, 0.05] {
        let h = generate::history(2024, &Shape { clients: 8, ops: 1000, keys: 8, unknown_rate });
        let unknown = h.ops.iter().filter(|op| matches!(op.outcome(), Outcome::Unknown { .. })).count();
        let start = std::time::Instant::now();
        let checked = check(&h, &Options::default());
        let took = start.elapsed();
        println!(
            "linearizability check: {} ops, 8 clients, {unknown} unknown outcomes: {} in {:.2?} ({} steps)",
            h.ops.len(),
            checked.verdict,
            took,
            checked.steps
        );
        assert_eq!(checked.verdict, Verdict::Pass);
    }
}
