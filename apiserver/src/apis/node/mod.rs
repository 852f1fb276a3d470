//! `node.k8s.io`: runtime classes.

pub(crate) mod runtimeclasses;
