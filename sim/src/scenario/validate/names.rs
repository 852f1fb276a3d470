//! Every step's name with what the step gives the steps that name it (collected first, so that any step may
//! refer to any other); the references themselves are resolved through `crate::scenario::lang::names`.

use std::collections::BTreeMap;
use std::ops::Range;

use super::{Result, Source};
use crate::scenario::lang::names::Gives;
use crate::scenario::syntax;

/// Every named step, with where its name is and what it gives.
pub(super) fn steps(src: &Source, file: &syntax::File) -> Result<BTreeMap<String, (Range<usize>, Gives)>> {
    let mut steps = BTreeMap::new();
    for client in &file.clients {
        for step in &client.steps {
            if let Some(name) = &step.get_ref().name {
                // A step with no operation or several is refused later, at its table.
                let gives = step.get_ref().ops.first().map_or(Gives::Nothing, |op| op.gives());
                if steps.insert(name.get_ref().clone(), (name.span(), gives)).is_some() {
                    return Err(src.err(
                        name.span(),
                        format!("a step named {:?} already exists; step names must be unique", name.get_ref()),
                    ));
                }
            }
        }
    }
    Ok(steps)
}
