//! `flowcontrol.apiserver.k8s.io`: API priority and fairness's flow schemas and priority levels, with the
//! objects kube-apiserver creates at start.

pub(crate) mod bootstrap;
pub(crate) mod flowschemas;
pub(crate) mod prioritylevelconfigurations;
