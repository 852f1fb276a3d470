//! Admission webhooks: a scenario's `[[webhook]]`s, each a node of its own (named after it, at
//! `10.0.3.i:8443`, so that faults address it like any node) serving `admission.k8s.io/v1` AdmissionReviews
//! over HTTP with the one answer the scenario gives it: allow, deny (with a message), patch (a JSON patch),
//! or hang (never answer, so the apiserver's call times out).
//!
//! The sans-IO core is [`WebhookSpec::configuration`] (the `ValidatingWebhookConfiguration` or
//! `MutatingWebhookConfiguration` the harness creates at the cluster's start) and [`WebhookSpec::reply`]
//! (what the webhook answers a review, and the line saying what it saw); [`build_webhook`] is the thin
//! async shell: an HTTP/1 server on the simulated network.
//!
//! The configuration's URL is `https://`, which is all the API accepts; under the simulation kube-apiserver
//! speaks plain HTTP to it (there are no certificates), as `apiserver::admission::webhook` documents.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use madsim::runtime::{Handle, NodeHandle};
use madsim::task::NodeId;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::trace::Trace;

/// The port every webhook serves on.
pub const WEBHOOK_PORT: u16 = 8443;

/// The kind of webhook, and so of its configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WebhookKind {
    Validating,
    Mutating,
}

/// What a webhook answers every review it is sent (for the objects its `names` select).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Answer {
    Allow,
    Deny,
    Patch,
    /// Never answers: the apiserver's call runs into the webhook's `timeoutSeconds`.
    Hang,
}

impl Answer {
    fn word(self) -> &'static str {
        match self {
            Answer::Allow => "allow",
            Answer::Deny => "deny",
            Answer::Patch => "patch",
            Answer::Hang => "hang",
        }
    }
}

/// `failurePolicy`: what the apiserver does when it cannot call the webhook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub enum FailurePolicy {
    Fail,
    Ignore,
}

/// One webhook of a scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookSpec {
    /// Its node's name, its configuration's name, and the first label of the webhook's own name.
    pub name: String,
    pub kind: WebhookKind,
    /// The rule's `apiGroups`, `resources` and `operations`.
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub operations: Vec<String>,
    pub answer: Answer,
    /// A denial's message.
    pub message: String,
    /// A patch answer's JSON patch (an array of operations).
    pub patch: Value,
    /// The object names the answer is for (`forbidden-*`: a trailing `*` matches any rest); every other
    /// object is allowed. Empty: every object.
    pub names: Vec<String>,
    pub failure_policy: FailurePolicy,
    pub timeout_s: u64,
}

/// What a webhook makes of one review: the body it answers (`None`: it hangs), and what it saw, as the
/// trace and the report show it (`CREATE configmaps default/forbidden-1 -> deny`).
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub body: Option<Value>,
    pub seen: String,
}

impl WebhookSpec {
    /// The webhook's own name in its configuration: upstream wants a domain of three labels or more.
    pub fn qualified_name(&self) -> String {
        format!("{}.webhooks.kubesim", self.name)
    }

    /// The configuration the harness creates for this webhook, calling it at `url`.
    pub fn configuration(&self, url: &str) -> Value {
        let kind = match self.kind {
            WebhookKind::Validating => "ValidatingWebhookConfiguration",
            WebhookKind::Mutating => "MutatingWebhookConfiguration",
        };
        let policy = match self.failure_policy {
            FailurePolicy::Fail => "Fail",
            FailurePolicy::Ignore => "Ignore",
        };
        json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": { "name": self.name },
            "webhooks": [{
                "name": self.qualified_name(),
                "clientConfig": { "url": url },
                "rules": [{
                    "apiGroups": self.api_groups,
                    "apiVersions": ["*"],
                    "operations": self.operations,
                    "resources": self.resources,
                    "scope": "*",
                }],
                "failurePolicy": policy,
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": self.timeout_s,
            }],
        })
    }

    /// The collection the configuration is created in.
    pub fn configuration_path(&self) -> &'static str {
        match self.kind {
            WebhookKind::Validating => "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
            WebhookKind::Mutating => "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
        }
    }

    /// Whether the answer is for an object called `name`.
    fn selects(&self, name: &str) -> bool {
        self.names.is_empty()
            || self.names.iter().any(|p| match p.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == p,
            })
    }

    /// The answer to `review` (an `AdmissionReview` as the apiserver sent it), echoing its uid.
    pub fn reply(&self, review: &Value) -> Reply {
        let text = |p: &str| review.pointer(p).and_then(Value::as_str).unwrap_or("");
        let uid = text("/request/uid");
        let operation = text("/request/operation");
        let (group, plural) = (text("/request/resource/group"), text("/request/resource/resource"));
        let resource = if group.is_empty() { plural.to_string() } else { format!("{plural}.{group}") };
        let name = match text("/request/name") {
            "" => text("/request/object/metadata/name"),
            n => n,
        };
        let object = match text("/request/namespace") {
            "" => name.to_string(),
            ns => format!("{ns}/{name}"),
        };
        let answer = if self.selects(name) { self.answer } else { Answer::Allow };
        let seen = format!("{operation} {resource} {object} -> {}", answer.word());
        let mut response = json!({ "uid": uid, "allowed": answer != Answer::Deny });
        match answer {
            Answer::Hang => return Reply { body: None, seen },
            Answer::Allow => {}
            Answer::Deny => response["status"] = json!({ "message": self.message }),
            Answer::Patch => {
                let bytes = serde_json::to_vec(&self.patch).expect("JSON values serialize");
                response["patchType"] = json!("JSONPatch");
                response["patch"] = json!(base64(&bytes));
            }
        }
        let body = json!({ "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response });
        Reply { body: Some(body), seen }
    }
}

/// Standard base64 with padding (RFC 4648), for a patch answer's `patch`.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The address of webhook `i` (1-based).
pub fn webhook_addr(i: usize) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 3, i as u8)), WEBHOOK_PORT)
}

/// A running webhook node.
pub struct WebhookNode {
    pub spec: WebhookSpec,
    pub id: NodeId,
    pub addr: SocketAddr,
    pub node: NodeHandle,
    /// What it saw, one line per review, in order, across its restarts.
    pub seen: Arc<Mutex<Vec<String>>>,
}

impl WebhookNode {
    /// The URL its configuration calls.
    pub fn url(&self) -> String {
        format!("https://{}/", self.addr)
    }
}

/// Builds webhook `i` (1-based) of `spec`: a node that serves reviews on [`WEBHOOK_PORT`] until it is
/// killed (a restart serves again).
pub fn build_webhook(handle: &Handle, spec: &WebhookSpec, i: usize, trace: &Trace) -> WebhookNode {
    let addr = webhook_addr(i);
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let (init_spec, init_seen, init_trace) = (Arc::new(spec.clone()), seen.clone(), trace.clone());
    let node = handle
        .create_node()
        .name(spec.name.clone())
        .ip(addr.ip())
        .init(move || {
            let (spec, seen, trace) = (init_spec.clone(), init_seen.clone(), init_trace.clone());
            async move {
                let listener = match tokio::net::TcpListener::bind(("0.0.0.0", WEBHOOK_PORT)).await {
                    Ok(listener) => listener,
                    Err(e) => {
                        trace.event(&spec.name, format_args!("bind failed: {e}"));
                        return;
                    }
                };
                while let Ok((stream, _)) = listener.accept().await {
                    let (spec, seen, trace) = (spec.clone(), seen.clone(), trace.clone());
                    tokio::spawn(serve_connection(stream, spec, seen, trace));
                }
            }
        })
        .build();
    WebhookNode { spec: spec.clone(), id: node.id(), addr, node, seen }
}

/// Serves one connection: each POST is a review, answered by [`WebhookSpec::reply`].
async fn serve_connection(
    stream: tokio::net::TcpStream,
    spec: Arc<WebhookSpec>,
    seen: Arc<Mutex<Vec<String>>>,
    trace: Trace,
) {
    let service = service_fn(move |req: http::Request<hyper::body::Incoming>| {
        let (spec, seen, trace) = (spec.clone(), seen.clone(), trace.clone());
        async move {
            let body = req.into_body().collect().await.map(|c| c.to_bytes()).unwrap_or_default();
            let Ok(review) = serde_json::from_slice::<Value>(&body) else {
                trace.event(&spec.name, "a request that is not JSON -> 400");
                return Ok::<_, Infallible>(respond(400, &json!({ "error": "not an AdmissionReview" })));
            };
            let reply = spec.reply(&review);
            trace.event(&spec.name, &reply.seen);
            seen.lock().expect("the log lock is never poisoned").push(reply.seen);
            match reply.body {
                Some(body) => Ok(respond(200, &body)),
                None => std::future::pending().await,
            }
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.header_read_timeout(None).keep_alive(true);
    let stream = apiserver::endpoints::quiet_flush::QuietFlush::new(stream);
    let _ = builder.serve_connection(TokioIo::new(stream), service).await;
}

fn respond(code: u16, body: &Value) -> http::Response<Full<Bytes>> {
    http::Response::builder()
        .status(code)
        .header("Content-Type", "application/json")
        .body(Full::new(Bytes::from(serde_json::to_vec(body).expect("JSON values serialize"))))
        .expect("the webhook builds valid answers")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(answer: Answer) -> WebhookSpec {
        WebhookSpec {
            name: "guard".into(),
            kind: WebhookKind::Validating,
            api_groups: vec![String::new()],
            resources: vec!["configmaps".into()],
            operations: vec!["CREATE".into(), "UPDATE".into()],
            answer,
            message: "no forbidden names".into(),
            patch: json!([{ "op": "add", "path": "/data/seen", "value": "yes" }]),
            names: vec!["forbidden-*".into()],
            failure_policy: FailurePolicy::Ignore,
            timeout_s: 2,
        }
    }

    fn review(name: &str) -> Value {
        json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u-1",
                "operation": "CREATE",
                "resource": { "group": "", "version": "v1", "resource": "configmaps" },
                "namespace": "default",
                "name": name,
            },
        })
    }

    #[test]
    fn each_answer_echoes_the_uid_and_says_what_it_saw() {
        let deny = spec(Answer::Deny).reply(&review("forbidden-1"));
        assert_eq!(deny.seen, "CREATE configmaps default/forbidden-1 -> deny");
        let body = deny.body.expect("a denial is an answer");
        assert_eq!(
            body["response"],
            json!({ "uid": "u-1", "allowed": false, "status": { "message": "no forbidden names" } })
        );
        assert_eq!(body["apiVersion"], "admission.k8s.io/v1");

        let other = spec(Answer::Deny).reply(&review("fine"));
        assert_eq!(other.seen, "CREATE configmaps default/fine -> allow");
        assert_eq!(other.body.expect("answered")["response"], json!({ "uid": "u-1", "allowed": true }));

        let patch = spec(Answer::Patch).reply(&review("forbidden-2")).body.expect("answered");
        assert_eq!(patch["response"]["patchType"], "JSONPatch");
        assert_eq!(patch["response"]["patch"], base64(br#"[{"op":"add","path":"/data/seen","value":"yes"}]"#).as_str());

        let hang = spec(Answer::Hang).reply(&review("forbidden-3"));
        assert_eq!((hang.body, hang.seen.as_str()), (None, "CREATE configmaps default/forbidden-3 -> hang"));
    }

    #[test]
    fn base64_pads_as_the_standard_alphabet_does() {
        for (bytes, want) in [(&b""[..], ""), (b"f", "Zg=="), (b"fo", "Zm8="), (b"foo", "Zm9v"), (b"foob", "Zm9vYg==")]
        {
            assert_eq!(base64(bytes), want);
        }
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
    }

    #[test]
    fn the_configuration_carries_the_rule_policy_and_timeout() {
        let c = spec(Answer::Deny).configuration("https://10.0.3.1:8443/");
        assert_eq!(c["kind"], "ValidatingWebhookConfiguration");
        let hook = &c["webhooks"][0];
        assert_eq!(hook["name"], "guard.webhooks.kubesim");
        assert_eq!(hook["clientConfig"]["url"], "https://10.0.3.1:8443/");
        assert_eq!(hook["rules"][0]["resources"], json!(["configmaps"]));
        assert_eq!(hook["rules"][0]["operations"], json!(["CREATE", "UPDATE"]));
        assert_eq!((&hook["failurePolicy"], &hook["timeoutSeconds"]), (&json!("Ignore"), &json!(2)));
        assert_eq!((&hook["sideEffects"], &hook["admissionReviewVersions"]), (&json!("None"), &json!(["v1"])));
    }
}
