//! Differential test of auth at the gRPC level, where etcdctl cannot go: the same requests, with tokens
//! right, wrong, made up and missing, go to a fresh real etcd 3.4.23 and a fresh fake-etcd, and every
//! answer (gRPC code and text, or the response's fields that do not name a member) must be equal.
//! `KUBESIM_UNDER_TEST=etcd` runs real etcd on both sides to check the harness.
#![cfg(not(madsim))]

mod support;

use etcd_proto::authpb;
use etcd_proto::etcdserverpb::auth_client::AuthClient;
use etcd_proto::etcdserverpb::kv_client::KvClient;
use etcd_proto::etcdserverpb::watch_client::WatchClient;
use etcd_proto::etcdserverpb::*;
use support::{Disk, Peer, Server};
use tonic::transport::Channel;
use tonic::Request;

/// A request with `token` in its metadata, as clientv3 sends it.
fn with_token<T>(msg: T, token: Option<&str>) -> Request<T> {
    let mut req = Request::new(msg);
    if let Some(token) = token {
        req.metadata_mut().insert("token", token.parse().expect("an ASCII token"));
    }
    req
}

/// One answer, as text: the code and message of an error, or what a response says (no header: ids differ).
fn outcome<T>(result: Result<tonic::Response<T>, tonic::Status>, show: impl Fn(&T) -> String) -> String {
    match result {
        Ok(resp) => format!("ok {}", show(resp.get_ref())),
        Err(status) => format!("err {:?}: {}", status.code(), status.message()),
    }
}

struct Side {
    channel: Channel,
}

impl Side {
    async fn connect(server: &Server) -> Side {
        let channel = Channel::from_shared(server.url()).unwrap().connect().await.expect("connect");
        Side { channel }
    }

    async fn auth(&self, call: &str, token: Option<&str>) -> String {
        let mut auth = AuthClient::new(self.channel.clone());
        match call {
            "user add root" => outcome(
                auth.user_add(with_token(
                    AuthUserAddRequest { name: "root".into(), password: "pw".into(), options: None },
                    token,
                ))
                .await,
                |_| String::new(),
            ),
            "user add alice" => outcome(
                auth.user_add(with_token(
                    AuthUserAddRequest { name: "alice".into(), password: "apw".into(), options: None },
                    token,
                ))
                .await,
                |_| String::new(),
            ),
            "user add nopw" => outcome(
                auth.user_add(with_token(
                    AuthUserAddRequest {
                        name: "nopw".into(),
                        password: String::new(),
                        options: Some(authpb::UserAddOptions { no_password: true }),
                    },
                    token,
                ))
                .await,
                |_| String::new(),
            ),
            "grant root" => outcome(
                auth.user_grant_role(with_token(
                    AuthUserGrantRoleRequest { user: "root".into(), role: "root".into() },
                    token,
                ))
                .await,
                |_| String::new(),
            ),
            "role add r" => {
                outcome(auth.role_add(with_token(AuthRoleAddRequest { name: "r".into() }, token)).await, |_| {
                    String::new()
                })
            }
            "grant r read a" => outcome(
                auth.role_grant_permission(with_token(
                    AuthRoleGrantPermissionRequest {
                        name: "r".into(),
                        perm: Some(authpb::Permission { perm_type: 0, key: b"a".to_vec(), range_end: vec![] }),
                    },
                    token,
                ))
                .await,
                |_| String::new(),
            ),
            "grant r read empty key" => outcome(
                auth.role_grant_permission(with_token(
                    AuthRoleGrantPermissionRequest {
                        name: "r".into(),
                        perm: Some(authpb::Permission { perm_type: 0, key: vec![], range_end: vec![] }),
                    },
                    token,
                ))
                .await,
                |_| String::new(),
            ),
            "grant alice r" => outcome(
                auth.user_grant_role(with_token(
                    AuthUserGrantRoleRequest { user: "alice".into(), role: "r".into() },
                    token,
                ))
                .await,
                |_| String::new(),
            ),
            "role get r" => {
                outcome(auth.role_get(with_token(AuthRoleGetRequest { role: "r".into() }, token)).await, |r| {
                    format!("{:?}", r.perm)
                })
            }
            "user list" => {
                outcome(auth.user_list(with_token(AuthUserListRequest {}, token)).await, |r| format!("{:?}", r.users))
            }
            "enable" => outcome(auth.auth_enable(with_token(AuthEnableRequest {}, token)).await, |_| String::new()),
            "disable" => outcome(auth.auth_disable(with_token(AuthDisableRequest {}, token)).await, |_| String::new()),
            other => panic!("unknown call {other}"),
        }
    }

    /// Logs in; the token itself differs between servers, so only its shape is shown.
    async fn login(&self, name: &str, password: &str) -> (String, Option<String>) {
        let mut auth = AuthClient::new(self.channel.clone());
        let req = AuthenticateRequest { name: name.into(), password: password.into() };
        match auth.authenticate(req).await {
            Ok(resp) => {
                let token = resp.into_inner().token;
                let (prefix, index) = token.split_once('.').expect("<prefix>.<index>");
                let shape = format!("ok token of {} letters, index {index}", prefix.len());
                (shape, Some(token))
            }
            Err(status) => (format!("err {:?}: {}", status.code(), status.message()), None),
        }
    }

    async fn get(&self, key: &str, token: Option<&str>) -> String {
        let mut kv = KvClient::new(self.channel.clone());
        let req = RangeRequest { key: key.as_bytes().to_vec(), ..RangeRequest::default() };
        outcome(kv.range(with_token(req, token)).await, |r| format!("{} kvs", r.kvs.len()))
    }

    async fn put(&self, key: &str, token: Option<&str>) -> String {
        let mut kv = KvClient::new(self.channel.clone());
        let req = PutRequest { key: key.as_bytes().to_vec(), value: b"v".to_vec(), ..PutRequest::default() };
        outcome(kv.put(with_token(req, token)).await, |_| String::new())
    }

    /// The first response of a watch on `key`.
    async fn watch(&self, key: &str, token: Option<&str>) -> String {
        let mut watch = WatchClient::new(self.channel.clone());
        let create = WatchRequest {
            request_union: Some(watch_request::RequestUnion::CreateRequest(WatchCreateRequest {
                key: key.as_bytes().to_vec(),
                ..WatchCreateRequest::default()
            })),
        };
        let requests = futures::stream::iter(vec![create]).chain(futures::stream::pending());
        let mut responses = match watch.watch(with_token(requests, token)).await {
            Ok(r) => r.into_inner(),
            Err(status) => return format!("err {:?}: {}", status.code(), status.message()),
        };
        match responses.message().await {
            Ok(Some(r)) => format!(
                "watch id {} created {} canceled {} reason {:?}",
                r.watch_id, r.created, r.canceled, r.cancel_reason
            ),
            other => format!("{other:?}"),
        }
    }
}

use futures::StreamExt;

/// Runs the script on one side and returns its lines.
async fn script(side: &Side) -> Vec<String> {
    let mut out = Vec::new();
    let mut log = |what: &str, answer: String| out.push(format!("{what}: {answer}"));
    log("made-up token, auth disabled", side.get("a", Some("abcdefghijklmnop.3")).await);
    log("login, auth disabled", side.login("root", "pw").await.0);
    for call in ["user add root", "user add root", "user add alice", "user add nopw", "role add r", "grant r read a"] {
        log(call, side.auth(call, None).await);
    }
    log("grant r read empty key", side.auth("grant r read empty key", None).await);
    log("role get r", side.auth("role get r", None).await);
    log("grant alice r", side.auth("grant alice r", None).await);
    log("enable without root role", side.auth("enable", None).await);
    log("grant root", side.auth("grant root", None).await);
    log("enable", side.auth("enable", None).await);
    log("login, wrong password", side.login("root", "nope").await.0);
    log("login, no such user", side.login("ghost", "pw").await.0);
    log("login, no-password user", side.login("nopw", "").await.0);
    let (shape, alice) = side.login("alice", "apw").await;
    log("login alice", shape);
    let alice = alice.as_deref();
    log("get a as alice", side.get("a", alice).await);
    log("get b as alice", side.get("b", alice).await);
    log("put a as alice", side.put("a", alice).await);
    log("get a without token", side.get("a", None).await);
    log("get a with a made-up token", side.get("a", Some("abcdefghijklmnop.3")).await);
    log("watch a as alice", side.watch("a", alice).await);
    log("watch b as alice", side.watch("b", alice).await);
    log("user list as alice", side.auth("user list", alice).await);
    let (shape, root) = side.login("root", "pw").await;
    log("login root", shape);
    log("user list as root", side.auth("user list", root.as_deref()).await);
    log("disable as root", side.auth("disable", root.as_deref()).await);
    log("get a with alice's token after disable", side.get("a", alice).await);
    log("get a without token after disable", side.get("a", None).await);
    out
}

#[test]
fn auth_requests_with_and_without_tokens_get_the_same_answers_as_from_real_etcd() {
    let real = Server::start(&Peer::RealEtcd, Disk::Temp);
    let other = Server::start(&Peer::under_test(), Disk::Temp);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let (real_lines, other_lines) = runtime.block_on(async {
        let (a, b) = (Side::connect(&real).await, Side::connect(&other).await);
        (script(&a).await, script(&b).await)
    });
    let mut differences = Vec::new();
    for (r, o) in real_lines.iter().zip(&other_lines) {
        println!("etcd:      {r}");
        if r != o {
            println!("fake-etcd: {o}");
            differences.push(format!("- {r}\n+ {o}"));
        }
    }
    assert!(differences.is_empty(), "{} answer(s) differ:\n{}", differences.len(), differences.join("\n"));
}
