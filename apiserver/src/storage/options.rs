//! Request options of the storage interface: [`GetOptions`], [`ListOptions`] (also used by watch),
//! [`Preconditions`] and the [`SelectionPredicate`] that filters objects after they are read.
//!
//! resourceVersions travel as the client's raw text, because how a bad one is reported depends on the
//! operation; the store parses them with [`crate::storage::ResourceVersion::parse`].

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::storage::error::StorageError;
use crate::storage::object::Object;

/// Options of a get. `resource_version`: "" reads the latest state, "0" any state, "N" a state not older
/// than N (the etcd3 store always reads the latest and fails with 504 if that is older than N).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GetOptions {
    pub resource_version: String,
}

/// `resourceVersionMatch` of a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceVersionMatch {
    NotOlderThan,
    Exact,
}

/// Options of a list or a watch.
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    pub resource_version: String,
    pub resource_version_match: Option<ResourceVersionMatch>,
    pub predicate: SelectionPredicate,
    /// Watch only: ask etcd for progress notifications and deliver them as bookmarks.
    pub progress_notify: bool,
    /// Watch only (`allowWatchBookmarks`): the client accepts BOOKMARK events. The Cacher sends them
    /// periodically and, for a watch-list request, as the end marker of the initial events.
    pub allow_watch_bookmarks: bool,
    /// Watch only (`sendInitialEvents`): `Some(true)` starts the stream with the current state as ADDED
    /// events (a watch-list request, together with `allow_watch_bookmarks`); `Some(false)` starts at the
    /// resourceVersion without them; `None` is the legacy behaviour (state only from resourceVersion "0").
    pub send_initial_events: Option<bool>,
}

/// The label/field selector hook: whether an object is selected.
pub(crate) type Matcher = Arc<dyn Fn(&Value) -> bool + Send + Sync>;

/// Which objects a list or watch returns, and how many per page.
#[derive(Clone, Default)]
pub struct SelectionPredicate {
    /// Page size; 0 means no paging.
    pub limit: i64,
    /// The continue token of the previous page, "" for the first.
    pub continue_token: String,
    /// The label/field selector hook; `None` matches everything.
    pub matcher: Option<Matcher>,
}

impl SelectionPredicate {
    /// A predicate that keeps the objects `matcher` accepts.
    pub fn matching(matcher: impl Fn(&Value) -> bool + Send + Sync + 'static) -> SelectionPredicate {
        SelectionPredicate { matcher: Some(Arc::new(matcher)), ..SelectionPredicate::default() }
    }

    /// Whether the predicate selects everything (kube-apiserver only reports `remainingItemCount` then).
    pub(crate) fn is_empty(&self) -> bool {
        self.matcher.is_none()
    }

    pub(crate) fn matches(&self, obj: &Value) -> bool {
        self.matcher.as_ref().is_none_or(|m| m(obj))
    }
}

impl fmt::Debug for SelectionPredicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SelectionPredicate")
            .field("limit", &self.limit)
            .field("continue_token", &self.continue_token)
            .field("matcher", &self.matcher.as_ref().map(|_| "fn"))
            .finish()
    }
}

/// Conditions a write checks against the stored object before it applies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preconditions {
    pub uid: Option<String>,
    pub resource_version: Option<String>,
}

impl Preconditions {
    /// Fails with kube-apiserver's "Precondition failed" invalid-object error when `obj` does not match.
    pub(crate) fn check(&self, key: &str, obj: &Value) -> Result<(), StorageError> {
        if let Some(uid) = &self.uid {
            if uid != obj.uid() {
                return Err(StorageError::InvalidObj {
                    key: key.to_string(),
                    message: format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                        obj.uid()
                    ),
                });
            }
        }
        if let Some(rv) = &self.resource_version {
            if rv != obj.resource_version() {
                return Err(StorageError::InvalidObj {
                    key: key.to_string(),
                    message: format!(
                        "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                        obj.resource_version()
                    ),
                });
            }
        }
        Ok(())
    }
}
