//! `informer_restart = "pods"`: the named informer's process restarts, as a controller crash-looping does:
//! it forgets its store and its resourceVersion, and lists again.

use std::fmt::{self, Formatter};

use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::StepJudge;
use super::observed::Observed;
use super::{informer, ClientKind, PlanCx, StepKind};
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::Result;

/// A restart of the named informer step's informer.
#[derive(Clone, Debug)]
pub struct InformerRestart {
    pub informer: String,
}

impl StepKind for InformerRestart {
    const KEY: &'static str = "informer_restart";
    const CLIENT: ClientKind = ClientKind::Any;
    const GIVES: Gives = Gives::Nothing;
    type Syntax = String;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("informer_restart", &[])]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<String>) -> Result<InformerRestart> {
        Ok(InformerRestart { informer: cx.names.informer(cx.src, syntax, "`informer_restart`")? })
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "informer-restart {}", self.informer)
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        let done = informer::restart(cx.ctx, &self.informer);
        let shown = done.as_ref().map_or_else(|e| e.clone(), |()| "done".to_string());
        cx.ctx.trace.event(cx.client_name, format_args!("{} informer-restart {}: {shown}", cx.label, self.informer));
        match done {
            Ok(()) => (Observed::Done, None, None),
            Err(e) => (Observed::NotRun(e), None, None),
        }
    }

    fn judge(&self, _j: &mut StepJudge<'_>, _observed: &Observed, _expect: Option<&Expectations>) {}
}
