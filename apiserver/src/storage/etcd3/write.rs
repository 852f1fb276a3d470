//! Writes: create, guaranteed update and delete, each one etcd txn guarded by the key's mod revision, as
//! kube's `staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go` writes them. Update and delete retry on a lost race with the state the txn's
//! else-branch read, and treat a caller's cached copy as a hint: a failure it causes is only reported after
//! a fresh read confirms the copy was current (the fixed behaviour of kubernetes #82303).

use etcd_proto::etcdserverpb::compare::{CompareResult, CompareTarget, TargetUnion};
use etcd_proto::etcdserverpb::request_op::Request;
use etcd_proto::etcdserverpb::response_op::Response;
use etcd_proto::etcdserverpb::{
    Compare, DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, TxnRequest, TxnResponse,
};
use etcd_proto::mvccpb::KeyValue;
use serde_json::Value;

use super::etcd_error::storage_error;
use super::state::{decode, from_cached, from_kv, ObjState};
use super::Etcd3Store;
use crate::bug::Bug;
use crate::failpoint::{Injected, Point};
use crate::storage::error::StorageError;
use crate::storage::interface::ResponseMeta;
use crate::storage::object::Object;
use crate::storage::options::Preconditions;
use crate::storage::resource_version::ResourceVersion;

impl Etcd3Store {
    /// The lease a write goes under: the store's time to live, or none (0).
    async fn write_lease(&self) -> Result<i64, StorageError> {
        match &self.ttl {
            Some(ttl) => ttl.leases.lease(ttl.ttl_s).await,
            None => Ok(0),
        }
    }

    pub(super) async fn create_object(&self, key: &str, obj: Value) -> Result<Value, StorageError> {
        let etcd_key = self.etcd_key(key);
        // Only a resourceVersion that parses to a revision counts as "set", as upstream.
        if ResourceVersion::parse(obj.resource_version()).is_ok_and(|rv| rv.0 != 0) {
            return Err(StorageError::ResourceVersionSetOnCreate);
        }
        let data = obj.encode_for_storage();
        let mut put = put_request(&etcd_key, &data);
        put.lease = self.write_lease().await?;
        let put = RequestOp { request: Some(Request::RequestPut(put)) };
        let response = self.txn(&etcd_key, mod_revision_is(&etcd_key, 0), vec![put], vec![]).await?;
        if !response.succeeded {
            return Err(StorageError::KeyExists { key: etcd_key, rv: 0 });
        }
        decode(&etcd_key, &data, header_revision(&response))
    }

    pub(super) async fn update_object<F>(
        &self,
        key: &str,
        ignore_not_found: bool,
        preconditions: Option<&Preconditions>,
        mut update: F,
        cached: Option<Value>,
    ) -> Result<Value, StorageError>
    where
        F: FnMut(Value, ResponseMeta) -> Result<Value, StorageError> + Send,
    {
        let etcd_key = self.etcd_key(key);
        let (mut state, mut current) = match cached {
            Some(obj) => (from_cached(obj)?, false),
            None => (self.read_state(&etcd_key, ignore_not_found).await?, true),
        };
        loop {
            if let Some(pre) = preconditions {
                if let Err(e) = pre.check(&etcd_key, &state.obj) {
                    if current {
                        return Err(e);
                    }
                    // The cached copy may be stale: judge the precondition on fresh data.
                    let Some(fresh) = self.reread(&etcd_key, ignore_not_found).await? else { return Err(e) };
                    state = fresh;
                    current = true;
                    continue;
                }
            }
            let meta = ResponseMeta { resource_version: ResourceVersion::from_revision(state.rev) };
            let updated = match update(state.obj.clone(), meta) {
                Ok(obj) => obj,
                Err(e) if current => return Err(e),
                Err(e) => {
                    // Report the error only if the cached copy turns out to have been current.
                    let cached_rev = state.rev;
                    let Some(fresh) = self.reread(&etcd_key, ignore_not_found).await? else { return Err(e) };
                    state = fresh;
                    current = true;
                    if state.rev == cached_rev {
                        return Err(e);
                    }
                    continue;
                }
            };
            let data = updated.encode_for_storage();
            if state.rev != 0 && data == state.data {
                // No write if nothing changes, but only once etcd confirms the unchanged state.
                if !current {
                    let Some(fresh) = self.reread(&etcd_key, ignore_not_found).await? else {
                        return decode(&etcd_key, &state.data, state.rev);
                    };
                    state = fresh;
                    current = true;
                    if data != state.data {
                        continue;
                    }
                }
                return decode(&etcd_key, &state.data, state.rev);
            }
            let mut put = put_request(&etcd_key, &data);
            // An update renews the time to live, as kube's `TTLFunc` is asked on every write.
            put.lease = self.write_lease().await?;
            let put = RequestOp { request: Some(Request::RequestPut(put)) };
            let response =
                self.txn(&etcd_key, mod_revision_is(&etcd_key, state.rev), vec![put], vec![get_op(&etcd_key)]).await?;
            if !response.succeeded {
                // A conflict: retry on the state the txn's else-branch read.
                if !self.before_reread(&etcd_key).await? {
                    return Err(StorageError::ResourceVersionConflicts { key: etcd_key, rv: state.rev });
                }
                let compared = state.rev;
                state = from_kv(&etcd_key, else_branch_kv(&response), ignore_not_found)?;
                // The loop makes progress: etcd refused `mod_revision == compared` in the same txn that read
                // the fresh state, so the fresh state cannot be at `compared` again.
                assert_ne!(state.rev, compared, "GuaranteedUpdate: {etcd_key} refused at and re-read at {compared}");
                current = true;
                continue;
            }
            let written = header_revision(&response);
            assert!(written > state.rev, "GuaranteedUpdate: {etcd_key} written at {written}, not after {}", state.rev);
            return decode(&etcd_key, &data, written);
        }
    }

    pub(super) async fn delete_object<V>(
        &self,
        key: &str,
        preconditions: Option<&Preconditions>,
        mut validate: V,
        cached: Option<Value>,
    ) -> Result<Value, StorageError>
    where
        V: FnMut(&Value) -> Result<(), StorageError> + Send,
    {
        let etcd_key = self.etcd_key(key);
        let (mut state, mut current) = match cached {
            Some(obj) => (from_cached(obj)?, false),
            None => (self.read_state(&etcd_key, false).await?, true),
        };
        loop {
            let verdict = match preconditions {
                Some(pre) => pre.check(&etcd_key, &state.obj),
                None => Ok(()),
            }
            .and_then(|()| validate(&state.obj));
            if let Err(e) = verdict {
                if current {
                    return Err(e);
                }
                // Report the error only if the cached copy turns out to have been current.
                if self.bugs.has(Bug::StaleSuggestionTrusted) {
                    return Err(e);
                }
                let cached_rev = state.rev;
                state = self.read_state(&etcd_key, false).await?;
                current = true;
                if state.rev == cached_rev {
                    return Err(e);
                }
                continue;
            }
            let delete = RequestOp {
                request: Some(Request::RequestDeleteRange(DeleteRangeRequest {
                    key: etcd_key.clone().into_bytes(),
                    ..DeleteRangeRequest::default()
                })),
            };
            let response = self
                .txn(&etcd_key, mod_revision_is(&etcd_key, state.rev), vec![delete], vec![get_op(&etcd_key)])
                .await?;
            if !response.succeeded {
                // Deleted or rewritten meanwhile (or the cached copy was stale): retry on what etcd has.
                state = from_kv(&etcd_key, else_branch_kv(&response), false)?;
                current = true;
                continue;
            }
            // The deleted object's last state, at the deletion's revision.
            return decode(&etcd_key, &state.data, header_revision(&response));
        }
    }

    /// A guaranteed update's fresh read of `etcd_key` to retry on, past its failpoint; `None` if the
    /// failpoint dropped the re-read, or if the `stale-suggestion-trusted` bug switch skips it.
    async fn reread(&self, etcd_key: &str, ignore_not_found: bool) -> Result<Option<ObjState>, StorageError> {
        if self.bugs.has(Bug::StaleSuggestionTrusted) || !self.before_reread(etcd_key).await? {
            return Ok(None);
        }
        self.read_state(etcd_key, ignore_not_found).await.map(Some)
    }

    /// The failpoint before a guaranteed update retries on newer state (`crate::failpoint`): whether to go
    /// on. `false` (a `Drop`) means the caller skips the retry and reports what the state it has says, the
    /// behaviour before upstream's fixes (kubernetes #82303: a stale cached copy turns into a 409).
    async fn before_reread(&self, etcd_key: &str) -> Result<bool, StorageError> {
        let point = Point::BeforeUpdateReread;
        match self.failpoints.eval(point).await {
            Ok(()) => Ok(true),
            Err(Injected::Drop) => Ok(false),
            Err(Injected::Error) => {
                Err(StorageError::Unreachable { key: etcd_key.to_string(), message: point.message() })
            }
        }
    }

    /// The current state of `etcd_key` by a fresh (linearizable) read.
    async fn read_state(&self, etcd_key: &str, ignore_not_found: bool) -> Result<ObjState, StorageError> {
        let request = RangeRequest { key: etcd_key.as_bytes().to_vec(), ..RangeRequest::default() };
        let response = self.client.range(request).await.map_err(|s| storage_error(s, etcd_key))?;
        from_kv(etcd_key, response.kvs.first(), ignore_not_found)
    }

    async fn txn(
        &self,
        etcd_key: &str,
        compare: Compare,
        success: Vec<RequestOp>,
        failure: Vec<RequestOp>,
    ) -> Result<TxnResponse, StorageError> {
        let request = TxnRequest { compare: vec![compare], success, failure };
        self.client.txn(request).await.map_err(|s| storage_error(s, etcd_key))
    }
}

fn mod_revision_is(etcd_key: &str, rev: i64) -> Compare {
    Compare {
        result: CompareResult::Equal as i32,
        target: CompareTarget::Mod as i32,
        key: etcd_key.as_bytes().to_vec(),
        target_union: Some(TargetUnion::ModRevision(rev)),
        range_end: Vec::new(),
    }
}

fn put_request(etcd_key: &str, data: &[u8]) -> PutRequest {
    PutRequest { key: etcd_key.as_bytes().to_vec(), value: data.to_vec(), ..PutRequest::default() }
}

fn get_op(etcd_key: &str) -> RequestOp {
    RequestOp {
        request: Some(Request::RequestRange(RangeRequest {
            key: etcd_key.as_bytes().to_vec(),
            ..RangeRequest::default()
        })),
    }
}

/// The key-value the else-branch Get of a failed txn read (`None` if the key is gone).
fn else_branch_kv(response: &TxnResponse) -> Option<&KeyValue> {
    match response.responses.first().and_then(|r| r.response.as_ref()) {
        Some(Response::ResponseRange(range)) => range.kvs.first(),
        _ => None,
    }
}

fn header_revision(response: &TxnResponse) -> i64 {
    response.header.as_ref().map_or(0, |h| h.revision)
}
