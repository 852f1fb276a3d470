//! The order of steps: refuses `after` chains that can never start.

use std::collections::BTreeMap;

use super::{Result, Source};
use crate::scenario::plan::ClientScript;
use crate::scenario::syntax;

/// Refuses `after` chains that can never start: a step that waits, directly or through others, for a
/// step that can only run after it.
pub(super) fn check_no_deadlock(src: &Source, file: &syntax::File, clients: &[ClientScript]) -> Result<()> {
    // Node (client, step); edges from what must finish first to what waits for it.
    let mut index: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (c, client) in clients.iter().enumerate() {
        for (s, step) in client.steps.iter().enumerate() {
            if let Some(n) = &step.name {
                index.insert(n, (c, s));
            }
        }
    }
    // A step (c, s) can start only when (c, s-1) and its `after` steps are done. Depth-first search for a
    // cycle through those "waits for" edges.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Active,
        Done,
    }
    let mut marks: Vec<Vec<Mark>> = clients.iter().map(|c| vec![Mark::New; c.steps.len()]).collect();
    fn visit(
        node: (usize, usize),
        clients: &[ClientScript],
        index: &BTreeMap<&str, (usize, usize)>,
        marks: &mut Vec<Vec<Mark>>,
    ) -> Option<(usize, usize)> {
        match marks[node.0][node.1] {
            Mark::Done => return None,
            Mark::Active => return Some(node),
            Mark::New => {}
        }
        marks[node.0][node.1] = Mark::Active;
        let step = &clients[node.0].steps[node.1];
        let mut deps: Vec<(usize, usize)> = step.after.iter().filter_map(|a| index.get(a.as_str()).copied()).collect();
        if node.1 > 0 {
            deps.push((node.0, node.1 - 1));
        }
        for d in deps {
            if let Some(cycle) = visit(d, clients, index, marks) {
                return Some(cycle);
            }
        }
        marks[node.0][node.1] = Mark::Done;
        None
    }
    for c in 0..clients.len() {
        for s in 0..clients[c].steps.len() {
            if let Some((cc, ss)) = visit((c, s), clients, &index, &mut marks) {
                let span = file.clients[cc].steps[ss].span();
                return Err(src.err(span, format!("step {} can never start: its `after` steps wait, directly or through others, for steps that run after it", clients[cc].steps[ss].label)));
            }
        }
    }
    Ok(())
}
