//! `policy`: pod disruption budgets, and the evictions of pods they guard.

pub(crate) mod evictions;
pub(crate) mod poddisruptionbudgets;
