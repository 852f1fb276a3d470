//! `apiregistration.k8s.io`: the APIServices the aggregator routes by.

pub(crate) mod apiservices;
pub(crate) mod local;
