//! `storage.k8s.io`: storage classes.

pub(crate) mod csidrivers;
pub(crate) mod csinodes;
pub(crate) mod csistoragecapacities;
pub(crate) mod storageclasses;
pub(crate) mod volumeattachments;
