//! `watch_cancel = { watch = "w" }`: a WatchCancelRequest for an open watch, by the id the server gave it;
//! the server's cancel response is on the watch's stream, which the watch's own expectations judge.

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

/// A cancel of the named watch.
#[derive(Clone, Debug)]
pub struct WatchCancel {
    pub watch: String,
}

impl StepKind for WatchCancel {
    const KEY: &'static str = "watch_cancel";
    const CLIENT: ClientKind = ClientKind::Etcd;
    const GIVES: Gives = Gives::Nothing;
    type Syntax = WatchRef;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("watch_cancel", &[])]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<WatchRef>) -> Result<WatchCancel> {
        Ok(WatchCancel { watch: cx.names.watch(cx.src, &syntax.get_ref().watch)? })
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "watch-cancel {}", self.watch)
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        let watch = &self.watch;
        let server_id = {
            let id = cx.ctx.board.lock().watches.get(watch).map(|w| w.id);
            id.and_then(|id| {
                cx.ctx.history.lock().watches[id.0]
                    .responses
                    .iter()
                    .find(|r| r.response.created)
                    .map(|r| r.response.watch_id)
            })
        };
        match server_id {
            Some(watch_id) => {
                let req = pb::watch_request::RequestUnion::CancelRequest(pb::WatchCancelRequest { watch_id });
                send_on_watch(cx, watch, req, "cancel request")
            }
            None => cx.not_run(format!("watch {watch} was never created")),
        }
    }

    fn judge(&self, _j: &mut StepJudge<'_>, _observed: &Observed, _expect: Option<&Expectations>) {}
}
