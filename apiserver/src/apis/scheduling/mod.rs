//! `scheduling.k8s.io`: priority classes.

pub(crate) mod priorityclasses;
