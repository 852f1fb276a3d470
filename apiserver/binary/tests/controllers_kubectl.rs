//! kube-controller-manager's controllers in the binary (`--controllers='*'`), end to end with the machine's
//! kubectl 1.32 over HTTPS: a new namespace gets its `default` ServiceAccount and its `kube-root-ca.crt`
//! (holding the serving CA bundle), a ReplicaSet makes its pods, `kubectl delete --cascade=foreground`
//! and `kubectl delete namespace` (which wait by default) return once the controllers have done their part,
//! the garbage collector removes a ConfigMap whose owner went, and the manager holds its Lease. With the
//! scheduler and simulated nodes, `kubectl rollout status` (Deployment, StatefulSet, DaemonSet) and
//! `kubectl wait --for=condition=complete job/x` finish, endpoints list the pods, and a pod that fits no
//! node carries kube-scheduler's diagnosis. A bad `--controllers` list is refused with
//! kube-controller-manager's text.
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

const STATEFUL_SET: &str = r#"{
  "apiVersion": "apps/v1", "kind": "StatefulSet",
  "metadata": {"name": "db", "namespace": "default"},
  "spec": {"replicas": 2, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
    "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "db", "image": "postgres"}]}}}
}"#;

const DAEMON_SET: &str = r#"{
  "apiVersion": "apps/v1", "kind": "DaemonSet",
  "metadata": {"name": "agent", "namespace": "default"},
  "spec": {"selector": {"matchLabels": {"app": "agent"}},
    "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "agent", "image": "busybox"}]}}}
}"#;

const TOO_BIG: &str = r#"{
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "big", "namespace": "default"},
  "spec": {"containers": [{"name": "big", "image": "nginx", "resources": {"requests": {"cpu": "64"}}}]}
}"#;

/// With a scheduler and simulated nodes (the binary's defaults), what kubectl creates runs: rollouts finish,
/// a Job completes, endpoints list the pods, and a pod that fits no node says so in upstream's words.
#[test]
fn a_cluster_with_nodes_runs_what_kubectl_creates() {
    let server = Server::start_tls_with(|_| {
        ["--controllers=*", "--scheduler=true", "--nodes=2"].into_iter().map(Into::into).collect()
    });
    until(&server, &["get", "nodes", "-o", "name"], Duration::from_secs(30), |s| s.lines().count() == 2);
    ok(&server, &["wait", "--for=condition=Ready", "node/node-1", "node/node-2", "--timeout=60s"]);

    // Deployment: `kubectl rollout status` returns once three pods run on the nodes and are available.
    ok(&server, &["create", "deployment", "web", "--image=nginx", "--replicas=3"]);
    let status = ok(&server, &["rollout", "status", "deployment/web", "--timeout=60s"]);
    assert!(status.contains("successfully rolled out"), "{status}");
    let nodes = ok(&server, &["get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].spec.nodeName}"]);
    assert_eq!(nodes.split_whitespace().count(), 3, "every pod is bound: {nodes}");
    let phases = ok(&server, &["get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].status.phase}"]);
    assert_eq!(phases, "Running Running Running");

    // Endpoints and EndpointSlices list the ready pods behind a Service.
    ok(&server, &["expose", "deployment", "web", "--port=80"]);
    until(
        &server,
        &["get", "endpoints", "web", "-o", "jsonpath={.subsets[*].addresses[*].ip}"],
        Duration::from_secs(30),
        |s| s.split_whitespace().count() == 3,
    );
    until(
        &server,
        &[
            "get",
            "endpointslices",
            "-l",
            "kubernetes.io/service-name=web",
            "-o",
            "jsonpath={.items[*].endpoints[*].addresses[0]}",
        ],
        Duration::from_secs(30),
        |s| s.split_whitespace().count() == 3,
    );

    // Job: `kubectl wait --for=condition=complete` returns once its pod has succeeded on a node.
    ok(&server, &["create", "job", "pi", "--image=perl", "--", "perl", "-e", "1"]);
    ok(&server, &["wait", "--for=condition=complete", "job/pi", "--timeout=60s"]);

    // StatefulSet and DaemonSet rollouts.
    let out = server.kubectl(&["apply", "-f", "-"], Some(STATEFUL_SET));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    ok(&server, &["rollout", "status", "statefulset/db", "--timeout=60s"]);
    let out = server.kubectl(&["apply", "-f", "-"], Some(DAEMON_SET));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let status = ok(&server, &["rollout", "status", "daemonset/agent", "--timeout=60s"]);
    assert!(status.contains("successfully rolled out"), "{status}");

    // A pod that fits no node stays Pending with kube-scheduler's diagnosis.
    let out = server.kubectl(&["apply", "-f", "-"], Some(TOO_BIG));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let message = until(
        &server,
        &["get", "pod", "big", "-o", "jsonpath={.status.conditions[?(@.type==\"PodScheduled\")].message}"],
        Duration::from_secs(30),
        |s| !s.is_empty(),
    );
    assert_eq!(
        message,
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption \
         victims found for incoming pod.."
    );

    // The scheduler holds its own Lease.
    let holder =
        ok(&server, &["-n", "kube-system", "get", "lease", "kube-scheduler", "-o", "jsonpath={.spec.holderIdentity}"]);
    assert!(holder.starts_with("kubesim-apiserver_"), "{holder}");
}
