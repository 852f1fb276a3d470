//! `kube = { verb = "create", resource = "configmaps", ... }`: one request to an apiserver over HTTP, through
//! the same handlers real kubectl reaches, sent to the apiserver the client's routing picks. The answer
//! (code and JSON) or the lack of one is traced and judged; its resourceVersion is `rv_of(step)`; a list's
//! continue token is kept for `continue_from`; a watch's events are collected until `open_for_ms`, the
//! stream's end or the run's. A get or list with `until_ms` asks again until its answer meets the step's
//! `code` and `fields`, as `kubectl wait` polls.
//!
//! It judges, by verb, the outcome (`ok` a 2xx; `error` a refusal; a 429, 5xx or silence `unknown`), the
//! HTTP `code` (or codes), a refusal's `reason`, `message` and `message_contains`, `fields` at JSON
//! pointers, `non_empty` and `absent` pointers, the answer's `rv`, a list's `items` and a watch's
//! `watch_events`. Beside codes that accept success too (`code = [200, 409]`), `reason` and the message
//! keys mean "if it is refused, then so".

pub mod judge;
pub mod plan;
pub mod send;

use std::fmt::{self, Display, Formatter};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::StepJudge;
use super::observed::Observed;
use super::text::Named;
use super::{ClientKind, PlanCx, StepKind};
use crate::describe;
use crate::scenario::expr::Expr;
use crate::scenario::lang::expect::Expect;
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::kube::{KubeRv, PatchType, Verb};
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::Result;
use crate::scenario::lang::value::{is_false, Value};

/// `kube = { verb = "...", resource = "...", ... }`: one request to an apiserver, over HTTP.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Syntax {
    pub verb: Spanned<Verb>,
    /// The resource's plural, qualified by its group outside the core group (`deployments.apps`).
    pub resource: Spanned<String>,
    /// Default `default` for namespaced resources; cluster-scoped ones take none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<Spanned<String>>,
    /// The object's name (get, update, patch, delete, and a watch of one object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Spanned<String>>,
    /// `status`, `scale`, ... (get, update, patch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresource: Option<Spanned<String>>,
    /// create and update: the body, written as TOML, sent as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<Spanned<toml::Value>>,
    /// patch: the body (a table for a merge patch, an array of operations for a JSON patch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<Spanned<toml::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<PatchType>,
    /// get, list, watch: the `resourceVersion` parameter (`"0"`, `""`, or an expression such as
    /// `"rev_of(create-a)"`); update: the object's `metadata.resourceVersion`, the optimistic lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<Spanned<Value>>,
    /// list: `Exact` or `NotOlderThan`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version_match: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// list: continue the named list step's paging (its `continue` token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continue_from: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_selector: Option<String>,
    /// watch: a watch-list (`sendInitialEvents=true`, with `resourceVersionMatch=NotOlderThan`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub send_initial_events: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub allow_watch_bookmarks: bool,
    /// watch: the `timeoutSeconds` parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
    /// watch: stop reading after this long (default: keep it open until the run settles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_for_ms: Option<u64>,
    /// get, list: send again (every 10 ms) until the answer has the expected code and fields, for at most
    /// this long: how a client waits on a condition (`kubectl wait`), such as a CRD being established.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ms: Option<u64>,
    /// create, update, patch, delete: `dryRun=All`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub dry_run: bool,
    /// create, update, patch: the `fieldManager` the write's fields go to in `managedFields`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_manager: Option<String>,
    /// patch with `patch_type = "apply"`: `force=true`, taking conflicting fields from their managers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<Spanned<bool>>,
    /// delete: `preconditions.resourceVersion`, an expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition_rv: Option<Spanned<Value>>,
    /// delete: `gracePeriodSeconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_period_s: Option<i64>,
    /// delete: `propagationPolicy` (`Orphan`, `Background`, `Foreground`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub propagation_policy: Option<Spanned<String>>,
}

/// A `kube` step: one request to an apiserver.
#[derive(Clone, Debug)]
pub struct Kube {
    pub verb: Verb,
    /// The request path up to the resource (`/apis/apps/v1/namespaces/default/deployments`).
    pub collection: String,
    /// The resource as the file names it (`deployments.apps`), for the trace.
    pub resource: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
    /// The kind and apiVersion a body gets when it names none.
    pub kind: String,
    pub api_version: String,
    pub object: Option<serde_json::Value>,
    pub patch: Option<(PatchType, serde_json::Value)>,
    /// get, list, watch: the `resourceVersion` parameter; update: the body's optimistic lock.
    pub resource_version: Option<KubeRv>,
    pub resource_version_match: Option<String>,
    pub limit: Option<i64>,
    /// The list step whose continue token this list continues.
    pub continue_from: Option<String>,
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
    pub send_initial_events: bool,
    pub allow_watch_bookmarks: bool,
    pub timeout_s: Option<u64>,
    pub open_for_ms: Option<u64>,
    /// get, list: repeat until the expected code and fields hold, for at most this long.
    pub until_ms: Option<u64>,
    pub dry_run: bool,
    pub field_manager: Option<String>,
    pub force: bool,
    pub precondition_rv: Option<Expr>,
    pub grace_period_s: Option<i64>,
    pub propagation_policy: Option<String>,
    /// Where the resource's objects in the request's namespace live in etcd (`/registry/configmaps/default/`):
    /// what an informer's store must equal at quiescence.
    pub etcd_prefix: String,
}

/// What every answer of a request can be judged by.
const ANSWER: [&str; 8] = ["outcome", "code", "reason", "message", "message_contains", "fields", "non_empty", "absent"];

impl StepKind for Kube {
    const KEY: &'static str = "kube";
    const CLIENT: ClientKind = ClientKind::Kube;
    const GIVES: Gives = Gives::Kube;
    type Syntax = Syntax;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        const OBJECT: [&str; 9] = [ANSWER[0], ANSWER[1], ANSWER[2], ANSWER[3], ANSWER[4], ANSWER[5], ANSWER[6], ANSWER[7], "rv"];
        const LIST: [&str; 10] =
            [ANSWER[0], ANSWER[1], ANSWER[2], ANSWER[3], ANSWER[4], ANSWER[5], ANSWER[6], ANSWER[7], "rv", "items"];
        const COLLECTION: [&str; 9] =
            [ANSWER[0], ANSWER[1], ANSWER[2], ANSWER[3], ANSWER[4], ANSWER[5], ANSWER[6], ANSWER[7], "items"];
        const WATCH: [&str; 6] = [ANSWER[0], ANSWER[1], ANSWER[2], ANSWER[3], ANSWER[4], "watch_events"];
        &[
            ("create", &OBJECT),
            ("get", &OBJECT),
            ("list", &LIST),
            ("update", &OBJECT),
            ("patch", &OBJECT),
            ("delete", &OBJECT),
            ("deletecollection", &COLLECTION),
            ("watch", &WATCH),
        ]
    }

    fn variant(&self) -> &'static str {
        self.verb.word()
    }

    fn resources(syntax: &Syntax) -> Vec<&Spanned<String>> {
        vec![&syntax.resource]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<Syntax>) -> Result<Kube> {
        plan::kube_plan(cx.src, cx.names, cx.catalog, syntax)
    }

    fn check_expect(&self, cx: &PlanCx, written: &Spanned<Expect>, parsed: &mut Expectations) -> Result<()> {
        if let Some(list) = &written.get_ref().watch_events {
            let events = list.get_ref().iter().map(|e| plan::watch_event(cx.src, cx.names, self, e));
            parsed.kube.watch_events = Some(events.collect::<Result<_>>()?);
        }
        Ok(())
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let rv: Option<Box<dyn Display + '_>> = match &self.resource_version {
            None => None,
            Some(KubeRv::Text(t)) if t.is_empty() => Some(Box::new("\"\"")),
            Some(KubeRv::Text(t)) => Some(Box::new(t.as_str())),
            Some(KubeRv::Number(e)) => Some(Box::new(Named(e))),
        };
        let mut params = send::params(self);
        if let Some(e) = &self.precondition_rv {
            params.insert(0, format!("if-rv={}", Named(e)));
        }
        let request = describe::KubeRequest {
            verb: self.verb.word(),
            resource: &self.resource,
            namespace: self.namespace.as_deref(),
            name: self.name.as_deref(),
            subresource: self.subresource.as_deref(),
            rv: rv.as_deref(),
            params,
        };
        write!(f, "{request}")
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        send::run(cx, self).await
    }

    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
        if let (Observed::Kube(result), Some(e)) = (observed, expect) {
            judge::answer(j, result, e);
            if let Some(want) = &e.kube.watch_events {
                judge::watch_events(j, want, &result.events);
            }
        }
    }

    fn outcome(&self, observed: &Observed) -> Option<String> {
        match observed {
            Observed::Kube(r) => Some(format!("{}: {}", r.apiserver, send::show(self, &r.answer))),
            _ => None,
        }
    }
}
