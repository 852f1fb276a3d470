//! Tests of the webhook plugins: matching, the review exchange and its errors (sans IO), and the
//! dispatchers against a tiny hyper server on 127.0.0.1 that allows, denies, patches, answers garbage or
//! hangs.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};

use super::client;
use super::matching::{self, NamespaceLabels};
use super::review::{self, HttpAnswer, PatchError, Patched, ReviewVersion};
use super::*;
use crate::registry::admission::{Attributes, Operation};
use crate::registry::resource::Resource;
use crate::registry::user::UserInfo;

fn configmaps() -> Resource {
    Resource::core("ConfigMap", "configmaps")
}

fn attrs<'a>(resource: &'a Resource, op: Operation, ns: &'a str, name: &'a str) -> Attributes<'a> {
    Attributes { operation: op, resource, subresource: "", namespace: ns, name, dry_run: false }
}

#[test]
fn rules_match_as_upstream_matches_them() {
    let cm = configmaps();
    let pods = Resource::core("Pod", "pods");
    let ns = Resource::core("Namespace", "namespaces");
    let rule = |ops: &[&str], res: &[&str], scope: &str| json!({"operations": ops, "apiGroups": [""], "apiVersions": ["v1"], "resources": res, "scope": scope});
    let create_cm = attrs(&cm, Operation::Create, "default", "c");
    let mut status = attrs(&pods, Operation::Update, "default", "p");
    status.subresource = "status";
    let cases: Vec<(Value, Attributes<'_>, bool)> = vec![
        (rule(&["CREATE"], &["configmaps"], "*"), create_cm, true),
        (rule(&["UPDATE"], &["configmaps"], "*"), create_cm, false),
        (rule(&["*"], &["*"], "*"), create_cm, true),
        (rule(&["*"], &["*"], "*"), status, false),
        (rule(&["*"], &["*/*"], "*"), status, true),
        (rule(&["*"], &["pods/status"], "*"), status, true),
        (rule(&["*"], &["pods"], "*"), status, false),
        (rule(&["*"], &["*/status"], "*"), status, true),
        (rule(&["*"], &["configmaps"], "Cluster"), create_cm, false),
        (rule(&["*"], &["configmaps"], "Namespaced"), create_cm, true),
        (rule(&["*"], &["namespaces"], "Cluster"), attrs(&ns, Operation::Create, "", "n"), true),
        (rule(&["*"], &["namespaces"], "Namespaced"), attrs(&ns, Operation::Delete, "n", "n"), false),
        (
            json!({"operations": ["*"], "apiGroups": ["apps"], "apiVersions": ["*"], "resources": ["*"]}),
            create_cm,
            false,
        ),
    ];
    for (i, (rule, a, want)) in cases.iter().enumerate() {
        assert_eq!(matching::rule_matches(rule, a), *want, "case {i}: {rule}");
    }
}

#[test]
fn selectors_match_old_or_new_labels_and_say_where_namespace_labels_come_from() {
    let sel = json!({"matchLabels": {"a": "b"}});
    let with = json!({"metadata": {"labels": {"a": "b"}}});
    let without = json!({"metadata": {}});
    assert!(matching::object_selector_matches(&sel, &without, &with));
    assert!(matching::object_selector_matches(&sel, &with, &Value::Null));
    assert!(!matching::object_selector_matches(&sel, &without, &Value::Null));
    assert!(matching::object_selector_matches(&json!({}), &without, &Value::Null));

    let cm = configmaps();
    let ns = Resource::core("Namespace", "namespaces");
    let pv = Resource::core("PersistentVolume", "persistentvolumes");
    assert_eq!(
        matching::namespace_labels(&sel, &attrs(&cm, Operation::Create, "team", "c"), &without),
        NamespaceLabels::Lookup("team".into())
    );
    assert_eq!(
        matching::namespace_labels(&sel, &attrs(&pv, Operation::Create, "", "v"), &with),
        NamespaceLabels::Matches
    );
    assert_eq!(
        matching::namespace_labels(&json!({}), &attrs(&cm, Operation::Create, "t", "c"), &with),
        NamespaceLabels::Matches
    );
    let own = matching::namespace_labels(&sel, &attrs(&ns, Operation::Create, "", "n"), &with);
    assert_eq!(own, NamespaceLabels::Own(matching::labels_of(&with)));
    assert_eq!(
        matching::namespace_labels(&sel, &attrs(&ns, Operation::Delete, "", "n"), &with),
        NamespaceLabels::Lookup("n".into())
    );
}

#[test]
fn the_review_carries_the_request_as_upstream_writes_it() {
    let cm = configmaps();
    let user =
        UserInfo { username: "alice".into(), uid: String::new(), groups: vec!["g".into()], extra: BTreeMap::new() };
    let mut a = attrs(&cm, Operation::Create, "default", "c");
    a.dry_run = true;
    let obj = json!({"metadata": {"name": "c"}});
    let uid = review::request_uid(7, &a, "hook.example.com");
    assert_eq!(uid, review::request_uid(7, &a, "hook.example.com"));
    assert_ne!(uid, review::request_uid(8, &a, "hook.example.com"));
    assert_eq!(uid.len(), 36);
    let body = review::review(ReviewVersion::V1, &uid, &a, &user, &obj, &Value::Null);
    assert_eq!(
        body,
        json!({
            "kind": "AdmissionReview",
            "apiVersion": "admission.k8s.io/v1",
            "request": {
                "uid": uid,
                "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "requestKind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "requestResource": {"group": "", "version": "v1", "resource": "configmaps"},
                "name": "c",
                "namespace": "default",
                "operation": "CREATE",
                "userInfo": {"username": "alice", "groups": ["g"]},
                "object": {"metadata": {"name": "c"}},
                "oldObject": null,
                "dryRun": true,
                "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "dryRun": ["All"]},
            }
        })
    );
    assert_eq!(review::pick_version(&[json!("v2"), json!("v1beta1")]), Ok(ReviewVersion::V1beta1));
    assert_eq!(
        review::pick_version(&[json!("v2")]),
        Err("webhook does not accept known AdmissionReview versions (v1, v1beta1)".into())
    );
}

fn answer(status: u16, content_type: Option<&str>, body: &str) -> HttpAnswer {
    HttpAnswer { status, content_type: content_type.map(str::to_string), body: body.as_bytes().to_vec() }
}

#[test]
fn answers_decode_as_client_go_decodes_them() {
    let json_ct = Some("application/json");
    let cases: Vec<(HttpAnswer, &str)> = vec![
        (
            answer(200, json_ct, "garbage"),
            "couldn't get version/kind; json parse error: invalid character 'g' looking for beginning of value",
        ),
        (answer(200, json_ct, "{\"a\":"), "couldn't get version/kind; json parse error: unexpected end of JSON input"),
        (
            answer(200, json_ct, "{} x"),
            "couldn't get version/kind; json parse error: invalid character 'x' after top-level value",
        ),
        (answer(200, None, ""), "0-length response with status code: 200 and content type: application/json"),
        (
            answer(500, Some("text/plain"), "boom\n"),
            "an error on the server (\"boom\") has prevented the request from succeeding",
        ),
        (answer(500, json_ct, "{}"), "an error on the server (\"unknown\") has prevented the request from succeeding"),
        (answer(404, None, ""), "the server could not find the requested resource"),
        (answer(403, json_ct, r#"{"kind":"Status","status":"Failure","message":"nope"}"#), "nope"),
        (
            answer(200, json_ct, r#"{"response":{"allowed":"yes"}}"#),
            "json: cannot unmarshal string into Go struct field AdmissionResponse.response.allowed of type bool",
        ),
        (answer(200, json_ct, r#"{"response":{"patch":"!!"}}"#), "illegal base64 data at input byte 0"),
    ];
    for (a, want) in cases {
        assert_eq!(review::decode_answer(&a), Err(want.to_string()), "{a:?}");
    }
}

#[test]
fn responses_are_verified_as_upstream_verifies_them() {
    let v1 =
        |response: Value| json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response});
    let cases: Vec<(Value, bool, &str)> = vec![
        (json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}), true, "webhook response was absent"),
        (v1(json!({"uid": "other", "allowed": true})), true, "expected response.uid=\"u\", got \"other\""),
        (
            json!({"response": {"uid": "u", "allowed": true}}),
            true,
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /, Kind=",
        ),
        (
            v1(json!({"uid": "u", "allowed": true, "patch": "W10="})),
            true,
            "webhook returned response.patch but not response.patchType",
        ),
        (
            v1(json!({"uid": "u", "allowed": true, "patchType": "JSONPatch"})),
            true,
            "webhook returned response.patchType but not response.patch",
        ),
        (
            v1(json!({"uid": "u", "allowed": true, "patch": "W10="})),
            false,
            "validating webhook may not return response.patch",
        ),
        (
            v1(json!({"uid": "u", "allowed": true, "patchType": "JSONPatch"})),
            false,
            "validating webhook may not return response.patchType",
        ),
    ];
    for (body, mutating, want) in cases {
        assert_eq!(review::verify("u", ReviewVersion::V1, mutating, &body), Err(want.to_string()), "{body}");
    }
    let ok =
        review::verify("u", ReviewVersion::V1, false, &v1(json!({"uid": "u", "allowed": true, "warnings": ["w"]})));
    assert_eq!(ok.map(|v| (v.allowed, v.warnings)), Ok((true, vec!["w".to_string()])));
}

#[test]
fn denials_read_as_upstreams() {
    let d = review::denial("h.example.com", Some(&json!({"code": 403, "message": "no way", "reason": "Forbidden"})));
    assert_eq!(d.code, Some(403));
    assert_eq!(d.message.as_deref(), Some("admission webhook \"h.example.com\" denied the request: no way"));
    assert_eq!(d.reason.as_deref(), Some("Forbidden"));
    assert_eq!(d.status.as_deref(), Some("Failure"));
    let d = review::denial("h", Some(&json!({"code": 200, "reason": "because", "status": "Success"})));
    assert_eq!((d.code, d.status.as_deref()), (Some(400), Some("Failure")));
    assert_eq!(d.message.as_deref(), Some("admission webhook \"h\" denied the request: because"));
    let d = review::denial("h", None);
    assert_eq!(d.message.as_deref(), Some("admission webhook \"h\" denied the request without explanation"));
    assert_eq!(
        RegistryError::Admission(Box::new(d)).to_status().message.as_deref(),
        Some("admission webhook \"h\" denied the request without explanation")
    );
    let failed = review::call_failed("h", "failed to call webhook: x");
    assert_eq!(failed.to_string(), "Internal error occurred: failed calling webhook \"h\": failed to call webhook: x");
    assert_eq!(failed.to_status().code, Some(500));
    let dry = review::dry_run_unsupported("h");
    assert_eq!(dry.to_status().message.as_deref(), Some("admission webhook \"h\" does not support dry run"));
    assert_eq!(dry.to_status().code, Some(400));
}

fn verified(patch: &str, patch_type: &str) -> review::Verified {
    review::Verified {
        allowed: true,
        patch: patch.as_bytes().to_vec(),
        patch_type: patch_type.into(),
        result: None,
        warnings: vec![],
    }
}

#[test]
fn patches_apply_or_fail_as_upstreams() {
    let obj = json!({"metadata": {"name": "c"}});
    let add = r#"[{"op":"add","path":"/metadata/labels","value":{"x":"y"}}]"#;
    assert_eq!(
        review::apply_patch("h", &verified(add, "JSONPatch"), &obj),
        Ok(Patched::Object(json!({"metadata": {"name": "c", "labels": {"x": "y"}}}), true))
    );
    assert_eq!(review::apply_patch("h", &verified("[]", "JSONPatch"), &obj), Ok(Patched::Unchanged));
    let same = r#"[{"op":"replace","path":"/metadata/name","value":"c"}]"#;
    assert_eq!(review::apply_patch("h", &verified(same, "JSONPatch"), &obj), Ok(Patched::Object(obj.clone(), false)));
    assert_eq!(
        review::apply_patch("h", &verified(add, "JSONPatch"), &Value::Null),
        Err(PatchError::Internal(
            "admission webhook \"h\" attempted to modify the object, which is not supported for this operation".into()
        ))
    );
    assert_eq!(
        review::apply_patch("h", &verified(add, "MergePatch"), &obj),
        Err(PatchError::UnsupportedType("unsupported patch type \"MergePatch\"".into()))
    );
    assert!(matches!(review::apply_patch("h", &verified("{", "JSONPatch"), &obj), Err(PatchError::Internal(_))));
}

#[test]
fn endpoints_are_written_and_resolved_as_upstream_does() {
    let e = client::from_url("https://hooks.example.com/validate/", vec![], 10);
    assert_eq!(e.url, "https://hooks.example.com/validate?timeout=10s");
    assert_eq!(e.dial, Ok("hooks.example.com:443".into()));
    assert_eq!(e.server_name, "hooks.example.com");
    let e = client::from_url("http://127.0.0.1:8080", vec![], 30);
    assert_eq!(
        (e.url.as_str(), e.tls, e.path_and_query.as_str()),
        ("http://127.0.0.1:8080/?timeout=30s", false, "/?timeout=30s")
    );
    let svc_ref = json!({"namespace": "ns", "name": "hook", "port": 8443, "path": "/v"});
    let e = client::from_service(&svc_ref, vec![], 5, Ok("10.0.0.1:9443".into()));
    assert_eq!(e.url, "https://hook.ns.svc:8443/v?timeout=5s");
    assert_eq!(e.server_name, "hook.ns.svc");

    let service = json!({"spec": {"type": "ClusterIP", "ports": [{"name": "https", "port": 443}]}});
    let eps = json!({"subsets": [
        {"notReadyAddresses": [{"ip": "10.0.0.9"}], "ports": [{"name": "https", "port": 9443}]},
        {"addresses": [{"ip": "127.0.0.1"}, {"ip": "127.0.0.2"}], "ports": [{"name": "https", "port": 9443}]},
    ]});
    assert_eq!(client::resolve_service("hook", 443, Some(&service), Some(&eps)), Ok("127.0.0.1:9443".into()));
    assert_eq!(client::resolve_service("hook", 443, None, Some(&eps)), Err("service \"hook\" not found".into()));
    assert_eq!(
        client::resolve_service("hook", 444, Some(&service), Some(&eps)),
        Err("no service port 444 found for service \"hook\"".into())
    );
    assert_eq!(client::resolve_service("hook", 443, Some(&service), None), Err("endpoints \"hook\" not found".into()));
    assert_eq!(
        client::resolve_service("hook", 443, Some(&service), Some(&json!({}))),
        Err("no endpoints available for service \"hook\"".into())
    );
    let external = json!({"spec": {"type": "ExternalName"}});
    assert_eq!(
        client::resolve_service("hook", 443, Some(&external), None),
        Err("unsupported service type \"ExternalName\"".into())
    );
}

#[test]
fn match_conditions_decide_and_fail_as_upstreams() {
    let conds = cel::compile_conditions(&[
        json!({"name": "is-c", "expression": "object.metadata.name == 'c'"}),
        json!({"name": "bad", "expression": "object.spec.x == 1"}),
    ]);
    let vars = |name: &str| Variables::new(&json!({"metadata": {"name": name}}), &Value::Null, &json!({}));
    assert_eq!(cel::eval_conditions(&conds, &vars("d")), ConditionsResult::NoMatch("is-c".into()));
    assert_eq!(
        cel::eval_conditions(&conds, &vars("c")),
        ConditionsResult::Error("expression 'object.spec.x == 1' resulted in error: no such key: spec".into())
    );
}

/// The test webhook: each path answers one way.
async fn handle(req: http::Request<hyper::body::Incoming>) -> Result<http::Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().to_string();
    let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let uid = review.pointer("/request/uid").cloned().unwrap_or(Value::Null);
    let reply = |response: Value| {
        let body = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response});
        http::Response::new(Full::new(Bytes::from(body.to_string())))
    };
    let patch = |ops: Value| base64::engine::general_purpose::STANDARD.encode(ops.to_string());
    Ok(match path.as_str() {
        "/allow" => reply(json!({"uid": uid, "allowed": true})),
        "/deny" => {
            reply(json!({"uid": uid, "allowed": false, "status": {"code": 403, "message": "no configmaps today"}}))
        }
        "/label" => reply(json!({"uid": uid, "allowed": true, "patchType": "JSONPatch",
            "patch": patch(json!([{"op": "add", "path": "/metadata/labels", "value": {"first": "yes"}}]))})),
        "/count" => {
            // Counts its calls in an annotation: a reinvoked webhook is seen to run twice.
            let n = review.pointer("/request/object/metadata/annotations/calls").and_then(Value::as_str).unwrap_or("");
            reply(json!({"uid": uid, "allowed": true, "patchType": "JSONPatch", "patch": patch(json!([
                {"op": "add", "path": "/metadata/annotations", "value": {"calls": format!("{n}x")}},
            ]))}))
        }
        "/garbage" => http::Response::new(Full::new(Bytes::from_static(b"garbage"))),
        "/hang" => {
            tokio::time::sleep(std::time::Duration::from_secs(30)).await;
            reply(json!({"uid": uid, "allowed": true}))
        }
        _ => http::Response::new(Full::new(Bytes::new())),
    })
}

async fn start_server() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("local address");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let conn = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service_fn(handle));
                let _ = conn.await;
            });
        }
    });
    addr
}

fn config(name: &str, addr: SocketAddr, hooks: &[(&str, &str, &str)]) -> Value {
    let hooks: Vec<Value> = hooks
        .iter()
        .map(|(hook, path, policy)| {
            json!({
                "name": hook,
                "clientConfig": {"url": format!("http://{addr}{path}")},
                "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"], "scope": "*"}],
                "failurePolicy": policy,
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": 1,
                "namespaceSelector": {},
                "objectSelector": {},
                "reinvocationPolicy": if hook.starts_with("again") { "IfNeeded" } else { "Never" },
            })
        })
        .collect();
    json!({"metadata": {"name": name}, "webhooks": hooks})
}

#[tokio::test]
async fn webhooks_allow_deny_patch_and_fail_as_their_failure_policy_says() {
    let addr = start_server().await;
    let registry = Registry::new();
    let user = UserInfo::anonymous();
    let cm = configmaps();
    let req = Request {
        attrs: attrs(&cm, Operation::Create, "default", "c"),
        user: &user,
        registry: &registry,
        now_unix_s: 0,
    };
    let validating = Webhooks { mutating: false, calls: AtomicU64::new(0) };
    let obj = json!({"metadata": {"name": "c", "namespace": "default"}});
    let run = |hooks: Vec<(&'static str, &'static str, &'static str)>| Hook::all(&[config("cfg", addr, &hooks)]);

    assert_eq!(
        validating.validate_with(&req, &run(vec![("a.example.com", "/allow", "Fail")]), &obj, &Value::Null).await,
        Ok(())
    );

    let denied =
        validating.validate_with(&req, &run(vec![("d.example.com", "/deny", "Ignore")]), &obj, &Value::Null).await;
    let status = denied.expect_err("a denial").to_status();
    assert_eq!(status.code, Some(403));
    assert_eq!(
        status.message.as_deref(),
        Some("admission webhook \"d.example.com\" denied the request: no configmaps today")
    );

    let garbage =
        validating.validate_with(&req, &run(vec![("g.example.com", "/garbage", "Fail")]), &obj, &Value::Null).await;
    assert_eq!(
        garbage.expect_err("garbage fails").to_string(),
        "Internal error occurred: failed calling webhook \"g.example.com\": failed to call webhook: couldn't get version/kind; json parse error: invalid character 'g' looking for beginning of value"
    );
    let ignored =
        validating.validate_with(&req, &run(vec![("g.example.com", "/garbage", "Ignore")]), &obj, &Value::Null).await;
    assert_eq!(ignored, Ok(()));

    let hang = validating.validate_with(&req, &run(vec![("h.example.com", "/hang", "Fail")]), &obj, &Value::Null).await;
    assert_eq!(
        hang.expect_err("a timeout").to_string(),
        format!("Internal error occurred: failed calling webhook \"h.example.com\": failed to call webhook: Post \"http://{addr}/hang?timeout=1s\": context deadline exceeded")
    );

    // The first failure in order decides, whatever finished first.
    let both = run(vec![("h.example.com", "/hang", "Ignore"), ("d.example.com", "/deny", "Fail")]);
    let status = validating.validate_with(&req, &both, &obj, &Value::Null).await.expect_err("denied").to_status();
    assert_eq!(status.code, Some(403));

    let refused = Hook::all(&[json!({"metadata": {"name": "r"}, "webhooks": [{
        "name": "r.example.com", "clientConfig": {"url": "http://127.0.0.1:1/x"}, "failurePolicy": "Fail",
        "sideEffects": "None", "admissionReviewVersions": ["v1"], "timeoutSeconds": 1,
        "rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}],
    }]})]);
    assert_eq!(
        validating.validate_with(&req, &refused, &obj, &Value::Null).await.expect_err("refused").to_string(),
        "Internal error occurred: failed calling webhook \"r.example.com\": failed to call webhook: Post \"http://127.0.0.1:1/x?timeout=1s\": dial tcp 127.0.0.1:1: connect: connection refused"
    );

    let mut dry = Request {
        attrs: attrs(&cm, Operation::Create, "default", "c"),
        user: &user,
        registry: &registry,
        now_unix_s: 0,
    };
    dry.attrs.dry_run = true;
    let mut some = config("cfg", addr, &[("s.example.com", "/allow", "Ignore")]);
    some["webhooks"][0]["sideEffects"] = json!("Some");
    let status =
        validating.validate_with(&dry, &Hook::all(&[some]), &obj, &Value::Null).await.expect_err("dry run").to_status();
    assert_eq!(
        (status.code, status.message.as_deref()),
        (Some(400), Some("admission webhook \"s.example.com\" does not support dry run"))
    );
}

#[tokio::test]
async fn mutating_webhooks_patch_in_order_and_reinvoke_if_needed() {
    let addr = start_server().await;
    let registry = Registry::new();
    let user = UserInfo::anonymous();
    let cm = configmaps();
    let req = Request {
        attrs: attrs(&cm, Operation::Create, "default", "c"),
        user: &user,
        registry: &registry,
        now_unix_s: 0,
    };
    let mutating = Webhooks { mutating: true, calls: AtomicU64::new(0) };

    // `again.example.com` (IfNeeded) runs first; the later `label` webhook changes the object, so `again`
    // runs once more and counts two calls.
    let hooks = Hook::all(&[config(
        "cfg",
        addr,
        &[("again.example.com", "/count", "Fail"), ("label.example.com", "/label", "Fail")],
    )]);
    let mut obj = json!({"metadata": {"name": "c"}});
    assert_eq!(mutating.admit_with(&req, &hooks, &mut obj, &Value::Null).await, Ok(()));
    assert_eq!(obj["metadata"]["labels"], json!({"first": "yes"}));
    assert_eq!(obj["metadata"]["annotations"], json!({"calls": "xx"}));

    // Without a later change, no second round.
    let hooks = Hook::all(&[config("cfg", addr, &[("again.example.com", "/count", "Fail")])]);
    let mut obj = json!({"metadata": {"name": "c"}});
    assert_eq!(mutating.admit_with(&req, &hooks, &mut obj, &Value::Null).await, Ok(()));
    assert_eq!(obj["metadata"]["annotations"], json!({"calls": "x"}));

    let hooks = Hook::all(&[config(
        "cfg",
        addr,
        &[("g.example.com", "/garbage", "Ignore"), ("d.example.com", "/deny", "Fail")],
    )]);
    let mut obj = json!({"metadata": {"name": "c"}});
    let status = mutating.admit_with(&req, &hooks, &mut obj, &Value::Null).await.expect_err("denied").to_status();
    assert_eq!(
        status.message.as_deref(),
        Some("admission webhook \"d.example.com\" denied the request: no configmaps today")
    );
}
