//! The scenario language's vocabulary: what every part of it shares and none of it owns. Values and key
//! ranges as written ([`value`]), the `expect = { .. }` table as written ([`expect`]) and as judged
//! ([`expectations`]), the Kubernetes words steps and clients share ([`kube`]), where an error points
//! ([`source`]), how a step's name is resolved ([`names`]), and the nearest known word for a misspelt one
//! ([`suggest`]).
//!
//! This folder is the bottom layer of `scenario`: it depends on nothing of the language above it (the step
//! kinds, the file's tables, validation, the runner, the judge), so every one of them may use it.

pub mod expect;
pub mod expectations;
pub mod kube;
pub mod names;
pub mod source;
pub mod suggest;
pub mod value;
