//! Admission: the plugins every client's write passes through between its handler and storage, in
//! kube-apiserver's order, and `--enable-admission-plugins` / `--disable-admission-plugins`.
//!
//! The registry decides when admission runs (`registry::admission`); this layer decides what runs. A
//! [`Plugins`] chain is built once per server from [`AdmissionConfig`]; the endpoints run it for each
//! request with that request's user ([`Request`]). Every mutating phase runs before every validating one,
//! as upstream's chain does; a plugin is one module under `plugins/` and one line of [`plugins::ORDER`].
//!
//! **Never:** `endpoints` or `server` (a plugin sees a request's attributes and the registry, not HTTP).

pub(crate) mod plugins;
pub(crate) mod policy;
pub(crate) mod rbac_escalation;
pub(crate) mod webhook;

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use crate::registry::admission::Attributes;
use crate::registry::authorizer::Modes;
use crate::registry::error::RegistryError;
use crate::registry::rest::{BoxFuture, Registry};
use crate::registry::user::UserInfo;

/// What a plugin sees of a request.
pub(crate) struct Request<'a> {
    pub(crate) attrs: Attributes<'a>,
    pub(crate) user: &'a UserInfo,
    /// Every served resource's registry: what plugins read (namespaces, limit ranges, webhook
    /// configurations, quotas).
    pub(crate) registry: &'a Registry,
    pub(crate) now_unix_s: i64,
}

/// One admission plugin. A plugin that only validates leaves `admit` as is, and the other way round.
pub(crate) trait Plugin: Send + Sync {
    /// The plugin's name, as the flags write it (`NamespaceLifecycle`).
    fn name(&self) -> &'static str;

    /// The mutating phase (`admission.MutationInterface`).
    fn admit<'a>(
        &'a self,
        req: &'a Request<'a>,
        obj: &'a mut Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        let _ = (req, obj, old);
        Box::pin(async { Ok(()) })
    }

    /// The validating phase (`admission.ValidationInterface`).
    fn validate<'a>(
        &'a self,
        req: &'a Request<'a>,
        obj: &'a Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        let _ = (req, obj, old);
        Box::pin(async { Ok(()) })
    }
}

/// Which plugins are on: upstream's default set, changed by the two flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmissionConfig {
    pub enabled: BTreeSet<String>,
}

impl Default for AdmissionConfig {
    fn default() -> AdmissionConfig {
        AdmissionConfig { enabled: plugins::default_on().map(str::to_string).collect() }
    }
}

impl AdmissionConfig {
    /// The default set, plus `enable`, less `disable` (`--enable-admission-plugins`,
    /// `--disable-admission-plugins`); an unknown name or one in both lists is an error, as upstream's
    /// `Validate` says it.
    pub fn from_flags(enable: &[String], disable: &[String]) -> Result<AdmissionConfig, String> {
        for (flag, names) in [("enable-admission-plugins", enable), ("disable-admission-plugins", disable)] {
            if let Some(name) = names.iter().find(|n| !plugins::ORDER.iter().any(|(known, _)| known == n)) {
                return Err(format!("{flag} plugin {name:?} is unknown"));
            }
        }
        if let Some(both) = enable.iter().find(|n| disable.contains(n)) {
            return Err(format!("{both} in enable-admission-plugins and disable-admission-plugins overlapped"));
        }
        let mut config = AdmissionConfig::default();
        config.enabled.extend(enable.iter().cloned());
        for name in disable {
            config.enabled.remove(name);
        }
        Ok(config)
    }
}

/// The plugins a server runs, in order.
#[derive(Clone, Default)]
pub struct Plugins(pub(crate) Vec<Arc<dyn Plugin>>);

impl Plugins {
    /// The chain `config` turns on, in upstream's order, and RBAC's escalation check when `authorization`
    /// includes RBAC: not a plugin upstream but the RBAC storage itself, so no flag turns it off, and last,
    /// since that storage sees a write after every mutating plugin ([`rbac_escalation`]).
    pub fn new(config: &AdmissionConfig, authorization: &Modes) -> Plugins {
        let mut chain: Vec<Arc<dyn Plugin>> = plugins::ORDER
            .iter()
            .filter(|(name, _)| config.enabled.contains(*name))
            .filter_map(|(_, make)| make.map(|make| make()))
            .collect();
        chain.extend(rbac_escalation::make(authorization));
        Plugins(chain)
    }

    /// Every plugin's mutating phase, in order.
    pub(crate) async fn admit(&self, req: &Request<'_>, obj: &mut Value, old: &Value) -> Result<(), RegistryError> {
        for plugin in &self.0 {
            plugin.admit(req, obj, old).await?;
        }
        Ok(())
    }

    /// Every plugin's validating phase, in order.
    pub(crate) async fn validate(&self, req: &Request<'_>, obj: &Value, old: &Value) -> Result<(), RegistryError> {
        for plugin in &self.0 {
            plugin.validate(req, obj, old).await?;
        }
        Ok(())
    }

    /// The names of the plugins that run, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|p| p.name()).collect()
    }
}
