//! `sleep_ms = 500`: the client waits this long in simulated time. Prefer a `wait` on a named condition
//! where one exists; a sleep is for spacing requests out, not for waiting on the system.

use std::fmt::{self, Formatter};
use std::time::Duration;

use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::StepJudge;
use super::observed::Observed;
use super::{ClientKind, PlanCx, StepKind};
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::Result;

/// A sleep.
#[derive(Clone, Debug)]
pub struct SleepMs {
    pub ms: u64,
}

impl StepKind for SleepMs {
    const KEY: &'static str = "sleep_ms";
    const CLIENT: ClientKind = ClientKind::Any;
    const GIVES: Gives = Gives::Nothing;
    type Syntax = u64;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("sleep_ms", &[])]
    }

    fn plan(_cx: &PlanCx, syntax: &Spanned<u64>) -> Result<SleepMs> {
        Ok(SleepMs { ms: *syntax.get_ref() })
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "sleep {}ms", self.ms)
    }

    async fn run(&self, _cx: &mut RunCx<'_>) -> Finished {
        madsim::time::sleep(Duration::from_millis(self.ms)).await;
        (Observed::Done, None, None)
    }

    fn judge(&self, _j: &mut StepJudge<'_>, _observed: &Observed, _expect: Option<&Expectations>) {}
}
