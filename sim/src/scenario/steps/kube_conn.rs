//! A Kubernetes client's connections ([`KubeConn`]): one per apiserver it may reach, and how it picks the
//! apiserver of each request (its routing: one apiserver, round-robin, sticky, failover), as a load
//! balancer in front of HA apiservers would. Every Kubernetes step sends through one.

use rand::Rng;

use crate::apiserver::rest_client::KubeClient;
use crate::cluster::{Cluster, Seeds};
use crate::scenario::lang::kube::{KubeTarget, Routing};

/// A Kubernetes client's connections, one per apiserver it may reach, and its routing state.
pub struct KubeConn {
    pool: Vec<(String, KubeClient)>,
    routing: Option<Routing>,
    /// The apiserver the next request goes to.
    next: usize,
}

impl KubeConn {
    /// The client's connections, each request carrying `token` if it has one (its user's); a sticky
    /// client draws its apiserver from the seed.
    pub fn new(client: &str, target: &KubeTarget, cluster: &Cluster, seeds: Seeds, token: Option<String>) -> KubeConn {
        let pool: Vec<(String, KubeClient)> = target
            .pool
            .iter()
            .map(|name| {
                let addr = cluster.apiserver(name).expect("validated against the cluster").addr;
                (name.clone(), KubeClient::new(addr).with_token(token.clone()))
            })
            .collect();
        // A sticky client's apiserver, and where a round-robin balancer stands at the client's first
        // request, are the seed's.
        let next = match target.routing {
            Some(Routing::Sticky | Routing::RoundRobin) => {
                seeds.rng(&format!("kube/{client}")).random_range(0..pool.len())
            }
            _ => 0,
        };
        KubeConn { pool, routing: target.routing, next }
    }

    /// The apiserver for the next request, and where the one after goes.
    pub fn pick(&mut self) -> usize {
        let i = self.next;
        if self.routing == Some(Routing::RoundRobin) {
            self.next = (self.next + 1) % self.pool.len();
        }
        i
    }

    /// The same apiservers and routing over connections of its own (an informer's, beside its client's
    /// steps), starting where this one stands; a round-robin balancer then moves this one on, as it would
    /// for the next connection.
    pub fn fork(&mut self) -> KubeConn {
        let pool = self.pool.iter().map(|(name, c)| (name.clone(), c.fresh())).collect();
        let forked = KubeConn { pool, routing: self.routing, next: self.next };
        self.pick();
        forked
    }

    /// [`Self::pick`], with the apiserver's name.
    pub fn pick_named(&mut self) -> (usize, String) {
        let i = self.pick();
        (i, self.pool[i].0.clone())
    }

    pub fn client(&self, i: usize) -> &KubeClient {
        &self.pool[i].1
    }

    /// The name of apiserver `i`.
    pub fn apiserver(&self, i: usize) -> &str {
        &self.pool[i].0
    }

    /// A request to apiserver `i` failed as a load balancer sees failures: a failover client moves on.
    pub fn failed(&mut self, i: usize) {
        if self.routing == Some(Routing::Failover) && self.next == i {
            self.next = (i + 1) % self.pool.len();
        }
    }
}
