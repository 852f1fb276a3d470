//! HTTP requests to the apiserver, built from fuzz input: paths over the served groups and resources (and
//! raw ones), kube's query parameters with good and bad values, headers, and bodies in every content type
//! the apiserver reads (JSON, YAML, protobuf, the patch types) or does not. They go straight to
//! `ApiServer::handle`, the function hyper's connection calls, so no socket carries them; the store under
//! the apiserver is a fake-etcd member in this process, reached over loopback gRPC because the apiserver
//! speaks to its store only through the etcd wire API (ARCHITECTURE.md, apiserver, Never).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use apiserver::apis::Catalog;
use apiserver::endpoints::ApiServer;
use apiserver::registry::{FixedClock, SystemFields};
use apiserver::server::{self, ServerOptions};
use arbitrary::Arbitrary;
use bytes::Bytes;
use fake_etcd::service::{serve_listener, Member, MemberConfig};
use http_body_util::{BodyExt, Full};
use rand::SeedableRng;

/// The apiserver every input talks to, on its own runtime, started with the first input.
pub struct Apiserver {
    pub runtime: tokio::runtime::Runtime,
    pub server: Arc<ApiServer>,
}

/// How long an answer may take before the run counts it as a hang: far beyond any request the apiserver
/// serves (its own request timeout is 60 s, but nothing here waits on etcd for long).
const HANG: Duration = Duration::from_secs(20);

/// How long a response body may go quiet before it is dropped: a watch never ends on its own.
const QUIET: Duration = Duration::from_millis(5);

impl Apiserver {
    pub fn get() -> &'static Apiserver {
        static SERVER: OnceLock<Apiserver> = OnceLock::new();
        SERVER.get_or_init(Apiserver::start)
    }

    fn start() -> Apiserver {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime builds");
        let server = runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
            let endpoint = format!("http://{}", listener.local_addr().expect("a bound address"));
            let config =
                MemberConfig::single("fuzz", vec!["http://127.0.0.1:2380".into()], vec![endpoint.clone()], "fuzz");
            let member = Member::new(config, 0).expect("a fresh member opens");
            tokio::spawn(serve_listener(member, listener, std::future::pending()));
            let client = apiserver::storage::etcd3::EtcdClient::new(&[endpoint], 7).expect("a valid endpoint");
            let system = SystemFields::new(
                Box::new(rand_chacha::ChaCha8Rng::seed_from_u64(7)),
                Arc::new(FixedClock(1_700_000_000)),
            );
            let server = server::build(
                Catalog::builtin(),
                client,
                ServerOptions::default(),
                system,
                Arc::new(FixedClock(1_700_000_000)),
            );
            server::bootstrap(server.clone()).await;
            assert!(server::wait_until_ready(&server, Duration::from_secs(30)).await, "the apiserver never got ready");
            define_widgets(&server).await;
            server
        });
        Apiserver { runtime, server }
    }

    /// Sends one request and reads its answer until it ends or goes quiet; panics if no answer comes.
    pub fn send(&self, req: http::Request<Full<Bytes>>) {
        let server = self.server.clone();
        self.runtime.block_on(async move {
            let response = tokio::time::timeout(HANG, server.handle(req)).await.expect("the apiserver answers");
            let mut body = response.into_body();
            while let Ok(Some(_frame)) = tokio::time::timeout(QUIET, body.frame()).await {}
        });
    }
}

/// The CRD whose custom resources the `widgets` paths reach: a schema with a default, bounds, an enum, a
/// keyed list, a CEL rule with a transition rule, `/status` and `/scale`, so that inputs exercise pruning,
/// defaulting, validation, CEL and field ownership. Created before the first input and waited for until
/// served.
async fn define_widgets(server: &Arc<ApiServer>) {
    let crd = serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.fuzz.example.com"},
        "spec": {"group": "fuzz.example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object",
                        "x-kubernetes-validations": [{"rule": "self.replicas <= 10"}, {"rule": "self.image == oldSelf.image", "message": "immutable"}],
                        "properties": {
                            "replicas": {"type": "integer", "minimum": 0, "default": 1},
                            "image": {"type": "string", "default": "a"},
                            "type": {"type": "string", "enum": ["a", "b"]},
                            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                                "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
                            "data": {"type": "object", "additionalProperties": {"type": "string"}},
                        }},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }}}}]}});
    let post = http::Request::post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(crd.to_string())))
        .expect("a valid request");
    let created = server.clone().handle(post).await;
    assert_eq!(created.status(), 201, "the fuzz CRD is accepted");
    for _ in 0..3000 {
        let get = http::Request::get("/apis/fuzz.example.com/v1/widgets").body(Full::new(Bytes::new())).expect("valid");
        if server.clone().handle(get).await.status() == 200 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the fuzz CRD was never served");
}

const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "CONNECT", "BREW"];

/// (group/version prefix, resource, namespaced, kind): every resource of the built-in catalog, the
/// catalog's own order, so that a kind added there is fuzzed with no line here; then the custom resource
/// `define_widgets` creates.
fn resources() -> &'static [(String, String, bool, String)] {
    static RESOURCES: OnceLock<Vec<(String, String, bool, String)>> = OnceLock::new();
    RESOURCES.get_or_init(|| {
        let mut all: Vec<(String, String, bool, String)> = Catalog::builtin()
            .all()
            .map(|info| {
                let r = &info.resource;
                let prefix =
                    if r.group.is_empty() { format!("api/{}", r.version) } else { format!("apis/{}/{}", r.group, r.version) };
                (prefix, r.plural.clone(), info.namespaced, r.kind.clone())
            })
            .collect();
        all.push(("apis/fuzz.example.com/v1".into(), "widgets".into(), true, "Widget".into()));
        all
    })
}

const OTHER_PATHS: &[&str] = &[
    "/",
    "/api",
    "/apis",
    "/api/v1",
    "/apis/apps",
    "/apis/apps/v1",
    "/version",
    "/healthz",
    "/livez",
    "/readyz?verbose",
    "/metrics",
    "/openapi/v3",
    "/openapi/v3/api/v1",
    "/openapi/v2",
    "/api/v1/watch/pods",
    "/api/v1/namespaces/default/pods/a/log",
];

/// Names and namespaces: a few real ones, and some kube refuses (empty, upper case, too long).
const NAMES: &[&str] = &[
    "a",
    "b",
    "default",
    "kube-system",
    "",
    "A",
    "a.b",
    "-a",
    "a-name-that-is-longer-than-the-sixty-three-characters-a-label-may-have",
];

const SUBRESOURCES: &[&str] = &["status", "scale", "binding", "finalize", "log", "ephemeralcontainers", "x"];

const QUERY_KEYS: &[&str] = &[
    "watch",
    "resourceVersion",
    "resourceVersionMatch",
    "limit",
    "continue",
    "labelSelector",
    "fieldSelector",
    "dryRun",
    "fieldValidation",
    "fieldManager",
    "timeoutSeconds",
    "allowWatchBookmarks",
    "sendInitialEvents",
    "propagationPolicy",
    "gracePeriodSeconds",
    "orphanDependents",
    "pretty",
    "force",
];

const QUERY_VALUES: &[&str] = &[
    "",
    "0",
    "1",
    "true",
    "false",
    "-1",
    "5",
    "99999999999999999999",
    "NotOlderThan",
    "Exact",
    "All",
    "Strict",
    "Warn",
    "Ignore",
    "Foreground",
    "Background",
    "Orphan",
    "a=b",
    "a!=b,c in (d,e)",
    "metadata.name=a",
    "metadata.namespace!=default",
    "spec.nodeName=",
    "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJhIn0",
    "a=",
    "!a",
    "x in (",
];

const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "text/plain",
    "application/json; charset=utf-8",
    "application/",
    "*/*",
];

const ACCEPTS: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json;as=Table;v=v1;g=meta.k8s.io",
    "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
    "application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io",
    "application/vnd.kubernetes.protobuf;stream=watch",
    "application/json, */*",
    "*/*",
    "text/html",
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json",
    ";;;",
];

#[derive(Arbitrary, Debug, Clone)]
pub enum Path {
    Resource { resource: u8, namespace: Option<u8>, name: Option<u8>, subresource: Option<u8>, watch_prefix: bool },
    Other(u8),
    Raw(String),
}

#[derive(Arbitrary, Debug, Clone)]
pub enum Value {
    Known(u8),
    Raw(String),
}

impl Value {
    fn text(&self, known: &[&str]) -> String {
        match self {
            Value::Known(n) => known[usize::from(*n) % known.len()].to_string(),
            Value::Raw(s) => s.clone(),
        }
    }
}

/// A JSON value with a bounded shape.
#[derive(Arbitrary, Debug, Clone)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Value),
    List(Vec<Json>),
    Map(Vec<(Value, Json)>),
}

impl Json {
    fn value(&self) -> serde_json::Value {
        match self {
            Json::Null => serde_json::Value::Null,
            Json::Bool(b) => (*b).into(),
            Json::Int(i) => (*i).into(),
            Json::Float(f) => serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into),
            Json::Str(v) => v.text(FIELDS).into(),
            Json::List(items) => items.iter().map(Json::value).collect::<Vec<_>>().into(),
            Json::Map(fields) => fields.iter().map(|(k, v)| (k.text(FIELDS), v.value())).collect(),
        }
    }
}

/// Field names and strings that objects use.
const FIELDS: &[&str] = &[
    "metadata",
    "name",
    "namespace",
    "labels",
    "annotations",
    "resourceVersion",
    "uid",
    "generateName",
    "finalizers",
    "deletionTimestamp",
    "spec",
    "status",
    "containers",
    "image",
    "replicas",
    "selector",
    "matchLabels",
    "template",
    "data",
    "type",
    "ports",
    "port",
    "clusterIP",
    "nodePort",
    "holderIdentity",
    "a",
    "",
    "v1",
    "apps/v1",
    "Pod",
    "kind",
    "apiVersion",
    "op",
    "path",
    "value",
    "add",
    "replace",
    "remove",
];

#[derive(Arbitrary, Debug, Clone)]
pub enum Body {
    Empty,
    Raw(Vec<u8>),
    /// A well-formed object of the path's kind (or of another), with arbitrary additions.
    Object {
        kind: Option<u8>,
        name: Option<u8>,
        namespace: Option<u8>,
        resource_version: Option<Value>,
        extra: Vec<(Value, Json)>,
    },
    Json(Json),
    /// A JSON patch.
    Patch(Vec<(u8, Value, Json)>),
}

#[derive(Arbitrary, Debug, Clone)]
pub struct FuzzRequest {
    method: u8,
    path: Path,
    query: Vec<(Value, Value)>,
    content_type: Option<Value>,
    accept: Option<Value>,
    headers: Vec<(String, String)>,
    body: Body,
}

impl FuzzRequest {
    pub fn request(&self) -> Option<http::Request<Full<Bytes>>> {
        let (mut path, kind) = match &self.path {
            Path::Resource { resource, namespace, name, subresource, watch_prefix } => {
                let all = resources();
                let (prefix, plural, namespaced, kind) = &all[usize::from(*resource) % all.len()];
                let (prefix, plural, namespaced, kind) = (prefix.as_str(), plural.as_str(), *namespaced, kind.as_str());
                let mut p = format!("/{prefix}");
                if *watch_prefix {
                    p.push_str("/watch");
                }
                if let (true, Some(ns)) = (namespaced, namespace) {
                    p.push_str(&format!("/namespaces/{}", NAMES[usize::from(*ns) % NAMES.len()]));
                }
                p.push('/');
                p.push_str(plural);
                if let Some(n) = name {
                    p.push_str(&format!("/{}", NAMES[usize::from(*n) % NAMES.len()]));
                    if let Some(s) = subresource {
                        p.push_str(&format!("/{}", SUBRESOURCES[usize::from(*s) % SUBRESOURCES.len()]));
                    }
                }
                (p, Some(kind))
            }
            Path::Other(n) => (OTHER_PATHS[usize::from(*n) % OTHER_PATHS.len()].to_string(), None),
            Path::Raw(raw) => (format!("/{raw}"), None),
        };
        if !self.query.is_empty() {
            let mut q = form_urlencoded_pairs(&self.query);
            path.push(if path.contains('?') { '&' } else { '?' });
            path.push_str(&std::mem::take(&mut q));
        }
        let method = METHODS[usize::from(self.method) % METHODS.len()];
        let mut builder = http::Request::builder().method(method).uri(path);
        if let Some(ct) = &self.content_type {
            builder = builder.header("content-type", ct.text(CONTENT_TYPES));
        }
        if let Some(accept) = &self.accept {
            builder = builder.header("accept", accept.text(ACCEPTS));
        }
        for (k, v) in self.headers.iter().take(4) {
            builder = builder.header(k.as_str(), v.as_str());
        }
        let body = self.body.bytes(kind);
        builder.body(Full::new(Bytes::from(body))).ok()
    }
}

fn form_urlencoded_pairs(pairs: &[(Value, Value)]) -> String {
    pairs
        .iter()
        .take(8)
        .map(|(k, v)| format!("{}={}", escape(&k.text(QUERY_KEYS)), escape(&v.text(QUERY_VALUES))))
        .collect::<Vec<_>>()
        .join("&")
}

/// Percent-escapes what a URI may not carry, leaving the rest as sent.
fn escape(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~=,!()".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

impl Body {
    fn bytes(&self, path_kind: Option<&str>) -> Vec<u8> {
        match self {
            Body::Empty => Vec::new(),
            Body::Raw(raw) => raw.clone(),
            Body::Object { kind, name, namespace, resource_version, extra } => {
                let (api_version, kind) = match kind {
                    Some(k) => {
                        let all = resources();
                        let (prefix, _, _, kind) = &all[usize::from(*k) % all.len()];
                        (prefix.trim_start_matches("api/").trim_start_matches("apis/"), kind.as_str())
                    }
                    None => ("v1", path_kind.unwrap_or("Pod")),
                };
                let mut metadata = serde_json::Map::new();
                if let Some(n) = name {
                    metadata.insert("name".into(), NAMES[usize::from(*n) % NAMES.len()].into());
                }
                if let Some(ns) = namespace {
                    metadata.insert("namespace".into(), NAMES[usize::from(*ns) % NAMES.len()].into());
                }
                if let Some(rv) = resource_version {
                    metadata.insert("resourceVersion".into(), rv.text(QUERY_VALUES).into());
                }
                let mut obj = serde_json::json!({
                    "apiVersion": api_version,
                    "kind": kind,
                    "metadata": metadata,
                    "spec": {"containers": [{"name": "c", "image": "nginx"}], "replicas": 1,
                             "selector": {"matchLabels": {"a": "b"}},
                             "template": {"metadata": {"labels": {"a": "b"}},
                                          "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
                });
                for (k, v) in extra.iter().take(8) {
                    obj[k.text(FIELDS)] = v.value();
                }
                serde_json::to_vec(&obj).unwrap_or_default()
            }
            Body::Json(json) => serde_json::to_vec(&json.value()).unwrap_or_default(),
            Body::Patch(ops) => {
                let ops: Vec<serde_json::Value> = ops
                    .iter()
                    .take(8)
                    .map(|(op, path, value)| {
                        const OPS: [&str; 7] = ["add", "remove", "replace", "move", "copy", "test", "nope"];
                        let op = OPS[usize::from(*op) % OPS.len()];
                        serde_json::json!({
                            "op": op,
                            "path": path.text(&["/metadata/labels/a", "/spec/replicas", "/metadata", "", "/", "/x/-"]),
                            "from": "/metadata/name",
                            "value": value.value(),
                        })
                    })
                    .collect();
                serde_json::to_vec(&ops).unwrap_or_default()
            }
        }
    }
}
