//! `[checks]`: the guarantees that must hold (by default every one not listed as failing) and those that
//! must fail.

use std::collections::BTreeSet;

use super::{Result, Source};
use crate::checker::Guarantee;
use crate::scenario::error::ScenarioError;
use crate::scenario::syntax;

/// The guarantees that must hold, and those that must fail; none may be in both.
pub(super) fn checks(src: &Source, checks: &syntax::Checks) -> Result<(BTreeSet<Guarantee>, BTreeSet<Guarantee>)> {
    let hold: BTreeSet<Guarantee> = match &checks.hold {
        Some(list) => list.iter().copied().collect(),
        None => Guarantee::ALL.iter().copied().filter(|g| !checks.fail.contains(g)).collect(),
    };
    let fail: BTreeSet<Guarantee> = checks.fail.iter().copied().collect();
    if let Some(g) = hold.intersection(&fail).next() {
        return Err(ScenarioError::at(
            src.path,
            src.text,
            0..0,
            format!("[checks] lists {g} both in `hold` and in `fail`"),
        ));
    }
    Ok((hold, fail))
}
