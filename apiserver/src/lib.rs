//! The Kubernetes-style apiserver: storage interface, etcd3 store, watch cache and generic registry.
//!
//! Not built yet (issue "apiserver: the storage layer and generic registry"). What is fixed already is its
//! boundary: it reaches its store only through the etcd v3 wire API from `etcd-proto`, never through
//! fake-etcd's internals, so that it runs unchanged against real etcd 3.4.
