//! kube-controller-manager's controllers in the binary (`--controllers='*'`), end to end with the machine's
//! kubectl 1.32 over HTTPS: a new namespace gets its `default` ServiceAccount and its `kube-root-ca.crt`
//! (holding the serving CA bundle), a ReplicaSet makes its pods, `kubectl delete --cascade=foreground`
//! and `kubectl delete namespace` (which wait by default) return once the controllers have done their part,
//! the garbage collector removes a ConfigMap whose owner went, and the manager holds its Lease. A bad
//! `--controllers` list is refused with kube-controller-manager's text.
#![cfg(not(madsim))]

#[path = "real_clients/mod.rs"]
mod real_clients;
#[path = "support/spawn.rs"]
mod spawn;

use std::process::Command;
use std::time::Duration;

use real_clients::{Deadline, Server};

/// Standard output of a kubectl command that must succeed.
fn ok(server: &Server, args: &[&str]) -> String {
    let out = server.kubectl(args, None);
    assert!(out.status.success(), "kubectl {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `args` until it succeeds with output that `done` accepts, for at most `limit`.
fn until(server: &Server, args: &[&str], limit: Duration, done: impl Fn(&str) -> bool) -> String {
    let deadline = Deadline::after(limit);
    loop {
        let out = server.kubectl(args, None);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() && done(&stdout) {
            return stdout;
        }
        deadline.check(&format!("kubectl {args:?} (last: {stdout}{})", String::from_utf8_lossy(&out.stderr)));
        std::thread::sleep(Duration::from_millis(100));
    }
}

const REPLICA_SET: &str = r#"{
  "apiVersion": "apps/v1", "kind": "ReplicaSet",
  "metadata": {"name": "web", "namespace": "demo"},
  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}
}"#;

#[test]
fn a_cluster_with_controllers_finishes_what_kubectl_waits_for() {
    let server = Server::start_tls_with(|_| vec!["--controllers=*".into()]);
    until(&server, &["get", "--raw=/readyz"], Duration::from_secs(30), |_| true);
    ok(&server, &["create", "namespace", "demo"]);

    // The service account and root CA publisher controllers.
    until(&server, &["-n", "demo", "get", "serviceaccount", "default", "-o", "name"], Duration::from_secs(30), |s| {
        s.trim() == "serviceaccount/default"
    });
    let ca = until(
        &server,
        &["-n", "demo", "get", "configmap", "kube-root-ca.crt", "-o", "jsonpath={.data.ca\\.crt}"],
        Duration::from_secs(30),
        |s| !s.is_empty(),
    );
    let chain = std::fs::read_to_string(server.dir.path().join("tls.crt")).expect("the serving chain");
    assert_eq!(ca, chain, "kube-root-ca.crt publishes the serving CA bundle");

    // The ReplicaSet controller makes the pods; a foreground delete returns once the garbage collector has
    // deleted them and removed the owner's foregroundDeletion finalizer.
    let out = server.kubectl(&["apply", "-f", "-"], Some(REPLICA_SET));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    until(&server, &["-n", "demo", "get", "pods", "-l", "app=web", "-o", "name"], Duration::from_secs(30), |s| {
        s.lines().count() == 2
    });
    ok(&server, &["-n", "demo", "delete", "replicaset", "web", "--cascade=foreground", "--timeout=60s"]);
    let left = ok(&server, &["-n", "demo", "get", "pods", "-o", "name"]);
    assert_eq!(left, "", "the foreground delete returned before the pods went");

    // The garbage collector, background: a ConfigMap whose owner is deleted goes too.
    ok(&server, &["-n", "demo", "create", "configmap", "owner"]);
    let uid = ok(&server, &["-n", "demo", "get", "configmap", "owner", "-o", "jsonpath={.metadata.uid}"]);
    let dependent = format!(
        r#"{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {{"name": "dependent", "namespace": "demo",
            "ownerReferences": [{{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "{uid}"}}]}}}}"#
    );
    let out = server.kubectl(&["apply", "-f", "-"], Some(&dependent));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    ok(&server, &["-n", "demo", "delete", "configmap", "owner"]);
    until(&server, &["-n", "demo", "get", "configmaps", "-o", "name"], Duration::from_secs(30), |s| {
        !s.contains("configmap/dependent")
    });

    // The namespace controller: `kubectl delete namespace` waits until the namespace is gone.
    ok(&server, &["delete", "namespace", "demo", "--timeout=60s"]);
    let out = server.kubectl(&["get", "namespace", "demo"], None);
    assert!(String::from_utf8_lossy(&out.stderr).contains("NotFound"), "{}", String::from_utf8_lossy(&out.stderr));

    // One manager holds the Lease kube-controller-manager's way.
    let holder = ok(
        &server,
        &["-n", "kube-system", "get", "lease", "kube-controller-manager", "-o", "jsonpath={.spec.holderIdentity}"],
    );
    assert!(holder.starts_with("kubesim-apiserver_"), "{holder}");
}

#[test]
fn an_unknown_controller_is_refused_with_upstreams_text() {
    let out = Command::new(env!("CARGO_BIN_EXE_kubesim-apiserver"))
        .args(["--secure-port", "0", "--controllers=*,nope,-namespace"])
        .output()
        .expect("the binary runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(r#"validation failed for '--controllers': ["nope" is not in the list of known controllers]"#),
        "{stderr}"
    );
}
