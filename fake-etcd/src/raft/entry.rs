//! How a [`Command`] travels in a Raft log entry, and how the proposing member finds the client waiting for
//! it. The entry's data is the command: one tag byte, then the request as etcd's protobuf message (or, for
//! the lease commands that have no request message of their own, fixed-width big-endian integers; for the
//! auth requests, their bincode form). A command made by a user (auth enabled) comes wrapped in an envelope
//! naming the user and the auth revision the serving member checked the token at, as etcd's
//! `RequestHeader.username` and `auth_revision` travel; every member checks permissions against it. The
//! entry's context is the [`ProposalId`]: which member proposed it and that member's sequence number, so
//! every member can tell its own proposals apart from everyone else's when they commit.

use etcd_proto::etcdserverpb::{CompactionRequest, DeleteRangeRequest, PutRequest, TxnRequest};

use super::error::RaftError;
use crate::apply::Command;
use crate::auth::{AuthInfo, AuthRequest};
use crate::types::{AuthRevision, LeaseId, MemberId};

const TAG_PUT: u8 = 1;
const TAG_DELETE_RANGE: u8 = 2;
const TAG_TXN: u8 = 3;
const TAG_COMPACT: u8 = 4;
const TAG_LEASE_GRANT: u8 = 5;
const TAG_LEASE_REVOKE: u8 = 6;
const TAG_AUTH: u8 = 7;
/// The envelope of a command made by a user: name length (u32), name, auth revision (u64), then the command.
const TAG_AS_USER: u8 = 0x40;
/// An entry the shell proposes for its own bookkeeping (etcd's member attributes, cluster version, alarms):
/// opaque to this layer and to the state machine.
const TAG_INTERNAL: u8 = 0x80;

/// What a normal entry carries: a state-machine command, or the shell's own internal record.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Payload {
    /// A command, and who made it (the default [`AuthInfo`] when no user did).
    Command(Command, AuthInfo),
    Internal(Vec<u8>),
}

/// The entry data for an internal record with body `body`.
pub(crate) fn encode_internal(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + body.len());
    out.push(TAG_INTERNAL);
    out.extend_from_slice(body);
    out
}

/// The payload of an entry's data: a command, or an internal record.
pub(crate) fn decode_payload(data: &[u8]) -> Result<Payload, RaftError> {
    match data.split_first() {
        Some((&TAG_INTERNAL, body)) => Ok(Payload::Internal(body.to_vec())),
        _ => decode_command_as(data).map(|(cmd, by)| Payload::Command(cmd, by)),
    }
}

/// Who proposed an entry: the member and its own sequence number. Unique across the cluster as long as each
/// member never reuses a sequence number (a restarted member starts a new range, e.g. from its term).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ProposalId {
    pub member: MemberId,
    pub seq: u64,
}

impl ProposalId {
    pub(crate) fn encode(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16);
        out.extend_from_slice(&self.member.0.to_be_bytes());
        out.extend_from_slice(&self.seq.to_be_bytes());
        out
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<ProposalId, RaftError> {
        let [member, seq] = read_u64s::<2>(bytes, "proposal id")?;
        Ok(ProposalId { member: MemberId(member), seq })
    }
}

/// The entry data for `cmd`.
pub(crate) fn encode_command(cmd: &Command) -> Vec<u8> {
    let mut out = Vec::new();
    match cmd {
        Command::Put(req) => tagged(&mut out, TAG_PUT, req),
        Command::DeleteRange(req) => tagged(&mut out, TAG_DELETE_RANGE, req),
        Command::Txn(req) => tagged(&mut out, TAG_TXN, req),
        Command::Compact(req) => tagged(&mut out, TAG_COMPACT, req),
        Command::LeaseGrant { id, ttl_s } => {
            out.push(TAG_LEASE_GRANT);
            out.extend_from_slice(&id.0.to_be_bytes());
            out.extend_from_slice(&ttl_s.to_be_bytes());
        }
        Command::LeaseRevoke(id) => {
            out.push(TAG_LEASE_REVOKE);
            out.extend_from_slice(&id.0.to_be_bytes());
        }
        Command::Auth(req) => {
            out.push(TAG_AUTH);
            bincode::serialize_into(&mut out, req).expect("serialising into a Vec cannot fail");
        }
    }
    out
}

/// The entry data for `cmd` made by `by`: the plain command when no user made it.
pub(crate) fn encode_command_as(cmd: &Command, by: &AuthInfo) -> Vec<u8> {
    if by.is_anonymous() {
        return encode_command(cmd);
    }
    let mut out = vec![TAG_AS_USER];
    out.extend_from_slice(&(by.user.len() as u32).to_be_bytes());
    out.extend_from_slice(by.user.as_bytes());
    out.extend_from_slice(&by.revision.0.to_be_bytes());
    out.extend_from_slice(&encode_command(cmd));
    out
}

/// The command in an entry's data and who made it. An error means the bytes were not written by
/// [`encode_command_as`].
pub(crate) fn decode_command_as(data: &[u8]) -> Result<(Command, AuthInfo), RaftError> {
    let Some((&TAG_AS_USER, rest)) = data.split_first() else {
        return decode_command(data).map(|cmd| (cmd, AuthInfo::default()));
    };
    let envelope = || decode_error("a truncated user envelope");
    let len = u32::from_be_bytes(rest.get(..4).ok_or_else(envelope)?.try_into().expect("4 bytes")) as usize;
    let name = rest.get(4..4 + len).ok_or_else(envelope)?;
    let user = String::from_utf8(name.to_vec()).map_err(|_| decode_error("a user name that is not UTF-8"))?;
    let revision = rest.get(4 + len..12 + len).ok_or_else(envelope)?;
    let revision = AuthRevision(u64::from_be_bytes(revision.try_into().expect("8 bytes")));
    let cmd = decode_command(&rest[12 + len..])?;
    Ok((cmd, AuthInfo { user, revision }))
}

/// The command in an entry's data, without its envelope. An error means the bytes were not written by
/// [`encode_command_as`].
pub(crate) fn decode_command(data: &[u8]) -> Result<Command, RaftError> {
    if data.first() == Some(&TAG_AS_USER) {
        return decode_command_as(data).map(|(cmd, _)| cmd);
    }
    let (&tag, body) = data.split_first().ok_or_else(|| decode_error("an empty entry"))?;
    let cmd = match tag {
        TAG_PUT => Command::Put(prost_decode::<PutRequest>(body)?),
        TAG_DELETE_RANGE => Command::DeleteRange(prost_decode::<DeleteRangeRequest>(body)?),
        TAG_TXN => Command::Txn(prost_decode::<TxnRequest>(body)?),
        TAG_COMPACT => Command::Compact(prost_decode::<CompactionRequest>(body)?),
        TAG_LEASE_GRANT => {
            let [id, ttl_s] = read_u64s::<2>(body, "lease grant")?;
            Command::LeaseGrant { id: LeaseId(id as i64), ttl_s: ttl_s as i64 }
        }
        TAG_LEASE_REVOKE => {
            let [id] = read_u64s::<1>(body, "lease revoke")?;
            Command::LeaseRevoke(LeaseId(id as i64))
        }
        TAG_AUTH => Command::Auth(
            bincode::deserialize::<AuthRequest>(body)
                .map_err(|e| RaftError::Decode { what: "auth request", detail: e.to_string() })?,
        ),
        other => return Err(decode_error(&format!("unknown command tag {other}"))),
    };
    Ok(cmd)
}

fn tagged(out: &mut Vec<u8>, tag: u8, msg: &impl prost::Message) {
    out.push(tag);
    msg.encode(out).expect("a Vec grows as needed");
}

fn prost_decode<M: prost::Message + Default>(body: &[u8]) -> Result<M, RaftError> {
    M::decode(body).map_err(|e| RaftError::Decode { what: "entry", detail: e.to_string() })
}

fn read_u64s<const N: usize>(bytes: &[u8], what: &'static str) -> Result<[u64; N], RaftError> {
    if bytes.len() != 8 * N {
        return Err(RaftError::Decode { what, detail: format!("{} bytes, expected {}", bytes.len(), 8 * N) });
    }
    let mut out = [0u64; N];
    for (i, chunk) in bytes.chunks_exact(8).enumerate() {
        out[i] = u64::from_be_bytes(chunk.try_into().expect("chunks_exact yields 8 bytes"));
    }
    Ok(out)
}

fn decode_error(detail: &str) -> RaftError {
    RaftError::Decode { what: "entry", detail: detail.to_string() }
}

#[cfg(test)]
mod tests {
    use etcd_proto::etcdserverpb::{compare, request_op, Compare, RequestOp};

    use super::*;

    #[test]
    fn every_command_round_trips() {
        let txn = TxnRequest {
            compare: vec![Compare {
                key: b"k".to_vec(),
                target: compare::CompareTarget::Version as i32,
                target_union: Some(compare::TargetUnion::Version(3)),
                ..Compare::default()
            }],
            success: vec![RequestOp {
                request: Some(request_op::Request::RequestPut(PutRequest {
                    key: b"k".to_vec(),
                    value: b"v".to_vec(),
                    ..PutRequest::default()
                })),
            }],
            failure: vec![],
        };
        let cmds = [
            Command::Put(PutRequest { key: b"a".to_vec(), value: b"1".to_vec(), lease: 7, ..PutRequest::default() }),
            Command::DeleteRange(DeleteRangeRequest { key: b"a".to_vec(), range_end: b"b".to_vec(), prev_kv: true }),
            Command::Txn(txn),
            Command::Compact(CompactionRequest { revision: 12, physical: true }),
            Command::LeaseGrant { id: LeaseId(0x7fff_0000_0000_0001), ttl_s: 60 },
            Command::LeaseRevoke(LeaseId(42)),
            Command::Auth(AuthRequest::UserAdd { name: "alice".into(), hashed_password: Some("$2b$04$x".into()) }),
            Command::Auth(AuthRequest::RoleList),
        ];
        let alice = AuthInfo { user: "alice".into(), revision: AuthRevision(9) };
        for cmd in cmds {
            let bytes = encode_command(&cmd);
            assert_eq!(decode_command(&bytes).unwrap(), cmd);
            assert_eq!(decode_command_as(&bytes).unwrap(), (cmd.clone(), AuthInfo::default()));
            let wrapped = encode_command_as(&cmd, &alice);
            assert_eq!(decode_command_as(&wrapped).unwrap(), (cmd.clone(), alice.clone()));
            assert_eq!(decode_command(&wrapped).unwrap(), cmd);
            assert_eq!(decode_payload(&wrapped).unwrap(), Payload::Command(cmd, alice.clone()));
        }
        assert!(decode_command_as(&[TAG_AS_USER, 0, 0, 0, 9, b'a']).is_err());
    }

    #[test]
    fn proposal_ids_round_trip_and_garbage_is_an_error() {
        let id = ProposalId { member: MemberId(0xdead_beef), seq: 99 };
        assert_eq!(ProposalId::decode(&id.encode()).unwrap(), id);
        assert!(ProposalId::decode(&[1, 2, 3]).is_err());
        assert!(decode_command(&[]).is_err());
        assert!(decode_command(&[99, 1]).is_err());
        assert!(decode_command(&[TAG_LEASE_REVOKE, 1, 2]).is_err());
        assert_eq!(decode_payload(&encode_internal(b"x")).unwrap(), Payload::Internal(b"x".to_vec()));
        let put = Command::LeaseRevoke(LeaseId(1));
        assert_eq!(decode_payload(&encode_command(&put)).unwrap(), Payload::Command(put, AuthInfo::default()));
    }
}
