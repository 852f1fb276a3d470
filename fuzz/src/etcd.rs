//! One fake-etcd member served in-process: the gRPC services called with decoded requests, as tonic calls
//! them after reading a request off the wire, and watch streams driven through the member's own watch
//! calls (what the Watch service does with each message of a stream). No socket, no task of the member's
//! running: a lone member drives Raft inline with each proposal.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use etcd_proto::etcdserverpb::auth_server::Auth;
use etcd_proto::etcdserverpb::cluster_server::Cluster;
use etcd_proto::etcdserverpb::kv_server::Kv;
use etcd_proto::etcdserverpb::lease_server::Lease;
use etcd_proto::etcdserverpb::maintenance_server::Maintenance;
use etcd_proto::etcdserverpb::*;
use fake_etcd::service::{
    AuthService, ClusterService, KvService, LeaseService, MaintenanceService, Member, MemberConfig,
};
use fake_etcd::watch::StreamId;
use fake_etcd::LeaseId;
use futures::{FutureExt, Stream, StreamExt};
use tonic::{Request, Status};

/// One decoded request for the member, as its client sent it.
#[derive(Clone, Debug)]
pub enum Call {
    Range(RangeRequest),
    Put(PutRequest),
    DeleteRange(DeleteRangeRequest),
    Txn(TxnRequest),
    Compact(CompactionRequest),
    LeaseGrant(LeaseGrantRequest),
    LeaseRevoke(LeaseRevokeRequest),
    /// One message of a keep-alive stream.
    LeaseKeepAlive(LeaseKeepAliveRequest),
    LeaseTimeToLive(LeaseTimeToLiveRequest),
    LeaseLeases,
    /// One message on watch stream `stream` (opened by its first message).
    Watch {
        stream: u8,
        req: WatchRequest,
    },
    /// The client of watch stream `stream` goes away.
    CloseWatch {
        stream: u8,
    },
    Alarm(AlarmRequest),
    Status,
    Defragment,
    Hash,
    HashKv(HashKvRequest),
    MoveLeader(MoveLeaderRequest),
    MemberList,
    AuthEnable,
    AuthDisable,
    Authenticate(AuthenticateRequest),
    UserAdd(AuthUserAddRequest),
    UserGet(AuthUserGetRequest),
    UserList,
    UserDelete(AuthUserDeleteRequest),
    UserChangePassword(AuthUserChangePasswordRequest),
    UserGrantRole(AuthUserGrantRoleRequest),
    UserRevokeRole(AuthUserRevokeRoleRequest),
    RoleAdd(AuthRoleAddRequest),
    RoleGet(AuthRoleGetRequest),
    RoleList,
    RoleDelete(AuthRoleDeleteRequest),
    RoleGrantPermission(AuthRoleGrantPermissionRequest),
    RoleRevokePermission(AuthRoleRevokePermissionRequest),
    /// Time passes (milliseconds), then the member's periodic work runs: lease expiry, progress notices.
    Advance(u16),
}

/// A watch stream's client end: its id and its responses.
struct WatchClient {
    id: StreamId,
    responses: Pin<Box<dyn Stream<Item = Result<WatchResponse, Status>> + Send>>,
}

/// The member and its services.
pub struct Etcd {
    member: Arc<Member>,
    kv: KvService,
    lease: LeaseService,
    maintenance: MaintenanceService,
    cluster: ClusterService,
    auth: AuthService,
    watches: BTreeMap<u8, WatchClient>,
    /// The last token a successful Authenticate returned; calls marked so carry it.
    pub token: Option<String>,
}

/// Most responses read off a watch stream after one call: enough to see every answer to one request,
/// bounded so that a stream that keeps producing cannot stall the run.
const MAX_WATCH_READS: usize = 4096;

impl Etcd {
    /// A fresh single-member cluster with etcd's defaults, except the cheapest bcrypt cost (logins are many
    /// in a fuzz run and their cost proves nothing).
    pub fn start() -> Etcd {
        let mut config = MemberConfig::single(
            "fuzz",
            vec!["http://127.0.0.1:2380".into()],
            vec!["http://127.0.0.1:2379".into()],
            "fuzz",
        );
        config.bcrypt_cost = 4;
        Etcd::with_config(config)
    }

    pub fn with_config(config: MemberConfig) -> Etcd {
        let member = Member::new(config, 0).expect("a fresh member opens");
        Etcd {
            kv: KvService { member: member.clone() },
            lease: LeaseService { member: member.clone() },
            maintenance: MaintenanceService { member: member.clone() },
            cluster: ClusterService { member: member.clone() },
            auth: AuthService { member: member.clone() },
            member,
            watches: BTreeMap::new(),
            token: None,
        }
    }

    pub fn member(&self) -> &Arc<Member> {
        &self.member
    }

    /// Serves one call; `with_token` sends the last login's token with it. The answer is dropped: the
    /// oracle is that there is one.
    pub async fn call(&mut self, call: Call, with_token: bool) {
        let token = if with_token { self.token.clone() } else { None };
        // A macro, not a closure: each call site needs its own message type.
        macro_rules! req {
            ($msg:expr) => {
                request($msg, token.as_deref())
            };
        }
        match call {
            Call::Range(r) => drop(self.kv.range(req!(r)).await),
            Call::Put(r) => drop(self.kv.put(req!(r)).await),
            Call::DeleteRange(r) => drop(self.kv.delete_range(req!(r)).await),
            Call::Txn(r) => drop(self.kv.txn(req!(r)).await),
            Call::Compact(r) => drop(self.kv.compact(req!(r)).await),
            Call::LeaseGrant(r) => drop(self.lease.lease_grant(req!(r)).await),
            Call::LeaseRevoke(r) => drop(self.lease.lease_revoke(req!(r)).await),
            Call::LeaseKeepAlive(r) => drop(self.member.renew_lease(LeaseId(r.id)).await),
            Call::LeaseTimeToLive(r) => drop(self.lease.lease_time_to_live(req!(r)).await),
            Call::LeaseLeases => drop(self.lease.lease_leases(req!(LeaseLeasesRequest {})).await),
            Call::Watch { stream, req } => self.watch(stream, req, token.as_deref()),
            Call::CloseWatch { stream } => {
                if let Some(w) = self.watches.remove(&stream) {
                    self.member.close_watch_stream(w.id);
                }
            }
            Call::Alarm(r) => drop(self.maintenance.alarm(req!(r)).await),
            Call::Status => drop(self.maintenance.status(req!(StatusRequest {})).await),
            Call::Defragment => drop(self.maintenance.defragment(req!(DefragmentRequest {})).await),
            Call::Hash => drop(self.maintenance.hash(req!(HashRequest {})).await),
            Call::HashKv(r) => drop(self.maintenance.hash_kv(req!(r)).await),
            Call::MoveLeader(r) => drop(self.maintenance.move_leader(req!(r)).await),
            Call::MemberList => drop(self.cluster.member_list(req!(MemberListRequest::default())).await),
            Call::AuthEnable => drop(self.auth.auth_enable(req!(AuthEnableRequest {})).await),
            Call::AuthDisable => drop(self.auth.auth_disable(req!(AuthDisableRequest {})).await),
            Call::Authenticate(r) => {
                if let Ok(resp) = self.auth.authenticate(req!(r)).await {
                    self.token = Some(resp.into_inner().token);
                }
            }
            Call::UserAdd(r) => drop(self.auth.user_add(req!(r)).await),
            Call::UserGet(r) => drop(self.auth.user_get(req!(r)).await),
            Call::UserList => drop(self.auth.user_list(req!(AuthUserListRequest {})).await),
            Call::UserDelete(r) => drop(self.auth.user_delete(req!(r)).await),
            Call::UserChangePassword(r) => drop(self.auth.user_change_password(req!(r)).await),
            Call::UserGrantRole(r) => drop(self.auth.user_grant_role(req!(r)).await),
            Call::UserRevokeRole(r) => drop(self.auth.user_revoke_role(req!(r)).await),
            Call::RoleAdd(r) => drop(self.auth.role_add(req!(r)).await),
            Call::RoleGet(r) => drop(self.auth.role_get(req!(r)).await),
            Call::RoleList => drop(self.auth.role_list(req!(AuthRoleListRequest {})).await),
            Call::RoleDelete(r) => drop(self.auth.role_delete(req!(r)).await),
            Call::RoleGrantPermission(r) => drop(self.auth.role_grant_permission(req!(r)).await),
            Call::RoleRevokePermission(r) => drop(self.auth.role_revoke_permission(req!(r)).await),
            Call::Advance(ms) => {
                tokio::time::sleep(Duration::from_millis(ms.into())).await;
                self.member.revoke_expired_leases().await;
                self.member.progress_tick();
            }
        }
        self.drain_watches();
    }

    /// One message on a watch stream, opening the stream first if it is new.
    fn watch(&mut self, stream: u8, req: WatchRequest, token: Option<&str>) {
        let member = &self.member;
        let client = self.watches.entry(stream).or_insert_with(|| {
            let (id, responses, _drained) = member.open_watch_stream();
            WatchClient { id, responses: Box::pin(responses) }
        });
        member.watch_request(client.id, req, token);
    }

    /// Reads what every watch stream has ready, as a fast client would, and tells the member when a stream
    /// was drained (which resumes stalled watchers).
    fn drain_watches(&mut self) {
        for client in self.watches.values_mut() {
            let mut read = 0;
            while read < MAX_WATCH_READS {
                match client.responses.next().now_or_never() {
                    Some(Some(_)) => read += 1,
                    _ => break,
                }
            }
            if read > 0 {
                self.member.watch_drained(client.id);
            }
        }
    }

    /// Closes every watch stream, as clients going away at the end of a run.
    pub fn close(mut self) {
        for (_, w) in std::mem::take(&mut self.watches) {
            self.member.close_watch_stream(w.id);
        }
    }
}

/// A tonic request carrying `token` in etcd's metadata key, as clients send it.
fn request<T>(msg: T, token: Option<&str>) -> Request<T> {
    let mut req = Request::new(msg);
    if let Some(value) = token.and_then(|t| t.parse().ok()) {
        req.metadata_mut().insert("token", value);
    }
    req
}
