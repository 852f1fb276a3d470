//! What `AcknowledgedWritesKept` judges, read from etcd once the run has settled: every scripted `kube`
//! create, update or patch an apiserver acknowledged (a 2xx, not a dry run) must be in etcd's history at the
//! resourceVersion it was acknowledged with, its object's key modified at exactly that revision. A write
//! whose revision etcd has compacted cannot be looked up and is counted apart (one at a revision etcd has not
//! reached any more is lost: etcd went back); deletes and deletecollections
//! are not judged (an acknowledged delete may be a graceful one, which writes a deletion timestamp).
//! The reads go from the control node straight to the first member that answers.

use std::time::Duration;

use etcd_proto::etcdserverpb as pb;

use super::StepRecord;
use crate::cluster::Cluster;
use crate::scenario::lang::kube::Verb;
use crate::scenario::plan::Scenario;
use crate::scenario::steps::kube::send::answer_rv;
use crate::scenario::steps::observed::Observed;
use crate::scenario::steps::Op;

/// One acknowledged write, and what etcd holds of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptWrite {
    /// `client/step`.
    pub who: String,
    /// The request, as the trace shows it.
    pub request: String,
    pub key: String,
    /// The resourceVersion it was acknowledged with.
    pub rv: i64,
    pub at_rv: Lookup,
}

/// What etcd answered about a key as of a revision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The key's mod revision then (`None`: absent).
    At(Option<i64>),
    /// etcd's revision is below it: etcd went back in time and lost the write.
    Future,
    /// etcd compacted it: nothing to say.
    Compacted,
    /// No member answered.
    Unreadable(String),
}

/// The acknowledged writes of the scripted clients, looked up in etcd.
pub(super) async fn read(
    scenario: &Scenario,
    records: &[Vec<StepRecord>],
    cluster: &Cluster,
    timeout: Duration,
) -> Vec<KeptWrite> {
    let mut writes = Vec::new();
    for (script, steps) in scenario.clients.iter().zip(records) {
        for (plan, record) in script.steps.iter().zip(steps) {
            let (Op::Kube(k), Observed::Kube(result)) = (&plan.op, &record.observed) else { continue };
            if !matches!(k.verb, Verb::Create | Verb::Update | Verb::Patch) || k.dry_run {
                continue;
            }
            let Ok((code, body)) = &result.answer else { continue };
            let (Some(rv), Some(name), true) = (answer_rv(body), &k.name, (200..300).contains(code)) else { continue };
            let who = format!("{}/{}", script.name, plan.label);
            writes.push((who, record.request.clone(), format!("{}{name}", k.etcd_prefix), rv));
        }
    }
    let endpoints = cluster.endpoints();
    let lookups = cluster
        .control
        .spawn(async move {
            let mut out = Vec::new();
            for (who, request, key, rv) in writes {
                let at_rv = mod_revision_at(&endpoints, timeout, &key, rv).await;
                out.push(KeptWrite { who, request, key, rv, at_rv });
            }
            out
        })
        .await;
    lookups.unwrap_or_default()
}

/// The key's mod revision as of revision `rv`, from the first member that answers.
async fn mod_revision_at(endpoints: &[String], timeout: Duration, key: &str, rv: i64) -> Lookup {
    let mut last = "no member answered".to_string();
    for endpoint in endpoints {
        let mut kv = pb::kv_client::KvClient::new(crate::client::channel(endpoint));
        let request = pb::RangeRequest { key: key.as_bytes().to_vec(), revision: rv, ..Default::default() };
        match tokio::time::timeout(timeout, kv.range(request)).await {
            Ok(Ok(r)) => return Lookup::At(r.into_inner().kvs.first().map(|kv| kv.mod_revision)),
            Ok(Err(status)) if status.message().contains("compacted") => return Lookup::Compacted,
            Ok(Err(status)) if status.message().contains("future revision") => return Lookup::Future,
            Ok(Err(status)) => last = status.message().to_string(),
            Err(_) => last = format!("no answer within {}ms", timeout.as_millis()),
        }
    }
    Lookup::Unreadable(last)
}
