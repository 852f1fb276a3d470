//! The watch cache (kube-apiserver's Cacher), built sans-IO first: [`watch_cache::WatchCache`] is the
//! bounded event history and current state that serves watches from a resourceVersion. The async shell
//! that feeds it from an etcd watch and dispatches to watchers comes next.

pub mod watch_cache;
