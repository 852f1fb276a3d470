//! The structure-aware path: request sequences derived with `arbitrary`, over a small alphabet of keys and
//! revisions so that requests meet each other (a range finds what a put wrote, a compare sees a revision
//! that exists, a watch starts at a compacted revision), with transactions nesting further transactions.

use arbitrary::Arbitrary;
use etcd_proto::etcdserverpb::compare::{CompareResult, CompareTarget, TargetUnion};
use etcd_proto::etcdserverpb::request_op::Request as OpRequest;
use etcd_proto::etcdserverpb::watch_request::RequestUnion;
use etcd_proto::etcdserverpb::*;

use crate::etcd::Call;

/// Keys most requests use: nested prefixes, the empty key, the smallest and a large byte.
const KEYS: &[&[u8]] = &[b"", b"\0", b"a", b"a/", b"a/b", b"a/c", b"ab", b"b", b"\xff", b"/registry/pods/x"];

#[derive(Arbitrary, Debug, Clone)]
pub enum Key {
    Known(u8),
    Raw(Vec<u8>),
}

impl Key {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Key::Known(n) => KEYS[usize::from(*n) % KEYS.len()].to_vec(),
            Key::Raw(bytes) => bytes.clone(),
        }
    }
}

/// Where a range ends.
#[derive(Arbitrary, Debug, Clone)]
pub enum End {
    /// One key.
    None,
    /// Every key with the key as prefix.
    Prefix,
    /// Every key from the key on (`\0`).
    FromKey,
    Key(Key),
}

impl End {
    fn bytes(&self, key: &[u8]) -> Vec<u8> {
        match self {
            End::None => Vec::new(),
            End::Prefix => prefix_end(key),
            End::FromKey => vec![0],
            End::Key(k) => k.bytes(),
        }
    }
}

/// etcd's `GetPrefixRangeEnd`: the key with its last byte below 0xff incremented, the rest cut.
fn prefix_end(key: &[u8]) -> Vec<u8> {
    let mut end = key.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

/// A lease id: one granted earlier (by index into a handful of fixed ids), or any number.
#[derive(Arbitrary, Debug, Clone)]
pub enum LeaseRef {
    Known(u8),
    Raw(i64),
}

impl LeaseRef {
    fn id(&self) -> i64 {
        match self {
            LeaseRef::Known(n) => 100 + i64::from(*n % 4),
            LeaseRef::Raw(id) => *id,
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Range {
    key: Key,
    end: End,
    limit: i8,
    revision: i8,
    sort_order: u8,
    sort_target: u8,
    serializable: bool,
    keys_only: bool,
    count_only: bool,
    min_mod: i8,
    max_mod: i8,
    min_create: i8,
    max_create: i8,
}

impl Range {
    fn request(&self) -> RangeRequest {
        let key = self.key.bytes();
        RangeRequest {
            range_end: self.end.bytes(&key),
            key,
            limit: self.limit.into(),
            revision: self.revision.into(),
            // Values past the enums' ends on purpose: the wire carries any integer.
            sort_order: i32::from(self.sort_order % 4),
            sort_target: i32::from(self.sort_target % 6),
            serializable: self.serializable,
            keys_only: self.keys_only,
            count_only: self.count_only,
            min_mod_revision: self.min_mod.into(),
            max_mod_revision: self.max_mod.into(),
            min_create_revision: self.min_create.into(),
            max_create_revision: self.max_create.into(),
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Put {
    key: Key,
    value: Vec<u8>,
    lease: Option<LeaseRef>,
    prev_kv: bool,
    ignore_value: bool,
    ignore_lease: bool,
}

impl Put {
    fn request(&self) -> PutRequest {
        PutRequest {
            key: self.key.bytes(),
            value: self.value.clone(),
            lease: self.lease.as_ref().map_or(0, LeaseRef::id),
            prev_kv: self.prev_kv,
            ignore_value: self.ignore_value,
            ignore_lease: self.ignore_lease,
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Delete {
    key: Key,
    end: End,
    prev_kv: bool,
}

impl Delete {
    fn request(&self) -> DeleteRangeRequest {
        let key = self.key.bytes();
        DeleteRangeRequest { range_end: self.end.bytes(&key), key, prev_kv: self.prev_kv }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub enum Target {
    Version(i8),
    Create(i8),
    Mod(i8),
    Value(Vec<u8>),
    Lease(LeaseRef),
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Cmp {
    result: u8,
    key: Key,
    end: End,
    target: Target,
    /// A target field that disagrees with the value's kind, which etcd must refuse or ignore.
    mismatched: bool,
}

impl Cmp {
    fn compare(&self) -> Compare {
        let key = self.key.bytes();
        let (target, union) = match &self.target {
            Target::Version(v) => (CompareTarget::Version, TargetUnion::Version((*v).into())),
            Target::Create(v) => (CompareTarget::Create, TargetUnion::CreateRevision((*v).into())),
            Target::Mod(v) => (CompareTarget::Mod, TargetUnion::ModRevision((*v).into())),
            Target::Value(v) => (CompareTarget::Value, TargetUnion::Value(v.clone())),
            Target::Lease(l) => (CompareTarget::Lease, TargetUnion::Lease(l.id())),
        };
        let target = if self.mismatched { (target as i32 + 1) % 6 } else { target as i32 };
        let result = [CompareResult::Equal, CompareResult::Greater, CompareResult::Less, CompareResult::NotEqual]
            .get(usize::from(self.result % 5))
            .map_or(7, |r| *r as i32);
        Compare { result, target, range_end: self.end.bytes(&key), key, target_union: Some(union) }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub enum ReqOp {
    Range(Range),
    Put(Put),
    Delete(Delete),
    Txn(Box<Txn>),
    /// A `RequestOp` with no request in it.
    Empty,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Txn {
    compare: Vec<Cmp>,
    success: Vec<ReqOp>,
    failure: Vec<ReqOp>,
}

impl Txn {
    fn request(&self) -> TxnRequest {
        let ops = |ops: &[ReqOp]| {
            ops.iter()
                .map(|op| RequestOp {
                    request: match op {
                        ReqOp::Range(r) => Some(OpRequest::RequestRange(r.request())),
                        ReqOp::Put(p) => Some(OpRequest::RequestPut(p.request())),
                        ReqOp::Delete(d) => Some(OpRequest::RequestDeleteRange(d.request())),
                        ReqOp::Txn(t) => Some(OpRequest::RequestTxn(t.request())),
                        ReqOp::Empty => None,
                    },
                })
                .collect()
        };
        TxnRequest {
            compare: self.compare.iter().map(Cmp::compare).collect(),
            success: ops(&self.success),
            failure: ops(&self.failure),
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub struct WatchCreate {
    key: Key,
    end: End,
    start_revision: i8,
    progress_notify: bool,
    filters: Vec<u8>,
    prev_kv: bool,
    watch_id: i8,
    fragment: bool,
}

#[derive(Arbitrary, Debug, Clone)]
pub enum Auth {
    Enable,
    Disable,
    /// Logs in as root or as "u" with the password everyone gets here, or with a wrong one.
    Login {
        root: bool,
        right: bool,
    },
    UserAdd {
        root: bool,
        no_password: bool,
    },
    UserDelete {
        root: bool,
    },
    RoleAdd {
        root: bool,
    },
    Grant {
        root: bool,
    },
    GrantPermission {
        key: Key,
        end: End,
        perm: u8,
    },
    RevokePermission {
        key: Key,
        end: End,
    },
    ChangePassword,
    Lists,
}

/// One step of a structure-aware run.
#[derive(Arbitrary, Debug, Clone)]
pub enum Op {
    Range(Range),
    Put(Put),
    Delete(Delete),
    Txn(Txn),
    Compact { revision: i8, physical: bool },
    LeaseGrant { ttl: i16, id: Option<LeaseRef> },
    LeaseRevoke(LeaseRef),
    LeaseKeepAlive(LeaseRef),
    LeaseTimeToLive { lease: LeaseRef, keys: bool },
    LeaseLeases,
    WatchCreate { stream: u8, create: WatchCreate },
    WatchCancel { stream: u8, watch_id: i8 },
    WatchProgress { stream: u8 },
    WatchClose { stream: u8 },
    Advance(u16),
    Status,
    HashKv(i8),
    Alarm { action: u8, alarm: u8 },
    Defragment,
    Auth(Auth),
}

/// A step and whether it carries the last login's token.
#[derive(Arbitrary, Debug, Clone)]
pub struct Step {
    pub op: Op,
    pub with_token: bool,
}

impl Op {
    pub fn call(&self) -> Call {
        match self {
            Op::Range(r) => Call::Range(r.request()),
            Op::Put(p) => Call::Put(p.request()),
            Op::Delete(d) => Call::DeleteRange(d.request()),
            Op::Txn(t) => Call::Txn(t.request()),
            Op::Compact { revision, physical } => {
                Call::Compact(CompactionRequest { revision: (*revision).into(), physical: *physical })
            }
            Op::LeaseGrant { ttl, id } => {
                Call::LeaseGrant(LeaseGrantRequest { ttl: (*ttl).into(), id: id.as_ref().map_or(0, LeaseRef::id) })
            }
            Op::LeaseRevoke(l) => Call::LeaseRevoke(LeaseRevokeRequest { id: l.id() }),
            Op::LeaseKeepAlive(l) => Call::LeaseKeepAlive(LeaseKeepAliveRequest { id: l.id() }),
            Op::LeaseTimeToLive { lease, keys } => {
                Call::LeaseTimeToLive(LeaseTimeToLiveRequest { id: lease.id(), keys: *keys })
            }
            Op::LeaseLeases => Call::LeaseLeases,
            Op::WatchCreate { stream, create: c } => {
                let key = c.key.bytes();
                let create = WatchCreateRequest {
                    range_end: c.end.bytes(&key),
                    key,
                    start_revision: c.start_revision.into(),
                    progress_notify: c.progress_notify,
                    filters: c.filters.iter().map(|f| i32::from(*f % 3)).collect(),
                    prev_kv: c.prev_kv,
                    watch_id: c.watch_id.into(),
                    fragment: c.fragment,
                };
                watch(*stream, RequestUnion::CreateRequest(create))
            }
            Op::WatchCancel { stream, watch_id } => {
                watch(*stream, RequestUnion::CancelRequest(WatchCancelRequest { watch_id: (*watch_id).into() }))
            }
            Op::WatchProgress { stream } => watch(*stream, RequestUnion::ProgressRequest(WatchProgressRequest {})),
            Op::WatchClose { stream } => Call::CloseWatch { stream: *stream % 4 },
            Op::Advance(ms) => Call::Advance(*ms),
            Op::Status => Call::Status,
            Op::HashKv(revision) => Call::HashKv(HashKvRequest { revision: (*revision).into() }),
            Op::Alarm { action, alarm } => {
                Call::Alarm(AlarmRequest { action: i32::from(*action % 4), member_id: 0, alarm: i32::from(*alarm % 4) })
            }
            Op::Defragment => Call::Defragment,
            Op::Auth(a) => a.call(),
        }
    }
}

fn watch(stream: u8, req: RequestUnion) -> Call {
    Call::Watch { stream: stream % 4, req: WatchRequest { request_union: Some(req) } }
}

/// The one password of this module's users.
const PASSWORD: &str = "pw";

fn user(root: bool) -> String {
    if root { "root" } else { "u" }.to_string()
}

impl Auth {
    fn call(&self) -> Call {
        match self {
            Auth::Enable => Call::AuthEnable,
            Auth::Disable => Call::AuthDisable,
            Auth::Login { root, right } => Call::Authenticate(AuthenticateRequest {
                name: user(*root),
                password: if *right { PASSWORD } else { "wrong" }.into(),
            }),
            Auth::UserAdd { root, no_password } => Call::UserAdd(AuthUserAddRequest {
                name: user(*root),
                password: PASSWORD.into(),
                options: Some(etcd_proto::authpb::UserAddOptions { no_password: *no_password }),
            }),
            Auth::UserDelete { root } => Call::UserDelete(AuthUserDeleteRequest { name: user(*root) }),
            Auth::RoleAdd { root } => Call::RoleAdd(AuthRoleAddRequest { name: user(*root) }),
            Auth::Grant { root } => {
                Call::UserGrantRole(AuthUserGrantRoleRequest { user: user(*root), role: user(*root) })
            }
            Auth::GrantPermission { key, end, perm } => {
                let key = key.bytes();
                Call::RoleGrantPermission(AuthRoleGrantPermissionRequest {
                    name: "u".into(),
                    perm: Some(etcd_proto::authpb::Permission {
                        perm_type: i32::from(*perm % 4),
                        range_end: end.bytes(&key),
                        key,
                    }),
                })
            }
            Auth::RevokePermission { key, end } => {
                let key = key.bytes();
                Call::RoleRevokePermission(AuthRoleRevokePermissionRequest {
                    role: "u".into(),
                    range_end: end.bytes(&key),
                    key,
                })
            }
            Auth::ChangePassword => {
                Call::UserChangePassword(AuthUserChangePasswordRequest { name: "u".into(), password: PASSWORD.into() })
            }
            Auth::Lists => Call::UserList,
        }
    }
}
