//! `informer = { resource = "configmaps", ... }`: client-go's informer on one resource over the simulated
//! HTTP path, in the background for the rest of the run: its reflector lists, keeps a local store, watches
//! from the list's resourceVersion with bookmarks, and relists after a 410 as client-go does
//! ([`shell`]). The step completes once the store has synced (`rv_of` is the first list's
//! resourceVersion). Behind a load balancer a relist may reach another apiserver than the watch did, which
//! is where time travel lives (kubernetes #59848, Sieve's A1).
//!
//! Every informer is judged by two guarantees whatever its `expect` ([`guarantees`]); `expect` judges the
//! outcome (`ok`: it synced), `synced`, the newest resourceVersion it was told (`rv`), its `relists`, the
//! 410s it got (`expired`) and the names in its `store` at the end of the run.

pub mod guarantees;
mod shell;

use std::collections::BTreeMap;
use std::fmt::{self, Formatter};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::ctx::{Ctx, Finished, InformerTarget, RunCx};
use super::judging::StepJudge;
use super::kube::send::answer_rv;
use super::kube::{self, Kube};
use super::observed::{now_ms, InformerLog, KubeResult, Observed};
use super::{ClientKind, PlanCx, StepKind};
use crate::kube::reflector::{Reflector, RelistFrom};
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::kube::Verb;
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::Result;
use shell::{Shell, SYNC_LIMIT};

/// `informer = { resource = "configmaps", ... }`: client-go's reflector on one resource, in the background
/// for the rest of the run: it lists, keeps a local store, watches from the list's resourceVersion with
/// bookmarks, and relists after a 410 as client-go does. The step completes once the store has synced.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Syntax {
    /// The resource's plural, qualified by its group outside the core group (`deployments.apps`).
    pub resource: Spanned<String>,
    /// Default `default` for namespaced resources; cluster-scoped ones take none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_selector: Option<String>,
    /// The page size of its lists (client-go's pager; default unpaged). Lists at resourceVersion "0" are
    /// served whole from the watch cache whatever the limit, as upstream serves them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Streaming lists (client-go's `WatchListClient`): each (re)list is a watch with
    /// `sendInitialEvents=true`, synced at its `k8s.io/initial-events-end` bookmark, instead of paged GETs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub streaming: bool,
}

impl Syntax {
    /// The list request the informer starts with, as a `kube` step would write it.
    pub fn as_list(&self) -> kube::Syntax {
        kube::Syntax {
            verb: Spanned::new(self.resource.span(), Verb::List),
            resource: self.resource.clone(),
            namespace: self.namespace.clone(),
            name: None,
            subresource: None,
            object: None,
            patch: None,
            patch_type: None,
            resource_version: None,
            resource_version_match: None,
            limit: self.limit,
            continue_from: None,
            label_selector: self.label_selector.clone(),
            field_selector: self.field_selector.clone(),
            send_initial_events: false,
            allow_watch_bookmarks: false,
            timeout_s: None,
            open_for_ms: None,
            until_ms: None,
            dry_run: false,
            field_manager: None,
            force: None,
            precondition_rv: None,
            grace_period_s: None,
            propagation_policy: None,
        }
    }
}

/// A validated informer: the list request it starts with (and its relists repeat); with `streaming`, its
/// lists are watch-lists.
#[derive(Clone, Debug)]
pub struct Informer {
    pub list: Kube,
}

impl StepKind for Informer {
    const KEY: &'static str = "informer";
    const CLIENT: ClientKind = ClientKind::Kube;
    const GIVES: Gives = Gives::Informer;
    type Syntax = Syntax;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("informer", &["outcome", "synced", "rv", "relists", "expired", "store"])]
    }

    fn resources(syntax: &Syntax) -> Vec<&Spanned<String>> {
        vec![&syntax.resource]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<Syntax>) -> Result<Informer> {
        let list = Spanned::new(syntax.span(), syntax.get_ref().as_list());
        let mut list = kube::plan::kube_plan(cx.src, cx.names, cx.catalog, &list)?;
        // A streaming informer's list is a watch-list; the plan says so as a `kube` watch step would.
        list.send_initial_events = syntax.get_ref().streaming;
        Ok(Informer { list })
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let k = &self.list;
        write!(f, "informer {}", k.resource)?;
        if let Some(ns) = &k.namespace {
            write!(f, " {ns}")?;
        }
        if k.send_initial_events {
            f.write_str(" streaming")?;
        }
        Ok(())
    }

    /// Starts the informer and waits for its first sync, as a controller's `WaitForCacheSync` does.
    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        let (ctx, label, client) = (cx.ctx, cx.label.to_string(), cx.client_name.to_string());
        let started_ms = now_ms();
        let plan = &self.list;
        let log = Arc::new(Mutex::new(InformerLog::default()));
        let (synced_tx, synced_rx) = tokio::sync::oneshot::channel();
        let restart = Arc::new(tokio::sync::Notify::new());
        let shell = Shell {
            conn: cx.kube().fork(),
            plan: plan.clone(),
            label: label.clone(),
            trace: ctx.trace.clone(),
            timeout: ctx.request_timeout,
            log: log.clone(),
            reflector: if plan.send_initial_events {
                Reflector::streaming(RelistFrom::with(&ctx.informer_bugs))
            } else {
                Reflector::new(RelistFrom::with(&ctx.informer_bugs))
            },
            store: Arc::default(),
        };
        let store = shell.store.clone();
        let task = madsim::task::spawn(shell.run(synced_tx, restart.clone()));
        {
            let mut informers = ctx.informers.lock().expect("informers lock");
            informers.logs.insert(label.clone(), (plan.etcd_prefix.clone(), log));
            informers.restarts.insert(label.clone(), restart);
            let target = InformerTarget { collection: plan.collection.clone(), namespace: plan.namespace.clone() };
            informers.stores.insert(label.clone(), (target, store));
            informers.tasks.push(task);
        }
        let (apiserver, answer) = match tokio::time::timeout(SYNC_LIMIT, synced_rx).await {
            Ok(Ok((apiserver, code, body))) => (apiserver, Ok((code, body))),
            _ => (String::new(), Err(format!("not synced within {}s", SYNC_LIMIT.as_secs()))),
        };
        let rv = answer.as_ref().ok().and_then(|(_, body)| answer_rv(body));
        let shown = match &answer {
            Ok((_, body)) => format!("synced rv={}", answer_rv(body).unwrap_or(0)),
            Err(why) => why.clone(),
        };
        ctx.trace.event(&client, format_args!("{label} informer {} -> {shown}", plan.resource));
        (Observed::Kube(KubeResult::answer(apiserver, answer, started_ms)), rv, None)
    }

    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
        let Observed::Kube(result) = observed else { return };
        if let Some(log) = &result.informer {
            guarantees::judge(j, log);
        }
        let Some(e) = expect else { return };
        let synced = result.answer.is_ok();
        let got = match &result.answer {
            Ok((_, body)) => format!("synced rv={}", answer_rv(body).unwrap_or(0)),
            Err(why) => why.clone(),
        };
        if let Some(want) = e.outcome {
            j.outcome(want, &got, synced, !synced, false, false);
        }
        if let Some(want) = e.informer.synced {
            j.push("synced", format!("synced {want}"), synced == want, format!("got {got}"));
        }
        let empty = InformerLog::default();
        let log = result.informer.as_ref().unwrap_or(&empty);
        if let Some(want) = &e.kube.rv {
            let newest = log.beliefs.iter().map(|b| b.rv).max().unwrap_or(0);
            j.number("rv", want, newest as i64);
        }
        if let Some(want) = &e.informer.relists {
            j.number("relists", want, i64::from(log.relists));
        }
        if let Some(want) = &e.informer.expired {
            j.number("expired", want, i64::from(log.expired));
        }
        if let Some(want) = &e.informer.store {
            let names: Vec<String> = log.store.keys().cloned().collect();
            j.push("store", format!("store {want:?}"), *want == names, format!("got {names:?}"));
        }
    }

    fn outcome(&self, observed: &Observed) -> Option<String> {
        let Observed::Kube(r) = observed else { return None };
        Some(match &r.answer {
            Ok((_, body)) => format!("{}: synced rv={}", r.apiserver, answer_rv(body).unwrap_or(0)),
            Err(why) => why.clone(),
        })
    }
}

/// Reads what etcd holds under each informer's prefix (from the control node, straight from a member) and
/// takes every informer's log; the tasks end.
pub async fn close(ctx: &Ctx, cluster: &crate::cluster::Cluster) -> BTreeMap<String, InformerLog> {
    let informers = std::mem::take(&mut *ctx.informers.lock().expect("informers lock"));
    for task in &informers.tasks {
        task.abort();
    }
    let mut out = BTreeMap::new();
    for (label, (prefix, log)) in informers.logs {
        let (endpoints, timeout) = (ctx.endpoints.clone(), ctx.request_timeout);
        let etcd =
            cluster.control.spawn(async move { etcd_state(&endpoints, timeout, &prefix).await }).await.ok().flatten();
        let mut log = log.lock().expect("informer log lock").clone();
        log.etcd = etcd;
        out.insert(label, log);
    }
    out
}

/// Restarts the named informer's process, as a controller crash-looping does.
pub fn restart(ctx: &Ctx, informer: &str) -> std::result::Result<(), String> {
    let informers = ctx.informers.lock().expect("informers lock");
    match informers.restarts.get(informer) {
        Some(notify) => {
            notify.notify_one();
            Ok(())
        }
        None => Err(format!("informer {informer} has not started")),
    }
}

/// The objects under `prefix` by name, with their mod revisions, from the first member that answers.
async fn etcd_state(endpoints: &[String], timeout: Duration, prefix: &str) -> Option<BTreeMap<String, u64>> {
    for endpoint in endpoints {
        let mut kv = pb::kv_client::KvClient::new(crate::client::channel(endpoint));
        let request = pb::RangeRequest {
            key: prefix.as_bytes().to_vec(),
            range_end: fake_etcd::mvcc::prefix_end(prefix.as_bytes()),
            ..Default::default()
        };
        if let Ok(Ok(r)) = tokio::time::timeout(timeout, kv.range(request)).await {
            let kvs = r.into_inner().kvs;
            let names = kvs.iter().map(|kv| {
                let key = String::from_utf8_lossy(&kv.key);
                (key[prefix.len()..].to_string(), kv.mod_revision as u64)
            });
            return Some(names.collect());
        }
    }
    None
}
