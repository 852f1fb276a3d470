//! The controllers' end-to-end tests, one binary (linking each file as its own test binary cost CI a
//! minute per file): each module runs its controllers against a real apiserver in this process, over an
//! embedded fake-etcd member, reached through `ApiServer::handle`.
#![cfg(not(madsim))]

mod support;

mod clusterroleaggregation;
mod cronjob;
mod daemonset;
mod deployment;
mod disruption;
mod endpoints;
mod garbagecollector;
mod job;
mod namespace;
mod nodelifecycle;
mod nodes;
mod replicaset;
mod resourcequota;
mod scheduler;
mod statefulset;
mod ttlafterfinished;
