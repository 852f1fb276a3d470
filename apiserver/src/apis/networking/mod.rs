//! `networking.k8s.io`: ingresses, ingress classes and network policies, with the checks of ports, IPs and
//! label selectors they share with `policy` and `discovery.k8s.io`.

pub(crate) mod ingressclasses;
pub(crate) mod ingresses;
pub(crate) mod networkpolicies;
