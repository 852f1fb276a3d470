//! CustomResourceDefinitions (`apiextensions.k8s.io/v1`), as apiextensions-apiserver serves them: the CRD
//! kind itself, the structural schemas of custom resources, their CEL validation rules, and the controller
//! that turns an accepted CRD into served resources.
//!
//! Files: [`crd`] (the CRD kind: defaults, validation, the cleanup finalizer), [`schema`] (structural
//! schemas: the structural check, validation, pruning, defaulting), [`cel`] (one `x-kubernetes-validations`
//! rule, compiled and evaluated with the `cel` crate) and [`cel_rules`] (a schema's rules laid out as the
//! schema is), [`custom`] (the catalog entries, strategy and printer of a CRD's resources), [`naming`]
//! (which names a CRD gets), [`conditions`] (reading and setting a CRD's conditions), [`controller`] (the loop that applies all this to a server).

pub mod cel;
pub mod cel_rules;
pub mod conditions;
pub mod controller;
pub mod crd;
pub mod custom;
pub mod naming;
pub mod schema;
