//! One scripted client: its steps in order, each after its `after` steps and its `at_ms`, each run by its
//! kind and recorded with what its client observed, and finished on the [`Board`] (its revision and lease
//! for later steps).

use std::sync::Mutex;
use std::time::Duration;

use super::StepRecord;
use crate::client::RecordingClient;
use crate::scenario::plan::ClientScript;
use crate::scenario::steps::ctx::{Ctx, RunCx};
use crate::scenario::steps::kube_conn::KubeConn;

/// Runs the client's steps in order, filing each step's record as it finishes.
pub(super) async fn run_script(
    ctx: &Ctx,
    mut client: RecordingClient,
    mut kube: Option<KubeConn>,
    script: &ClientScript,
    index: usize,
    records: &Mutex<Vec<Vec<StepRecord>>>,
) {
    for step in &script.steps {
        ctx.board.wait_done(&step.after).await;
        if let Some(at_ms) = step.at_ms {
            let now = madsim::time::TimeHandle::current().elapsed();
            let at = Duration::from_millis(at_ms);
            if at > now {
                madsim::time::sleep(at - now).await;
            }
        }
        let mut cx = RunCx {
            ctx,
            client: &mut client,
            kube: kube.as_mut(),
            client_name: &script.name,
            label: &step.label,
            name: step.name.as_deref(),
            expect: step.expect.as_ref(),
        };
        let (observed, revision, lease) = step.op.run(&mut cx).await;
        let record = StepRecord { label: step.label.clone(), request: step.text(), observed };
        records.lock().expect("records lock")[index].push(record);
        ctx.board.finish(step.name.as_deref(), revision, lease);
    }
}
