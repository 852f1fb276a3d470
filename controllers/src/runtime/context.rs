//! What a component is handed when it starts: a controller when its manager starts leading, the
//! scheduler, a fleet of simulated nodes. Below every component, so that they can share code without
//! depending on each other.

use std::sync::Arc;

use crate::bug::Bugs;
use crate::client::Client;
use crate::runtime::events::Recorder;
use crate::runtime::informer::Informers;

/// What every component is handed.
#[derive(Clone)]
pub struct Context {
    /// The manager's client (the same identity for every controller).
    pub client: Arc<Client>,
    /// The manager's shared informers.
    pub informers: Arc<Informers>,
    /// Events the controllers emit, as `kube-controller-manager`'s event recorder.
    pub events: Recorder,
    /// The seed this controller's random choices (backoff jitter) start from.
    pub seed: u64,
    /// The CA bundle `kube-root-ca.crt` publishes: the apiserver's serving CA ("" without TLS).
    pub root_ca: String,
    /// The time of day in Unix microseconds (the simulation's clock under simulation), for timestamps the
    /// controllers write.
    pub now_unix_us: Arc<dyn Fn() -> i64 + Send + Sync>,
    /// The runtime's bug switches on: a controller that has a switch reads it here.
    pub bugs: Bugs,
}
