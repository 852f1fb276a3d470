//! Serving CustomResourceDefinitions (`apiextensions.k8s.io/v1`), as apiextensions-apiserver does on top of
//! the generic apiserver: what an established CRD adds to the catalog, and the controller that accepts CRDs'
//! names and swaps the server's catalog and registries as CRDs come and go.
//!
//! This is the top of the apiserver's layers but the server assembly: it reads the catalog (`crate::apis`)
//! and drives the HTTP layer's served snapshot (`crate::endpoints`). What a CRD is and what its custom
//! resources obey sits lower, in the registry, because the catalog and the field manager need it too: the
//! CRD kind's strategy and conditions (`registry::strategies::customresourcedefinitions`), the custom
//! resources' strategy (`registry::strategies::customresources`), and structural schemas with their CEL
//! rules (`registry::structural`).
//!
//! Files: [`custom`] (the catalog entries and printer of a CRD's resources), [`naming`] (which names a CRD
//! gets, pure), [`controller`] (the loop that applies all this to a server).

pub(crate) mod controller;
pub mod custom;
pub(crate) mod naming;
