//! The admission hooks a write passes through, as the registry sees them: kube's `admission.Interface`
//! split into its two phases. The registry knows only *when* admission runs; *what* runs (the plugin chain,
//! webhooks, policies) is the `admission` layer's, which hands each request its chain through the write's
//! options ([`AdmissionHook`]), so that the chain knows who asks without the store knowing users.
//!
//! When, as upstream's handlers and `Store` do it:
//! - create: mutate before `BeforeCreate` (the object has no uid or timestamps yet), validate after it;
//! - update and patch: mutate the new object against the current one, then `BeforeUpdate`, then validate;
//!   both run again on every attempt of the guaranteed update, as upstream's `tryUpdate` reruns them;
//! - delete: validate the object being deleted (`DELETE` has nothing to mutate).

use std::sync::Arc;

use serde_json::Value;

use crate::registry::error::RegistryError;
use crate::registry::resource::Resource;

/// A boxed future, as an object-safe async method returns (declared here, not taken from `rest`, so that
/// the options that carry a hook need nothing of the registry table).
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// `admission.Operation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

impl Operation {
    /// The operation as `AdmissionReview` and webhook rules write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

/// What a write is, as the store knows it (`admission.Attributes` less the user, which the hook holds).
#[derive(Clone, Copy, Debug)]
pub struct Attributes<'a> {
    pub operation: Operation,
    /// The resource written (group, version, kind, plural).
    pub resource: &'a Resource,
    /// The subresource written ("" for the object itself): `status`, `scale`, `finalize`.
    pub subresource: &'a str,
    /// The namespace of the request ("" for cluster-scoped resources).
    pub namespace: &'a str,
    /// The object's name; for a create with `generateName`, "" (upstream's admission sees no name yet).
    pub name: &'a str,
    pub dry_run: bool,
}

impl<'a> Attributes<'a> {
    /// These attributes for the object `name`.
    pub(crate) fn named(self, name: &'a str) -> Attributes<'a> {
        Attributes { name, ..self }
    }
}

/// One request's admission chain. Both phases may refuse with any `RegistryError`; a refusal is the
/// request's answer.
pub trait Admission: Send + Sync {
    /// The mutating phase: may change `obj`. `old` is the current object (`Value::Null` on create).
    fn admit<'a>(
        &'a self,
        attrs: Attributes<'a>,
        obj: &'a mut Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>>;

    /// The validating phase: may only refuse. On delete, `obj` is `Value::Null` and `old` the object.
    fn validate<'a>(
        &'a self,
        attrs: Attributes<'a>,
        obj: &'a Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>>;
}

/// The chain a write carries in its options; none for the server's own writes (controllers, bootstrap),
/// which upstream's loopback client sends through admission as `system:apiserver` but which here skip it.
#[derive(Clone, Default)]
pub struct AdmissionHook(pub Option<Arc<dyn Admission>>);

impl AdmissionHook {
    pub fn new(chain: Arc<dyn Admission>) -> AdmissionHook {
        AdmissionHook(Some(chain))
    }

    /// The mutating phase, if there is a chain.
    pub(crate) async fn admit(&self, attrs: Attributes<'_>, obj: &mut Value, old: &Value) -> Result<(), RegistryError> {
        match &self.0 {
            Some(chain) => chain.admit(attrs, obj, old).await,
            None => Ok(()),
        }
    }

    /// The validating phase, if there is a chain.
    pub(crate) async fn validate(&self, attrs: Attributes<'_>, obj: &Value, old: &Value) -> Result<(), RegistryError> {
        match &self.0 {
            Some(chain) => chain.validate(attrs, obj, old).await,
            None => Ok(()),
        }
    }

    pub(crate) fn is_some(&self) -> bool {
        self.0.is_some()
    }
}

impl std::fmt::Debug for AdmissionHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "AdmissionHook(chain)" } else { "AdmissionHook(none)" })
    }
}

/// Two writes' options are equal whatever chain they carry: the chain is who checks, not what is asked.
impl PartialEq for AdmissionHook {
    fn eq(&self, _: &AdmissionHook) -> bool {
        true
    }
}

impl Eq for AdmissionHook {}
