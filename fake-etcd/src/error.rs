//! The one error type of fake-etcd's request path, with etcd's gRPC codes and exact texts.
//!
//! Clients match on these texts (clientv3's `rpctypes` compares the whole string), so every message is
//! etcd 3.4.23's, byte for byte (`rpctypes/error.go`). The translation to a gRPC status happens in one place,
//! `service::api::status`; the cores only ever return `EtcdError`.

/// A gRPC status code, mirrored here so that the sans-IO cores do not depend on tonic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    InvalidArgument,
    OutOfRange,
    NotFound,
    FailedPrecondition,
    ResourceExhausted,
    Unavailable,
    Unimplemented,
    PermissionDenied,
    Unauthenticated,
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EtcdError {
    #[error("etcdserver: key is not provided")]
    EmptyKey,
    #[error("etcdserver: key not found")]
    KeyNotFound,
    #[error("etcdserver: value is provided")]
    ValueProvided,
    #[error("etcdserver: lease is provided")]
    LeaseProvided,
    #[error("etcdserver: too many operations in txn request")]
    TooManyOps,
    #[error("etcdserver: duplicate key given in txn request")]
    DuplicateKey,
    #[error("etcdserver: mvcc: required revision has been compacted")]
    Compacted,
    #[error("etcdserver: mvcc: required revision is a future revision")]
    FutureRev,
    #[error("etcdserver: mvcc: database space exceeded")]
    NoSpace,
    #[error("etcdserver: requested lease not found")]
    LeaseNotFound,
    #[error("etcdserver: lease already exists")]
    LeaseExist,
    #[error("etcdserver: too large lease TTL")]
    LeaseTtlTooLarge,
    #[error("etcdserver: request is too large")]
    RequestTooLarge,
    #[error("etcdserver: no leader")]
    NoLeader,
    #[error("etcdserver: not leader")]
    NotLeader,
    #[error("etcdserver: leader changed")]
    LeaderChanged,
    #[error("etcdserver: request timed out")]
    Timeout,
    #[error("etcdserver: authentication is not enabled")]
    AuthNotEnabled,
    #[error("etcdserver: root user does not exist")]
    RootUserNotExist,
    #[error("etcdserver: user name not found")]
    UserNotFound,
    #[error("etcdserver: role name not found")]
    RoleNotFound,
    #[error("etcdserver: user name already exists")]
    UserAlreadyExist,
    #[error("etcdserver: user name is empty")]
    UserEmpty,
    #[error("etcdserver: role name already exists")]
    RoleAlreadyExist,
    #[error("etcdserver: role name is empty")]
    RoleEmpty,
    #[error("etcdserver: root user does not have root role")]
    RootRoleNotExist,
    #[error("etcdserver: authentication failed, invalid user ID or password")]
    AuthFailed,
    #[error("etcdserver: permission denied")]
    PermissionDenied,
    #[error("etcdserver: role is not granted to the user")]
    RoleNotGranted,
    #[error("etcdserver: permission is not granted to the role")]
    PermissionNotGranted,
    #[error("etcdserver: revision of auth store is old")]
    AuthOldRevision,
    #[error("etcdserver: invalid auth token")]
    InvalidAuthToken,
    /// Deleting the root user or role, or revoking root's root role, while auth is enabled.
    #[error("etcdserver: invalid auth management")]
    InvalidAuthMgmt,
    /// An auth error etcd 3.4 passes to the client untranslated, with grpc-go's Unknown code and the auth
    /// package's own text (its Maintenance admin checks do this).
    #[error("auth: {0}")]
    AuthUntranslated(String),
    #[error("etcdserver: bad leader transferee")]
    BadLeaderTransferee,
    #[error("etcdserver: member not found")]
    MemberNotFound,
    /// A txn nested deeper than fake-etcd can decode back from its log entry
    /// ([`crate::apply::validate::MAX_TXN_DEPTH`]); etcd 3.4 has no depth limit.
    #[error("fake-etcd: txn nested more than {max_depth} deep")]
    TxnTooDeep { max_depth: usize },
    /// A request etcd would serve but fake-etcd does not implement (named, so it is never silent).
    #[error("fake-etcd: {0} is not implemented")]
    Unimplemented(&'static str),
}

impl EtcdError {
    pub fn code(&self) -> Code {
        use EtcdError::*;
        match self {
            EmptyKey
            | KeyNotFound
            | ValueProvided
            | LeaseProvided
            | TooManyOps
            | TxnTooDeep { .. }
            | DuplicateKey
            | RequestTooLarge
            | UserEmpty
            | RoleEmpty
            | AuthFailed
            | AuthOldRevision
            | InvalidAuthMgmt => Code::InvalidArgument,
            Compacted | FutureRev | LeaseTtlTooLarge => Code::OutOfRange,
            NoSpace => Code::ResourceExhausted,
            LeaseNotFound | MemberNotFound => Code::NotFound,
            LeaseExist | NotLeader | AuthNotEnabled | RootUserNotExist | UserNotFound | RoleNotFound
            | BadLeaderTransferee | UserAlreadyExist | RoleAlreadyExist | RootRoleNotExist | RoleNotGranted
            | PermissionNotGranted => Code::FailedPrecondition,
            PermissionDenied => Code::PermissionDenied,
            InvalidAuthToken => Code::Unauthenticated,
            AuthUntranslated(_) => Code::Unknown,
            NoLeader | LeaderChanged | Timeout => Code::Unavailable,
            Unimplemented(_) => Code::Unimplemented,
        }
    }

    /// This error as etcd 3.4's auth package words it before `rpctypes` translates it ("auth: permission
    /// denied" with code Unknown rather than "etcdserver: permission denied"); other errors are unchanged.
    pub(crate) fn untranslated(self) -> EtcdError {
        match &self {
            EtcdError::UserEmpty
            | EtcdError::UserNotFound
            | EtcdError::PermissionDenied
            | EtcdError::InvalidAuthToken => {
                let text = self.to_string();
                EtcdError::AuthUntranslated(text.trim_start_matches("etcdserver: ").to_string())
            }
            _ => self,
        }
    }

    /// Whether a client may retry the same request unchanged and hope for a different outcome.
    /// Only availability errors are; everything else is a verdict on the request or the data.
    pub fn is_retriable(&self) -> bool {
        self.code() == Code::Unavailable
    }
}
