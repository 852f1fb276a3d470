//! etcd's gRPC errors as the storage layer sees them. Compaction and future-revision errors are told apart
//! by etcd's message texts (the same in etcd 3.4 and fake-etcd), because callers answer them differently
//! (410 Expired, 504 Too large resource version). Every other answer of etcd's keeps etcd's text; only a
//! failure of the transport (after the client's retries) is the store being unreachable.

use crate::storage::error::StorageError;

/// A failed etcd request.
#[derive(Debug)]
pub(super) enum EtcdFailure {
    /// The requested revision has been compacted.
    Compacted,
    /// The requested revision is newer than the store's.
    FutureRevision,
    /// Anything else, already a storage error.
    Other(StorageError),
}

impl EtcdFailure {
    pub(super) fn from_status(status: &tonic::Status, key: &str) -> EtcdFailure {
        let message = status.message();
        if message.contains("required revision has been compacted") {
            return EtcdFailure::Compacted;
        }
        if message.contains("required revision is a future revision") {
            return EtcdFailure::FutureRevision;
        }
        let key = key.to_string();
        let message = message.to_string();
        EtcdFailure::Other(match status.code() {
            // etcd's own answers pass through with etcd's text, as clientv3's errors pass through
            // kube-apiserver's etcd3 store ("etcdserver: no leader" is a 500 with that message).
            _ if message.starts_with("etcdserver: ") => StorageError::Backend(message),
            // The transport's: the store could not be reached ("please try again").
            tonic::Code::Unavailable => StorageError::Unreachable { key, message },
            tonic::Code::DeadlineExceeded => StorageError::Timeout { key, message },
            _ => StorageError::Backend(message),
        })
    }

    /// The storage error for an operation that gives compaction and future revisions no special meaning.
    pub(super) fn into_storage_error(self) -> StorageError {
        match self {
            EtcdFailure::Compacted => {
                StorageError::Backend("etcdserver: mvcc: required revision has been compacted".into())
            }
            EtcdFailure::FutureRevision => {
                StorageError::Backend("etcdserver: mvcc: required revision is a future revision".into())
            }
            EtcdFailure::Other(e) => e,
        }
    }
}

/// Maps a gRPC failure of a request on `key` to a storage error.
pub(super) fn storage_error(status: tonic::Status, key: &str) -> StorageError {
    EtcdFailure::from_status(&status, key).into_storage_error()
}
