//! The scenario language: a TOML file describes a cluster, scripted clients with their steps and
//! expectations, generated workloads, faults, failpoints, the nemesis and the checks; this module parses
//! it ([`syntax`]), validates it into a [`Scenario`] ([`validate`]), runs it ([`execute`]), judges what the
//! clients saw ([`judge`]) and writes the client-visible outcome that snapshots keep ([`report`]), every
//! request in [`crate::describe`]'s words; [`shrink`] reduces a failing scenario to a smaller one that fails
//! the same way.
//!
//! Each kind of step is one module of [`steps`], registered in one table there: its table, validation,
//! text, run and the expectation keys it judges. [`lang`] is the vocabulary below them all.
//! `scenarios/README.md` is the language's reference, with an example per feature.

pub mod error;
pub mod execute;
pub mod expr;
pub mod judge;
pub mod lang;
pub mod plan;
pub mod relations;
pub mod report;
pub mod shrink;
pub mod steps;
pub mod syntax;
pub mod validate;

#[cfg(test)]
mod tests;

use std::path::Path;

pub use error::ScenarioError;
pub use execute::{run, ScenarioRun};
pub use plan::{Scenario, ZooEntry};

/// Reads and validates the scenario at `path`.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError::whole(&shown, format!("cannot read: {e}")))?;
    parse(&shown, &text)
}

/// Parses and validates scenario text; `path` names it in errors and gives the scenario its name. Tables
/// with `for_each` are expanded first (`syntax::expand`), on toml's parse tree, so that every error still
/// points at the file's own text.
pub fn parse(path: &str, text: &str) -> Result<Scenario, ScenarioError> {
    let toml_error = |e: toml::de::Error| {
        let span = e.span().unwrap_or(0..0);
        ScenarioError::at(path, text, span, lang::suggest::serde_message(e.message().trim_end()))
    };
    let mut doc = toml::de::DeTable::parse(text).map_err(toml_error)?;
    syntax::expand::expand(doc.get_mut()).map_err(|(span, m)| ScenarioError::at(path, text, span, m))?;
    let file =
        <syntax::File as serde::Deserialize>::deserialize(toml::de::Deserializer::from(doc)).map_err(toml_error)?;
    let name = Path::new(path).file_stem().map_or_else(|| path.to_string(), |s| s.to_string_lossy().into_owned());
    validate::validate(path, text, &name, file)
}

/// Every scenario file under `dir` (recursively), sorted by path.
pub fn files_under(dir: &Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "toml") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}
