//! The options of a write, as a client sends them with the request (`CreateOptions`, `UpdateOptions`,
//! `DeleteOptions`), and their validation with kube's texts.
//!
//! `dryRun` is a list because the API reserves room for partial dry runs; only `All` exists, and any other
//! value is a 422 on the options object itself (`ValidateDryRun`).

use crate::registry::admission::AdmissionHook;
use crate::registry::error::RegistryError;
use crate::registry::field_error::FieldError;
use crate::storage::Preconditions;

/// `metav1.DryRunAll`: validate and answer as if done, write nothing.
pub(crate) const DRY_RUN_ALL: &str = "All";

/// Options of a create.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CreateOptions {
    pub dry_run: Vec<String>,
    /// The manager the write's fields go to in `metadata.managedFields` (`fieldManager`, or the client's
    /// user agent); `None` for the server's own writes, which are not tracked.
    pub field_manager: Option<String>,
    /// Who asks: the review kinds answer about this user.
    pub user: crate::registry::user::UserInfo,
    /// The request's admission chain (none for the server's own writes).
    pub admission: AdmissionHook,
}

/// Options of an update (of the main resource or a subresource).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpdateOptions {
    pub dry_run: Vec<String>,
    /// As [`CreateOptions::field_manager`].
    pub field_manager: Option<String>,
    /// As [`CreateOptions::admission`].
    pub admission: AdmissionHook,
}

/// Options of a delete.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    pub preconditions: Preconditions,
    /// `gracePeriodSeconds`: for resources with graceful deletion (pods), how long the object may take to
    /// go; `None` takes the object's own default, 0 deletes at once, a negative value counts as 1.
    pub grace_period_seconds: Option<i64>,
    pub dry_run: Vec<String>,
    /// `propagationPolicy`: what happens to the object's dependents (the garbage collector's finalizers).
    pub propagation_policy: Option<PropagationPolicy>,
    /// The deprecated `orphanDependents`.
    pub orphan_dependents: Option<bool>,
    /// As [`CreateOptions::admission`].
    pub admission: AdmissionHook,
}

/// `metav1.DeletionPropagation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropagationPolicy {
    /// Dependents stay; the object waits for the `orphan` finalizer.
    Orphan,
    /// Dependents are deleted in the background (the default of most resources): no finalizer.
    Background,
    /// Dependents go first; the object waits for the `foregroundDeletion` finalizer.
    Foreground,
}

impl CreateOptions {
    /// A dry-run create.
    pub fn dry_run() -> CreateOptions {
        CreateOptions { dry_run: vec![DRY_RUN_ALL.into()], ..CreateOptions::default() }
    }
}

impl UpdateOptions {
    /// A dry-run update.
    pub fn dry_run() -> UpdateOptions {
        UpdateOptions { dry_run: vec![DRY_RUN_ALL.into()], ..UpdateOptions::default() }
    }
}

impl DeleteOptions {
    /// A delete with `preconditions` and nothing else.
    pub(crate) fn with_preconditions(preconditions: Preconditions) -> DeleteOptions {
        DeleteOptions { preconditions, ..DeleteOptions::default() }
    }

    /// A delete with grace period `secs`.
    pub fn grace(secs: i64) -> DeleteOptions {
        DeleteOptions { grace_period_seconds: Some(secs), ..DeleteOptions::default() }
    }
}

/// Whether `values` ask for a dry run; a value other than `All` is a 422 on the options kind `kind`
/// (`CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"x"}: ...`).
pub(crate) fn dry_run(kind: &str, values: &[String]) -> Result<bool, RegistryError> {
    if values.iter().all(|v| v == DRY_RUN_ALL) {
        return Ok(!values.is_empty());
    }
    Err(RegistryError::Invalid {
        group: "meta.k8s.io".into(),
        kind: kind.into(),
        name: String::new(),
        errors: vec![FieldError::not_supported_list("dryRun", values, &[DRY_RUN_ALL])],
    })
}
