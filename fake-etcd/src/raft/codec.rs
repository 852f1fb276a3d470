//! Raft messages as bytes, for the peer transport. raft-rs 0.7's messages are rust-protobuf 2 types, a
//! different protobuf family (and version) from the prost types of the etcd API, so they cannot be embedded
//! in a tonic message; the peer service carries them as opaque bytes instead.

use ::raft::eraftpb::Message;
use protobuf::Message as _;

use super::error::RaftError;

pub fn encode_message(msg: &Message) -> Vec<u8> {
    msg.write_to_bytes().expect("an in-memory protobuf message always encodes")
}

pub fn decode_message(bytes: &[u8]) -> Result<Message, RaftError> {
    Message::parse_from_bytes(bytes).map_err(|e| RaftError::Decode { what: "message", detail: e.to_string() })
}

/// Whether a correct peer can send `msg` to member `me`: a message type that travels between members (not
/// one of Raft's local ones, such as `MsgHup`, which would make the member campaign), from a member (a
/// follower that briefly takes itself for the leader forwards a read-index request to itself, so `from` may
/// be `me`),
/// with a term wherever the sender's own term goes, and none on the forwarded proposals, read-index requests
/// and leader transfers (raft-rs forwards those as they came, and refuses to send one with a term). raft-rs, like etcd's Raft, trusts its peers and panics on some of these
/// ("term should be set when sending MsgRequestVoteResponse"); fake-etcd drops them instead, as a message
/// lost on the wire, which Raft already survives. Found by the `peer_frames` fuzz target.
pub(crate) fn from_a_peer(msg: &Message, me: u64) -> bool {
    use ::raft::eraftpb::MessageType as T;
    let termless = match msg.get_msg_type() {
        T::MsgPropose | T::MsgReadIndex | T::MsgTransferLeader => true,
        T::MsgAppend
        | T::MsgAppendResponse
        | T::MsgRequestVote
        | T::MsgRequestVoteResponse
        | T::MsgRequestPreVote
        | T::MsgRequestPreVoteResponse
        | T::MsgSnapshot
        | T::MsgHeartbeat
        | T::MsgHeartbeatResponse
        | T::MsgTimeoutNow
        | T::MsgReadIndexResp => false,
        T::MsgHup | T::MsgBeat | T::MsgUnreachable | T::MsgSnapStatus | T::MsgCheckQuorum => return false,
    };
    msg.from != 0 && msg.to == me && (msg.term == 0) == termless
}

#[cfg(test)]
mod tests {
    use ::raft::eraftpb::{Entry, MessageType};

    use super::*;

    #[test]
    fn a_message_round_trips() {
        let mut msg = Message::default();
        msg.set_msg_type(MessageType::MsgAppend);
        msg.from = 1;
        msg.to = 2;
        msg.term = 3;
        msg.index = 4;
        msg.log_term = 3;
        msg.commit = 4;
        let entry = Entry {
            index: 5,
            term: 3,
            data: b"payload".to_vec().into(),
            context: b"ctx".to_vec().into(),
            ..Entry::default()
        };
        msg.mut_entries().push(entry);
        assert_eq!(decode_message(&encode_message(&msg)).unwrap(), msg);
        assert!(decode_message(&[0xff, 0xff, 0xff]).is_err());
    }

    /// What a correct peer sends passes; what none sends is dropped. The first two refused rows are the
    /// `peer_frames` fuzz target's finds: a vote request with term 0, whose rejection raft-rs would send
    /// with term 0 and panic on, and a local message arriving from the network.
    #[test]
    fn only_what_a_correct_peer_sends_is_stepped() {
        let msg = |t: MessageType, from: u64, term: u64| {
            let mut m = Message::default();
            m.set_msg_type(t);
            (m.from, m.to, m.term) = (from, 1, term);
            m
        };
        let cases = [
            (msg(MessageType::MsgRequestVote, 2, 0), false),
            (msg(MessageType::MsgHup, 2, 3), false),
            (msg(MessageType::MsgCheckQuorum, 2, 3), false),
            (msg(MessageType::MsgHeartbeat, 0, 3), false),
            (msg(MessageType::MsgAppendResponse, 2, 0), false),
            (msg(MessageType::MsgReadIndex, 2, 15), false),
            (msg(MessageType::MsgRequestVote, 2, 3), true),
            (msg(MessageType::MsgHeartbeat, 3, 3), true),
            (msg(MessageType::MsgPropose, 2, 0), true),
            (msg(MessageType::MsgReadIndex, 2, 0), true),
        ];
        for (m, passes) in cases {
            assert_eq!(from_a_peer(&m, 1), passes, "{:?} from {} term {}", m.get_msg_type(), m.from, m.term);
        }
        let mut elsewhere = msg(MessageType::MsgHeartbeat, 2, 3);
        elsewhere.to = 3;
        assert!(!from_a_peer(&elsewhere, 1), "a message for another member");
    }
}
