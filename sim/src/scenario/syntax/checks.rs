//! `[checks]` as written: the names of the guarantees a run must keep or break. A name is one of the
//! history checkers' guarantees (`Linearizable`, `Reliable`, ...) or `WriteOutcomesSameWithoutWatchCache`,
//! the check that runs the seed a second time with every apiserver's watch cache off. Names are plain
//! strings in the file, read as [`CheckName`] by validation, so that an unknown one is refused at its own
//! place with the list of known ones, as serde words it for enums.

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::checker::Guarantee;

/// `[checks]`: the guarantees the run must keep, and those it must break (a scenario that reproduces a bug on
/// purpose).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Checks {
    /// Default: every history guarantee (not `WriteOutcomesSameWithoutWatchCache`, which costs a second run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<Vec<Spanned<String>>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail: Vec<Spanned<String>>,
}

/// One guarantee a scenario can name in `[checks]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CheckName {
    /// A guarantee the checkers judge from the run's history.
    History(Guarantee),
    /// The same seed without watch caches gives the same write outcomes.
    WriteOutcomesSameWithoutWatchCache,
    /// Every scripted `kube` write an apiserver acknowledged is in etcd's history at the resourceVersion it
    /// was acknowledged with.
    AcknowledgedWritesKept,
}

/// The name of the check that needs a second run.
pub const CACHE_PARITY: &str = "WriteOutcomesSameWithoutWatchCache";
/// The name of the check of scripted `kube` writes against etcd.
pub const WRITES_KEPT: &str = "AcknowledgedWritesKept";

impl CheckName {
    /// Every name a scenario may write, in the order errors list them.
    pub fn known() -> Vec<String> {
        let mut names: Vec<String> = Guarantee::ALL.iter().map(|g| format!("{g:?}")).collect();
        names.push(CACHE_PARITY.to_string());
        names.push(WRITES_KEPT.to_string());
        names
    }
}

impl std::fmt::Display for CheckName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckName::History(g) => write!(f, "{g:?}"),
            CheckName::WriteOutcomesSameWithoutWatchCache => f.write_str(CACHE_PARITY),
            CheckName::AcknowledgedWritesKept => f.write_str(WRITES_KEPT),
        }
    }
}

impl std::str::FromStr for CheckName {
    type Err = String;

    /// A name as `[checks]` spells it; an unknown one gets serde's words for an unknown enum variant, so that
    /// the error reads as every other one.
    fn from_str(name: &str) -> Result<CheckName, String> {
        if name == CACHE_PARITY {
            return Ok(CheckName::WriteOutcomesSameWithoutWatchCache);
        }
        if name == WRITES_KEPT {
            return Ok(CheckName::AcknowledgedWritesKept);
        }
        match Guarantee::ALL.iter().find(|g| format!("{g:?}") == name) {
            Some(g) => Ok(CheckName::History(*g)),
            None => {
                let known = CheckName::known().iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
                Err(format!("unknown variant `{name}`, expected one of {known}"))
            }
        }
    }
}
