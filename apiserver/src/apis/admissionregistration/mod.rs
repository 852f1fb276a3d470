//! `admissionregistration.k8s.io`: webhook configurations and validating admission policies with their
//! bindings, stored and served as kube-apiserver 1.32 serves them; none is enforced (calling webhooks and
//! evaluating policies on every request is issue 27's work).

pub(crate) mod mutatingwebhookconfigurations;
pub(crate) mod rules;
pub(crate) mod validatingadmissionpolicies;
pub(crate) mod validatingadmissionpolicybindings;
pub(crate) mod validatingwebhookconfigurations;
pub(crate) mod webhooks;
