//! The HTTP cases as data: a case is a list of steps, each a request and what its answer must be. `{ns}`
//! in a path, body or expected text is the case's own namespace, which the runner creates first.
//!
//! Files by topic: `bad_input` (what kube-apiserver refuses, with its code, reason and message),
//! `crds` (CustomResourceDefinitions and their custom resources), `crud` (writes and reads of objects), `reads` (lists, paging, selectors, resourceVersions, tables),
//! `discovery` (discovery, version, health, OpenAPI, metrics), `watch` (watch streams read to their end),
//! `protobuf` (Kubernetes protobuf in and out: kubectl's bodies, documents, Status errors, watch frames),
//! `resources` (the other resources' defaults, allocations, conversions and refusals).
//! A protobuf answer is checked as the JSON it decodes to.

mod admission;
mod apply;
mod auth;
mod autoscaling;
mod bad_input;
mod certificates;
mod core_more;
mod crds;
mod cronjobs;
mod crud;
mod csi;
mod discovery;
mod evictions;
mod flowcontrol;
mod networking;
mod protobuf;
mod rbac;
mod reads;
mod resources;
mod storage;
mod watch;

use serde_json::Value;

use crate::http_server::{request, Answer, TestServer};

/// A request and what must come back, or (method `COMPACT`) a compaction of etcd at its current revision.
pub struct Step {
    pub method: &'static str,
    pub path: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
    pub code: u16,
    pub reason: Option<&'static str>,
    pub message: Option<String>,
    /// JSON pointers into the answer and the values they must have.
    pub fields: Vec<(&'static str, Value)>,
    /// Headers the answer must carry, with their values.
    pub answer_headers: Vec<(&'static str, String)>,
    /// Text the body must contain.
    pub contains: Vec<String>,
    /// Send again until the answer has the expected code and fields (what a controller does
    /// asynchronously, such as establishing a CRD); asserted as usual after 10 s of tries.
    pub eventually: bool,
}

/// A step for `method` on `path` with no body, expecting 200.
pub fn step(method: &'static str, path: &str) -> Step {
    Step {
        method,
        path: path.to_string(),
        headers: Vec::new(),
        body: Vec::new(),
        code: 200,
        reason: None,
        message: None,
        fields: Vec::new(),
        answer_headers: Vec::new(),
        contains: Vec::new(),
        eventually: false,
    }
}

pub fn get(path: &str) -> Step {
    step("GET", path)
}

pub fn post(path: &str, body: &str) -> Step {
    step("POST", path).body(body).code(201)
}

pub fn put(path: &str, body: &str) -> Step {
    step("PUT", path).body(body)
}

pub fn patch(path: &str, content_type: &str, body: &str) -> Step {
    step("PATCH", path).header("Content-Type", content_type).body(body)
}

pub fn delete(path: &str) -> Step {
    step("DELETE", path)
}

/// Compacts etcd at its current revision: every older revision is gone.
pub fn compact() -> Step {
    step("COMPACT", "")
}

impl Step {
    pub fn body(mut self, body: &str) -> Step {
        self.body = body.as_bytes().to_vec();
        self
    }

    pub fn raw_body(mut self, body: Vec<u8>) -> Step {
        self.body = body;
        self
    }

    pub fn header(mut self, name: &'static str, value: &str) -> Step {
        self.headers.push((name, value.to_string()));
        self
    }

    pub fn code(mut self, code: u16) -> Step {
        self.code = code;
        self
    }

    /// A `Status` answer: its code, reason and exact message.
    pub fn status(mut self, code: u16, reason: &'static str, message: &str) -> Step {
        self.code = code;
        self.reason = Some(reason);
        self.message = Some(message.to_string());
        self
    }

    pub fn field(mut self, pointer: &'static str, value: Value) -> Step {
        self.fields.push((pointer, value));
        self
    }

    pub fn answer_header(mut self, name: &'static str, value: &str) -> Step {
        self.answer_headers.push((name, value.to_string()));
        self
    }

    pub fn contains(mut self, text: &str) -> Step {
        self.contains.push(text.to_string());
        self
    }

    /// Repeats the step until its code and fields match (see [`Step::eventually`]).
    pub fn eventually(mut self) -> Step {
        self.eventually = true;
        self
    }

    /// Whether `answer` has the step's code and fields.
    fn matches(&self, answer: &Answer, ns: &str) -> bool {
        let json = answer.json();
        answer.status == self.code
            && self.fields.iter().all(|(pointer, want)| {
                let want = match want {
                    Value::String(s) => Value::String(s.replace("{ns}", ns)),
                    other => other.clone(),
                };
                json.pointer(pointer).unwrap_or(&Value::Null) == &want
            })
    }

    /// Sends the step and checks its answer; panics with what differed.
    async fn run(&self, server: &TestServer, ns: &str) -> Answer {
        if self.method == "COMPACT" {
            server.compact().await;
            return crate::http_server::Answer {
                status: 200,
                headers: http::HeaderMap::new(),
                body: bytes::Bytes::new(),
            };
        }
        let fill = |s: &str| s.replace("{ns}", ns);
        let body = fill(&String::from_utf8_lossy(&self.body));
        let body = if std::str::from_utf8(&self.body).is_ok() { body.into_bytes() } else { self.body.clone() };
        let headers: Vec<(&str, &str)> = self.headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let mut answer = server.send(request(self.method, &fill(&self.path), &headers, body.clone())).await;
        for _ in 0..1000 {
            if !self.eventually || self.matches(&answer, ns) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            answer = server.send(request(self.method, &fill(&self.path), &headers, body.clone())).await;
        }
        let what = format!("{} {}", self.method, fill(&self.path));
        let json = answer.json();
        assert_eq!(answer.status, self.code, "{what}: status; body: {}", answer.text());
        if let Some(reason) = self.reason {
            assert_eq!(json["reason"], reason, "{what}: reason; body: {}", answer.text());
        }
        if let Some(message) = &self.message {
            assert_eq!(json["message"].as_str(), Some(fill(message).as_str()), "{what}: message");
        }
        for (pointer, want) in &self.fields {
            let want = match want {
                Value::String(s) => Value::String(fill(s)),
                other => other.clone(),
            };
            // An expected null means absent (or null).
            let got = json.pointer(pointer).unwrap_or(&Value::Null);
            assert_eq!(got, &want, "{what}: {pointer}; body: {}", answer.text());
        }
        for (name, want) in &self.answer_headers {
            assert_eq!(answer.header(name), Some(fill(want).as_str()), "{what}: header {name}");
        }
        for text in &self.contains {
            assert!(answer.text().contains(&fill(text)), "{what}: body lacks {text:?}: {}", answer.text());
        }
        answer
    }
}

/// A named sequence of steps.
pub struct Case {
    pub name: &'static str,
    pub steps: Vec<Step>,
    /// Run only on a server with (or without) the watch cache, where the answers differ.
    pub only: Option<crate::http_server::Cache>,
}

impl Case {
    /// The case on a server with the watch cache only, or without it only.
    pub fn only(mut self, cache: crate::http_server::Cache) -> Case {
        self.only = Some(cache);
        self
    }

    pub async fn run(self, server: &TestServer, ns: &str) {
        let create_ns = post("/api/v1/namespaces", &format!(r#"{{"metadata":{{"name":"{ns}"}}}}"#));
        create_ns.run(server, ns).await;
        for step in &self.steps {
            step.run(server, ns).await;
        }
    }
}

pub fn case(name: &'static str, steps: Vec<Step>) -> Case {
    Case { name, steps, only: None }
}

/// Every case.
pub fn all() -> Vec<Case> {
    let mut cases = Vec::new();
    cases.extend(admission::cases());
    cases.extend(apply::cases());
    cases.extend(evictions::cases());
    cases.extend(auth::cases());
    cases.extend(bad_input::cases());
    cases.extend(certificates::cases());
    cases.extend(crds::cases());
    cases.extend(crud::cases());
    cases.extend(reads::cases());
    cases.extend(discovery::cases());
    cases.extend(watch::cases());
    cases.extend(protobuf::cases());
    cases.extend(resources::cases());
    cases.extend(rbac::cases());
    cases.extend(networking::cases());
    cases.extend(core_more::cases());
    cases.extend(storage::cases());
    cases.extend(autoscaling::cases());
    cases.extend(csi::cases());
    cases.extend(cronjobs::cases());
    cases.extend(flowcontrol::cases());
    cases
}

/// A ConfigMap body named `name` with `data`.
pub fn configmap(name: &str, data: &str) -> String {
    format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}},"data":{data}}}"#)
}
