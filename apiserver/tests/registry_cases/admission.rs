//! The admission hooks a write carries: when the store calls each phase and with what, that a refusal is
//! the write's answer and nothing is written, and that an update refused on a current copy is judged once
//! (the `admission-rejection-retried` switch puts back the second call of kubernetes PR #104182).

use std::sync::{Arc, Mutex};

use apiserver::bug::{Bug, Bugs};
use apiserver::registry::admission::{Admission, AdmissionHook, Attributes};
use apiserver::registry::{CreateOptions, DeleteOptions, RegistryError, UpdateOptions};
use serde_json::{json, Value};

use super::harness::{Case, Ctx};

pub fn cases() -> Vec<Case> {
    cases![each_phase_sees_the_write_it_judges, a_refused_update_is_judged_once_unless_the_switch_is_on]
}

/// Records each call as `phase OPERATION name`, and refuses updates when told to.
struct Recorder {
    calls: Mutex<Vec<String>>,
    refuse_updates: bool,
}

impl Recorder {
    fn hook(refuse_updates: bool) -> (Arc<Recorder>, AdmissionHook) {
        let recorder = Arc::new(Recorder { calls: Mutex::new(Vec::new()), refuse_updates });
        (recorder.clone(), AdmissionHook::new(recorder))
    }

    fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }
}

impl Admission for Recorder {
    fn admit<'a>(
        &'a self,
        attrs: Attributes<'a>,
        obj: &'a mut Value,
        _old: &'a Value,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), RegistryError>> + Send + 'a>> {
        self.calls.lock().unwrap().push(format!("admit {} {}", attrs.operation.as_str(), attrs.name));
        obj["metadata"]["labels"] = json!({"admitted": "yes"});
        Box::pin(async { Ok(()) })
    }

    fn validate<'a>(
        &'a self,
        attrs: Attributes<'a>,
        obj: &'a Value,
        old: &'a Value,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), RegistryError>> + Send + 'a>> {
        let seen = if obj.is_null() { &old["data"] } else { &obj["data"] };
        self.calls.lock().unwrap().push(format!("validate {} {} {seen}", attrs.operation.as_str(), attrs.name));
        let refuse = self.refuse_updates && attrs.operation.as_str() == "UPDATE";
        Box::pin(async move {
            if refuse {
                return Err(RegistryError::BadRequest("no updates".into()));
            }
            Ok(())
        })
    }
}

fn cm(name: &str, v: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": v}})
}

async fn each_phase_sees_the_write_it_judges(ctx: Ctx) {
    ctx.namespace("ns").await;
    let (recorder, admission) = Recorder::hook(false);
    let created = ctx
        .configmaps
        .create_with("ns", cm("a", "1"), &CreateOptions { admission: admission.clone(), ..CreateOptions::default() })
        .await
        .unwrap();
    assert_eq!(created["metadata"]["labels"], json!({"admitted": "yes"}), "the mutation is stored");
    let mut next = created.clone();
    next["data"] = json!({"v": "2"});
    let opts = UpdateOptions { admission: admission.clone(), ..UpdateOptions::default() };
    ctx.configmaps.update_with("ns", "a", next, &opts).await.unwrap();
    let opts = DeleteOptions { admission, ..DeleteOptions::default() };
    ctx.configmaps.delete_with("ns", "a", &opts).await.unwrap();
    assert_eq!(
        recorder.calls(),
        [
            "admit CREATE a",
            r#"validate CREATE a {"v":"1"}"#,
            "admit UPDATE a",
            r#"validate UPDATE a {"v":"2"}"#,
            r#"validate DELETE a {"v":"2"}"#,
        ]
    );
}

async fn a_refused_update_is_judged_once_unless_the_switch_is_on(ctx: Ctx) {
    ctx.namespace("ns").await;
    for (on, want) in [(false, 1), (true, 2)] {
        let bugs = if on { Bugs::of(&[Bug::AdmissionRejectionRetried]) } else { Bugs::none() };
        let store = ctx.configmaps.clone().with_bugs(bugs);
        let name = format!("refused-{on}");
        let created = store.create("ns", cm(&name, "1")).await.unwrap();
        // The watch cache (where there is one) has seen the create before the update starts from it.
        let rv = created["metadata"]["resourceVersion"].as_str().unwrap().to_string();
        for _ in 0..200 {
            let cached = store
                .get("ns", &name, &apiserver::storage::GetOptions { resource_version: "0".into() })
                .await
                .map(|o| o["metadata"]["resourceVersion"] == rv.as_str());
            if cached == Ok(true) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let (recorder, admission) = Recorder::hook(true);
        let mut next = created.clone();
        next["data"] = json!({"v": "2"});
        let opts = UpdateOptions { admission, ..UpdateOptions::default() };
        let err = store.update_with("ns", &name, next, &opts).await.unwrap_err();
        assert_eq!(err, RegistryError::BadRequest("no updates".into()));
        let judged = recorder.calls().iter().filter(|c| c.starts_with("validate UPDATE")).count();
        assert_eq!(judged, want, "switch on: {on}: {:?}", recorder.calls());
        let stored = store.get("ns", &name, &Default::default()).await.unwrap();
        assert_eq!(stored["data"], json!({"v": "1"}), "nothing was written");
    }
}
