//! Conversions from etcd's wire types (`etcd-proto`) to the history's plain data, for the harness.
//!
//! Only the direction the harness needs (wire → history) exists. Unset optional messages read as their
//! defaults, as protobuf defines them.

use etcd_proto::etcdserverpb as pb;
use etcd_proto::mvccpb;

use super::*;

impl From<&mvccpb::KeyValue> for KeyValue {
    fn from(kv: &mvccpb::KeyValue) -> KeyValue {
        KeyValue {
            key: Bytes(kv.key.clone()),
            create_revision: Revision(kv.create_revision),
            mod_revision: Revision(kv.mod_revision),
            version: kv.version,
            value: Bytes(kv.value.clone()),
            lease: LeaseId(kv.lease),
        }
    }
}

impl From<&mvccpb::Event> for Event {
    fn from(ev: &mvccpb::Event) -> Event {
        let kind = match ev.r#type() {
            mvccpb::event::EventType::Put => EventKind::Put,
            mvccpb::event::EventType::Delete => EventKind::Delete,
        };
        Event {
            kind,
            kv: ev.kv.as_ref().map(KeyValue::from).unwrap_or_default(),
            prev_kv: ev.prev_kv.as_ref().map(KeyValue::from),
        }
    }
}

fn header_revision(header: &Option<pb::ResponseHeader>) -> Revision {
    Revision(header.as_ref().map_or(0, |h| h.revision))
}

fn span(key: &[u8], range_end: &[u8]) -> KeySpan {
    KeySpan { key: Bytes(key.to_vec()), range_end: Bytes(range_end.to_vec()) }
}

impl From<&pb::RangeRequest> for RangeRequest {
    fn from(r: &pb::RangeRequest) -> RangeRequest {
        use pb::range_request::{SortOrder as O, SortTarget as T};
        RangeRequest {
            span: span(&r.key, &r.range_end),
            limit: r.limit,
            revision: Revision(r.revision),
            serializable: r.serializable,
            keys_only: r.keys_only,
            count_only: r.count_only,
            sort_order: match r.sort_order() {
                O::None => SortOrder::None,
                O::Ascend => SortOrder::Ascend,
                O::Descend => SortOrder::Descend,
            },
            sort_target: match r.sort_target() {
                T::Key => SortTarget::Key,
                T::Version => SortTarget::Version,
                T::Create => SortTarget::Create,
                T::Mod => SortTarget::Mod,
                T::Value => SortTarget::Value,
            },
            min_mod_revision: Revision(r.min_mod_revision),
            max_mod_revision: Revision(r.max_mod_revision),
            min_create_revision: Revision(r.min_create_revision),
            max_create_revision: Revision(r.max_create_revision),
        }
    }
}

impl From<&pb::PutRequest> for PutRequest {
    fn from(r: &pb::PutRequest) -> PutRequest {
        PutRequest {
            key: Bytes(r.key.clone()),
            value: Bytes(r.value.clone()),
            lease: LeaseId(r.lease),
            prev_kv: r.prev_kv,
            ignore_value: r.ignore_value,
            ignore_lease: r.ignore_lease,
        }
    }
}

impl From<&pb::DeleteRangeRequest> for DeleteRangeRequest {
    fn from(r: &pb::DeleteRangeRequest) -> DeleteRangeRequest {
        DeleteRangeRequest { span: span(&r.key, &r.range_end), prev_kv: r.prev_kv }
    }
}

impl From<&pb::Compare> for Compare {
    fn from(c: &pb::Compare) -> Compare {
        use pb::compare::{CompareResult as R, TargetUnion as U};
        let result = match c.result() {
            R::Equal => CompareResult::Equal,
            R::Greater => CompareResult::Greater,
            R::Less => CompareResult::Less,
            R::NotEqual => CompareResult::NotEqual,
        };
        // The operand lives in the oneof; an unset oneof compares against the zero value of the target.
        let target = match (&c.target_union, c.target()) {
            (Some(U::Version(v)), _) => CompareTarget::Version(*v),
            (Some(U::CreateRevision(v)), _) => CompareTarget::Create(Revision(*v)),
            (Some(U::ModRevision(v)), _) => CompareTarget::Mod(Revision(*v)),
            (Some(U::Value(v)), _) => CompareTarget::Value(Bytes(v.clone())),
            (Some(U::Lease(v)), _) => CompareTarget::Lease(LeaseId(*v)),
            (None, pb::compare::CompareTarget::Version) => CompareTarget::Version(0),
            (None, pb::compare::CompareTarget::Create) => CompareTarget::Create(Revision::ZERO),
            (None, pb::compare::CompareTarget::Mod) => CompareTarget::Mod(Revision::ZERO),
            (None, pb::compare::CompareTarget::Value) => CompareTarget::Value(Bytes::default()),
            (None, pb::compare::CompareTarget::Lease) => CompareTarget::Lease(LeaseId::NONE),
        };
        Compare { span: span(&c.key, &c.range_end), result, target }
    }
}

impl From<&pb::RequestOp> for TxnOp {
    fn from(op: &pb::RequestOp) -> TxnOp {
        use pb::request_op::Request as R;
        match &op.request {
            Some(R::RequestRange(r)) => TxnOp::Range(r.into()),
            Some(R::RequestPut(r)) => TxnOp::Put(r.into()),
            Some(R::RequestDeleteRange(r)) => TxnOp::DeleteRange(r.into()),
            Some(R::RequestTxn(r)) => TxnOp::Txn(r.into()),
            // An empty RequestOp is a Range of the empty key on the wire; etcd rejects it as such.
            None => TxnOp::Range(RangeRequest::default()),
        }
    }
}

impl From<&pb::TxnRequest> for TxnRequest {
    fn from(r: &pb::TxnRequest) -> TxnRequest {
        TxnRequest {
            compare: r.compare.iter().map(Compare::from).collect(),
            success: r.success.iter().map(TxnOp::from).collect(),
            failure: r.failure.iter().map(TxnOp::from).collect(),
        }
    }
}

impl From<&pb::CompactionRequest> for CompactRequest {
    fn from(r: &pb::CompactionRequest) -> CompactRequest {
        CompactRequest { revision: Revision(r.revision), physical: r.physical }
    }
}

impl From<&pb::LeaseGrantRequest> for LeaseGrantRequest {
    fn from(r: &pb::LeaseGrantRequest) -> LeaseGrantRequest {
        LeaseGrantRequest { ttl_s: r.ttl, id: LeaseId(r.id) }
    }
}

impl From<&pb::LeaseRevokeRequest> for LeaseRevokeRequest {
    fn from(r: &pb::LeaseRevokeRequest) -> LeaseRevokeRequest {
        LeaseRevokeRequest { id: LeaseId(r.id) }
    }
}

impl From<&pb::RangeResponse> for RangeResult {
    fn from(r: &pb::RangeResponse) -> RangeResult {
        RangeResult { kvs: r.kvs.iter().map(KeyValue::from).collect(), more: r.more, count: r.count }
    }
}

impl From<&pb::PutResponse> for PutResult {
    fn from(r: &pb::PutResponse) -> PutResult {
        PutResult { prev_kv: r.prev_kv.as_ref().map(KeyValue::from) }
    }
}

impl From<&pb::DeleteRangeResponse> for DeleteResult {
    fn from(r: &pb::DeleteRangeResponse) -> DeleteResult {
        DeleteResult { deleted: r.deleted, prev_kvs: r.prev_kvs.iter().map(KeyValue::from).collect() }
    }
}

impl From<&pb::TxnResponse> for TxnResult {
    fn from(r: &pb::TxnResponse) -> TxnResult {
        use pb::response_op::Response as R;
        let responses = r
            .responses
            .iter()
            .map(|op| match &op.response {
                Some(R::ResponseRange(r)) => TxnOpResult::Range(r.into()),
                Some(R::ResponsePut(r)) => TxnOpResult::Put(r.into()),
                Some(R::ResponseDeleteRange(r)) => TxnOpResult::DeleteRange(r.into()),
                Some(R::ResponseTxn(r)) => TxnOpResult::Txn(r.into()),
                None => TxnOpResult::Range(RangeResult::default()),
            })
            .collect();
        TxnResult { succeeded: r.succeeded, responses }
    }
}

impl From<&pb::RangeResponse> for Response {
    fn from(r: &pb::RangeResponse) -> Response {
        Response { header_revision: header_revision(&r.header), body: ResponseBody::Range(r.into()) }
    }
}

impl From<&pb::PutResponse> for Response {
    fn from(r: &pb::PutResponse) -> Response {
        Response { header_revision: header_revision(&r.header), body: ResponseBody::Put(r.into()) }
    }
}

impl From<&pb::DeleteRangeResponse> for Response {
    fn from(r: &pb::DeleteRangeResponse) -> Response {
        Response { header_revision: header_revision(&r.header), body: ResponseBody::DeleteRange(r.into()) }
    }
}

impl From<&pb::TxnResponse> for Response {
    fn from(r: &pb::TxnResponse) -> Response {
        Response { header_revision: header_revision(&r.header), body: ResponseBody::Txn(r.into()) }
    }
}

impl From<&pb::CompactionResponse> for Response {
    fn from(r: &pb::CompactionResponse) -> Response {
        Response { header_revision: header_revision(&r.header), body: ResponseBody::Compact }
    }
}

impl From<&pb::LeaseGrantResponse> for Response {
    fn from(r: &pb::LeaseGrantResponse) -> Response {
        Response {
            header_revision: header_revision(&r.header),
            body: ResponseBody::LeaseGrant(LeaseGrantResult { id: LeaseId(r.id), ttl_s: r.ttl }),
        }
    }
}

impl From<&pb::LeaseRevokeResponse> for Response {
    fn from(r: &pb::LeaseRevokeResponse) -> Response {
        Response { header_revision: header_revision(&r.header), body: ResponseBody::LeaseRevoke }
    }
}

impl From<&pb::WatchCreateRequest> for WatchCreate {
    fn from(r: &pb::WatchCreateRequest) -> WatchCreate {
        use pb::watch_create_request::FilterType;
        let filters = r
            .filters()
            .map(|f| match f {
                FilterType::Noput => WatchFilter::NoPut,
                FilterType::Nodelete => WatchFilter::NoDelete,
            })
            .collect();
        WatchCreate {
            span: span(&r.key, &r.range_end),
            start_revision: Revision(r.start_revision),
            prev_kv: r.prev_kv,
            progress_notify: r.progress_notify,
            filters,
            fragment: r.fragment,
        }
    }
}

impl From<&pb::WatchResponse> for WatchResponse {
    fn from(r: &pb::WatchResponse) -> WatchResponse {
        WatchResponse {
            header_revision: header_revision(&r.header),
            watch_id: r.watch_id,
            created: r.created,
            canceled: r.canceled,
            compact_revision: Revision(r.compact_revision),
            cancel_reason: r.cancel_reason.clone(),
            fragment: r.fragment,
            events: r.events.iter().map(Event::from).collect(),
        }
    }
}

impl From<&tonic::Status> for ErrorStatus {
    fn from(s: &tonic::Status) -> ErrorStatus {
        ErrorStatus { code: GrpcCode::from_i32(s.code() as i32), message: s.message().to_string() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn txn_request_converts_compares_and_nested_ops() {
        let wire = pb::TxnRequest {
            compare: vec![pb::Compare {
                result: pb::compare::CompareResult::Equal as i32,
                target: pb::compare::CompareTarget::Mod as i32,
                key: b"/a".to_vec(),
                range_end: vec![],
                target_union: Some(pb::compare::TargetUnion::ModRevision(0)),
            }],
            success: vec![pb::RequestOp {
                request: Some(pb::request_op::Request::RequestPut(pb::PutRequest {
                    key: b"/a".to_vec(),
                    value: b"1".to_vec(),
                    ..Default::default()
                })),
            }],
            failure: vec![pb::RequestOp {
                request: Some(pb::request_op::Request::RequestRange(pb::RangeRequest {
                    key: b"/a".to_vec(),
                    ..Default::default()
                })),
            }],
        };
        let txn = TxnRequest::from(&wire);
        assert_eq!(txn.compare[0].target, CompareTarget::Mod(Revision(0)));
        assert_eq!(txn.compare[0].result, CompareResult::Equal);
        assert_eq!(txn.success, vec![TxnOp::Put(PutRequest::new("/a", "1"))]);
        assert_eq!(txn.failure, vec![TxnOp::Range(RangeRequest::key("/a"))]);
    }

    #[test]
    fn watch_response_converts_events() {
        let wire = pb::WatchResponse {
            header: Some(pb::ResponseHeader { revision: 7, ..Default::default() }),
            watch_id: 3,
            events: vec![mvccpb::Event {
                r#type: mvccpb::event::EventType::Delete as i32,
                kv: Some(mvccpb::KeyValue { key: b"/a".to_vec(), mod_revision: 7, ..Default::default() }),
                prev_kv: None,
            }],
            ..Default::default()
        };
        let resp = WatchResponse::from(&wire);
        assert_eq!(resp.header_revision, Revision(7));
        assert_eq!(resp.events[0].kind, EventKind::Delete);
        assert_eq!(resp.events[0].revision(), Revision(7));
        assert!(!resp.is_progress_notify());
    }
}
