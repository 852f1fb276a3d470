//! The built-in kinds, by group, version and kind, with the k8s-openapi type whose schema (its `schemars`
//! feature) says what their JSON is: the decoder's type checks and unknown fields ([`super::schema`]) and
//! `/openapi/v3` read it. A kind not in this table is a custom resource's.
//!
//! The table covers every stable group version of kube-apiserver 1.32 (and the kinds subresources carry:
//! autoscaling's `Scale`, policy's `Eviction`, authentication's `TokenRequest`), every kind of each, so that
//! a body of a sibling kind is recognised as one and a new kind's module needs no line here.

use k8s_openapi::api::{
    admissionregistration, apps, authentication, authorization, autoscaling, batch, certificates, coordination, core,
    discovery, events, flowcontrol, networking, node, policy, rbac, scheduling, storage,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use k8s_openapi::schemars::{JsonSchema, Schema, SchemaGenerator};
use k8s_openapi::Resource;

/// A built-in kind and the function that puts its schema (and every schema it reaches) into a generator.
pub(crate) struct BuiltinKind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    /// Adds the kind's definition to the generator and returns a `$ref` to it.
    pub schema: fn(&mut SchemaGenerator) -> Schema,
}

/// The built-in kind `group`/`version`/`kind`, if k8s-openapi has it here.
pub(crate) fn find(group: &str, version: &str, kind: &str) -> Option<&'static BuiltinKind> {
    BUILTIN.iter().find(|k| k.group == group && k.version == version && k.kind == kind)
}

/// Every built-in kind of the table.
pub(crate) fn all() -> &'static [BuiltinKind] {
    BUILTIN
}

const fn kind<T: Resource + JsonSchema>() -> BuiltinKind {
    BuiltinKind { group: T::GROUP, version: T::VERSION, kind: T::KIND, schema: SchemaGenerator::subschema_for::<T> }
}

static BUILTIN: &[BuiltinKind] = &[
    kind::<core::v1::Binding>(),
    kind::<core::v1::ComponentStatus>(),
    kind::<core::v1::ConfigMap>(),
    kind::<core::v1::Endpoints>(),
    kind::<core::v1::Event>(),
    kind::<core::v1::LimitRange>(),
    kind::<core::v1::Namespace>(),
    kind::<core::v1::Node>(),
    kind::<core::v1::PersistentVolume>(),
    kind::<core::v1::PersistentVolumeClaim>(),
    kind::<core::v1::Pod>(),
    kind::<core::v1::PodTemplate>(),
    kind::<core::v1::ReplicationController>(),
    kind::<core::v1::ResourceQuota>(),
    kind::<core::v1::Secret>(),
    kind::<core::v1::Service>(),
    kind::<core::v1::ServiceAccount>(),
    kind::<apps::v1::ControllerRevision>(),
    kind::<apps::v1::DaemonSet>(),
    kind::<apps::v1::Deployment>(),
    kind::<apps::v1::ReplicaSet>(),
    kind::<apps::v1::StatefulSet>(),
    kind::<CustomResourceDefinition>(),
    kind::<APIService>(),
    kind::<admissionregistration::v1::MutatingWebhookConfiguration>(),
    kind::<admissionregistration::v1::ValidatingAdmissionPolicy>(),
    kind::<admissionregistration::v1::ValidatingAdmissionPolicyBinding>(),
    kind::<admissionregistration::v1::ValidatingWebhookConfiguration>(),
    kind::<authorization::v1::LocalSubjectAccessReview>(),
    kind::<authorization::v1::SelfSubjectAccessReview>(),
    kind::<authorization::v1::SelfSubjectRulesReview>(),
    kind::<authorization::v1::SubjectAccessReview>(),
    kind::<autoscaling::v2::HorizontalPodAutoscaler>(),
    kind::<certificates::v1::CertificateSigningRequest>(),
    kind::<discovery::v1::EndpointSlice>(),
    kind::<flowcontrol::v1::FlowSchema>(),
    kind::<flowcontrol::v1::PriorityLevelConfiguration>(),
    kind::<networking::v1::Ingress>(),
    kind::<networking::v1::IngressClass>(),
    kind::<networking::v1::NetworkPolicy>(),
    kind::<node::v1::RuntimeClass>(),
    kind::<rbac::v1::ClusterRole>(),
    kind::<rbac::v1::ClusterRoleBinding>(),
    kind::<rbac::v1::Role>(),
    kind::<rbac::v1::RoleBinding>(),
    kind::<scheduling::v1::PriorityClass>(),
    kind::<storage::v1::CSIDriver>(),
    kind::<storage::v1::CSINode>(),
    kind::<storage::v1::CSIStorageCapacity>(),
    kind::<storage::v1::StorageClass>(),
    kind::<storage::v1::VolumeAttachment>(),
    kind::<authentication::v1::SelfSubjectReview>(),
    kind::<authentication::v1::TokenRequest>(),
    kind::<authentication::v1::TokenReview>(),
    kind::<autoscaling::v1::HorizontalPodAutoscaler>(),
    kind::<autoscaling::v1::Scale>(),
    kind::<batch::v1::CronJob>(),
    kind::<batch::v1::Job>(),
    kind::<coordination::v1::Lease>(),
    kind::<events::v1::Event>(),
    kind::<policy::v1::Eviction>(),
    kind::<policy::v1::PodDisruptionBudget>(),
];
