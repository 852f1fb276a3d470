//! What a controller manager tells whoever watches it (the simulation's recorder): each write its
//! controllers send, and each start and end of its leadership. Every method has a default that ignores
//! the news, so an observer implements only what it records.

/// Someone told of a controller manager's actions.
pub trait Observer: Send + Sync {
    /// A write (any method but GET) is about to be sent to `path`.
    fn write_sent(&self, _method: &str, _path: &str) {}
    /// The manager took the lease (`true`) and starts its controllers, or dropped them (`false`).
    fn leading(&self, _leading: bool) {}
}
