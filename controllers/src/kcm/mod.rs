//! kube-controller-manager's controllers, one module each, under upstream's names (1.32,
//! `cmd/kube-controller-manager/names`). A controller is one module with a `run(Context)` future that
//! lives as long as its manager leads, and one line of [`CONTROLLERS`].

pub mod clusterroleaggregation;
pub mod cronjob;
pub mod daemonset;
pub mod deployment;
pub mod disruption;
pub mod endpoints;
pub mod endpointslice;
pub mod garbagecollector;
pub mod job;
pub mod namespace;
pub mod nodelifecycle;
pub mod replicaset;
pub mod resourcequota;
pub mod rootca;
pub mod serviceaccount;
pub mod statefulset;
pub mod tainteviction;
pub mod ttlafterfinished;

use std::future::Future;
use std::pin::Pin;

use crate::runtime::selection::Descriptor;

pub use crate::runtime::context::Context;

/// A running controller.
pub type Running = Pin<Box<dyn Future<Output = ()> + Send>>;

/// One controller the manager knows: its names and how to start it.
pub struct Entry {
    pub descriptor: Descriptor,
    pub start: fn(Context) -> Running,
}

/// Every controller kubesim runs, in kube-controller-manager's start order.
pub const CONTROLLERS: &[Entry] = &[
    Entry { descriptor: serviceaccount::DESCRIPTOR, start: |ctx| Box::pin(serviceaccount::run(ctx)) },
    Entry { descriptor: replicaset::DESCRIPTOR, start: |ctx| Box::pin(replicaset::run(ctx)) },
    Entry { descriptor: deployment::DESCRIPTOR, start: |ctx| Box::pin(deployment::run(ctx)) },
    Entry { descriptor: statefulset::DESCRIPTOR, start: |ctx| Box::pin(statefulset::run(ctx)) },
    Entry { descriptor: job::DESCRIPTOR, start: |ctx| Box::pin(job::run(ctx)) },
    Entry { descriptor: cronjob::DESCRIPTOR, start: |ctx| Box::pin(cronjob::run(ctx)) },
    Entry { descriptor: daemonset::DESCRIPTOR, start: |ctx| Box::pin(daemonset::run(ctx)) },
    Entry { descriptor: ttlafterfinished::DESCRIPTOR, start: |ctx| Box::pin(ttlafterfinished::run(ctx)) },
    Entry { descriptor: endpoints::DESCRIPTOR, start: |ctx| Box::pin(endpoints::run(ctx)) },
    Entry { descriptor: endpointslice::DESCRIPTOR, start: |ctx| Box::pin(endpointslice::run(ctx)) },
    Entry { descriptor: namespace::DESCRIPTOR, start: |ctx| Box::pin(namespace::run(ctx)) },
    Entry { descriptor: garbagecollector::DESCRIPTOR, start: |ctx| Box::pin(garbagecollector::run(ctx)) },
    Entry { descriptor: disruption::DESCRIPTOR, start: |ctx| Box::pin(disruption::run(ctx)) },
    Entry { descriptor: resourcequota::DESCRIPTOR, start: |ctx| Box::pin(resourcequota::run(ctx)) },
    Entry { descriptor: nodelifecycle::DESCRIPTOR, start: |ctx| Box::pin(nodelifecycle::run(ctx)) },
    Entry { descriptor: tainteviction::DESCRIPTOR, start: |ctx| Box::pin(tainteviction::run(ctx)) },
    Entry { descriptor: clusterroleaggregation::DESCRIPTOR, start: |ctx| Box::pin(clusterroleaggregation::run(ctx)) },
    Entry { descriptor: rootca::DESCRIPTOR, start: |ctx| Box::pin(rootca::run(ctx)) },
];

/// The descriptors of [`CONTROLLERS`], for `--controllers`.
pub fn descriptors() -> Vec<Descriptor> {
    CONTROLLERS.iter().map(|e| e.descriptor).collect()
}
