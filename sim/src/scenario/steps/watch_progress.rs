//! `watch_progress = { watch = "w" }`: a WatchProgressRequest on an open watch's stream; the server answers
//! with a progress notification on that stream, which the watch's own expectations judge.

use std::fmt::{self, Formatter};

use etcd_proto::etcdserverpb as pb;
use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::StepJudge;
use super::observed::Observed;
use super::watch::{send_on_watch, WatchRef};
use super::{ClientKind, PlanCx, StepKind};
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::Result;

/// A progress request on the named watch's stream.
#[derive(Clone, Debug)]
pub struct WatchProgress {
    pub watch: String,
}

impl StepKind for WatchProgress {
    const KEY: &'static str = "watch_progress";
    const CLIENT: ClientKind = ClientKind::Etcd;
    const GIVES: Gives = Gives::Nothing;
    type Syntax = WatchRef;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("watch_progress", &[])]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<WatchRef>) -> Result<WatchProgress> {
        Ok(WatchProgress { watch: cx.names.watch(cx.src, &syntax.get_ref().watch)? })
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "watch-progress {}", self.watch)
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        let req = pb::watch_request::RequestUnion::ProgressRequest(pb::WatchProgressRequest {});
        send_on_watch(cx, &self.watch, req, "progress request")
    }

    fn judge(&self, _j: &mut StepJudge<'_>, _observed: &Observed, _expect: Option<&Expectations>) {}
}
