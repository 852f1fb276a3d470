//! An object's identity as the garbage collector keys it: its coordinates, namespace and UID (upstream's
//! `objectReference`), below both the graph and the absent-owner cache.

use std::fmt;

/// An object's coordinates (upstream's `objectReference`: owner-reference coordinates plus a namespace).
/// `namespace` is `None` for cluster-scoped objects (upstream's empty string).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub uid: String,
}

impl fmt::Display for ObjectRef {
    /// Upstream's `objectReference.String()`, which the warning message embeds.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let namespace = self.namespace.as_deref().unwrap_or("");
        write!(
            f,
            "[{}/{}, namespace: {}, name: {}, uid: {}]",
            self.api_version, self.kind, namespace, self.name, self.uid
        )
    }
}
