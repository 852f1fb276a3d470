//! Create, get, guaranteed update and delete: preconditions, conflicts, cached suggestions (stale or of a
//! deleted object), the no-op update rule, and count.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use apiserver::storage::etcd3::{Etcd3Config, Etcd3Store};
use apiserver::storage::status::{self, GroupResource, Operation};
use apiserver::storage::{GetOptions, Object, Preconditions, ResourceVersion, Storage, StorageError};
use etcd_proto::etcdserverpb::RangeRequest;
use serde_json::{json, Value};

use super::harness::{configmap, current_revision, data_of, key, rv_of, Case, Ctx};

pub fn cases() -> Vec<Case> {
    cases![
        create_assigns_the_write_revision_and_stores_no_resource_version,
        create_of_an_existing_key_fails_with_key_exists,
        create_with_a_resource_version_is_refused,
        get_resource_version_semantics,
        update_applies_the_function_to_the_current_object,
        update_that_changes_nothing_writes_nothing,
        update_retries_on_a_conflicting_write,
        update_of_a_missing_key,
        update_checks_preconditions,
        update_with_stale_suggestion_retries_on_fresh_data,
        update_no_op_with_stale_suggestion_returns_the_current_object,
        update_error_from_current_suggestion_is_returned,
        conditional_delete,
        delete_of_a_missing_key_fails_with_key_not_found,
        delete_with_stale_suggestion_deletes_the_current_object,
        delete_with_suggestion_of_a_deleted_object,
        preconditional_delete_with_stale_suggestion,
        delete_validation_sees_fresh_data,
        count_counts_objects_under_a_prefix,
    ]
}

fn cm() -> GroupResource {
    GroupResource::new("", "configmaps")
}

fn set_data(mut obj: Value, v: &str) -> Value {
    obj["data"]["k"] = json!(v);
    obj
}

async fn create_assigns_the_write_revision_and_stores_no_resource_version(ctx: Ctx) {
    let before = current_revision(&ctx).await;
    let created = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    assert_eq!(rv_of(&created), before + 1);
    assert_eq!(data_of(&created), "1");
    let got = ctx.store.get(&key("a"), &GetOptions::default()).await.unwrap();
    assert_eq!(got, created);
    // The stored bytes are the object without its resourceVersion, under the store's prefix.
    let mut kv = ctx.kv.clone();
    let request = RangeRequest { key: format!("{}configmaps/ns/a", ctx.prefix).into_bytes(), ..Default::default() };
    let raw = kv.range(request).await.unwrap().into_inner();
    let stored: Value = serde_json::from_slice(&raw.kvs[0].value).unwrap();
    assert_eq!(stored, configmap("a", "1"));
    assert_eq!(raw.kvs[0].mod_revision as u64, before + 1);
}

async fn create_of_an_existing_key_fails_with_key_exists(ctx: Ctx) {
    ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    let err = ctx.store.create(&key("a"), configmap("a", "2")).await.unwrap_err();
    assert!(matches!(err, StorageError::KeyExists { .. }), "{err:?}");
    let status = err.to_status(Operation::Create, &cm(), "a");
    assert_eq!((status.code, status.reason.as_deref()), (Some(409), Some("AlreadyExists")));
    assert_eq!(status.message.as_deref(), Some("configmaps \"a\" already exists"));
    let got = ctx.store.get(&key("a"), &GetOptions::default()).await.unwrap();
    assert_eq!(data_of(&got), "1");
}

async fn create_with_a_resource_version_is_refused(ctx: Ctx) {
    let mut obj = configmap("a", "1");
    obj.set_resource_version(ResourceVersion(5));
    let err = ctx.store.create(&key("a"), obj).await.unwrap_err();
    assert_eq!(err, StorageError::ResourceVersionSetOnCreate);
    let status = err.to_status(Operation::Create, &cm(), "a");
    assert_eq!(status.code, Some(500));
    assert_eq!(status.message.as_deref(), Some("resourceVersion should not be set on objects to be created"));
}

async fn get_resource_version_semantics(ctx: Ctx) {
    let created = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    let rv = rv_of(&created);
    let updated = ctx.store.guaranteed_update(&key("a"), false, None, |o, _| Ok(set_data(o, "2")), None).await.unwrap();
    let current = current_revision(&ctx).await;
    // "", "0" and any N up to the current revision read the latest state.
    for requested in [String::new(), "0".into(), rv.to_string(), current.to_string()] {
        let got = ctx.store.get(&key("a"), &GetOptions { resource_version: requested.clone() }).await.unwrap();
        assert_eq!(got, updated, "resourceVersion {requested:?}");
    }
    let future = current + 10;
    let err = ctx.store.get(&key("a"), &GetOptions { resource_version: future.to_string() }).await.unwrap_err();
    // The cache waits 3 s for the future revision and then suggests a retry; etcd answers at once.
    let retry_after_s = ctx.too_large_retry_after_s();
    assert_eq!(err, StorageError::TooLargeResourceVersion { requested: future, current, retry_after_s });
    let status = err.to_status(Operation::Get, &cm(), "a");
    assert_eq!((status.code, status.reason.as_deref()), (Some(504), Some("Timeout")));
    assert_eq!(status.message, Some(format!("Timeout: Too large resource version: {future}, current: {current}")));
    let err = ctx.store.get(&key("a"), &GetOptions { resource_version: "x1".into() }).await.unwrap_err();
    let status = err.to_status(Operation::Get, &cm(), "a");
    assert_eq!((status.code, status.reason.as_deref()), (Some(400), Some("BadRequest")));
    assert_eq!(
        status.message.as_deref(),
        Some(
            r#"invalid resource version: resourceVersion: Invalid value: "x1": strconv.ParseUint: parsing "x1": invalid syntax"#
        )
    );
    let err = ctx.store.get(&key("missing"), &GetOptions::default()).await.unwrap_err();
    assert!(matches!(err, StorageError::KeyNotFound { .. }), "{err:?}");
    let status = err.to_status(Operation::Get, &cm(), "missing");
    assert_eq!(status.message.as_deref(), Some("configmaps \"missing\" not found"));
}

async fn update_applies_the_function_to_the_current_object(ctx: Ctx) {
    let created = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let updated = ctx
        .store
        .guaranteed_update(
            &key("a"),
            false,
            None,
            move |o, meta| {
                seen2.lock().unwrap().push((o.clone(), meta.resource_version));
                Ok(set_data(o, "2"))
            },
            None,
        )
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen, vec![(created.clone(), ResourceVersion(rv_of(&created)))]);
    assert_eq!(data_of(&updated), "2");
    assert_eq!(rv_of(&updated), current_revision(&ctx).await);
    assert!(rv_of(&updated) > rv_of(&created));
    assert_eq!(ctx.store.get(&key("a"), &GetOptions::default()).await.unwrap(), updated);
}

async fn update_that_changes_nothing_writes_nothing(ctx: Ctx) {
    let created = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    let before = current_revision(&ctx).await;
    let same = ctx.store.guaranteed_update(&key("a"), false, None, |o, _| Ok(o), None).await.unwrap();
    assert_eq!(same, created);
    assert_eq!(current_revision(&ctx).await, before, "a no-op update must not write");
}

async fn update_retries_on_a_conflicting_write(ctx: Ctx) {
    ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    // The caller's copy is read, then someone else writes: the first attempt's txn must lose and the
    // function must rerun on the state the txn's else-branch read.
    let calls = Arc::new(AtomicUsize::new(0));
    let calls2 = calls.clone();
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    let stale = ctx.store.get(&key("a"), &GetOptions::default()).await.unwrap();
    ctx.store.guaranteed_update(&key("a"), false, None, |o, _| Ok(set_data(o, "other")), None).await.unwrap();
    let updated = ctx
        .store
        .guaranteed_update(
            &key("a"),
            false,
            None,
            move |o, _| {
                calls2.fetch_add(1, Ordering::SeqCst);
                tx.send(o.clone()).unwrap();
                let v = format!("{}+1", data_of(&o));
                Ok(set_data(o, &v))
            },
            Some(stale),
        )
        .await
        .unwrap();
    let inputs: Vec<Value> = rx.try_iter().collect();
    if ctx.cached() {
        // The Cacher passes its own (current) copy instead of the caller's, as upstream's CacheDelegator does.
        assert_eq!(inputs.iter().map(data_of).collect::<Vec<_>>(), vec!["other"]);
    } else {
        // First attempt on the stale copy lost the txn; the retry ran on what the else-branch read.
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(data_of(&inputs[0]), "1");
        assert_eq!(data_of(&inputs[1]), "other");
    }
    assert_eq!(data_of(&updated), "other+1");
}

async fn update_of_a_missing_key(ctx: Ctx) {
    let err = ctx.store.guaranteed_update(&key("a"), false, None, |o, _| Ok(o), None).await.unwrap_err();
    assert!(matches!(err, StorageError::KeyNotFound { .. }), "{err:?}");
    assert_eq!(err.to_status(Operation::Update, &cm(), "a").code, Some(404));
    // With ignore_not_found the function sees no object and its result is created.
    let created = ctx
        .store
        .guaranteed_update(
            &key("a"),
            true,
            None,
            |o, meta| {
                assert_eq!(o, Value::Null);
                assert_eq!(meta.resource_version, ResourceVersion(0));
                Ok(configmap("a", "new"))
            },
            None,
        )
        .await
        .unwrap();
    assert_eq!(rv_of(&created), current_revision(&ctx).await);
    assert_eq!(ctx.store.get(&key("a"), &GetOptions::default()).await.unwrap(), created);
}

async fn update_checks_preconditions(ctx: Ctx) {
    let created = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    let wrong_uid = Preconditions { uid: Some("other".into()), resource_version: None };
    let err = ctx
        .store
        .guaranteed_update(&key("a"), false, Some(&wrong_uid), |o, _| Ok(set_data(o, "2")), None)
        .await
        .unwrap_err();
    let etcd_key = format!("{}configmaps/ns/a", ctx.prefix);
    assert_eq!(
        err,
        StorageError::InvalidObj {
            key: etcd_key.clone(),
            message: "Precondition failed: UID in precondition: other, UID in object meta: uid-a".into()
        }
    );
    let status = err.to_status(Operation::Update, &cm(), "a");
    assert_eq!((status.code, status.reason.as_deref()), (Some(409), Some("Conflict")));
    assert_eq!(
        status.message,
        Some(format!("Operation cannot be fulfilled on configmaps \"a\": StorageError: invalid object, Code: 4, Key: {etcd_key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: other, UID in object meta: uid-a"))
    );
    let wrong_rv = Preconditions { uid: None, resource_version: Some("1".into()) };
    let err = ctx
        .store
        .guaranteed_update(&key("a"), false, Some(&wrong_rv), |o, _| Ok(set_data(o, "2")), None)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StorageError::InvalidObj { message, .. } if *message == format!("Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: {}", rv_of(&created))),
        "{err:?}"
    );
    let right = Preconditions { uid: Some("uid-a".into()), resource_version: Some(rv_of(&created).to_string()) };
    let updated =
        ctx.store.guaranteed_update(&key("a"), false, Some(&right), |o, _| Ok(set_data(o, "2")), None).await.unwrap();
    assert_eq!(data_of(&updated), "2");
}

/// The update function stands in for the registry's optimistic-lock check: it refuses an object whose
/// resourceVersion is not the one the client read. A stale cached copy must not leak that refusal.
async fn update_with_stale_suggestion_retries_on_fresh_data(ctx: Ctx) {
    let created = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    let latest = ctx.store.guaranteed_update(&key("a"), false, None, |o, _| Ok(set_data(o, "2")), None).await.unwrap();
    let client_rv = latest["metadata"]["resourceVersion"].as_str().unwrap().to_string();
    let updated = ctx
        .store
        .guaranteed_update(
            &key("a"),
            false,
            None,
            move |o, _| {
                if o.resource_version() != client_rv {
                    return Err(StorageError::Caller(Box::new(status::conflict(
                        &cm(),
                        "a",
                        "the object has been modified; please apply your changes to the latest version and try again",
                    ))));
                }
                Ok(set_data(o, "3"))
            },
            Some(created),
        )
        .await
        .unwrap();
    assert_eq!(data_of(&updated), "3");
}

async fn update_no_op_with_stale_suggestion_returns_the_current_object(ctx: Ctx) {
    let created = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    let latest = ctx.store.guaranteed_update(&key("a"), false, None, |o, _| Ok(set_data(o, "2")), None).await.unwrap();
    // The function leaves "1" as "1": unchanged relative to the stale copy, but not relative to etcd.
    let result = ctx.store.guaranteed_update(&key("a"), false, None, |o, _| Ok(o), Some(created)).await.unwrap();
    assert_eq!(result, latest);
}

async fn update_error_from_current_suggestion_is_returned(ctx: Ctx) {
    let created = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    let refusal = status::conflict(&cm(), "a", "refused");
    let refusal2 = refusal.clone();
    let calls = Arc::new(AtomicUsize::new(0));
    let calls2 = calls.clone();
    let err = ctx
        .store
        .guaranteed_update(
            &key("a"),
            false,
            None,
            move |_, _| {
                calls2.fetch_add(1, Ordering::SeqCst);
                Err(StorageError::Caller(Box::new(refusal2.clone())))
            },
            Some(created),
        )
        .await
        .unwrap_err();
    assert_eq!(err.to_status(Operation::Update, &cm(), "a"), refusal);
    // Once, on the cached copy: the fresh read found the same revision, so the copy was current and its
    // error stands without a second call.
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

async fn conditional_delete(ctx: Ctx) {
    let created = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    let cases = [
        (
            Preconditions { uid: Some("x".into()), resource_version: None },
            "Precondition failed: UID in precondition: x, UID in object meta: uid-a".to_string(),
        ),
        (
            Preconditions { uid: None, resource_version: Some("1".into()) },
            format!(
                "Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: {}",
                rv_of(&created)
            ),
        ),
    ];
    for (pre, want) in cases {
        let err = ctx.store.delete(&key("a"), Some(&pre), |_| Ok(()), None).await.unwrap_err();
        assert!(matches!(&err, StorageError::InvalidObj { message, .. } if *message == want), "{err:?}");
        assert_eq!(err.to_status(Operation::Delete, &cm(), "a").code, Some(409));
    }
    let pre = Preconditions { uid: Some("uid-a".into()), resource_version: Some(rv_of(&created).to_string()) };
    let deleted = ctx.store.delete(&key("a"), Some(&pre), |_| Ok(()), None).await.unwrap();
    // The deleted object's last state, at the deletion's revision.
    assert_eq!(data_of(&deleted), "1");
    assert_eq!(rv_of(&deleted), current_revision(&ctx).await);
    assert!(ctx.store.get(&key("a"), &GetOptions::default()).await.is_err());
}

async fn delete_of_a_missing_key_fails_with_key_not_found(ctx: Ctx) {
    let err = ctx.store.delete(&key("nope"), None, |_| Ok(()), None).await.unwrap_err();
    assert!(matches!(err, StorageError::KeyNotFound { .. }), "{err:?}");
    let status = err.to_status(Operation::Delete, &cm(), "nope");
    assert_eq!((status.code, status.message.as_deref()), (Some(404), Some("configmaps \"nope\" not found")));
}

async fn delete_with_stale_suggestion_deletes_the_current_object(ctx: Ctx) {
    let created = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    ctx.store.guaranteed_update(&key("a"), false, None, |o, _| Ok(set_data(o, "2")), None).await.unwrap();
    let deleted = ctx.store.delete(&key("a"), None, |_| Ok(()), Some(created)).await.unwrap();
    assert_eq!(data_of(&deleted), "2", "the result is the state actually deleted, not the stale copy");
    assert_eq!(rv_of(&deleted), current_revision(&ctx).await);
}

async fn delete_with_suggestion_of_a_deleted_object(ctx: Ctx) {
    let created = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    ctx.store.delete(&key("a"), None, |_| Ok(()), None).await.unwrap();
    let err = ctx.store.delete(&key("a"), None, |_| Ok(()), Some(created)).await.unwrap_err();
    assert!(matches!(err, StorageError::KeyNotFound { .. }), "{err:?}");
}

async fn preconditional_delete_with_stale_suggestion(ctx: Ctx) {
    // The cache still holds the first incarnation; the object was deleted and re-created with a new uid.
    let old = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    ctx.store.delete(&key("a"), None, |_| Ok(()), None).await.unwrap();
    let mut second = configmap("a", "2");
    second["metadata"]["uid"] = json!("uid-a2");
    ctx.store.create(&key("a"), second).await.unwrap();
    // A precondition on the old uid fails against etcd's data, not only the cache's.
    let old_uid = Preconditions { uid: Some("uid-a".into()), resource_version: None };
    let err = ctx.store.delete(&key("a"), Some(&old_uid), |_| Ok(()), Some(old.clone())).await.unwrap_err();
    assert!(
        matches!(&err, StorageError::InvalidObj { message, .. } if message.contains("UID in object meta: uid-a2")),
        "{err:?}"
    );
    // A precondition on the new uid passes although the cached copy fails it.
    let new_uid = Preconditions { uid: Some("uid-a2".into()), resource_version: None };
    let deleted = ctx.store.delete(&key("a"), Some(&new_uid), |_| Ok(()), Some(old)).await.unwrap();
    assert_eq!(data_of(&deleted), "2");
}

async fn delete_validation_sees_fresh_data(ctx: Ctx) {
    let created = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    ctx.store.guaranteed_update(&key("a"), false, None, |o, _| Ok(set_data(o, "2")), None).await.unwrap();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    ctx.store
        .delete(
            &key("a"),
            None,
            move |o| {
                seen2.lock().unwrap().push(data_of(o).to_string());
                if data_of(o) == "1" {
                    return Err(StorageError::Caller(Box::new(status::conflict(&cm(), "a", "stale"))));
                }
                Ok(())
            },
            Some(created),
        )
        .await
        .unwrap();
    // Through the Cacher the suggestion is the cache's current copy, so validation sees fresh data at once.
    let want: &[&str] = if ctx.cached() { &["2"] } else { &["1", "2"] };
    assert_eq!(*seen.lock().unwrap(), want);
}

async fn count_counts_objects_under_a_prefix(ctx: Ctx) {
    assert_eq!(ctx.store.count("/configmaps").await.unwrap(), 0);
    for name in ["a", "b", "c"] {
        ctx.store.create(&key(name), configmap(name, "1")).await.unwrap();
    }
    ctx.store.create("/configmaps/other/x", configmap("x", "1")).await.unwrap();
    // A sibling whose name extends the prefix ("/configmaps/ns2") must not count under "/configmaps/ns".
    ctx.store.create("/configmaps/ns2/y", configmap("y", "1")).await.unwrap();
    assert_eq!(ctx.store.count("/configmaps/ns").await.unwrap(), 3);
    assert_eq!(ctx.store.count("/configmaps").await.unwrap(), 5);
    let other =
        Etcd3Store::connect(&ctx.endpoint, Etcd3Config::new(&format!("{}elsewhere", ctx.prefix), cm())).await.unwrap();
    assert_eq!(other.count("/configmaps").await.unwrap(), 0);
}
