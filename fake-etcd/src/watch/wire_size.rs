//! The protobuf-encoded size of a `WatchResponse` and of each event in it, for the fragmenting rule,
//! measured by prost exactly as the gRPC layer will encode it.

use etcd_proto::etcdserverpb::WatchResponse;
use etcd_proto::mvccpb::Event;
use prost::Message;

/// `WatchResponse.events` is field 11.
const EVENTS_FIELD: u32 = 11;

pub(super) fn response_len(resp: &WatchResponse) -> usize {
    resp.encoded_len()
}

pub(super) fn response_len_without_events(resp: &WatchResponse) -> usize {
    response_len(resp) - resp.events.iter().map(event_field_len).sum::<usize>()
}

/// What one more element of `WatchResponse.events` adds to the encoding (tag, length and body).
pub(super) fn event_field_len(ev: &Event) -> usize {
    prost::encoding::message::encoded_len(EVENTS_FIELD, ev)
}
