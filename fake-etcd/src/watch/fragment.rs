//! Splitting an oversized response for a watcher created with `fragment = true`, with etcd's rule
//! (`v3rpc/watch.go` `sendFragments`): a response of at least `max_request_bytes` with two or more events is
//! cut into pieces that each stay below the limit, except that a piece always takes at least one event. Every
//! piece but the last says `fragment = true`, and clientv3 joins them back into one response.

use etcd_proto::etcdserverpb::WatchResponse;

use super::wire_size::{event_field_len, response_len, response_len_without_events};

pub(super) fn split(resp: WatchResponse, max_request_bytes: usize) -> Vec<WatchResponse> {
    if resp.events.len() < 2 || response_len(&resp) < max_request_bytes {
        return vec![resp];
    }
    let mut events = resp.events.into_iter().peekable();
    // Pieces are sized with `fragment = true` set, as etcd sizes them; only the last one clears it.
    let template = WatchResponse { events: Vec::new(), fragment: true, ..resp };
    let base_len = response_len_without_events(&template);
    let mut pieces = Vec::new();
    while events.peek().is_some() {
        let mut piece = template.clone();
        let mut len = base_len;
        while let Some(ev) = events.peek() {
            let added = event_field_len(ev);
            if !piece.events.is_empty() && len + added >= max_request_bytes {
                break;
            }
            len += added;
            piece.events.extend(events.next());
        }
        debug_assert!(!piece.events.is_empty(), "every piece carries at least one event");
        debug_assert!(
            piece.events.len() == 1 || len < max_request_bytes,
            "a piece of several events exceeds the limit"
        );
        pieces.push(piece);
    }
    pieces.last_mut().expect("at least two events make at least one piece").fragment = false;
    debug_assert!(pieces.len() >= 2, "a response at or above the limit with several events is split");
    pieces
}

#[cfg(test)]
mod tests {
    use etcd_proto::etcdserverpb::ResponseHeader;
    use etcd_proto::mvccpb::{Event, KeyValue};

    use super::*;

    fn event(rev: i64, value_len: usize) -> Event {
        let kv = KeyValue { key: b"k".to_vec(), mod_revision: rev, value: vec![b'v'; value_len], ..Default::default() };
        Event { kv: Some(kv), ..Default::default() }
    }

    fn response(events: Vec<Event>) -> WatchResponse {
        WatchResponse {
            header: Some(ResponseHeader { revision: 9, ..Default::default() }),
            watch_id: 3,
            events,
            ..Default::default()
        }
    }

    /// (event value sizes, limit, expected event counts per piece; one piece means "not split").
    #[test]
    fn pieces_follow_etcds_rule() {
        let cases: &[(&[usize], usize, &[usize])] = &[
            (&[100, 100, 100], 10_000, &[3]),
            (&[5_000], 100, &[1]),
            (&[100, 100, 100, 100], 250, &[2, 2]),
            (&[100, 100, 100], 250, &[2, 1]),
            (&[1_000, 10, 10], 250, &[1, 2]),
            (&[10, 1_000, 10], 250, &[1, 1, 1]),
        ];
        for &(sizes, limit, expected) in cases {
            let events = sizes.iter().enumerate().map(|(i, &n)| event(i as i64 + 2, n)).collect::<Vec<_>>();
            let pieces = split(response(events.clone()), limit);
            let counts = pieces.iter().map(|p| p.events.len()).collect::<Vec<_>>();
            assert_eq!(counts, expected, "sizes {sizes:?} limit {limit}");
            let joined = pieces.iter().flat_map(|p| p.events.clone()).collect::<Vec<_>>();
            assert_eq!(joined, events, "pieces rejoin to the original events");
            let flags = pieces.iter().map(|p| p.fragment).collect::<Vec<_>>();
            let mut expected_flags = vec![true; pieces.len()];
            *expected_flags.last_mut().unwrap() = false;
            assert_eq!(flags, expected_flags, "only the last piece clears fragment");
            for p in &pieces {
                assert_eq!((p.watch_id, p.header.as_ref().unwrap().revision), (3, 9), "pieces keep id and header");
                assert!(p.events.len() == 1 || response_len(p) < limit, "a piece of several events fits");
            }
        }
    }

    #[test]
    fn exactly_at_the_limit_is_split() {
        let resp = response(vec![event(2, 50), event(3, 50)]);
        let len = response_len(&resp);
        assert_eq!(split(resp.clone(), len + 1).len(), 1, "below the limit");
        assert_eq!(split(resp, len).len(), 2, "etcd splits at size >= limit");
    }
}
