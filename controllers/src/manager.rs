//! The controller manager: kube-controller-manager's main loop. It takes the
//! `kube-system/kube-controller-manager` Lease (when leader election is on), then starts every controller
//! `--controllers` selects on one set of shared informers; when a renewal misses its deadline, it drops
//! them all at once (informers included) before anything else can be written, and stands for election
//! again. Upstream's process exits at that point ("leaderelection lost") and its supervisor restarts it:
//! standing again is what the restarted process would do, without a process to restart.

use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

use crate::client::resource::builtin;
use crate::client::{Client, ClientError};
use crate::kcm::{Context, CONTROLLERS};
use crate::runtime::events::Recorder;
use crate::runtime::informer::Informers;
use crate::runtime::leader::{self, Elector, ElectorConfig, LeaderElectionRecord, LeaseLock, LockError};
use crate::runtime::selection::Selection;

/// Where the lease lives: kube-controller-manager's `--leader-elect-resource-namespace` and
/// `--leader-elect-resource-name` defaults.
pub const LEASE_NAMESPACE: &str = "kube-system";
pub const LEASE_NAME: &str = "kube-controller-manager";

/// How one controller manager runs.
#[derive(Clone)]
pub struct Config {
    /// The controllers to run.
    pub selection: Selection,
    /// Whether to take the lease first (`--leader-elect`); off, the controllers start at once and never stop.
    pub leader_elect: bool,
    /// The lease's timing and this manager's identity (upstream's is `hostname_uuid`).
    pub election: ElectorConfig,
    /// The root of this manager's random choices.
    pub seed: u64,
    /// The CA bundle the root CA publisher publishes.
    pub root_ca: String,
    /// The time of day, Unix microseconds.
    pub now_unix_us: Arc<dyn Fn() -> i64 + Send + Sync>,
}

/// Runs the controller manager over `client` for as long as the future lives.
pub async fn run(client: Arc<Client>, config: Config) {
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let mut term: u64 = 0;
    loop {
        term += 1;
        let leading = || lead(client.clone(), &config, term);
        if !config.leader_elect {
            leading().await;
            return;
        }
        let elector = match Elector::new(config.election.clone()) {
            Ok(elector) => elector,
            Err(err) => {
                tracing::error!("leader election config: {err}");
                return;
            }
        };
        let lock = ClientLease { client: client.clone() };
        let lost = leader::run(elector, &lock, &*config.now_unix_us, &mut rng, leading).await;
        tracing::error!(identity = %config.election.identity, "leaderelection lost: {}", lost.reason);
    }
}

/// What a leading manager does: every selected controller, on informers that live as long as this term.
async fn lead(client: Arc<Client>, config: &Config, term: u64) {
    let seed = config.seed ^ term.wrapping_mul(0x2545_f491_4f6c_dd1d);
    let informers = Arc::new(Informers::new(client.clone(), seed));
    let events = Recorder::new(client.clone(), "kube-controller-manager", config.now_unix_us.clone());
    let running = CONTROLLERS.iter().enumerate().filter(|(_, e)| config.selection.enabled(e.descriptor.name)).map(
        |(i, entry)| {
            tracing::info!(controller = entry.descriptor.name, "starting controller");
            let ctx = Context {
                client: client.clone(),
                informers: informers.clone(),
                events: events.for_component(entry.descriptor.name),
                seed: seed.wrapping_add(i as u64 + 1),
                root_ca: config.root_ca.clone(),
                now_unix_us: config.now_unix_us.clone(),
            };
            (entry.start)(ctx)
        },
    );
    futures::future::join_all(running).await;
}

/// The lease as `LeaseLock` reads and writes it, over the manager's client.
struct ClientLease {
    client: Arc<Client>,
}

fn lock_error(err: ClientError) -> LockError {
    if err.is_conflict() || err.is_already_exists() {
        LockError::Conflict(err.to_string())
    } else if err.is_not_found() {
        LockError::NotFound(err.to_string())
    } else {
        LockError::Other(err.to_string())
    }
}

fn resource_version(lease: &Value) -> String {
    lease.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or_default().to_string()
}

impl LeaseLock for ClientLease {
    fn describe(&self) -> String {
        format!("{LEASE_NAMESPACE}/{LEASE_NAME}")
    }

    async fn get(&self) -> Result<Option<(LeaderElectionRecord, String)>, LockError> {
        match self.client.get(&builtin::leases().object_path(Some(LEASE_NAMESPACE), LEASE_NAME)).await {
            Ok(lease) => Ok(Some(LeaderElectionRecord::from_lease(&lease))),
            Err(err) if err.is_not_found() => Ok(None),
            Err(err) => Err(lock_error(err)),
        }
    }

    async fn create(&self, record: LeaderElectionRecord) -> Result<String, LockError> {
        let lease = record.to_lease(LEASE_NAMESPACE, LEASE_NAME, None);
        let path = builtin::leases().collection_path(Some(LEASE_NAMESPACE));
        self.client.create(&path, &lease).await.map(|l| resource_version(&l)).map_err(lock_error)
    }

    async fn update(&self, record: LeaderElectionRecord, rv: String) -> Result<String, LockError> {
        let lease = record.to_lease(LEASE_NAMESPACE, LEASE_NAME, Some(&rv));
        let path = builtin::leases().object_path(Some(LEASE_NAMESPACE), LEASE_NAME);
        self.client.update(&path, &lease).await.map(|l| resource_version(&l)).map_err(lock_error)
    }
}
