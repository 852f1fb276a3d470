//! The Kubernetes words the language shares: a request's verb and patch type, how a client routes its
//! requests among the apiservers ([`Routing`], [`KubeTarget`]), and a resourceVersion a step sends
//! ([`KubeRv`]).

use serde::{Deserialize, Serialize};

use crate::scenario::expr::Expr;

/// How a client picks the apiserver of each request, as a load balancer in front of HA apiservers would.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Routing {
    /// Each request to the next apiserver in turn, from one the seed picks.
    RoundRobin,
    /// One apiserver drawn from the seed, for the whole run.
    Sticky,
    /// One apiserver until a request gets no answer or a 5xx/429, then the next.
    Failover,
}

/// The verb of a `kube` step, as kube-apiserver's request info names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verb {
    Create,
    Get,
    List,
    Update,
    Patch,
    Delete,
    Deletecollection,
    Watch,
}

impl Verb {
    /// The verb as the file, the trace and the report spell it.
    pub fn word(self) -> &'static str {
        match self {
            Verb::Create => "create",
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::Deletecollection => "deletecollection",
            Verb::Watch => "watch",
        }
    }

    /// Whether the verb changes what is stored (a dry run aside).
    pub fn is_write(self) -> bool {
        matches!(self, Verb::Create | Verb::Update | Verb::Patch | Verb::Delete | Verb::Deletecollection)
    }
}

/// A patch's type, by its `Content-Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PatchType {
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/strategic-merge-patch+json` (built-in kinds).
    Strategic,
    /// `application/apply-patch+yaml`: server-side apply (the patch is the applied configuration; give
    /// `field_manager`).
    Apply,
}

/// Where a Kubernetes client's requests go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubeTarget {
    /// The apiservers, by name, in the order routing walks them.
    pub pool: Vec<String>,
    /// `None`: always the one apiserver of the pool.
    pub routing: Option<Routing>,
}

impl std::fmt::Display for KubeTarget {
    /// `api-0`, or `api-0,api-1 round-robin`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.pool.join(","))?;
        match self.routing {
            None => Ok(()),
            Some(Routing::RoundRobin) => f.write_str(" round-robin"),
            Some(Routing::Sticky) => f.write_str(" sticky"),
            Some(Routing::Failover) => f.write_str(" failover"),
        }
    }
}

/// A resourceVersion a step sends: as written (`"0"`, `""`), or a number an expression gives.
#[derive(Clone, Debug)]
pub enum KubeRv {
    Text(String),
    Number(Expr),
}
