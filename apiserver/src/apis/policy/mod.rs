//! `policy`: pod disruption budgets.

pub(crate) mod poddisruptionbudgets;
