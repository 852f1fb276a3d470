//! `certificates.k8s.io`: certificate signing requests.

pub(crate) mod certificatesigningrequests;
