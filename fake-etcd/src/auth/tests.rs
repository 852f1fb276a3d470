//! The auth store against etcd 3.4.23's answers (measured with etcdctl; the transcripts in
//! `tests/etcdctl/auth_*.txt` check the same through the wire).

use etcd_proto::etcdserverpb::{compare, request_op, Compare, DeleteRangeRequest, PutRequest, RequestOp, TxnRequest};
use rand_chacha::rand_core::SeedableRng;

use super::perms::Access;
use super::*;
use crate::error::EtcdError;
use crate::types::{AuthRevision, Millis};

fn nobody() -> AuthInfo {
    AuthInfo::default()
}

fn as_user(store: &AuthStore, user: &str) -> AuthInfo {
    AuthInfo { user: user.to_string(), revision: store.revision() }
}

fn add_user(store: &mut AuthStore, name: &str, by: &AuthInfo) -> Result<AuthResponse, EtcdError> {
    store.apply(&AuthRequest::UserAdd { name: name.into(), hashed_password: Some(format!("hash-of-{name}")) }, by)
}

fn perm(perm_type: PermType, key: &str, range_end: &str) -> Permission {
    Permission { perm_type, key: key.as_bytes().to_vec(), range_end: range_end.as_bytes().to_vec() }
}

fn grant(store: &mut AuthStore, role: &str, p: Permission, by: &AuthInfo) {
    store.apply(&AuthRequest::RoleGrantPermission { name: role.into(), perm: p }, by).unwrap();
}

/// root (with the root role), alice with role r1, auth enabled; r1 reads `a`, reads and writes prefix `k/`,
/// writes `[c, z)` and everything from `x` on, as the measured etcdctl transcript sets them up.
fn enabled_store() -> AuthStore {
    let mut s = AuthStore::new();
    let by = nobody();
    add_user(&mut s, "root", &by).unwrap();
    add_user(&mut s, "alice", &by).unwrap();
    s.apply(&AuthRequest::RoleAdd { name: "r1".into() }, &by).unwrap();
    grant(&mut s, "r1", perm(PermType::Read, "a", ""), &by);
    grant(&mut s, "r1", perm(PermType::ReadWrite, "k/", "k0"), &by);
    grant(&mut s, "r1", perm(PermType::Write, "c", "z"), &by);
    grant(&mut s, "r1", perm(PermType::ReadWrite, "x", "\0"), &by);
    s.apply(&AuthRequest::UserGrantRole { user: "alice".into(), role: "r1".into() }, &by).unwrap();
    assert_eq!(s.apply(&AuthRequest::Enable, &by), Err(EtcdError::RootRoleNotExist));
    s.apply(&AuthRequest::UserGrantRole { user: "root".into(), role: "root".into() }, &by).unwrap();
    s.apply(&AuthRequest::Enable, &by).unwrap();
    s
}

#[test]
fn enabling_needs_a_root_user_with_the_root_role_and_does_not_move_the_revision() {
    let mut s = AuthStore::new();
    assert_eq!(s.revision(), AuthRevision(1));
    assert_eq!(s.apply(&AuthRequest::Enable, &nobody()), Err(EtcdError::RootUserNotExist));
    let s = enabled_store();
    assert!(s.is_enabled());
    // 2 users, 1 role, 4 grants, 2 role grants: 9 changes after the initial 1.
    assert_eq!(s.revision(), AuthRevision(10));
}

#[test]
fn bad_input_gets_etcds_errors() {
    let mut s = AuthStore::new();
    let by = nobody();
    add_user(&mut s, "root", &by).unwrap();
    assert_eq!(add_user(&mut s, "root", &by), Err(EtcdError::UserAlreadyExist));
    assert_eq!(add_user(&mut s, "", &by), Err(EtcdError::UserEmpty));
    assert_eq!(s.apply(&AuthRequest::RoleAdd { name: "".into() }, &by), Err(EtcdError::RoleEmpty));
    s.apply(&AuthRequest::RoleAdd { name: "r".into() }, &by).unwrap();
    assert_eq!(s.apply(&AuthRequest::RoleAdd { name: "r".into() }, &by), Err(EtcdError::RoleAlreadyExist));
    let to_nobody = AuthRequest::UserGrantRole { user: "nobody".into(), role: "r".into() };
    assert_eq!(s.apply(&to_nobody, &by), Err(EtcdError::UserNotFound));
    let no_role = AuthRequest::UserGrantRole { user: "root".into(), role: "nosuch".into() };
    assert_eq!(s.apply(&no_role, &by), Err(EtcdError::RoleNotFound));
    let revoke = AuthRequest::UserRevokeRole { name: "root".into(), role: "r".into() };
    assert_eq!(s.apply(&revoke, &by), Err(EtcdError::RoleNotGranted));
    let revoke_perm = AuthRequest::RoleRevokePermission { role: "r".into(), key: b"a".to_vec(), range_end: vec![] };
    assert_eq!(s.apply(&revoke_perm, &by), Err(EtcdError::PermissionNotGranted));
    let grant_missing = AuthRequest::RoleGrantPermission { name: "nosuch".into(), perm: perm(PermType::Read, "a", "") };
    assert_eq!(s.apply(&grant_missing, &by), Err(EtcdError::RoleNotFound));
    assert_eq!(s.apply(&AuthRequest::RoleGet { role: "nosuch".into() }, &by), Err(EtcdError::RoleNotFound));
    assert_eq!(s.apply(&AuthRequest::UserGet { name: "nobody".into() }, &by), Err(EtcdError::UserNotFound));
    // Errors never move the revision.
    assert_eq!(s.revision(), AuthRevision(3));
}

#[test]
fn root_is_protected_only_while_auth_is_enabled() {
    let mut s = enabled_store();
    let root = as_user(&s, "root");
    let del_root = AuthRequest::UserDelete { name: "root".into() };
    assert_eq!(s.apply(&del_root, &root), Err(EtcdError::InvalidAuthMgmt));
    assert_eq!(s.apply(&AuthRequest::RoleDelete { role: "root".into() }, &root), Err(EtcdError::InvalidAuthMgmt));
    let revoke = AuthRequest::UserRevokeRole { name: "root".into(), role: "root".into() };
    assert_eq!(s.apply(&revoke, &root), Err(EtcdError::InvalidAuthMgmt));
    s.apply(&AuthRequest::Disable, &root).unwrap();
    assert!(!s.is_enabled());
    s.apply(&del_root, &nobody()).unwrap();
    assert_eq!(s.apply(&AuthRequest::Enable, &nobody()), Err(EtcdError::RootUserNotExist));
}

#[test]
fn admin_requests_need_the_root_role_while_enabled() {
    let mut s = enabled_store();
    let alice = as_user(&s, "alice");
    assert_eq!(s.apply(&AuthRequest::UserList, &nobody()), Err(EtcdError::UserEmpty));
    assert_eq!(s.apply(&AuthRequest::UserList, &alice), Err(EtcdError::PermissionDenied));
    let ghost = AuthInfo { user: "ghost".into(), revision: s.revision() };
    assert_eq!(s.apply(&AuthRequest::RoleList, &ghost), Err(EtcdError::UserNotFound));
    assert_eq!(s.apply(&AuthRequest::Disable, &alice), Err(EtcdError::PermissionDenied));
    // A user may get themself and the roles they hold, nothing else.
    let me = s.apply(&AuthRequest::UserGet { name: "alice".into() }, &alice).unwrap();
    let AuthResponse::UserGet(me) = me else { panic!("{me:?}") };
    assert_eq!(me.roles, vec!["r1".to_string()]);
    assert_eq!(s.apply(&AuthRequest::UserGet { name: "root".into() }, &alice), Err(EtcdError::PermissionDenied));
    s.apply(&AuthRequest::RoleGet { role: "r1".into() }, &alice).unwrap();
    assert_eq!(s.apply(&AuthRequest::RoleGet { role: "root".into() }, &alice), Err(EtcdError::PermissionDenied));
    let root = as_user(&s, "root");
    let AuthResponse::UserList(list) = s.apply(&AuthRequest::UserList, &root).unwrap() else { panic!() };
    assert_eq!(list.users, vec!["alice".to_string(), "root".to_string()]);
    // Enabling twice is fine for root.
    s.apply(&AuthRequest::Enable, &root).unwrap();
}

#[test]
fn permissions_are_sorted_by_key_and_a_regrant_replaces_the_type() {
    let mut s = enabled_store();
    let root = as_user(&s, "root");
    grant(&mut s, "r1", perm(PermType::ReadWrite, "a", ""), &root);
    let AuthResponse::RoleGet(r) = s.apply(&AuthRequest::RoleGet { role: "r1".into() }, &root).unwrap() else {
        panic!()
    };
    let keys: Vec<(&[u8], i32)> = r.perm.iter().map(|p| (p.key.as_slice(), p.perm_type)).collect();
    assert_eq!(keys, vec![(&b"a"[..], 2), (b"c", 1), (b"k/", 2), (b"x", 2)]);
}

#[test]
fn points_need_an_overlapping_permission_and_ranges_a_covering_one() {
    let s = enabled_store();
    let alice = as_user(&s, "alice");
    let check = |key: &str, end: &str, access| s.check(&alice, key.as_bytes(), end.as_bytes(), access).is_ok();
    assert!(check("a", "", Access::Read));
    assert!(!check("a", "", Access::Write));
    assert!(!check("foo", "", Access::Read));
    assert!(check("foo", "", Access::Write), "[c, z) covers foo");
    assert!(check("k/1", "", Access::Read));
    assert!(check("k/", "k0", Access::Read), "the prefix itself");
    assert!(!check("k", "l", Access::Read), "a wider prefix");
    assert!(check("x", "\0", Access::Read), "from x on");
    assert!(check("y", "", Access::Write));
    assert!(check("c", "\0", Access::Write), "[c, z) and [x, +inf) join without a gap");
    assert!(!check("b", "\0", Access::Write), "nothing writes b");
    // Root may do anything; a request without a user, or with an unknown one, nothing.
    let root = as_user(&s, "root");
    assert!(s.check(&root, b"", b"\0", Access::Write).is_ok());
    assert_eq!(s.check(&nobody(), b"a", b"", Access::Read), Err(EtcdError::UserEmpty));
    let ghost = AuthInfo { user: "ghost".into(), revision: s.revision() };
    assert_eq!(s.check(&ghost, b"a", b"", Access::Read), Err(EtcdError::PermissionDenied));
    let stale = AuthInfo { user: "alice".into(), revision: AuthRevision(2) };
    assert_eq!(s.check(&stale, b"a", b"", Access::Read), Err(EtcdError::AuthOldRevision));
    // Disabled: everything goes.
    assert!(AuthStore::new().check(&nobody(), b"a", b"", Access::Write).is_ok());
}

#[test]
fn a_txn_is_checked_on_every_key_it_touches() {
    let s = enabled_store();
    let alice = as_user(&s, "alice");
    let put = |k: &str| RequestOp {
        request: Some(request_op::Request::RequestPut(PutRequest { key: k.into(), ..PutRequest::default() })),
    };
    let cmp = |k: &str| Compare {
        key: k.into(),
        target: compare::CompareTarget::Version as i32,
        target_union: Some(compare::TargetUnion::Version(0)),
        ..Compare::default()
    };
    let ok = TxnRequest { compare: vec![cmp("a")], success: vec![put("k/1")], failure: vec![put("foo")] };
    assert!(s.check_txn(&alice, &ok).is_ok());
    let bad_compare = TxnRequest { compare: vec![cmp("foo")], ..ok.clone() };
    assert_eq!(s.check_txn(&alice, &bad_compare), Err(EtcdError::PermissionDenied));
    let bad_failure = TxnRequest { failure: vec![put("a")], ..ok.clone() };
    assert_eq!(s.check_txn(&alice, &bad_failure), Err(EtcdError::PermissionDenied));
    let delete_prev = RequestOp {
        request: Some(request_op::Request::RequestDeleteRange(DeleteRangeRequest {
            key: b"foo".to_vec(),
            prev_kv: true,
            ..DeleteRangeRequest::default()
        })),
    };
    let nested = TxnRequest { success: vec![delete_prev], ..TxnRequest::default() };
    let outer = TxnRequest {
        success: vec![RequestOp { request: Some(request_op::Request::RequestTxn(nested)) }],
        ..TxnRequest::default()
    };
    assert_eq!(s.check_txn(&alice, &outer), Err(EtcdError::PermissionDenied), "foo is writable, not readable");
}

#[test]
fn deleting_a_role_takes_it_from_its_users() {
    let mut s = enabled_store();
    let root = as_user(&s, "root");
    s.apply(&AuthRequest::RoleDelete { role: "r1".into() }, &root).unwrap();
    assert!(s.user("alice").unwrap().roles.is_empty());
    assert_eq!(s.check(&as_user(&s, "alice"), b"a", b"", Access::Read), Err(EtcdError::PermissionDenied));
}

#[test]
fn logins_need_auth_enabled_and_a_user_with_a_password() {
    let mut s = AuthStore::new();
    let login = AuthRequest::Authenticate { name: "root".into(), token_prefix: "x".into() };
    assert_eq!(s.apply(&login, &nobody()), Err(EtcdError::AuthNotEnabled));
    assert_eq!(s.password_hash("root"), Err(EtcdError::AuthNotEnabled));
    s = enabled_store();
    s.apply(&login, &nobody()).unwrap();
    assert_eq!(s.password_hash("ghost"), Err(EtcdError::AuthFailed));
    let root = as_user(&s, "root");
    s.apply(&AuthRequest::UserAdd { name: "nopw".into(), hashed_password: None }, &root).unwrap();
    let no_password = "authentication failed, password was given for no password user";
    assert_eq!(s.password_hash("nopw"), Err(EtcdError::AuthUntranslated(no_password.into())));
    let nopw = AuthRequest::Authenticate { name: "nopw".into(), token_prefix: "x".into() };
    assert_eq!(s.apply(&nopw, &nobody()), Err(EtcdError::AuthFailed));
}

#[test]
fn bcrypt_hashes_depend_on_the_salt_only_through_the_seed() {
    let a = password::hash("pw", password::MIN_BCRYPT_COST, [7; 16]);
    assert_eq!(a, password::hash("pw", password::MIN_BCRYPT_COST, [7; 16]));
    assert_ne!(a, password::hash("pw", password::MIN_BCRYPT_COST, [8; 16]));
    assert!(password::verify("pw", &a));
    assert!(!password::verify("wrong", &a));
    assert!(!password::verify("pw", "not a hash"));
}

#[test]
fn simple_tokens_expire_after_their_ttl_since_last_use() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let prefix = token_prefix(&mut rng);
    assert_eq!(prefix.len(), 16);
    assert!(prefix.chars().all(|c| c.is_ascii_alphabetic()));
    assert_eq!(prefix, token_prefix(&mut rand_chacha::ChaCha8Rng::seed_from_u64(1)), "seeded, so repeatable");
    let mut tokens = SimpleTokens::new(SIMPLE_TOKEN_TTL_S);
    let token = format!("{prefix}.12");
    tokens.assign(token.clone(), "alice", Millis(0));
    assert_eq!(tokens.user_of(&token, Millis(299_000)).as_deref(), Some("alice"));
    // Used at 299 s, it lives until 599 s.
    assert_eq!(tokens.user_of(&token, Millis(598_000)).as_deref(), Some("alice"));
    assert_eq!(tokens.user_of(&token, Millis(898_000)), None);
    assert!(tokens.is_empty(), "an expired token is forgotten");
    tokens.assign("t1.1".into(), "alice", Millis(0));
    tokens.assign("t2.2".into(), "bob", Millis(0));
    tokens.invalidate_user("alice");
    assert_eq!(tokens.user_of("t1.1", Millis(1)), None);
    assert_eq!(tokens.len(), 1);
}
