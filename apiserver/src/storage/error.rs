//! [`StorageError`]: the one error type of the storage layer.
//!
//! Variants mirror kube-apiserver's storage error codes (key not found, key exists, resource version
//! conflicts, invalid object, unreachable, timeout, corrupt object) plus the request errors its etcd3 store
//! raises itself (bad resourceVersion, bad continue token, too large resourceVersion, compacted revisions).
//! Each says whether it is retriable. `Display` gives kube-apiserver's `Error()` text, which clients see
//! inside some messages (a precondition failure's 409, for instance). The translation into an API `Status`
//! lives in one place: [`crate::storage::status`].

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;

/// An error of a storage operation.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StorageError {
    /// The key does not exist (`ErrCodeKeyNotFound`).
    #[error("{}", coded(1, "key not found", key, *rv, None))]
    KeyNotFound { key: String, rv: i64 },
    /// A create found the key already present (`ErrCodeKeyExists`).
    #[error("{}", coded(2, "key exists", key, *rv, None))]
    KeyExists { key: String, rv: i64 },
    /// A write lost an optimistic-concurrency race (`ErrCodeResourceVersionConflicts`).
    #[error("{}", coded(3, "resource version conflicts", key, *rv, None))]
    ResourceVersionConflicts { key: String, rv: i64 },
    /// The object failed a precondition (`ErrCodeInvalidObj`); `message` says which.
    #[error("{}", coded(4, "invalid object", key, 0, Some(message)))]
    InvalidObj { key: String, message: String },
    /// The store could not be reached (`ErrCodeUnreachable`).
    #[error("{}", coded(5, "server unreachable", key, 0, Some(message)))]
    Unreachable { key: String, message: String },
    /// The store did not answer in time (`ErrCodeTimeout`).
    #[error("{}", coded(6, "request timeout", key, 0, Some(message)))]
    Timeout { key: String, message: String },
    /// Stored bytes did not decode as an object (`ErrCodeCorruptObj`).
    #[error("{}", coded(7, "corrupt object", key, 0, Some(message)))]
    CorruptObj { key: String, message: String },
    /// A create carried a resourceVersion.
    #[error("resourceVersion should not be set on objects to be created")]
    ResourceVersionSetOnCreate,
    /// A resourceVersion that is not an unsigned decimal; `reason` is Go's ParseUint error text.
    #[error("resourceVersion: Invalid value: {}: {reason}", crate::go_text::quote(value))]
    InvalidResourceVersion { value: String, reason: String },
    /// A continue token that does not decode; the text is the decoder's reason.
    #[error("invalid continue token: {0}")]
    InvalidContinue(String),
    /// A continue token together with a resourceVersion other than "" or "0".
    #[error("specifying resource version is not allowed when using continue")]
    ResourceVersionWithContinue,
    /// A read asked for a revision newer than the store has.
    #[error("Too large resource version: {requested}, current: {current}")]
    TooLargeResourceVersion { requested: u64, current: u64, retry_after_s: i32 },
    /// An exact list at a compacted revision.
    #[error("The resourceVersion for the provided list is too old.")]
    ListExpired,
    /// A continue token whose revision has been compacted; `continue_token` resumes at the latest revision.
    #[error("{CONTINUE_EXPIRED}")]
    ContinueExpired { continue_token: String },
    /// A watch from a compacted revision.
    #[error("The resourceVersion for the provided watch is too old.")]
    WatchExpired,
    /// A watch-cache watch from a resourceVersion older than its history holds.
    #[error("too old resource version: {requested} ({oldest_servable})")]
    TooOldResourceVersion { requested: u64, oldest_servable: u64 },
    /// The watch cache is not ready (initializing, or re-listing after its etcd watch failed): kube-apiserver's
    /// 429 `storage is (re)initializing`, with a retry hint that grows with the downtime (KEP-4568).
    #[error("{message}")]
    NotReady { message: String, retry_after_s: i32 },
    /// The request needs a storage feature the etcd in use lacks (a watch-list request without etcd's
    /// `RequestWatchProgress`); kube-apiserver reports it as a 500 InternalError with this raw text.
    #[error("a watch stream was requested by the client but the required storage feature {0} is disabled")]
    FeatureDisabled(String),
    /// Something inside this layer went wrong (kube-apiserver's `storage.InternalError`).
    #[error("{0}")]
    Internal(String),
    /// An etcd error this layer does not interpret, passed on with etcd's text.
    #[error("{0}")]
    Backend(String),
    /// An error from the caller's update or validation function, passed through unchanged.
    #[error("{}", .0.message.clone().unwrap_or_default())]
    Caller(Box<Status>),
}

/// kube-apiserver's message for a continue token whose revision has been compacted.
pub(crate) const CONTINUE_EXPIRED: &str = "The provided continue parameter is too old to display a consistent list \
result. You can start a new list without the continue parameter, or use the continue token in this response \
to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list \
- objects that were created, modified, or deleted between the time the first chunk was returned and now may \
show up in the list.";

impl StorageError {
    /// Whether repeating the same request later may succeed without the caller changing anything.
    pub fn is_retriable(&self) -> bool {
        match self {
            // Transport trouble and "not there yet" pass with time.
            StorageError::Unreachable { .. }
            | StorageError::Timeout { .. }
            | StorageError::TooLargeResourceVersion { .. }
            | StorageError::NotReady { .. } => true,
            // A lost race passes once the caller re-reads; GuaranteedUpdate does exactly that.
            StorageError::ResourceVersionConflicts { .. } => true,
            StorageError::KeyNotFound { .. }
            | StorageError::KeyExists { .. }
            | StorageError::InvalidObj { .. }
            | StorageError::CorruptObj { .. }
            | StorageError::ResourceVersionSetOnCreate
            | StorageError::InvalidResourceVersion { .. }
            | StorageError::InvalidContinue(_)
            | StorageError::ResourceVersionWithContinue
            | StorageError::ListExpired
            | StorageError::ContinueExpired { .. }
            | StorageError::WatchExpired
            | StorageError::TooOldResourceVersion { .. }
            | StorageError::FeatureDisabled(_)
            | StorageError::Internal(_)
            | StorageError::Backend(_)
            | StorageError::Caller(_) => false,
        }
    }
}

/// kube-apiserver's `StorageError.Error()` text. Go prints a nil inner error as `<nil>`.
fn coded(code: u8, what: &str, key: &str, rv: i64, inner: Option<&String>) -> String {
    let inner = inner.map_or("<nil>", String::as_str);
    format!("StorageError: {what}, Code: {code}, Key: {key}, ResourceVersion: {rv}, AdditionalErrorMsg: {inner}")
}
