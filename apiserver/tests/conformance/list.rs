//! Lists: resourceVersion and resourceVersionMatch semantics, paging with continue tokens (format, pinned
//! revision across writes, remainingItemCount, selectors), compaction (410 for exact lists, 410 with an
//! inconsistent-continue token for pages), and malformed options.

use apiserver::storage::status::{GroupResource, Operation};
use apiserver::storage::{ListOptions, ResourceVersionMatch, SelectionPredicate, Storage, StorageError};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Value};

use super::harness::{compact, configmap, current_revision, data_of, key, rv_of, Case, Ctx};

pub fn cases() -> Vec<Case> {
    cases![
        list_returns_every_object_at_the_read_revision,
        list_resource_version_matrix,
        list_pages_share_the_first_page_revision,
        list_continue_token_is_kube_apiserver_format,
        list_with_selector_fills_pages_and_omits_remaining_count,
        list_inconsistent_continuation_after_compaction,
        list_exact_at_compacted_revision_is_expired,
        list_refuses_bad_options,
        list_larger_than_grpc_default_limit_is_returned_whole,
    ]
}

fn cm() -> GroupResource {
    GroupResource::new("", "configmaps")
}

fn names(items: &[apiserver::storage::SharedObject]) -> Vec<String> {
    items.iter().map(|o| o["metadata"]["name"].as_str().unwrap().to_string()).collect()
}

async fn create_all(ctx: &Ctx, names: &[&str]) -> Vec<Value> {
    let mut out = Vec::new();
    for name in names {
        out.push(ctx.store.create(&key(name), configmap(name, "1")).await.unwrap());
    }
    out
}

fn opts(rv: &str, rvm: Option<ResourceVersionMatch>, limit: i64, continue_token: &str) -> ListOptions {
    ListOptions {
        resource_version: rv.to_string(),
        resource_version_match: rvm,
        predicate: SelectionPredicate { limit, continue_token: continue_token.to_string(), matcher: None },
        ..ListOptions::default()
    }
}

async fn list_returns_every_object_at_the_read_revision(ctx: Ctx) {
    let empty = ctx.store.get_list("/configmaps/ns", &ListOptions::default()).await.unwrap();
    assert!(empty.items.is_empty());
    assert_eq!(empty.resource_version.0, current_revision(&ctx).await);
    let created = create_all(&ctx, &["b", "a", "c"]).await;
    // Writes elsewhere move the revision: the list's revision is the read revision, not the newest item's.
    ctx.store.create("/configmaps/other/z", configmap("z", "1")).await.unwrap();
    let list = ctx.store.get_list("/configmaps/ns", &ListOptions::default()).await.unwrap();
    assert_eq!(names(&list.items), vec!["a", "b", "c"]);
    assert_eq!(list.items[1], created[0]);
    assert_eq!(list.resource_version.0, current_revision(&ctx).await);
    assert!(list.resource_version.0 > rv_of(&created[2]));
    assert_eq!((list.continue_token, list.remaining_item_count), (None, None));
}

async fn list_resource_version_matrix(ctx: Ctx) {
    let created = create_all(&ctx, &["a", "b"]).await;
    let at_a = rv_of(&created[0]);
    ctx.store.create(&key("c"), configmap("c", "1")).await.unwrap();
    let current = current_revision(&ctx).await;
    let future = current + 100;
    // Not-older-than reads are the cache's (504 after 3 s, Retry-After 1); exact reads always go to etcd.
    let cache_retry = ctx.too_large_retry_after_s();
    use ResourceVersionMatch::{Exact, NotOlderThan};
    // (resourceVersion, match, limit) -> Ok((names, list revision)) or the error.
    type Want = Result<(Vec<&'static str>, u64), StorageError>;
    let cases: Vec<(String, Option<ResourceVersionMatch>, i64, Want)> = vec![
        (String::new(), None, 0, Ok((vec!["a", "b", "c"], current))),
        ("0".into(), None, 0, Ok((vec!["a", "b", "c"], current))),
        // Not older than N: the latest state.
        (at_a.to_string(), None, 0, Ok((vec!["a", "b", "c"], current))),
        (at_a.to_string(), Some(NotOlderThan), 0, Ok((vec!["a", "b", "c"], current))),
        (at_a.to_string(), Some(NotOlderThan), 10, Ok((vec!["a", "b", "c"], current))),
        // Exact N, or the legacy "N with a limit": the state at N.
        (at_a.to_string(), Some(Exact), 0, Ok((vec!["a"], at_a))),
        (at_a.to_string(), None, 10, Ok((vec!["a"], at_a))),
        (
            future.to_string(),
            None,
            0,
            Err(StorageError::TooLargeResourceVersion { requested: future, current, retry_after_s: cache_retry }),
        ),
        (
            future.to_string(),
            Some(NotOlderThan),
            0,
            Err(StorageError::TooLargeResourceVersion { requested: future, current, retry_after_s: cache_retry }),
        ),
        (
            future.to_string(),
            Some(Exact),
            0,
            Err(StorageError::TooLargeResourceVersion { requested: future, current, retry_after_s: 0 }),
        ),
    ];
    for (rv, rvm, limit, want) in cases {
        let got = ctx.store.get_list("/configmaps/ns", &opts(&rv, rvm, limit, "")).await;
        let got = got.map(|l| (names(&l.items), l.resource_version.0));
        let want = want.map(|(n, rv)| (n.iter().map(|s| s.to_string()).collect::<Vec<_>>(), rv));
        assert_eq!(got, want, "rv={rv:?} match={rvm:?} limit={limit}");
    }
    let err = ctx.store.get_list("/configmaps/ns", &opts(&future.to_string(), Some(Exact), 0, "")).await.unwrap_err();
    let status = err.to_status(Operation::List, &cm(), "");
    assert_eq!(status.message, Some(format!("Timeout: Too large resource version: {future}, current: {current}")));
}

async fn list_pages_share_the_first_page_revision(ctx: Ctx) {
    create_all(&ctx, &["a", "b", "c", "d", "e"]).await;
    let first = ctx.store.get_list("/configmaps/ns", &opts("", None, 2, "")).await.unwrap();
    assert_eq!(names(&first.items), vec!["a", "b"]);
    assert_eq!(first.remaining_item_count, Some(3));
    let token = first.continue_token.clone().expect("more pages");
    // Writes after page 1: a new object, a change to one not yet listed, a deletion of one not yet listed.
    ctx.store.create(&key("bb"), configmap("bb", "1")).await.unwrap();
    ctx.store
        .guaranteed_update(
            &key("d"),
            false,
            None,
            |mut o, _| {
                o["data"]["k"] = json!("2");
                Ok(o)
            },
            None,
        )
        .await
        .unwrap();
    ctx.store.delete(&key("e"), None, |_| Ok(()), None).await.unwrap();
    let second = ctx.store.get_list("/configmaps/ns", &opts("", None, 2, &token)).await.unwrap();
    assert_eq!(names(&second.items), vec!["c", "d"]);
    assert_eq!(data_of(&second.items[1]), "1", "page 2 shows page 1's snapshot");
    assert_eq!(second.resource_version, first.resource_version);
    assert_eq!(second.remaining_item_count, Some(1));
    let third = ctx
        .store
        .get_list("/configmaps/ns", &opts("0", None, 2, second.continue_token.as_deref().unwrap()))
        .await
        .unwrap();
    assert_eq!(names(&third.items), vec!["e"]);
    assert_eq!(third.resource_version, first.resource_version);
    assert_eq!((third.continue_token, third.remaining_item_count), (None, None));
}

async fn list_continue_token_is_kube_apiserver_format(ctx: Ctx) {
    create_all(&ctx, &["a", "b"]).await;
    let page = ctx.store.get_list("/configmaps", &opts("", None, 1, "")).await.unwrap();
    let token = page.continue_token.unwrap();
    let json = String::from_utf8(URL_SAFE_NO_PAD.decode(&token).unwrap()).unwrap();
    // Upstream's cacher encodes the start key relative to the unsuffixed list key, so its tokens keep a leading
    // '/' that etcd's lack; both decode to the same key.
    let start = if ctx.consistent_reads_from_cache() { "/ns/a" } else { "ns/a" };
    assert_eq!(json, format!(r#"{{"v":"meta.k8s.io/v1","rv":{},"start":"{start}\u0000"}}"#, page.resource_version));
}

async fn list_with_selector_fills_pages_and_omits_remaining_count(ctx: Ctx) {
    create_all(&ctx, &["a1", "b1", "b2", "b3", "c1", "d1"]).await;
    let only_b_or_d = SelectionPredicate::matching(|o: &Value| {
        let n = o["metadata"]["name"].as_str().unwrap_or("");
        n.starts_with('b') || n.starts_with('d')
    });
    let mut options =
        ListOptions { predicate: SelectionPredicate { limit: 2, ..only_b_or_d }, ..ListOptions::default() };
    let mut pages = Vec::new();
    loop {
        let page = ctx.store.get_list("/configmaps/ns", &options).await.unwrap();
        assert_eq!(page.remaining_item_count, None, "no remainingItemCount with a selector");
        assert!(page.items.len() <= 2);
        pages.push(names(&page.items));
        match page.continue_token {
            Some(t) => options.predicate.continue_token = t,
            None => break,
        }
        assert!(pages.len() < 10, "paging does not end");
    }
    assert_eq!(pages.concat(), vec!["b1", "b2", "b3", "d1"]);
    assert_eq!(pages[0], vec!["b1", "b2"]);
}

async fn list_inconsistent_continuation_after_compaction(ctx: Ctx) {
    create_all(&ctx, &["a", "b", "c"]).await;
    let first = ctx.store.get_list("/configmaps/ns", &opts("", None, 1, "")).await.unwrap();
    let token = first.continue_token.unwrap();
    ctx.store.create(&key("d"), configmap("d", "1")).await.unwrap();
    ctx.store
        .guaranteed_update(
            &key("b"),
            false,
            None,
            |mut o, _| {
                o["data"]["k"] = json!("2");
                Ok(o)
            },
            None,
        )
        .await
        .unwrap();
    compact(&ctx, current_revision(&ctx).await).await;
    let err = ctx.store.get_list("/configmaps/ns", &opts("", None, 1, &token)).await.unwrap_err();
    let StorageError::ContinueExpired { continue_token } = &err else { panic!("want ContinueExpired, got {err:?}") };
    let json = String::from_utf8(URL_SAFE_NO_PAD.decode(continue_token).unwrap()).unwrap();
    assert_eq!(json, r#"{"v":"meta.k8s.io/v1","rv":-1,"start":"a\u0000"}"#);
    let status = err.to_status(Operation::List, &cm(), "");
    assert_eq!((status.code, status.reason.as_deref()), (Some(410), Some("Expired")));
    assert_eq!(status.metadata.continue_.as_deref(), Some(continue_token.as_str()));
    assert!(status
        .message
        .unwrap()
        .starts_with("The provided continue parameter is too old to display a consistent list result."));
    // The inconsistent token continues at the latest revision: later writes show up.
    let mut rest = Vec::new();
    let mut token = continue_token.clone();
    let latest = current_revision(&ctx).await;
    loop {
        let page = ctx.store.get_list("/configmaps/ns", &opts("", None, 1, &token)).await.unwrap();
        assert_eq!(page.resource_version.0, latest);
        rest.extend(page.items);
        match page.continue_token {
            Some(t) => token = t,
            None => break,
        }
    }
    assert_eq!(names(&rest), vec!["b", "c", "d"]);
    assert_eq!(data_of(&rest[0]), "2");
}

async fn list_exact_at_compacted_revision_is_expired(ctx: Ctx) {
    let created = create_all(&ctx, &["a"]).await;
    ctx.store.create(&key("b"), configmap("b", "1")).await.unwrap();
    compact(&ctx, current_revision(&ctx).await).await;
    let err = ctx
        .store
        .get_list("/configmaps/ns", &opts(&rv_of(&created[0]).to_string(), Some(ResourceVersionMatch::Exact), 0, ""))
        .await
        .unwrap_err();
    assert_eq!(err, StorageError::ListExpired);
    let status = err.to_status(Operation::List, &cm(), "");
    assert_eq!((status.code, status.reason.as_deref()), (Some(410), Some("Expired")));
    assert_eq!(status.message.as_deref(), Some("The resourceVersion for the provided list is too old."));
}

async fn list_refuses_bad_options(ctx: Ctx) {
    create_all(&ctx, &["a", "b"]).await;
    let page = ctx.store.get_list("/configmaps/ns", &opts("", None, 1, "")).await.unwrap();
    let token = page.continue_token.unwrap();
    let b64 = |s: &str| URL_SAFE_NO_PAD.encode(s);
    let cases: Vec<(ListOptions, &str)> = vec![
        (opts("abc", None, 0, ""), r#"invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax"#),
        (opts("-1", None, 5, ""), r#"invalid resource version: resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax"#),
        (opts("5", None, 1, &token), "specifying resource version is not allowed when using continue"),
        (opts("", None, 1, "not*base64"), "invalid continue token: continue key is not valid: illegal base64 data at input byte 3"),
        (
            opts("", None, 1, &b64(r#"{"v":"meta.k8s.io/v1","rv":0,"start":"a"}"#)),
            "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        ),
        (
            opts("", None, 1, &b64(r#"{"v":"meta.k8s.io/v1","rv":5,"start":"../secrets/"}"#)),
            "invalid continue token: continue key is not valid: ../secrets/",
        ),
    ];
    for (options, want) in cases {
        let err = ctx.store.get_list("/configmaps/ns", &options).await.unwrap_err();
        let status = err.to_status(Operation::List, &cm(), "");
        assert_eq!((status.code, status.reason.as_deref()), (Some(400), Some("BadRequest")), "{options:?}");
        assert_eq!(status.message.as_deref(), Some(want), "{options:?}");
    }
}

/// A LIST answer over gRPC's default 4 MiB receive limit still arrives: kube's etcd client (clientv3) takes
/// responses up to 2 GiB (`MaxCallRecvMsgSize(math.MaxInt32)`), so a namespace of large objects lists.
async fn list_larger_than_grpc_default_limit_is_returned_whole(ctx: Ctx) {
    // Four objects of 1.1 MB each: every one under etcd's 1.5 MiB request limit, together over 4 MiB.
    let big = "x".repeat(1_100_000);
    for name in ["a", "b", "c", "d"] {
        ctx.store.create(&key(name), configmap(name, &big)).await.unwrap();
    }
    let list = ctx.store.get_list("/configmaps/ns", &ListOptions::default()).await.unwrap();
    assert_eq!(names(&list.items), vec!["a", "b", "c", "d"]);
    assert!(list.items.iter().all(|o| o["data"]["k"].as_str().map(str::len) == Some(big.len())));
}
