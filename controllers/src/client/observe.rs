//! What a controller manager tells whoever watches it (the simulation's recorder): each write its
//! controllers send, each start and end of its leadership, and each delete the garbage collector made. Every method has a default that ignores
//! the news, so an observer implements only what it records.

/// Someone told of a controller manager's actions.
pub trait Observer: Send + Sync {
    /// A write (any method but GET) is about to be sent to `path`.
    fn write_sent(&self, _method: &str, _path: &str) {}
    /// The manager took the lease (`true`) and starts its controllers, or dropped them (`false`).
    fn leading(&self, _leading: bool) {}
    /// `component` (the garbage collector: `garbage-collector-controller`) deleted `path`. `answer` is the
    /// object as the apiserver answered it, at the revision of the delete (or, when finalizers hold it, of
    /// the update that set its deletion timestamp); when the apiserver answered a `Status` instead, only its
    /// `metadata.uid` and the owners' UIDs (`metadata.ownerReferences[].uid`), without a revision.
    fn deleted(&self, _component: &str, _path: &str, _answer: &serde_json::Value) {}
}
