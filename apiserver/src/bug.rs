//! The apiserver's bug switches: historical kube-apiserver bugs that a simulation can put back, each in
//! the part of the storage stack where it lived, so that a scenario shows the race failing with the switch
//! on and passing with it off (the fixed behaviour is the default). Declared once over the shared
//! `kubesim-failpoints` vocabulary; a server's set comes in through its configuration
//! ([`crate::server::ServerOptions::bugs`], handed on to [`crate::storage::etcd3::Etcd3Config::bugs`] and
//! [`crate::storage::cacher::CacherConfig::bugs`]), never a global.

pub use kubesim_failpoints::{Bug as _, UnknownBug};

kubesim_failpoints::bugs! {
    /// A historical kube-apiserver bug kubesim can put back.
    pub enum Bug {
        /// The etcd3 store trusts the watch cache's copy: a guaranteed update or delete whose precondition
        /// or update function fails on it reports that failure without reading etcd again.
        StaleSuggestionTrusted => (
            "stale-suggestion-trusted",
            "kubernetes #82303",
            "a write judged against the watch cache's stale copy gets a spurious 409 or precondition failure"
        ),
    }
}

/// The switches on for one apiserver.
pub type Bugs = kubesim_failpoints::BugSet<Bug>;
