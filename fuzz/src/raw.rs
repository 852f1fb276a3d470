//! The raw path: requests as protobuf bytes, decoded with the same prost types tonic decodes them with.
//! An input is a sequence of frames, each a tag byte (which request, see [`decode`]), a little-endian `u16`
//! length and that many bytes of the encoded message; a frame that does not decode is skipped, as tonic
//! would refuse it before any service saw it.

use prost::Message;

use crate::etcd::Call;

/// Splits `data` into frames and decodes each; the second value of each pair says whether the call
/// carries the last login's token (the tag's high bit).
pub fn calls(data: &[u8]) -> Vec<(Call, bool)> {
    let mut out = Vec::new();
    let mut rest = data;
    while rest.len() >= 3 {
        let tag = rest[0];
        let len = usize::from(u16::from_le_bytes([rest[1], rest[2]])).min(rest.len() - 3);
        let body = &rest[3..3 + len];
        rest = &rest[3 + len..];
        if let Some(call) = decode(tag & 0x7f, body) {
            out.push((call, tag & 0x80 != 0));
        }
    }
    out
}

/// One frame's request, if its bytes decode as the message its tag names.
pub fn decode(tag: u8, body: &[u8]) -> Option<Call> {
    fn msg<M: Message + Default>(body: &[u8]) -> Option<M> {
        M::decode(body).ok()
    }
    Some(match tag % 38 {
        0 => Call::Range(msg(body)?),
        1 => Call::Put(msg(body)?),
        2 => Call::DeleteRange(msg(body)?),
        3 => Call::Txn(msg(body)?),
        4 => Call::Compact(msg(body)?),
        5 => Call::LeaseGrant(msg(body)?),
        6 => Call::LeaseRevoke(msg(body)?),
        7 => Call::LeaseKeepAlive(msg(body)?),
        8 => Call::LeaseTimeToLive(msg(body)?),
        9 => Call::LeaseLeases,
        // Watch messages name their stream in the first byte, so one input can interleave streams.
        10 => Call::Watch { stream: *body.first()? % 4, req: msg(&body[1..])? },
        11 => Call::CloseWatch { stream: *body.first()? % 4 },
        12 => Call::Alarm(msg(body)?),
        13 => Call::Status,
        14 => Call::Defragment,
        15 => Call::Hash,
        16 => Call::HashKv(msg(body)?),
        17 => Call::MoveLeader(msg(body)?),
        18 => Call::MemberList,
        19 => Call::AuthEnable,
        20 => Call::AuthDisable,
        21 => Call::Authenticate(msg(body)?),
        22 => Call::UserAdd(msg(body)?),
        23 => Call::UserGet(msg(body)?),
        24 => Call::UserList,
        25 => Call::UserDelete(msg(body)?),
        26 => Call::UserChangePassword(msg(body)?),
        27 => Call::UserGrantRole(msg(body)?),
        28 => Call::UserRevokeRole(msg(body)?),
        29 => Call::RoleAdd(msg(body)?),
        30 => Call::RoleGet(msg(body)?),
        31 => Call::RoleList,
        32 => Call::RoleDelete(msg(body)?),
        33 => Call::RoleGrantPermission(msg(body)?),
        34 => Call::RoleRevokePermission(msg(body)?),
        35 => Call::Advance(u16::from_le_bytes([*body.first().unwrap_or(&0), *body.get(1).unwrap_or(&0)])),
        36 => Call::Watch { stream: 0, req: msg(body)? },
        _ => Call::Txn(msg(body)?),
    })
}

/// Encodes calls as frames, the inverse of [`calls`] for the messages that have a body (the seed corpus
/// is written with it).
pub fn frame(tag: u8, msg: &impl Message, out: &mut Vec<u8>) {
    let body = msg.encode_to_vec();
    let len = u16::try_from(body.len()).expect("a seed message under 64 KiB");
    out.push(tag);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&body);
}
