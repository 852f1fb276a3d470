//! Admission webhooks end to end: a webhook server in this test (HTTPS, a certificate from a test CA that
//! the configurations' `caBundle` trusts) answering AdmissionReviews by path — `/deny`, `/patch`, `/hang`
//! — and the machine's kubectl writing through the binary: a validating webhook's denial and a mutating
//! webhook's patch are what kubectl shows, and a webhook that never answers gives upstream's timeout
//! error under `failurePolicy: Fail` and admits the object under `Ignore`.
#![cfg(not(madsim))]

#[path = "real_clients/mod.rs"]
mod real_clients;
#[path = "support/spawn.rs"]
mod spawn;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use real_clients::{Deadline, Server};
use serde_json::{json, Value};

/// The webhook's answer to one review, by the path it was called at.
fn answer(path: &str, review: &Value) -> Option<Value> {
    let uid = review["request"]["uid"].clone();
    let response = match path {
        "/deny" => {
            json!({"uid": uid, "allowed": false, "status": {"message": "configmaps named deny-* are refused", "code": 403}})
        }
        "/patch" => {
            let patch = json!([{"op": "add", "path": "/metadata/labels", "value": {"patched-by": "webhook"}}]);
            let patch = base64::engine::general_purpose::STANDARD.encode(patch.to_string());
            json!({"uid": uid, "allowed": true, "patchType": "JSONPatch", "patch": patch})
        }
        _ => return None,
    };
    Some(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}))
}

/// Serves the webhook over TLS on a free port until the test ends; returns the port and the CA's PEM.
fn start_webhook(runtime: &tokio::runtime::Runtime) -> (u16, String) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().expect("a CA key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "webhook CA");
    let ca_cert = ca.self_signed(&ca_key).expect("the CA certificate");
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().expect("a serving key");
    let serving = CertificateParams::new(vec!["127.0.0.1".to_string()]).expect("serving parameters");
    let cert = serving.signed_by(&key, &issuer).expect("the serving certificate");

    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = tokio_rustls::rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .expect("a serving config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).expect("a webhook port");
    let port = listener.local_addr().expect("an address").port();
    runtime.spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(stream).await else { return };
                let service = service_fn(|req: hyper::Request<hyper::body::Incoming>| async move {
                    let path = req.uri().path().to_string();
                    let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                    let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    match answer(&path, &review) {
                        Some(answer) => {
                            Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from(answer.to_string()))))
                        }
                        None => {
                            // `/hang`: never answers within any webhook timeout.
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                            Ok(hyper::Response::new(Full::new(Bytes::new())))
                        }
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tls), service).await;
            });
        }
    });
    (port, ca_cert.pem())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A webhook configuration of `kind` calling `path` for configmaps whose `hook` label is `selector`.
fn configuration(kind: &str, name: &str, port: u16, path: &str, ca: &str, policy: &str, timeout_s: u32) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca);
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": [{
            "name": format!("{name}.kubesim.test"),
            "clientConfig": {"url": format!("https://127.0.0.1:{port}{path}"), "caBundle": ca},
            "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
            "objectSelector": {"matchLabels": {"hook": name}},
            "failurePolicy": policy,
            "timeoutSeconds": timeout_s,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }],
    })
    .to_string()
}

#[test]
fn webhooks_deny_patch_and_time_out_as_kube_apiserver_does() {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("a runtime");
    let (port, ca) = start_webhook(&runtime);
    let server = Server::start();
    let configs = [
        ("ValidatingWebhookConfiguration", "deny", "/deny", "Fail", 5),
        ("MutatingWebhookConfiguration", "patch", "/patch", "Fail", 5),
        ("ValidatingWebhookConfiguration", "hang", "/hang", "Fail", 1),
        ("ValidatingWebhookConfiguration", "hang-ignored", "/hang", "Ignore", 1),
    ];
    for (kind, name, path, policy, timeout_s) in configs {
        let done = server
            .kubectl(&["create", "-f", "-"], Some(&configuration(kind, name, port, path, &ca, policy, timeout_s)));
        assert!(done.status.success(), "creating {name}: {}", text(&done.stderr));
    }
    let create = |name: &str, hook: &str| {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"hook": hook}}});
        server.kubectl(&["create", "-f", "-"], Some(&cm.to_string()))
    };
    let deadline = Deadline::after(Duration::from_secs(10));

    let denied = create("deny-me", "deny");
    assert_eq!(
        text(&denied.stderr),
        // The webhook gave a code but no reason, which upstream passes on as it is: kubectl names no reason.
        "Error from server: error when creating \"STDIN\": admission webhook \"deny.kubesim.test\" denied the \
         request: configmaps named deny-* are refused\n"
    );

    let patched = create("patch-me", "patch");
    assert_eq!(text(&patched.stdout), "configmap/patch-me created\n", "{}", text(&patched.stderr));
    let labels = server.kubectl(&["get", "cm", "patch-me", "-o", "jsonpath={.metadata.labels}"], None);
    assert_eq!(text(&labels.stdout), r#"{"patched-by":"webhook"}"#, "the patch replaced the labels");

    let hung = create("hang-me", "hang");
    assert_eq!(
        text(&hung.stderr),
        format!(
            "Error from server (InternalError): error when creating \"STDIN\": Internal error occurred: failed calling \
             webhook \"hang.kubesim.test\": failed to call webhook: Post \"https://127.0.0.1:{port}/hang?timeout=1s\": \
             context deadline exceeded\n"
        )
    );
    let ignored = create("ignore-me", "hang-ignored");
    assert_eq!(text(&ignored.stdout), "configmap/ignore-me created\n", "{}", text(&ignored.stderr));
    deadline.check("the webhook calls");
}
