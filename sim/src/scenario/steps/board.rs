//! The [`Board`]: what the clients of a scenario run share: which steps are done, the revision each
//! returned, the lease each granted, the watches that are open; and [`Known`], what a step's request reads
//! of it (the revisions and leases earlier steps got). Waiting on it is change-driven (a
//! `Notify`), so a waiting client costs nothing until something finishes.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use etcd_proto::etcdserverpb as pb;
use tokio::sync::{mpsc, oneshot};

use crate::history::WatchId;

#[derive(Default)]
pub struct BoardState {
    pub done: BTreeSet<String>,
    pub revisions: BTreeMap<String, i64>,
    pub leases: BTreeMap<String, i64>,
    pub watches: BTreeMap<String, OpenWatch>,
    /// The continue token each named `kube` list step got, for `continue_from`.
    pub continues: BTreeMap<String, String>,
}

pub struct OpenWatch {
    pub id: WatchId,
    pub requests: mpsc::UnboundedSender<pb::WatchRequest>,
    /// Dropping it closes the watch.
    pub _close: oneshot::Sender<()>,
}

/// What the clients of a run share.
///
/// Waiters are woken through a `Notify`, not a `tokio::sync::watch` channel: tokio's watch channel spreads
/// its waiters over shards chosen with tokio's thread-local random generator, whose state carries over from
/// one run to the next in the same process, so two runs of one seed woke clients in different orders.
pub struct Board {
    state: Mutex<BoardState>,
    changed: tokio::sync::Notify,
}

impl Default for Board {
    fn default() -> Board {
        Board { state: Mutex::default(), changed: tokio::sync::Notify::new() }
    }
}

impl Board {
    pub fn new() -> Board {
        Board::default()
    }

    pub fn lock(&self) -> std::sync::MutexGuard<'_, BoardState> {
        self.state.lock().expect("board lock poisoned")
    }

    pub fn finish(&self, name: Option<&str>, revision: Option<i64>, lease: Option<i64>) {
        if let Some(name) = name {
            let mut s = self.lock();
            s.done.insert(name.to_string());
            if let Some(r) = revision {
                s.revisions.insert(name.to_string(), r);
            }
            if let Some(l) = lease {
                s.leases.insert(name.to_string(), l);
            }
        }
        self.changed.notify_waiters();
    }

    pub fn set_continue(&self, step: &str, token: &str) {
        self.lock().continues.insert(step.to_string(), token.to_string());
    }

    pub fn continue_token(&self, step: &str) -> Option<String> {
        self.lock().continues.get(step).cloned()
    }

    pub async fn wait_done(&self, steps: &[String]) {
        loop {
            // Registered before the check, so a step that finishes in between still wakes this waiter.
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if steps.iter().all(|s| self.lock().done.contains(s)) {
                return;
            }
            notified.await;
        }
    }
}

impl Known for Board {
    fn revision(&self, step: &str) -> Option<i64> {
        self.lock().revisions.get(step).copied()
    }

    fn lease(&self, step: &str) -> Option<i64> {
        self.lock().leases.get(step).copied()
    }
}

/// What the runner knows when a step starts: the revisions and lease ids earlier steps returned.
pub trait Known {
    fn revision(&self, step: &str) -> Option<i64>;
    fn lease(&self, step: &str) -> Option<i64>;
}

/// Why a step could not be sent.
pub type Unresolved = String;

/// The lease a `lease_grant` step got.
pub fn lease_id(known: &dyn Known, step: &str) -> std::result::Result<i64, Unresolved> {
    known.lease(step).ok_or_else(|| format!("lease step {step} has no lease (it failed, or has not run yet)"))
}
