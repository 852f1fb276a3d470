//! kube 5 (kube-rs, over k8s-openapi 0.29) against the binary, configured from the kubeconfig the binary
//! wrote (plain HTTP, and HTTPS with its certificate chain and token): `Api<ConfigMap>` CRUD with merge and
//! JSON patches, a stale replace answering 409, the runtime's `watcher` (a paged list then a watch, and a
//! streaming list with `sendInitialEvents`) seeing changes made while it runs, and a `Controller` that
//! mirrors labelled ConfigMaps into owned Secrets and repairs them; a `#[derive(CustomResource)]` kind whose
//! CRD is created and waited for, applied with `Patch::Apply` and reconciled by a `Controller` through its
//! `/status`. Every wait has a deadline, so a missing
//! event fails its test with a message instead of hanging.
#![cfg(not(madsim))]

mod real_clients;
#[path = "support/spawn.rs"]
mod spawn;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::ByteString;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Api, Client, Config, Resource, ResourceExt};
use serde_json::json;

use real_clients::Server;

/// The longest any single wait in these tests may take.
const WAIT: Duration = Duration::from_secs(20);
/// The longest a whole test may take.
const TEST: Duration = Duration::from_secs(50);

/// A kube client configured from the server's kubeconfig file, as a user's program would load it.
async fn client(server: &Server) -> Client {
    let kubeconfig = Kubeconfig::read_from(&server.kubeconfig).expect("kube reads the written kubeconfig");
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("kube accepts the written kubeconfig");
    assert_eq!(config.default_namespace, "default", "the kubeconfig's context namespace");
    assert_eq!(config.cluster_url.to_string().trim_end_matches('/'), server.url, "the kubeconfig's server");
    Client::try_from(config).expect("a client from the kubeconfig")
}

/// Runs a test body with a client of a fresh plain-HTTP server, which lives until the body ends; fails the
/// test if the body takes longer than [`TEST`].
async fn with_server<F, Fut>(body: F)
where
    F: FnOnce(Client) -> Fut,
    Fut: Future<Output = ()>,
{
    with_started(Server::start, body).await
}

/// [`with_server`] with a server that `start` starts.
async fn with_started<F, Fut>(start: fn() -> Server, body: F)
where
    F: FnOnce(Client) -> Fut,
    Fut: Future<Output = ()>,
{
    let server = tokio::task::spawn_blocking(start).await.expect("the server starts");
    let client = client(&server).await;
    tokio::time::timeout(TEST, body(client)).await.unwrap_or_else(|_| panic!("the test took over {TEST:?}"));
    drop(server);
}

/// Awaits `fut`, failing the test with `what` if it takes longer than [`WAIT`].
async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, fut).await.unwrap_or_else(|_| panic!("timed out after {WAIT:?} waiting for {what}"))
}

/// Polls `probe` every 50 ms until it returns Some, at most [`WAIT`]; what it returned.
async fn eventually<T, Fut>(what: &str, mut probe: impl FnMut() -> Fut) -> T
where
    Fut: Future<Output = Option<T>>,
{
    within(what, async {
        loop {
            if let Some(found) = probe().await {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
}

fn configmap(name: &str, labels: &[(&str, &str)], data: &[(&str, &str)]) -> ConfigMap {
    let map = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: (!labels.is_empty()).then(|| map(labels)),
            ..ObjectMeta::default()
        },
        data: Some(map(data)),
        ..ConfigMap::default()
    }
}

/// The API error a call failed with; panics if it succeeded or failed otherwise.
fn api_error<T: std::fmt::Debug>(result: kube::Result<T>, call: &str) -> kube::core::Status {
    match result {
        Err(kube::Error::Api(status)) => *status,
        other => panic!("{call}: expected an API error, got {other:?}"),
    }
}

fn data(cm: &ConfigMap) -> BTreeMap<String, String> {
    cm.data.clone().unwrap_or_default()
}

fn pairs(items: &[(&str, &str)]) -> BTreeMap<String, String> {
    items.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[tokio::test]
async fn configmap_crud_with_merge_and_json_patches() {
    with_server(|client| async move {
        let api: Api<ConfigMap> = Api::default_namespaced(client);
        let pp = PostParams::default();

        let created = api.create(&pp, &configmap("settings", &[("app", "web")], &[("mode", "fast")])).await.unwrap();
        assert!(created.uid().is_some() && created.resource_version().is_some(), "{created:?}");
        assert_eq!(created.namespace().as_deref(), Some("default"));
        let again = api_error(api.create(&pp, &configmap("settings", &[], &[])).await, "a second create");
        assert_eq!((again.code, again.reason.as_str()), (409, "AlreadyExists"), "{again:?}");
        assert_eq!(again.message, r#"configmaps "settings" already exists"#);

        let got = api.get("settings").await.unwrap();
        assert_eq!((got.uid(), got.resource_version()), (created.uid(), created.resource_version()));
        api.create(&pp, &configmap("other", &[("app", "db")], &[])).await.unwrap();
        let listed = api.list(&ListParams::default().labels("app=web")).await.unwrap();
        assert_eq!(listed.items.iter().map(|c| c.name_any()).collect::<Vec<_>>(), ["settings"]);
        assert!(listed.metadata.resource_version.is_some(), "a list carries its resourceVersion");

        let mut changed = got.clone();
        changed.data = Some(pairs(&[("mode", "slow")]));
        let replaced = api.replace("settings", &pp, &changed).await.unwrap();
        assert_eq!(data(&replaced), pairs(&[("mode", "slow")]));
        assert_ne!(replaced.resource_version(), got.resource_version(), "a replace moves the resourceVersion");

        let merge = Patch::Merge(json!({"metadata": {"labels": {"tier": "front"}}, "data": {"added": "1"}}));
        let merged = api.patch("settings", &PatchParams::default(), &merge).await.unwrap();
        assert_eq!(data(&merged), pairs(&[("mode", "slow"), ("added", "1")]));
        assert_eq!(merged.labels().get("tier").map(String::as_str), Some("front"));
        let merge_delete = Patch::Merge(json!({"data": {"added": null}}));
        let merged = api.patch("settings", &PatchParams::default(), &merge_delete).await.unwrap();
        assert_eq!(data(&merged), pairs(&[("mode", "slow")]), "null deletes a key in a merge patch");

        let strategic =
            Patch::Strategic(json!({"metadata": {"labels": {"tier": null, "zone": "a"}}, "data": {"s": "1"}}));
        let merged = api.patch("settings", &PatchParams::default(), &strategic).await.unwrap();
        assert_eq!(data(&merged), pairs(&[("mode", "slow"), ("s", "1")]), "a strategic merge patch merges maps");
        assert_eq!(merged.labels().get("zone").map(String::as_str), Some("a"));
        assert!(!merged.labels().contains_key("tier"), "null deletes a key in a strategic merge patch");
        let merged = api
            .patch("settings", &PatchParams::default(), &Patch::Strategic(json!({"data": {"s": null}})))
            .await
            .unwrap();
        assert_eq!(data(&merged), pairs(&[("mode", "slow")]));

        let ops: json_patch::Patch = serde_json::from_value(json!([
            {"op": "test", "path": "/data/mode", "value": "slow"},
            {"op": "add", "path": "/data/extra", "value": "yes"},
            {"op": "replace", "path": "/data/mode", "value": "json"}
        ]))
        .unwrap();
        let patched = api.patch("settings", &PatchParams::default(), &Patch::Json::<()>(ops)).await.unwrap();
        assert_eq!(data(&patched), pairs(&[("mode", "json"), ("extra", "yes")]));
        let failing: json_patch::Patch =
            serde_json::from_value(json!([{"op": "test", "path": "/data/mode", "value": "slow"}])).unwrap();
        let err = api_error(api.patch("settings", &PatchParams::default(), &Patch::Json::<()>(failing)).await, "test");
        assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"), "{err:?}");

        let deleted = api.delete("settings", &DeleteParams::default()).await.unwrap();
        let status = deleted.right().expect("a configmap's delete answers with a Status");
        assert!(status.is_success(), "{status:?}");
        assert_eq!(status.details.as_ref().map(|d| d.uid.as_str()), created.uid().as_deref());
        let missing = api_error(api.get("settings").await, "a get after the delete");
        assert_eq!((missing.code, missing.reason.as_str()), (404, "NotFound"), "{missing:?}");
        assert!(api.get_opt("settings").await.unwrap().is_none());
        let twice = api_error(api.delete("settings", &DeleteParams::default()).await, "a second delete");
        assert_eq!(twice.code, 404, "{twice:?}");
    })
    .await;
}

#[tokio::test]
async fn a_stale_replace_is_a_409_conflict() {
    with_server(|client| async move {
        let api: Api<ConfigMap> = Api::default_namespaced(client);
        let pp = PostParams::default();
        let first = api.create(&pp, &configmap("cas", &[], &[("v", "1")])).await.unwrap();
        let mut second = first.clone();
        second.data = Some(pairs(&[("v", "2")]));
        let second = api.replace("cas", &pp, &second).await.unwrap();

        let mut stale = first.clone();
        stale.data = Some(pairs(&[("v", "stale")]));
        let conflict = api_error(api.replace("cas", &pp, &stale).await, "a stale replace");
        assert_eq!((conflict.code, conflict.reason.as_str()), (409, "Conflict"), "{conflict:?}");
        assert_eq!(
            conflict.message,
            "Operation cannot be fulfilled on configmaps \"cas\": the object has been modified; please apply your \
             changes to the latest version and try again"
        );
        let details = conflict.details.expect("a conflict names the object");
        assert_eq!((details.name.as_str(), details.kind.as_str()), ("cas", "configmaps"));
        let now = api.get("cas").await.unwrap();
        assert_eq!(data(&now), pairs(&[("v", "2")]), "the stale replace changed nothing");
        assert_eq!(now.resource_version(), second.resource_version());

        // A merge patch that carries a resourceVersion makes it a precondition, as kubectl's edits rely on.
        let stale_patch = Patch::Merge(json!({"metadata": {"resourceVersion": first.resource_version()}}));
        let conflict = api_error(api.patch("cas", &PatchParams::default(), &stale_patch).await, "a stale patch");
        assert_eq!(conflict.code, 409, "{conflict:?}");
    })
    .await;
}

/// kube-rs's `Patch::Apply` (server-side apply): the apply creates, a repeated apply changes nothing, a
/// second manager's apply of a field the first owns is a 409 naming the field, and `force` moves it.
#[tokio::test]
async fn server_side_apply_creates_merges_and_reports_conflicts() {
    with_server(|client| async move {
        let api: Api<ConfigMap> = Api::default_namespaced(client);
        let config = |value: &str| {
            Patch::Apply(json!({
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"a": value},
            }))
        };
        let created = api.patch("ssa", &PatchParams::apply("first"), &config("1")).await.unwrap();
        let managed = created.managed_fields();
        assert_eq!(managed.len(), 1, "{managed:?}");
        assert_eq!((managed[0].manager.as_deref(), managed[0].operation.as_deref()), (Some("first"), Some("Apply")));
        assert_eq!(managed[0].fields_v1.as_ref().map(|f| f.0.clone()), Some(json!({"f:data": {"f:a": {}}})));

        let again = api.patch("ssa", &PatchParams::apply("first"), &config("1")).await.unwrap();
        assert_eq!(again.resource_version(), created.resource_version(), "a repeated apply writes nothing");

        let conflict = api_error(api.patch("ssa", &PatchParams::apply("second"), &config("2")).await, "a conflict");
        assert_eq!((conflict.code, conflict.reason.as_str()), (409, "Conflict"), "{conflict:?}");
        assert_eq!(conflict.message, r#"Apply failed with 1 conflict: conflict with "first": .data.a"#);
        let cause = &conflict.details.expect("causes").causes[0];
        assert_eq!((cause.reason.as_str(), cause.field.as_str()), ("FieldManagerConflict", ".data.a"));
        assert_eq!(data(&api.get("ssa").await.unwrap()), pairs(&[("a", "1")]), "the refused apply changed nothing");

        let forced = api.patch("ssa", &PatchParams::apply("second").force(), &config("2")).await.unwrap();
        assert_eq!(data(&forced), pairs(&[("a", "2")]));
        let owners: Vec<_> = forced.managed_fields().iter().map(|m| m.manager.clone().unwrap_or_default()).collect();
        assert_eq!(owners, ["second"], "the first manager owned nothing else");
    })
    .await;
}

#[tokio::test]
async fn an_https_kubeconfig_with_ca_data_and_a_token_works_as_written() {
    with_started(Server::start_tls, |client| async move {
        let ready = || async {
            let request = http::Request::get("/readyz").body(Vec::new()).unwrap();
            client.request_text(request).await.ok().filter(|text| text == "ok")
        };
        eventually("the server to answer /readyz over HTTPS", ready).await;
        let api: Api<ConfigMap> = Api::default_namespaced(client.clone());
        let created = api.create(&PostParams::default(), &configmap("tls", &[], &[("v", "1")])).await.unwrap();
        assert_eq!(data(&api.get("tls").await.unwrap()), pairs(&[("v", "1")]));

        // A watch over TLS: once the watcher has listed, the delete arrives as a watch event.
        let mut events = Box::pin(watcher(api.clone(), watcher::Config::default()));
        loop {
            match within("the watcher's initial list over HTTPS", events.next()).await {
                Some(Ok(watcher::Event::InitDone)) => break,
                Some(Ok(_)) => {}
                other => panic!("the watcher failed over HTTPS: {other:?}"),
            }
        }
        api.delete("tls", &DeleteParams::default()).await.unwrap();
        match within("the delete's watch event over HTTPS", events.next()).await {
            Some(Ok(watcher::Event::Delete(cm))) => assert_eq!(cm.uid(), created.uid()),
            other => panic!("expected the delete of tls, got {other:?}"),
        }
    })
    .await;
}

/// What a watcher reported, reduced to (event, object name, its `v` data value).
#[derive(Debug, PartialEq, Eq)]
enum Seen {
    Init,
    InitApply(String),
    InitDone,
    Apply(String, String),
    Delete(String),
}

impl Seen {
    fn of(event: watcher::Event<ConfigMap>) -> Seen {
        let value = |cm: &ConfigMap| data(cm).get("v").cloned().unwrap_or_default();
        match event {
            watcher::Event::Init => Seen::Init,
            watcher::Event::InitApply(cm) => Seen::InitApply(cm.name_any()),
            watcher::Event::InitDone => Seen::InitDone,
            watcher::Event::Apply(cm) => Seen::Apply(cm.name_any(), value(&cm)),
            watcher::Event::Delete(cm) => Seen::Delete(cm.name_any()),
        }
    }
}

/// Starts a watcher with `config` over a namespace holding `initial` configmaps, waits for its initial
/// list, then creates, updates and deletes one more; checks every event the watcher reported.
async fn watcher_sees_changes(client: Client, config: watcher::Config, initial: usize) {
    let api: Api<ConfigMap> = Api::default_namespaced(client);
    let pp = PostParams::default();
    let mut names: Vec<String> = (0..initial).map(|i| format!("pre-{i}")).collect();
    for name in &names {
        api.create(&pp, &configmap(name, &[("watched", "yes")], &[])).await.unwrap();
    }
    api.create(&pp, &configmap("unwatched", &[], &[])).await.unwrap();

    let mut events = Box::pin(watcher(api.clone(), config.labels("watched=yes")));
    let mut next = async |what: &str| -> Seen {
        let event = within(what, events.next()).await.unwrap_or_else(|| panic!("the watcher ended before {what}"));
        Seen::of(event.unwrap_or_else(|err| panic!("the watcher failed before {what}: {err}")))
    };
    assert_eq!(next("the start of the initial list").await, Seen::Init);
    let mut listed = Vec::new();
    loop {
        match next("the initial list").await {
            Seen::InitApply(name) => listed.push(name),
            Seen::InitDone => break,
            other => panic!("{other:?} during the initial list"),
        }
    }
    listed.sort();
    names.sort();
    assert_eq!(listed, names, "the initial list has every selected configmap, once");

    let mut cm = api.create(&pp, &configmap("live", &[("watched", "yes")], &[("v", "1")])).await.unwrap();
    assert_eq!(next("the create").await, Seen::Apply("live".into(), "1".into()));
    cm.data = Some(pairs(&[("v", "2")]));
    api.replace("live", &pp, &cm).await.unwrap();
    assert_eq!(next("the update").await, Seen::Apply("live".into(), "2".into()));
    api.delete("live", &DeleteParams::default()).await.unwrap();
    assert_eq!(next("the delete").await, Seen::Delete("live".into()));
}

#[tokio::test]
async fn watcher_with_default_config_lists_then_watches() {
    with_server(|client| watcher_sees_changes(client, watcher::Config::default(), 3)).await;
}

#[tokio::test]
async fn watcher_with_small_pages_lists_every_page() {
    // Five objects in pages of two: the initial list follows two continue tokens.
    with_server(|client| watcher_sees_changes(client, watcher::Config::default().page_size(2), 5)).await;
}

#[tokio::test]
async fn watcher_with_streaming_lists_uses_initial_events() {
    with_server(|client| watcher_sees_changes(client, watcher::Config::default().streaming_lists(), 3)).await;
}

/// The label that asks the mirror controller for a Secret.
const MIRROR: &str = "kubesim.io/mirror";

/// What the mirror controller's reconciler shares.
struct Mirror {
    client: Client,
    reconciles: AtomicUsize,
}

/// Makes the Secret named like `cm` hold `cm`'s data and be owned by it (an ownerReference with
/// controller=true), creating or replacing it.
async fn reconcile(cm: Arc<ConfigMap>, ctx: Arc<Mirror>) -> Result<Action, kube::Error> {
    ctx.reconciles.fetch_add(1, Ordering::SeqCst);
    let namespace = cm.namespace().expect("configmaps are namespaced");
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
    let name = cm.name_any();
    let want: BTreeMap<String, ByteString> =
        data(&cm).into_iter().map(|(k, v)| (k, ByteString(v.into_bytes()))).collect();
    let owner = cm.controller_owner_ref(&()).expect("a configmap read from the server has a uid");
    match secrets.get_opt(&name).await? {
        None => {
            let secret = Secret {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    owner_references: Some(vec![owner]),
                    ..ObjectMeta::default()
                },
                data: Some(want),
                ..Secret::default()
            };
            secrets.create(&PostParams::default(), &secret).await?;
        }
        Some(mut secret) if secret.data.as_ref() != Some(&want) => {
            secret.data = Some(want);
            secrets.replace(&name, &PostParams::default(), &secret).await?;
        }
        Some(_) => {}
    }
    Ok(Action::await_change())
}

fn retry_soon(_cm: Arc<ConfigMap>, _err: &kube::Error, _ctx: Arc<Mirror>) -> Action {
    Action::requeue(Duration::from_millis(100))
}

/// The Secret `name` once `accept` holds for it.
async fn secret_when(secrets: &Api<Secret>, name: &str, what: &str, accept: impl Fn(&Secret) -> bool) -> Secret {
    eventually(what, || async { secrets.get_opt(name).await.ok().flatten().filter(|s| accept(s)) }).await
}

fn secret_data(secret: &Secret) -> BTreeMap<String, String> {
    let data = secret.data.clone().unwrap_or_default();
    data.into_iter().map(|(k, v)| (k, String::from_utf8(v.0).expect("UTF-8 values"))).collect()
}

#[tokio::test]
async fn a_controller_mirrors_labelled_configmaps_into_owned_secrets() {
    with_server(|client| async move {
        let configmaps: Api<ConfigMap> = Api::default_namespaced(client.clone());
        let secrets: Api<Secret> = Api::default_namespaced(client.clone());
        let ctx = Arc::new(Mirror { client: client.clone(), reconciles: AtomicUsize::new(0) });
        let controller =
            Controller::new(configmaps.clone(), watcher::Config::default().labels(&format!("{MIRROR}=true")))
                .owns(secrets.clone(), watcher::Config::default())
                .run(reconcile, retry_soon, ctx.clone());
        let running = tokio::spawn(drain(controller));

        let pp = PostParams::default();
        let cm = configmaps.create(&pp, &configmap("app", &[(MIRROR, "true")], &[("a", "1")])).await.unwrap();
        configmaps.create(&pp, &configmap("plain", &[], &[("a", "1")])).await.unwrap();

        let secret = secret_when(&secrets, "app", "the mirrored Secret", |_| true).await;
        assert_eq!(secret_data(&secret), pairs(&[("a", "1")]));
        assert_eq!(secret.type_.as_deref(), Some("Opaque"), "kube-apiserver defaults a Secret's type");
        let owners = secret.owner_references();
        assert_eq!(owners.len(), 1, "{owners:?}");
        assert_eq!((owners[0].kind.as_str(), owners[0].name.as_str()), ("ConfigMap", "app"));
        assert_eq!(Some(&owners[0].uid), cm.uid().as_ref(), "the owner is this configmap");
        assert_eq!(owners[0].controller, Some(true));

        let mut changed = configmaps.get("app").await.unwrap();
        changed.data = Some(pairs(&[("a", "2"), ("b", "3")]));
        configmaps.replace("app", &pp, &changed).await.unwrap();
        let followed = secret_when(&secrets, "app", "the Secret to follow the update", |s| {
            secret_data(s) == pairs(&[("a", "2"), ("b", "3")])
        })
        .await;
        assert_eq!(followed.uid(), secret.uid(), "an update replaces the Secret's data in place");

        secrets.delete("app", &DeleteParams::default()).await.unwrap();
        let recreated =
            secret_when(&secrets, "app", "the controller to re-create the deleted Secret", |s| s.uid() != secret.uid())
                .await;
        assert_eq!(secret_data(&recreated), pairs(&[("a", "2"), ("b", "3")]));
        assert_eq!(recreated.owner_references()[0].uid, cm.uid().unwrap());

        assert!(secrets.get_opt("plain").await.unwrap().is_none(), "an unlabelled configmap is not mirrored");
        assert!(ctx.reconciles.load(Ordering::SeqCst) >= 3, "a reconcile per change");
        assert!(!running.is_finished(), "the controller's stream ended early");
        running.abort();
    })
    .await;
}

/// Runs a controller's stream to its end; it ends only if its watches do, which the test checks it did not.
async fn drain(stream: impl Stream) {
    stream.for_each(|_| async {}).await
}

/// A custom kind as an operator defines it: `#[derive(CustomResource)]` gives the `Backup` type, its CRD
/// (schema from schemars, `/status` on) and its `Api`.
#[derive(kube::CustomResource, serde::Deserialize, serde::Serialize, Clone, Debug, PartialEq, schemars::JsonSchema)]
#[kube(group = "kubesim.example.com", version = "v1", kind = "Backup", namespaced, status = "BackupStatus")]
#[kube(printcolumn = r#"{"name": "Schedule", "type": "string", "jsonPath": ".spec.schedule"}"#)]
pub struct BackupSpec {
    schedule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    retain: Option<i32>,
}

#[derive(serde::Deserialize, serde::Serialize, Clone, Debug, PartialEq, schemars::JsonSchema)]
pub struct BackupStatus {
    observed_schedule: String,
}

/// The controller's reconcile: records the schedule it saw in the status, through `/status`.
async fn reconcile_backup(backup: Arc<Backup>, ctx: Arc<Client>) -> Result<Action, kube::Error> {
    let api: Api<Backup> = Api::namespaced((*ctx).clone(), &backup.namespace().unwrap_or_default());
    let status = json!({"status": {"observed_schedule": backup.spec.schedule}});
    api.patch_status(&backup.name_any(), &PatchParams::default(), &Patch::Merge(&status)).await?;
    Ok(Action::await_change())
}

fn retry_backup(_backup: Arc<Backup>, _err: &kube::Error, _ctx: Arc<Client>) -> Action {
    Action::requeue(Duration::from_millis(100))
}

#[tokio::test]
async fn a_derived_custom_resource_is_defined_applied_and_reconciled() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::core::CustomResourceExt;
    use kube::runtime::wait::{await_condition, conditions};

    with_server(|client| async move {
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        let crd = Backup::crd();
        crds.create(&PostParams::default(), &crd).await.expect("the derived CRD is accepted");
        within(
            "the CRD to be established",
            await_condition(crds.clone(), "backups.kubesim.example.com", conditions::is_crd_established()),
        )
        .await
        .expect("the condition watch runs");

        let backups: Api<Backup> = Api::default_namespaced(client.clone());
        let running = tokio::spawn(drain(Controller::new(backups.clone(), watcher::Config::default()).run(
            reconcile_backup,
            retry_backup,
            Arc::new(client.clone()),
        )));

        // Another apiserver may serve the new kind a moment later; this one serves it once established.
        let applied = Backup::new("nightly", BackupSpec { schedule: "0 3 * * *".into(), retain: Some(7) });
        let params = PatchParams::apply("backup-operator");
        let created = eventually("the Backup kind to be served", || {
            let backups = backups.clone();
            let applied = applied.clone();
            let params = params.clone();
            async move { backups.patch("nightly", &params, &Patch::Apply(&applied)).await.ok() }
        })
        .await;
        assert_eq!(created.spec, applied.spec);
        assert_eq!(created.managed_fields()[0].manager.as_deref(), Some("backup-operator"));

        let reconciled = eventually("the controller to write the status", || {
            let backups = backups.clone();
            async move { backups.get("nightly").await.ok().filter(|b| b.status.is_some()) }
        })
        .await;
        assert_eq!(reconciled.status, Some(BackupStatus { observed_schedule: "0 3 * * *".into() }));

        // A field of the wrong type is refused by the CRD's schema, with the field's path.
        let bad = json!({"apiVersion": "kubesim.example.com/v1", "kind": "Backup", "metadata": {"name": "bad"},
            "spec": {"schedule": "x", "retain": "seven"}});
        let status = api_error(
            backups.patch("bad", &PatchParams::apply("backup-operator"), &Patch::Apply(&bad)).await,
            "an apply with a string retain",
        );
        assert_eq!(status.code, 422, "{status:?}");
        assert!(status.message.contains("spec.retain: Invalid value: \"string\""), "{}", status.message);

        // A new schedule is reconciled into the status again.
        let changed = Backup::new("nightly", BackupSpec { schedule: "0 4 * * *".into(), retain: Some(7) });
        backups.patch("nightly", &params, &Patch::Apply(&changed)).await.unwrap();
        eventually("the controller to follow the new schedule", || {
            let backups = backups.clone();
            async move {
                backups
                    .get("nightly")
                    .await
                    .ok()
                    .filter(|b| b.status.as_ref().is_some_and(|s| s.observed_schedule == "0 4 * * *"))
            }
        })
        .await;
        assert!(!running.is_finished(), "the controller's stream ended early");
        running.abort();
    })
    .await;
}

/// Creates `obj` through `api`, reads it back and lists it, then deletes it: the typed round trip of a kind
/// through k8s-openapi's struct for it (every field the server writes must decode into that struct).
async fn typed_round_trip<K>(api: &Api<K>, obj: K) -> K
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + serde::Serialize,
{
    let name = obj.meta().name.clone().expect("the object has a name");
    let created = within("a create", api.create(&PostParams::default(), &obj)).await.expect("create");
    assert_eq!(created.meta().name.as_deref(), Some(name.as_str()));
    assert!(created.meta().uid.is_some(), "the server gives it a uid");
    let read = within("a get", api.get(&name)).await.expect("get");
    assert_eq!(read.meta().resource_version, created.meta().resource_version);
    let listed = within("a list", api.list(&ListParams::default())).await.expect("list");
    assert!(listed.items.iter().any(|o| o.meta().name.as_deref() == Some(name.as_str())), "{name} is listed");
    let labelled = Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}}));
    let patched = within("a patch", api.patch(&name, &PatchParams::default(), &labelled)).await.expect("patch");
    assert_eq!(patched.meta().labels.as_ref().and_then(|l| l.get("touched")).map(String::as_str), Some("yes"));
    within("a delete", api.delete(&name, &DeleteParams::default())).await.expect("delete");
    read
}

/// The kinds issue 26 added, written and read through k8s-openapi's types by kube's typed `Api`: RBAC,
/// networking, policy, scheduling, node, discovery, storage, batch's CronJob, autoscaling/v2 HPAs (and the
/// same object read as autoscaling/v1), core's PersistentVolumes and ReplicationControllers.
#[tokio::test]
async fn the_new_kinds_round_trip_through_k8s_openapi_types() {
    use k8s_openapi::api::autoscaling::{v1 as autoscaling_v1, v2 as autoscaling_v2};
    use k8s_openapi::api::batch::v1::CronJob;
    use k8s_openapi::api::core::v1::{PersistentVolume, ReplicationController};
    use k8s_openapi::api::discovery::v1::EndpointSlice;
    use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
    use k8s_openapi::api::node::v1::RuntimeClass;
    use k8s_openapi::api::policy::v1::PodDisruptionBudget;
    use k8s_openapi::api::rbac::v1::{ClusterRole, Role, RoleBinding};
    use k8s_openapi::api::scheduling::v1::PriorityClass;
    use k8s_openapi::api::storage::v1::{CSIDriver, StorageClass};

    fn from<K: serde::de::DeserializeOwned>(value: serde_json::Value) -> K {
        serde_json::from_value(value).expect("a valid object of its kind")
    }
    with_server(|client| async move {
        let role: Role = typed_round_trip(&Api::default_namespaced(client.clone()), from(json!({"metadata": {"name": "reader"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}))).await;
        assert_eq!(role.rules.unwrap()[0].verbs, ["get", "list"]);
        let binding: RoleBinding = typed_round_trip(&Api::default_namespaced(client.clone()), from(json!({"metadata": {"name": "read"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"}, "subjects": [{"kind": "User", "name": "alice"}]}))).await;
        assert_eq!(binding.role_ref.name, "reader");
        let admin: ClusterRole = within("a get", Api::all(client.clone()).get("admin")).await.expect("the bootstrap admin role");
        assert!(admin.aggregation_rule.is_some(), "admin aggregates the edit and view roles");
        let ingress: Ingress = typed_round_trip(&Api::default_namespaced(client.clone()), from(json!({"metadata": {"name": "web"}, "spec": {"rules": [{"host": "example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}}))).await;
        assert_eq!(ingress.spec.unwrap().rules.unwrap()[0].host.as_deref(), Some("example.com"));
        let _: NetworkPolicy = typed_round_trip(&Api::default_namespaced(client.clone()), from(json!({"metadata": {"name": "deny"}, "spec": {"podSelector": {}}}))).await;
        let pdb: PodDisruptionBudget = typed_round_trip(&Api::default_namespaced(client.clone()), from(json!({"metadata": {"name": "web"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}))).await;
        assert_eq!(pdb.spec.unwrap().min_available, Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(1)));
        let pc: PriorityClass = typed_round_trip(&Api::all(client.clone()), from(json!({"metadata": {"name": "kube-rs-high"}, "value": 1000}))).await;
        assert_eq!(pc.preemption_policy.as_deref(), Some("PreemptLowerPriority"), "defaulted");
        let _: RuntimeClass = typed_round_trip(&Api::all(client.clone()), from(json!({"metadata": {"name": "kube-rs-gvisor"}, "handler": "runsc"}))).await;
        let slice: EndpointSlice = typed_round_trip(&Api::default_namespaced(client.clone()), from(json!({"metadata": {"name": "web-1"}, "addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.1"]}]}))).await;
        assert_eq!(slice.endpoints[0].addresses, ["10.0.0.1"]);
        let sc: StorageClass = typed_round_trip(&Api::all(client.clone()), from(json!({"metadata": {"name": "kube-rs-fast"}, "provisioner": "example.com/disk"}))).await;
        assert_eq!(sc.reclaim_policy.as_deref(), Some("Delete"), "defaulted");
        let driver: CSIDriver = typed_round_trip(&Api::all(client.clone()), from(json!({"metadata": {"name": "kube-rs.example.com"}, "spec": {}}))).await;
        assert_eq!(driver.spec.attach_required, Some(true), "defaulted");
        let cj: CronJob = typed_round_trip(&Api::default_namespaced(client.clone()), from(json!({"metadata": {"name": "tick"}, "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}}}}}}))).await;
        assert_eq!(cj.spec.unwrap().concurrency_policy.as_deref(), Some("Allow"), "defaulted");
        let _: PersistentVolume = typed_round_trip(&Api::all(client.clone()), from(json!({"metadata": {"name": "kube-rs-pv"}, "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}}))).await;
        let _: ReplicationController = typed_round_trip(&Api::default_namespaced(client.clone()), from(json!({"metadata": {"name": "rc"}, "spec": {"replicas": 1, "template": {"metadata": {"labels": {"app": "rc"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}))).await;

        // One HPA, written in v2 and read in v1 too.
        let v2: Api<autoscaling_v2::HorizontalPodAutoscaler> = Api::default_namespaced(client.clone());
        let hpa: autoscaling_v2::HorizontalPodAutoscaler = from(json!({"metadata": {"name": "web"}, "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 5, "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]}}));
        within("a create", v2.create(&PostParams::default(), &hpa)).await.expect("create v2");
        let v1: Api<autoscaling_v1::HorizontalPodAutoscaler> = Api::default_namespaced(client.clone());
        let seen = within("a get", v1.get("web")).await.expect("get v1");
        assert_eq!(seen.spec.unwrap().target_cpu_utilization_percentage, Some(60));
        within("a delete", v1.delete("web", &DeleteParams::default())).await.expect("delete v1");
    })
    .await;
}

/// authentication.k8s.io and authorization.k8s.io through kube's typed `Api`: a token for a service account
/// (`serviceaccounts/token`), its review, `SelfSubjectReview` and `SelfSubjectAccessReview`; and a pod
/// evicted through `Api<Pod>::evict`, then one refused by its disruption budget.
#[tokio::test]
async fn tokens_reviews_and_evictions_through_kube() {
    use k8s_openapi::api::authentication::v1::{SelfSubjectReview, TokenRequest, TokenReview};
    use k8s_openapi::api::authorization::v1::SelfSubjectAccessReview;
    use k8s_openapi::api::core::v1::{Pod, ServiceAccount};
    use kube::api::EvictParams;

    fn from<K: serde::de::DeserializeOwned>(value: serde_json::Value) -> K {
        serde_json::from_value(value).expect("a valid object of its kind")
    }
    let server = tokio::task::spawn_blocking(Server::start).await.expect("the server starts");
    let server_kubeconfig = server.kubeconfig.clone();
    let client = client(&server).await;
    let body = async move {
        let accounts: Api<ServiceAccount> = Api::default_namespaced(client.clone());
        within("a create", accounts.create(&PostParams::default(), &from(json!({"metadata": {"name": "robot"}}))))
            .await
            .expect("create");
        let request: TokenRequest = from(json!({"spec": {"audiences": ["kube-rs"]}}));

        let issued: TokenRequest =
            within("a token", accounts.create_subresource("token", "robot", &PostParams::default(), &request))
                .await
                .expect("token");
        assert_eq!(issued.spec.expiration_seconds, Some(3600));
        let token = issued.status.expect("a token").token;

        let reviews: Api<TokenReview> = Api::all(client.clone());
        let review: TokenReview = from(json!({"spec": {"token": token, "audiences": ["kube-rs"]}}));
        let reviewed = within("a review", reviews.create(&PostParams::default(), &review)).await.expect("review");
        let status = reviewed.status.expect("a status");
        assert_eq!(status.authenticated, Some(true));
        assert_eq!(status.user.and_then(|u| u.username).as_deref(), Some("system:serviceaccount:default:robot"));

        let whoami: Api<SelfSubjectReview> = Api::all(client.clone());
        let me = within("whoami", whoami.create(&PostParams::default(), &from(json!({})))).await.expect("whoami");
        // kube sends the kubeconfig's admin token even over plain HTTP (kubectl does not).
        assert_eq!(me.status.and_then(|s| s.user_info).and_then(|u| u.username).as_deref(), Some("kubesim-admin"));
        // A token for another audience does not authenticate to the apiserver (upstream's 401); a client of a
        // token for the apiserver's own audience is the account.
        let elsewhere = Config::from_custom_kubeconfig(
            {
                let mut kubeconfig = Kubeconfig::read_from(&server_kubeconfig).expect("kube reads the kubeconfig");
                for named in &mut kubeconfig.auth_infos {
                    if let Some(auth) = named.auth_info.as_mut() {
                        auth.token = Some(token.clone().into());
                    }
                }
                kubeconfig
            },
            &KubeConfigOptions::default(),
        )
        .await
        .expect("config");
        let refused: Api<SelfSubjectReview> = Api::all(Client::try_from(elsewhere).expect("a client"));
        let err = within("whoami", refused.create(&PostParams::default(), &from(json!({})))).await.unwrap_err();
        assert!(matches!(&err, kube::Error::Api(s) if s.code == 401 && s.message == "Unauthorized"), "{err:?}");
        let own: TokenRequest = from(json!({"spec": {}}));
        let issued: Result<TokenRequest, _> =
            within("a token", accounts.create_subresource("token", "robot", &PostParams::default(), &own)).await;
        let token = issued.expect("token").status.expect("a token").token;
        let mut kubeconfig = Kubeconfig::read_from(&server_kubeconfig).expect("kube reads the kubeconfig");
        for named in &mut kubeconfig.auth_infos {
            if let Some(auth) = named.auth_info.as_mut() {
                auth.token = Some(token.clone().into());
            }
        }
        let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await.expect("config");
        let robot = Client::try_from(config).expect("a client of the token");
        let whoami: Api<SelfSubjectReview> = Api::all(robot);
        let me = within("whoami", whoami.create(&PostParams::default(), &from(json!({})))).await.expect("whoami");
        let user = me.status.and_then(|s| s.user_info).expect("a user");
        assert_eq!(user.username.as_deref(), Some("system:serviceaccount:default:robot"));
        let can_i: Api<SelfSubjectAccessReview> = Api::all(client.clone());
        let asked: SelfSubjectAccessReview =
            from(json!({"spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}}));
        let answer = within("can-i", can_i.create(&PostParams::default(), &asked)).await.expect("can-i");
        assert!(answer.status.expect("a status").allowed);

        // The ServiceAccount admission plugin wants the namespace's `default` account (no controller makes it).
        let default: ServiceAccount = from(json!({"metadata": {"name": "default"}}));
        within("a create", accounts.create(&PostParams::default(), &default)).await.expect("create");
        let pods: Api<Pod> = Api::default_namespaced(client.clone());
        let pod = |name: &str| {
            from::<Pod>(
                json!({"metadata": {"name": name, "labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
            )
        };
        within("a create", pods.create(&PostParams::default(), &pod("pending"))).await.expect("create");
        let done = within("an eviction", pods.evict("pending", &EvictParams::default())).await.expect("evict");
        assert_eq!(done.status, Some(kube::core::response::StatusSummary::Success));
        within("a create", pods.create(&PostParams::default(), &pod("running"))).await.expect("create");
        let running = json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}});
        within("a status", pods.patch_status("running", &PatchParams::default(), &Patch::Merge(running)))
            .await
            .expect("status");
        let budgets: Api<k8s_openapi::api::policy::v1::PodDisruptionBudget> = Api::default_namespaced(client.clone());
        let budget = from(
            json!({"metadata": {"name": "web"}, "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "web"}}}}),
        );
        within("a create", budgets.create(&PostParams::default(), &budget)).await.expect("create");
        // As the disruption controller would write it (kubesim runs none): observed, no disruption left.
        let observed = json!({"status": {"observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}});
        within("a status", budgets.patch_status("web", &PatchParams::default(), &Patch::Merge(observed)))
            .await
            .expect("status");
        // kube retries a 429 fifteen times with a growing backoff (`RetryPolicy::server_retry`); a
        // refused eviction is for the caller to see at once, so this request goes without retries.
        let kubeconfig = Kubeconfig::read_from(&server_kubeconfig).expect("kube reads the written kubeconfig");
        let mut config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await.unwrap();
        config.default_retry = false;
        let once: Api<Pod> = Api::default_namespaced(Client::try_from(config).unwrap());
        let refused = api_error(within("an eviction", once.evict("running", &EvictParams::default())).await, "evict");
        assert_eq!(refused.code, 429);
        assert_eq!(refused.message, "Cannot evict pod as it would violate the pod's disruption budget.");
    };
    tokio::time::timeout(TEST, body).await.unwrap_or_else(|_| panic!("the test took over {TEST:?}"));
    drop(server);
}
