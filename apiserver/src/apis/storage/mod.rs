//! `storage.k8s.io`: storage classes.

pub(crate) mod storageclasses;
