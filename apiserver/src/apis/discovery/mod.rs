//! `discovery.k8s.io`: endpoint slices.

pub(crate) mod endpointslices;
