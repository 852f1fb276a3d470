//! Who may do what, end to end with the machine's kubectl 1.32 against the binary serving HTTPS with
//! `--authorization-mode=RBAC`: the admin kubeconfig, a ServiceAccount's token bound to a Role, static
//! tokens from `--token-auth-file`, client certificates from `--client-ca-file`, impersonation, and
//! `kubectl auth can-i` agreeing with what the server then does for every verb tried.
#![cfg(not(madsim))]

#[path = "real_clients/mod.rs"]
mod real_clients;
#[path = "support/spawn.rs"]
mod spawn;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use real_clients::{Deadline, Server};

/// The static tokens the server trusts (`--token-auth-file`).
const TOKENS: &str = "bob-token,bob,1001\ndave-token,dave,1002,\"ops,dev\"\n";

/// kubectl against the server, as one identity.
struct Kubectl<'a> {
    server: &'a Server,
    /// Flags naming the identity (`--token=...`, `--client-certificate=...`); none: the admin kubeconfig.
    identity: Vec<String>,
}

impl Kubectl<'_> {
    fn run(&self, args: &[&str]) -> Output {
        let chain = self.server.dir.path().join("tls.crt");
        let mut command = Command::new("kubectl");
        if self.identity.is_empty() {
            command.arg(format!("--kubeconfig={}", self.server.kubeconfig.display()));
        } else {
            // No kubeconfig: the cluster from flags, so that only this identity's credentials are sent.
            let empty = self.server.dir.path().join("empty-kubeconfig");
            std::fs::write(&empty, "apiVersion: v1\nkind: Config\n").expect("writing an empty kubeconfig");
            command.arg(format!("--kubeconfig={}", empty.display()));
            command.arg(format!("--server={}", self.server.url));
            command.arg(format!("--certificate-authority={}", chain.display()));
            command.args(&self.identity);
        }
        // Each identity has a home of its own, so that discovery caches never cross identities.
        let home = {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            self.identity.hash(&mut hasher);
            self.server.dir.path().join(format!("home-{:x}", hasher.finish()))
        };
        command.env("HOME", home).args(args).output().expect("kubectl runs")
    }

    /// Standard output of a command that must succeed.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "kubectl {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Standard error of a command that must fail.
    fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(!out.status.success(), "kubectl {args:?} succeeded: {}", String::from_utf8_lossy(&out.stdout));
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
}

/// A client CA and, signed by it, a certificate for `carol` in organization `ops`; a second,
/// self-signed certificate nobody trusts. Returns the CA's path and the two (certificate, key) pairs.
fn client_certificates(dir: &Path) -> (PathBuf, (PathBuf, PathBuf), (PathBuf, PathBuf)) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().expect("a CA key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "client CA");
    let ca_cert = ca.self_signed(&ca_key).expect("the CA certificate");
    let issuer = Issuer::new(ca, ca_key);
    let person = |name: &str, orgs: &[&str]| {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("client parameters");
        params.distinguished_name.push(DnType::CommonName, name);
        for org in orgs {
            params.distinguished_name.push(DnType::OrganizationName, *org);
        }
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        (params, KeyPair::generate().expect("a client key"))
    };
    let write = |name: &str, pem: String, key: String| {
        let (cert, key_path) = (dir.join(format!("{name}.crt")), dir.join(format!("{name}.key")));
        std::fs::write(&cert, pem).expect("writing a certificate");
        std::fs::write(&key_path, key).expect("writing a key");
        (cert, key_path)
    };
    let (params, key) = person("carol", &["ops"]);
    let carol = params.signed_by(&key, &issuer).expect("carol's certificate");
    let carol = write("carol", carol.pem(), key.serialize_pem());
    let (params, key) = person("mallory", &["system:masters"]);
    let mallory = params.self_signed(&key).expect("a self-signed certificate");
    let mallory = write("mallory", mallory.pem(), key.serialize_pem());
    let ca_path = dir.join("client-ca.crt");
    std::fs::write(&ca_path, ca_cert.pem()).expect("writing the client CA");
    (ca_path, carol, mallory)
}

fn start() -> (Server, (PathBuf, PathBuf), (PathBuf, PathBuf)) {
    let mut certs = None;
    let server = Server::start_tls_with(|dir| {
        let tokens = dir.join("tokens.csv");
        std::fs::write(&tokens, TOKENS).expect("writing the token file");
        let (ca, carol, mallory) = client_certificates(dir);
        certs = Some((carol, mallory));
        vec![
            "--authorization-mode=RBAC".into(),
            OsString::from(format!("--token-auth-file={}", tokens.display())),
            OsString::from(format!("--client-ca-file={}", ca.display())),
        ]
    });
    let admin = Kubectl { server: &server, identity: Vec::new() };
    let deadline = Deadline::after(Duration::from_secs(30));
    while !admin.run(&["get", "--raw=/readyz"]).status.success() {
        deadline.check("the server to become ready over HTTPS");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (carol, mallory) = certs.expect("the certificates were made");
    (server, carol, mallory)
}

#[test]
fn identities_authenticate_as_their_authenticator_says() {
    let (server, carol, mallory) = start();
    let admin = Kubectl { server: &server, identity: Vec::new() };
    assert_eq!(
        admin.ok(&["auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}"]),
        r#"kubesim-admin ["system:masters","system:authenticated"]"#
    );
    let bob = Kubectl { server: &server, identity: vec!["--token=bob-token".into()] };
    assert_eq!(bob.ok(&["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"]), "bob");
    let dave = Kubectl { server: &server, identity: vec!["--token=dave-token".into()] };
    assert_eq!(
        dave.ok(&["auth", "whoami", "-o", "jsonpath={.status.userInfo.uid} {.status.userInfo.groups}"]),
        r#"1002 ["ops","dev","system:authenticated"]"#
    );
    let cert = |(c, k): &(PathBuf, PathBuf)| {
        vec![format!("--client-certificate={}", c.display()), format!("--client-key={}", k.display())]
    };
    let carol = Kubectl { server: &server, identity: cert(&carol) };
    assert_eq!(
        carol.ok(&["auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}"]),
        r#"carol ["ops","system:authenticated"]"#
    );
    // A stranger's certificate and an unknown token are upstream's bare 401, which kubectl meets first in
    // discovery (its cache is empty) and words as client-go does for a 401 there.
    let refused = "error: You must be logged in to the server (the server has asked for the client to provide \
                   credentials)\n";
    let mallory = Kubectl { server: &server, identity: cert(&mallory) };
    assert!(mallory.fails(&["get", "pods"]).ends_with(refused));
    let nobody = Kubectl { server: &server, identity: vec!["--token=nope".into()] };
    assert!(nobody.fails(&["get", "pods"]).ends_with(refused));
    // A raw request needs no discovery: the request itself is the 401, and its Status says so.
    let raw = nobody.fails(&["get", "--raw=/api/v1/namespaces/default/pods"]);
    assert_eq!(raw, "error: You must be logged in to the server (Unauthorized)\n");
    // Authenticated but not authorized: upstream's 403 text.
    assert_eq!(
        bob.fails(&["get", "configmaps", "-n", "kube-system"]),
        "Error from server (Forbidden): configmaps is forbidden: User \"bob\" cannot list resource \"configmaps\" in \
         API group \"\" in the namespace \"kube-system\"\n"
    );
    // Impersonation: the admin may; bob may not.
    let asked = admin.run(&["auth", "can-i", "list", "pods", "--as=bob"]);
    assert_eq!((String::from_utf8_lossy(&asked.stdout).as_ref(), asked.status.code()), ("no\n", Some(1)));
    assert_eq!(
        bob.fails(&["get", "pods", "--as=carol"]),
        "Error from server (Forbidden): users \"carol\" is forbidden: User \"bob\" cannot impersonate resource \
         \"users\" in API group \"\" at the cluster scope\n"
    );
}

#[test]
fn a_service_account_does_exactly_what_its_role_allows_and_can_i_agrees() {
    let (server, _, _) = start();
    let admin = Kubectl { server: &server, identity: Vec::new() };
    admin.ok(&["create", "namespace", "team"]);
    admin.ok(&["create", "serviceaccount", "robot", "-n", "team"]);
    admin.ok(&["create", "role", "cm-editor", "-n", "team", "--verb=get,list,create,update", "--resource=configmaps"]);
    admin.ok(&["create", "rolebinding", "robot-cm", "-n", "team", "--role=cm-editor", "--serviceaccount=team:robot"]);
    admin.ok(&["create", "configmap", "seed", "-n", "team", "--from-literal=a=1"]);
    admin.ok(&["create", "secret", "generic", "hidden", "-n", "team", "--from-literal=a=1"]);
    let token = admin.ok(&["create", "token", "robot", "-n", "team"]);
    let robot = Kubectl { server: &server, identity: vec![format!("--token={}", token.trim())] };
    assert_eq!(
        robot.ok(&["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"]),
        "system:serviceaccount:team:robot"
    );

    // Each verb on each resource: what can-i says, then what the server does.
    let attempts: &[(&str, &str, &[&str])] = &[
        ("get", "configmaps", &["get", "configmap", "seed"]),
        ("list", "configmaps", &["get", "configmaps"]),
        ("create", "configmaps", &["create", "configmap", "made", "--from-literal=b=2"]),
        ("update", "configmaps", &["replace", "-f", "replacement.yaml"]),
        ("patch", "configmaps", &["patch", "configmap", "seed", "--type=merge", "-p", r#"{"data":{"c":"3"}}"#]),
        ("delete", "configmaps", &["delete", "configmap", "seed"]),
        ("get", "secrets", &["get", "secret", "hidden"]),
        ("list", "secrets", &["get", "secrets"]),
        ("create", "secrets", &["create", "secret", "generic", "made", "--from-literal=b=2"]),
        ("delete", "secrets", &["delete", "secret", "hidden"]),
    ];
    let replacement = server.dir.path().join("replacement.yaml");
    std::fs::write(&replacement, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: seed\ndata:\n  a: \"9\"\n")
        .expect("writing the replacement");
    for (verb, resource, command) in attempts {
        let command: Vec<&str> =
            command.iter().map(|a| if *a == "replacement.yaml" { replacement.to_str().unwrap() } else { a }).collect();
        let can_i = robot.run(&["auth", "can-i", verb, resource, "-n", "team"]);
        let said = String::from_utf8_lossy(&can_i.stdout).trim().to_string();
        let mut args: Vec<&str> = command.to_vec();
        args.extend(["-n", "team"]);
        let done = robot.run(&args);
        let forbidden = String::from_utf8_lossy(&done.stderr).contains(" is forbidden: User ");
        assert_eq!(
            (said.as_str(), done.status.success()),
            (if forbidden { "no" } else { "yes" }, !forbidden),
            "{verb} {resource}: can-i said {said:?}, the server answered {:?}",
            String::from_utf8_lossy(&done.stderr)
        );
    }
    let listed = robot.ok(&["auth", "can-i", "--list", "-n", "team"]);
    let row = listed.lines().find(|l| l.starts_with("configmaps ")).unwrap_or_default();
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        ["configmaps", "[]", "[]", "[get", "list", "create", "update]"]
    );
    // The admin sees the same through impersonation.
    let as_robot = admin.ok(&["auth", "can-i", "--list", "-n", "team", "--as=system:serviceaccount:team:robot"]);
    assert_eq!(as_robot, listed);
}

#[test]
fn a_user_grants_only_what_they_hold_or_may_bind() {
    let (server, _, _) = start();
    let admin = Kubectl { server: &server, identity: Vec::new() };
    admin.ok(&["create", "namespace", "team"]);
    // An edit-like role: pods and configmaps, and writing roles and role bindings.
    admin.ok(&[
        "create",
        "role",
        "editor",
        "-n",
        "team",
        "--verb=get,list,watch,create,update,patch,delete",
        "--resource=pods,configmaps,roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io",
    ]);
    admin.ok(&["create", "rolebinding", "bob-edit", "-n", "team", "--role=editor", "--user=bob"]);
    let bob = Kubectl { server: &server, identity: vec!["--token=bob-token".into()] };

    // A role beyond bob's rights is RBAC storage's 403, with the rule he lacks.
    assert_eq!(
        bob.fails(&["create", "role", "secret-reader", "-n", "team", "--verb=get", "--resource=secrets"]),
        "Error from server (Forbidden): roles.rbac.authorization.k8s.io \"secret-reader\" is forbidden: user \"bob\" \
         (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n\
         {APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}\n"
    );
    // Within them, it is written.
    bob.ok(&["create", "role", "pod-reader", "-n", "team", "--verb=get,list", "--resource=pods"]);

    // Binding a cluster role bob does not hold is refused too, unless he may `bind` it.
    admin.ok(&["create", "clusterrole", "secret-reader", "--verb=get", "--resource=secrets"]);
    let refused =
        bob.fails(&["create", "rolebinding", "eve-secrets", "-n", "team", "--clusterrole=secret-reader", "--user=eve"]);
    assert!(
        refused.contains(
            "rolebindings.rbac.authorization.k8s.io \"eve-secrets\" is forbidden: user \"bob\" \
             (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n\
             {APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}\n"
        ),
        "{refused}"
    );
    admin.ok(&[
        "create",
        "role",
        "binder",
        "-n",
        "team",
        "--verb=bind",
        "--resource=clusterroles.rbac.authorization.k8s.io",
        "--resource-name=secret-reader",
    ]);
    admin.ok(&["create", "rolebinding", "bob-binds", "-n", "team", "--role=binder", "--user=bob"]);
    bob.ok(&["create", "rolebinding", "eve-secrets", "-n", "team", "--clusterrole=secret-reader", "--user=eve"]);
    // Bob's own rules he may bind without `bind`.
    bob.ok(&["create", "rolebinding", "eve-pods", "-n", "team", "--role=pod-reader", "--user=eve"]);
}
