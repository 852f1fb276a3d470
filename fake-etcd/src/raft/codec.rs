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
}
