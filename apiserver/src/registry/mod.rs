//! The generic registry: kube-apiserver's `registry/generic/registry.Store` and its strategies, over any
//! [`crate::storage::Storage`] backend (the etcd3 store or the Cacher).
//!
//! Layers, inside out:
//! - [`field_error`]: [`FieldError`], apimachinery's field errors and their texts.
//! - [`names`]: DNS-1123 name checks with kube's messages, and `generateName` expansion.
//! - [`meta`]: metadata accessors over JSON and the generic metadata validation.
//! - [`system`]: [`SystemFields`], the injected seeded generator and [`Clock`] that make names, uids and
//!   timestamps deterministic.
//! - [`options`]: [`CreateOptions`], [`UpdateOptions`], [`DeleteOptions`] (dry run, grace period) and their
//!   validation.
//! - [`kinds`] and [`schema`]: the built-in kinds and the shape of their JSON (k8s-openapi's schemas);
//!   [`extensions`]: upstream's OpenAPI extensions of their fields (list and map types, patch strategies).
//! - [`structural`]: the structural schemas of custom resources (a CRD version's `openAPIV3Schema` as a
//!   tree: the structural check, validation, pruning, defaulting) and their CEL rules.
//! - [`managed_fields`]: the field manager (`managedFields` and server-side apply), which reads a field's
//!   shape from either kind of schema.
//! - [`typecheck`]: the body's `kind` and `apiVersion` against the resource's, the Go types of its fields
//!   and the fields the type lacks, with kube's decode errors.
//! - [`resource`]: the [`Resource`] descriptor that names a resource.
//! - [`strategy`]: the [`Strategy`] hooks per resource;
//!   [`strategies`] holds those of the built-in resources, one file each, the CRD kind's and the custom
//!   resources'.
//! - [`selector`]: label and field selectors.
//! - [`error`]: [`RegistryError`], the one error type of this layer, and its one translation into a `Status`.
//! - [`store`]: [`Store`], create, get, list, update, patch, delete and watch of one resource.
//! - [`rest`]: [`rest::Rest`], a resource's registry as an object the HTTP layer holds in a table.
//! - [`services`]: the service REST, which allocates cluster IPs and node ports around the generic store.
//! - [`namespace_controller`]: the namespace controller's finalization, as one synchronous pass.

pub mod admission;
pub mod authorizer;
pub(crate) mod error;
pub(crate) mod extensions;
pub(crate) mod field_error;
pub(crate) mod kinds;
pub(crate) mod label_selector;
pub mod managed_fields;
pub mod meta;
pub mod names;
pub mod namespace_controller;
pub mod options;
pub(crate) mod resource;
pub(crate) mod rest;
pub(crate) mod review;
pub mod schema;
pub(crate) mod selector;
pub mod services;
pub(crate) mod store;
pub mod strategies;
pub(crate) mod strategy;
pub(crate) mod structural;
pub mod system;
pub mod token_file;
pub mod tokens;
pub(crate) mod typecheck;
pub mod user;

pub use error::RegistryError;
pub use field_error::FieldError;
pub use options::{CreateOptions, DeleteOptions, UpdateOptions};
pub use resource::Resource;
pub use store::{ApplyRequest, ListRequest, Store};
pub use strategy::{DeleteStrategy, Strategy, Subresource};
pub use system::{Clock, FixedClock, SystemFields};
