//! The protobuf-encoded size of a `WatchResponse`, for the fragmenting rule.
//!
//! This is what prost's `Message::encoded_len` returns; fake-etcd does not depend on prost directly, so it
//! is computed here from the wire format. Every field number involved is below 16, so every tag is one byte;
//! proto3 leaves out scalar fields that hold their default value, but not a present sub-message.

use etcd_proto::etcdserverpb::{ResponseHeader, WatchResponse};
use etcd_proto::mvccpb::{Event, KeyValue};

pub(super) fn response_len(resp: &WatchResponse) -> usize {
    response_len_without_events(resp) + resp.events.iter().map(event_field_len).sum::<usize>()
}

pub(super) fn response_len_without_events(resp: &WatchResponse) -> usize {
    resp.header.as_ref().map_or(0, |h| message(header_len(h)))
        + int(resp.watch_id)
        + flag(resp.created)
        + flag(resp.canceled)
        + int(resp.compact_revision)
        + bytes(resp.cancel_reason.len())
        + flag(resp.fragment)
}

/// What one more element of `WatchResponse.events` adds to the encoding.
pub(super) fn event_field_len(ev: &Event) -> usize {
    message(event_len(ev))
}

fn event_len(ev: &Event) -> usize {
    int(i64::from(ev.r#type))
        + ev.kv.as_ref().map_or(0, |kv| message(kv_len(kv)))
        + ev.prev_kv.as_ref().map_or(0, |kv| message(kv_len(kv)))
}

fn kv_len(kv: &KeyValue) -> usize {
    bytes(kv.key.len())
        + int(kv.create_revision)
        + int(kv.mod_revision)
        + int(kv.version)
        + bytes(kv.value.len())
        + int(kv.lease)
}

fn header_len(h: &ResponseHeader) -> usize {
    uint(h.cluster_id) + uint(h.member_id) + int(h.revision) + uint(h.raft_term)
}

fn varint_len(v: u64) -> usize {
    // Seven payload bits per byte; a zero still takes one byte.
    let bits = 64 - (v | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// An int64 (or enum) field: negative values take ten bytes, as two's complement.
fn int(v: i64) -> usize {
    if v == 0 {
        0
    } else {
        1 + varint_len(v as u64)
    }
}

fn uint(v: u64) -> usize {
    if v == 0 {
        0
    } else {
        1 + varint_len(v)
    }
}

fn flag(v: bool) -> usize {
    if v {
        2
    } else {
        0
    }
}

fn bytes(len: usize) -> usize {
    if len == 0 {
        0
    } else {
        1 + varint_len(len as u64) + len
    }
}

fn message(len: usize) -> usize {
    1 + varint_len(len as u64) + len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_boundaries() {
        let cases = [(0, 1), (1, 1), (127, 1), (128, 2), (16_383, 2), (16_384, 3), (u64::MAX, 10)];
        for (v, len) in cases {
            assert_eq!(varint_len(v), len, "varint_len({v})");
        }
    }

    /// Hand-encoded: `0a 02 18 07` (header{revision 7}), `10 ff..01` (watch_id -1, ten bytes),
    /// `18 01` (created), `5a 0b` + event{`12 09` kv{`0a 01 61` key "a", `18 07` mod 7, `2a 02 68 69`
    /// value "hi"}}.
    #[test]
    fn matches_hand_encoding() {
        let resp = WatchResponse {
            header: Some(ResponseHeader { revision: 7, ..Default::default() }),
            watch_id: -1,
            created: true,
            events: vec![Event {
                kv: Some(KeyValue { key: b"a".to_vec(), mod_revision: 7, value: b"hi".to_vec(), ..Default::default() }),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(response_len(&resp), 4 + 11 + 2 + (2 + 11));
        assert_eq!(response_len(&WatchResponse::default()), 0);
    }
}
