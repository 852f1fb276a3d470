//! The admission plugins by name, in kube-apiserver's order (`AllOrderedPlugins`), and which are on by
//! default. A name without a constructor is accepted by the flags but not modelled (the README lists
//! them); the store itself enforces NamespaceLifecycle on create.

mod default_storage_class;
mod default_toleration_seconds;
mod limit_ranger;
mod pod_security;
mod pod_security_checks;
mod priority;
mod resource_quota;
mod resource_quota_usage;
mod service_account;
mod support;
#[cfg(test)]
mod testing;

use std::sync::Arc;

use crate::admission::Plugin;

/// A plugin's constructor.
pub(crate) type Make = fn() -> Arc<dyn Plugin>;

/// Every plugin upstream knows, in the order its chain runs them.
pub(crate) const ORDER: &[(&str, Option<Make>)] = &[
    ("AlwaysAdmit", None),
    ("NamespaceAutoProvision", None),
    ("NamespaceLifecycle", None),
    ("NamespaceExists", None),
    ("LimitPodHardAntiAffinityTopology", None),
    ("LimitRanger", Some(limit_ranger::make)),
    ("ServiceAccount", Some(service_account::make)),
    ("NodeRestriction", None),
    ("TaintNodesByCondition", None),
    ("AlwaysPullImages", None),
    ("ImagePolicyWebhook", None),
    ("PodSecurity", Some(pod_security::make)),
    ("PodNodeSelector", None),
    ("Priority", Some(priority::make)),
    ("DefaultTolerationSeconds", Some(default_toleration_seconds::make)),
    ("PodTolerationRestriction", None),
    ("EventRateLimit", None),
    ("ExtendedResourceToleration", None),
    ("DefaultStorageClass", Some(default_storage_class::make)),
    ("StorageObjectInUseProtection", None),
    ("OwnerReferencesPermissionEnforcement", None),
    ("PersistentVolumeClaimResize", None),
    ("RuntimeClass", None),
    ("CertificateApproval", None),
    ("CertificateSigning", None),
    ("ClusterTrustBundleAttest", None),
    ("CertificateSubjectRestriction", None),
    ("DefaultIngressClass", None),
    ("DenyServiceExternalIPs", None),
    ("MutatingAdmissionWebhook", Some(crate::admission::webhook::make_mutating)),
    ("ValidatingAdmissionPolicy", Some(crate::admission::policy::make)),
    ("ValidatingAdmissionWebhook", Some(crate::admission::webhook::make_validating)),
    ("ResourceQuota", Some(resource_quota::make)),
    ("AlwaysDeny", None),
];

/// The plugins on when no flag says otherwise (upstream's `DefaultOffAdmissionPlugins` complement).
const DEFAULT_ON: &[&str] = &[
    "NamespaceLifecycle",
    "LimitRanger",
    "ServiceAccount",
    "TaintNodesByCondition",
    "PodSecurity",
    "Priority",
    "DefaultTolerationSeconds",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
];

/// The names on by default.
pub(crate) fn default_on() -> impl Iterator<Item = &'static str> {
    DEFAULT_ON.iter().copied()
}
