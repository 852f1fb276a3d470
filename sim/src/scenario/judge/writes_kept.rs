//! The `AcknowledgedWritesKept` finding: every scripted `kube` create, update or patch that an apiserver
//! acknowledged is in etcd's history at the resourceVersion it was acknowledged with (read by the runner
//! once the run settled, `execute::writes_kept`). A write etcd has since compacted is counted, not judged.

use super::apiserver::WHO;
use super::Finding;
use crate::scenario::execute::writes_kept::Lookup;
use crate::scenario::execute::ScenarioRun;
use crate::scenario::plan::Scenario;

/// The finding, if the scenario asks for the check.
pub fn finding(scenario: &Scenario, run: &ScenarioRun) -> Option<Finding> {
    let must_hold = scenario.writes_kept?;
    let what =
        if must_hold { "AcknowledgedWritesKept".to_string() } else { "AcknowledgedWritesKept fails".to_string() };
    let writes = run.writes_kept.as_deref().unwrap_or_default();
    let mut lost = Vec::new();
    let (mut kept, mut unjudged) = (0, 0);
    for w in writes {
        let head = format!("{} `{}` acknowledged at rv={}", w.who, w.request, w.rv);
        match &w.at_rv {
            Lookup::At(Some(m)) if *m == w.rv => kept += 1,
            Lookup::At(Some(m)) => lost.push(format!("{head}: {} at that revision was last written at {m}", w.key)),
            Lookup::At(None) => lost.push(format!("{head}: {} is absent at that revision", w.key)),
            Lookup::Future => lost.push(format!("{head}: etcd's revision is now below it (it went back)")),
            Lookup::Unreadable(why) => lost.push(format!("{head}: etcd could not be read ({why})")),
            Lookup::Compacted => unjudged += 1,
        }
    }
    let detail = if lost.is_empty() {
        let apart = if unjudged > 0 {
            format!(" ({unjudged} more compacted or unreadable, not judged)")
        } else {
            String::new()
        };
        format!("{kept} acknowledged writes found in etcd at their resourceVersions{apart}")
    } else {
        format!("{} acknowledged writes lost or unreadable:\n  {}", lost.len(), lost.join("\n  "))
    };
    Some(Finding {
        who: WHO.into(),
        at: scenario.path.clone(),
        key: "",
        what,
        pass: lost.is_empty() == must_hold,
        detail,
    })
}
