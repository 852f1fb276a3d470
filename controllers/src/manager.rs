//! The control-plane manager: kube-controller-manager's and kube-scheduler's main loop. It takes its
//! role's Lease in `kube-system` (when leader election is on), then starts what the role runs on one set
//! of shared informers (every controller `--controllers` selects, or the scheduler); when a renewal misses
//! its deadline, it drops them all at once (informers included) before anything else can be written, and
//! stands for election again. Upstream's process exits at that point ("leaderelection lost") and its supervisor restarts it:
//! standing again is what the restarted process would do, without a process to restart.
//!
//! One correction to client-go: a fence. client-go's controllers run on until the renew loop gives up, even
//! after a pause long enough for another manager to take the lease (kubernetes #67651). Here the
//! controllers' writes go out only within the renew deadline of the last renewal that succeeded, counted
//! from when that renewal was sent: another manager takes over only a lease duration (longer) after it saw
//! that renewal, so two managers never write in the same instant. The `unfenced-leader` switch removes the
//! fence.

use std::sync::{Arc, Mutex};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

use crate::bug::{Bug, Bugs};
use crate::client::observe::Observer;
use crate::client::resource::builtin;
use crate::client::{Client, ClientError, Fence};
use crate::kcm::{Context, CONTROLLERS};
use crate::runtime::events::Recorder;
use crate::runtime::informer::Informers;
use crate::runtime::leader::{self, Elector, ElectorConfig, LeaderElectionRecord, LeaseLock, LockError};
use crate::runtime::selection::Selection;
use crate::scheduler;

/// Where the leases live: `--leader-elect-resource-namespace`'s default.
pub const LEASE_NAMESPACE: &str = "kube-system";

/// What a manager runs while it leads.
#[derive(Clone)]
pub enum Role {
    /// kube-controller-manager: the controllers selected.
    ControllerManager(Selection),
    /// kube-scheduler's default profile.
    Scheduler,
}

impl Role {
    /// The lease the role is elected by: `--leader-elect-resource-name`'s default.
    pub fn lease_name(&self) -> &'static str {
        match self {
            Role::ControllerManager(_) => "kube-controller-manager",
            Role::Scheduler => "kube-scheduler",
        }
    }
}

/// How one manager runs.
#[derive(Clone)]
pub struct Config {
    /// What it runs.
    pub role: Role,
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
    /// Told of the manager's leadership and its controllers' writes.
    pub observer: Option<Arc<dyn Observer>>,
    /// The runtime's bug switches on.
    pub bugs: Bugs,
}

/// Runs the controller manager over `client` for as long as the future lives.
pub async fn run(client: Arc<Client>, config: Config) {
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let mut term: u64 = 0;
    // When the last renewal that succeeded was sent: the fence opens from there for a renew deadline.
    let renewed: Arc<Mutex<Option<tokio::time::Instant>>> = Arc::default();
    // The lease's own writes are the election, not the controllers' acts: the observer is not told of them.
    let lease_client = Arc::new(client.fresh().with_observer(None));
    loop {
        term += 1;
        let fence: Fence = if config.leader_elect && !config.bugs.has(Bug::UnfencedLeader) {
            let (renewed, deadline) = (renewed.clone(), config.election.renew_deadline);
            Arc::new(move || {
                renewed.lock().expect("never poisoned").is_some_and(|at| tokio::time::Instant::now() < at + deadline)
            })
        } else {
            Arc::new(|| true)
        };
        let fenced = Arc::new(client.fenced(fence));
        let leading = || lead(fenced.clone(), &config, term);
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
        let lock =
            ClientLease { client: lease_client.clone(), name: config.role.lease_name(), renewed_at: renewed.clone() };
        let lost = leader::run(elector, &lock, &*config.now_unix_us, &mut rng, leading).await;
        tracing::error!(identity = %config.election.identity, "leaderelection lost: {}", lost.reason);
    }
}

/// What a leading manager does: its role's work, on informers that live as long as this term.
async fn lead(client: Arc<Client>, config: &Config, term: u64) {
    let seed = config.seed ^ term.wrapping_mul(0x2545_f491_4f6c_dd1d);
    let informers = Arc::new(Informers::new(client.clone(), seed));
    let _leading = Leading::start(config.observer.clone());
    let context = |component: &str, seed: u64| Context {
        client: client.clone(),
        informers: informers.clone(),
        events: Recorder::new(client.clone(), component, config.now_unix_us.clone()),
        seed,
        root_ca: config.root_ca.clone(),
        now_unix_us: config.now_unix_us.clone(),
        bugs: config.bugs.clone(),
    };
    match &config.role {
        Role::ControllerManager(selection) => {
            let running = CONTROLLERS.iter().enumerate().filter(|(_, e)| selection.enabled(e.descriptor.name)).map(
                |(i, entry)| {
                    tracing::info!(controller = entry.descriptor.name, "starting controller");
                    (entry.start)(context(entry.descriptor.name, seed.wrapping_add(i as u64 + 1)))
                },
            );
            futures::future::join_all(running).await;
        }
        Role::Scheduler => scheduler::run(context(scheduler::SCHEDULER_NAME, seed.wrapping_add(1))).await,
    }
}

/// Tells the observer that leading started, and when dropped (the leading future dropped or done) that it
/// ended.
struct Leading(Option<Arc<dyn Observer>>);

impl Leading {
    fn start(observer: Option<Arc<dyn Observer>>) -> Leading {
        if let Some(o) = &observer {
            o.leading(true);
        }
        Leading(observer)
    }
}

impl Drop for Leading {
    fn drop(&mut self) {
        if let Some(o) = &self.0 {
            o.leading(false);
        }
    }
}

/// The lease as `LeaseLock` reads and writes it, over the manager's client (unfenced: the lease's own
/// writes are how the manager learns whether it leads).
struct ClientLease {
    client: Arc<Client>,
    /// The lease's name, in [`LEASE_NAMESPACE`].
    name: &'static str,
    /// When the last successful write of the lease was sent.
    renewed_at: Arc<Mutex<Option<tokio::time::Instant>>>,
}

impl ClientLease {
    /// A write of the lease sent at `sent` succeeded: the fence opens from then.
    fn renewed(&self, sent: tokio::time::Instant) {
        *self.renewed_at.lock().expect("never poisoned") = Some(sent);
    }
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
        format!("{LEASE_NAMESPACE}/{}", self.name)
    }

    async fn get(&self) -> Result<Option<(LeaderElectionRecord, String)>, LockError> {
        match self.client.get(&builtin::leases().object_path(Some(LEASE_NAMESPACE), self.name)).await {
            Ok(lease) => Ok(Some(LeaderElectionRecord::from_lease(&lease))),
            Err(err) if err.is_not_found() => Ok(None),
            Err(err) => Err(lock_error(err)),
        }
    }

    async fn create(&self, record: LeaderElectionRecord) -> Result<String, LockError> {
        let lease = record.to_lease(LEASE_NAMESPACE, self.name, None);
        let path = builtin::leases().collection_path(Some(LEASE_NAMESPACE));
        let sent = tokio::time::Instant::now();
        let created = self.client.create(&path, &lease).await.map_err(lock_error)?;
        self.renewed(sent);
        Ok(resource_version(&created))
    }

    async fn update(&self, record: LeaderElectionRecord, rv: String) -> Result<String, LockError> {
        let lease = record.to_lease(LEASE_NAMESPACE, self.name, Some(&rv));
        let path = builtin::leases().object_path(Some(LEASE_NAMESPACE), self.name);
        let sent = tokio::time::Instant::now();
        let updated = self.client.update(&path, &lease).await.map_err(lock_error)?;
        self.renewed(sent);
        Ok(resource_version(&updated))
    }
}
