//! Sends one operation of the mix through etcd-client and reduces the answer to what must be equal between
//! real etcd and fake-etcd.
//!
//! Responses are the protobuf messages themselves (etcd-client's `pub-response-field`), printed field by
//! field after clearing what legitimately differs: the cluster and member ids in headers. For leases, the
//! remaining TTL depends on wall time and becomes "alive" (1) when positive, and the order of lease ids and
//! attached keys, which etcd takes from Go maps, is sorted. Errors are their gRPC code and message.

use std::time::Duration;

use etcd_client::proto::{PbResponseHeader, PbWatchResponse};
use etcd_client::{Client, LeaseGrantOptions, LeaseTimeToLiveOptions};

use super::gen::Op;

/// What a server answered.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The normalized answer, compared as text.
    pub text: String,
    /// The response header's revision, if there was a response with a header.
    pub revision: Option<i64>,
    /// The watch responses, for the known-bug rules (empty for other operations).
    pub watch: Vec<PbWatchResponse>,
    /// How a watch's collection ended when not by silence (stream closed, error).
    pub watch_tail: String,
    pub ok: bool,
}

/// How long a watch may take to send its created response and catch-up events.
const WATCH_FIRST: Duration = Duration::from_secs(3);
/// After this long without a response, a watch over a quiet store has sent everything it will send.
const WATCH_IDLE: Duration = Duration::from_millis(500);

fn clear(header: &mut Option<PbResponseHeader>) -> Option<i64> {
    header.as_mut().map(|h| {
        h.cluster_id = 0;
        h.member_id = 0;
        h.revision
    })
}

fn failed(e: etcd_client::Error) -> Outcome {
    let text = match e {
        etcd_client::Error::GRpcStatus(status) => format!("error {:?}: {}", status.code(), status.message()),
        other => format!("client error: {other}"),
    };
    Outcome { text, revision: None, watch: Vec::new(), watch_tail: String::new(), ok: false }
}

fn answered(text: String, revision: Option<i64>) -> Outcome {
    Outcome { text, revision, watch: Vec::new(), watch_tail: String::new(), ok: true }
}

/// Runs `op` against `client`. `last_revision` is the store's revision before the operation; a watch that
/// has delivered an event of that revision has delivered everything and need not wait for silence.
pub async fn execute(client: &mut Client, op: &Op, last_revision: i64) -> Outcome {
    match op.clone() {
        Op::Put { key, value, options } => match client.put(key, value, Some(options)).await {
            Ok(r) => {
                let mut pb = r.0;
                let rev = clear(&mut pb.header);
                answered(format!("{pb:?}"), rev)
            }
            Err(e) => failed(e),
        },
        Op::Get { key, options } => match client.get(key, Some(options)).await {
            Ok(r) => {
                let mut pb = r.0;
                let rev = clear(&mut pb.header);
                answered(format!("{pb:?}"), rev)
            }
            Err(e) => failed(e),
        },
        Op::Delete { key, options } => match client.delete(key, Some(options)).await {
            Ok(r) => {
                let mut pb = r.0;
                let rev = clear(&mut pb.header);
                answered(format!("{pb:?}"), rev)
            }
            Err(e) => failed(e),
        },
        Op::Txn(txn) => match client.txn(txn).await {
            Ok(r) => {
                let mut pb = r.0;
                let rev = clear(&mut pb.header);
                answered(format!("{pb:?}"), rev)
            }
            Err(e) => failed(e),
        },
        Op::Compact { revision, physical } => {
            let options = physical.then(|| etcd_client::CompactionOptions::new().with_physical());
            match client.compact(revision, options).await {
                Ok(r) => {
                    let mut pb = r.0;
                    let rev = clear(&mut pb.header);
                    answered(format!("{pb:?}"), rev)
                }
                Err(e) => failed(e),
            }
        }
        Op::LeaseGrant { id, ttl } => match client.lease_grant(ttl, Some(LeaseGrantOptions::new().with_id(id))).await {
            Ok(r) => {
                let mut pb = r.0;
                let rev = clear(&mut pb.header);
                answered(format!("{pb:?}"), rev)
            }
            Err(e) => failed(e),
        },
        Op::LeaseRevoke { id } => match client.lease_revoke(id).await {
            Ok(r) => {
                let mut pb = r.0;
                let rev = clear(&mut pb.header);
                answered(format!("{pb:?}"), rev)
            }
            Err(e) => failed(e),
        },
        Op::LeaseTimeToLive { id, keys } => {
            let options = keys.then(|| LeaseTimeToLiveOptions::new().with_keys());
            match client.lease_time_to_live(id, options).await {
                Ok(r) => {
                    let mut pb = r.0;
                    let rev = clear(&mut pb.header);
                    if pb.ttl > 0 {
                        pb.ttl = 1;
                    }
                    pb.keys.sort();
                    answered(format!("{pb:?}"), rev)
                }
                Err(e) => failed(e),
            }
        }
        Op::LeaseLeases => match client.leases().await {
            Ok(r) => {
                let mut pb = r.0;
                let rev = clear(&mut pb.header);
                pb.leases.sort_by_key(|l| l.id);
                answered(format!("{pb:?}"), rev)
            }
            Err(e) => failed(e),
        },
        Op::Watch { key, options, .. } => watch(client, key, options, last_revision).await,
    }
}

/// Creates the watch on a new stream and collects responses until the server falls silent, the watch is
/// canceled, or an event of `last_revision` (the newest possible) has arrived.
async fn watch(client: &mut Client, key: Vec<u8>, options: etcd_client::WatchOptions, last_revision: i64) -> Outcome {
    let mut stream = match client.watch(key, Some(options)).await {
        Ok(stream) => stream,
        Err(e) => return failed(e),
    };
    let mut responses = Vec::new();
    let mut tail = String::new();
    let mut wait = WATCH_FIRST;
    loop {
        match tokio::time::timeout(wait, stream.message()).await {
            Ok(Ok(Some(response))) => {
                let mut pb = response.0;
                clear(&mut pb.header);
                let done = pb.canceled
                    || pb.events.iter().any(|e| e.kv.as_ref().is_some_and(|kv| kv.mod_revision >= last_revision));
                responses.push(pb);
                if done {
                    break;
                }
                wait = WATCH_IDLE;
            }
            Ok(Ok(None)) => {
                tail = "stream closed by the server".to_string();
                break;
            }
            Ok(Err(e)) => {
                tail = failed(e).text;
                break;
            }
            Err(_elapsed) => break,
        }
    }
    Outcome { text: watch_text(&responses, &tail), revision: None, ok: true, watch: responses, watch_tail: tail }
}

/// One line per watch response, then how the collection ended if not by silence.
pub fn watch_text(responses: &[PbWatchResponse], tail: &str) -> String {
    let mut text: Vec<String> = responses.iter().map(|r| format!("{r:?}")).collect();
    if !tail.is_empty() {
        text.push(tail.to_string());
    }
    text.join("\n")
}
