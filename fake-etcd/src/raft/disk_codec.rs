//! The disk model's writes ([`DiskOp`]) and whole state ([`DiskState`]) as bytes, so that the real build's
//! data dir can journal every sync and write a full image now and then. Pure: bytes in, bytes out; the
//! files, checksums and fsyncs belong to the shell (`service::member::data_dir`).
//!
//! The layout is fake-etcd's own and private to it (nothing but fake-etcd reads a data dir). Integers are
//! little endian; a byte string is a `u32` length and the bytes; raft-rs's records are in their own
//! protobuf encoding. An op is a tag byte and its body; a batch is an op count and the ops; the state is the
//! hard state, the configuration, the snapshot, the truncation point and the entries.

use ::raft::eraftpb::{ConfState, Entry, HardState, Snapshot};

use super::disk::{DiskOp, DiskState};
use super::error::RaftError;

const TAG_APPEND: u8 = 1;
const TAG_HARD_STATE: u8 = 2;
const TAG_CONF_STATE: u8 = 3;
const TAG_INSTALL_SNAPSHOT: u8 = 4;
const TAG_SAVE_SNAPSHOT: u8 = 5;
const TAG_COMPACT: u8 = 6;

/// One sync's writes, in order.
pub fn encode_ops(ops: &[DiskOp]) -> Vec<u8> {
    let mut out = Vec::new();
    put_u32(&mut out, ops.len() as u32);
    for op in ops {
        match op {
            DiskOp::Append(entries) => {
                out.push(TAG_APPEND);
                put_entries(&mut out, entries);
            }
            DiskOp::SetHardState(hs) => {
                out.push(TAG_HARD_STATE);
                put_message(&mut out, hs);
            }
            DiskOp::SetConfState(cs) => {
                out.push(TAG_CONF_STATE);
                put_message(&mut out, cs);
            }
            DiskOp::InstallSnapshot(snapshot) => {
                out.push(TAG_INSTALL_SNAPSHOT);
                put_message(&mut out, snapshot);
            }
            DiskOp::SaveSnapshot(snapshot) => {
                out.push(TAG_SAVE_SNAPSHOT);
                put_message(&mut out, snapshot);
            }
            DiskOp::Compact(index) => {
                out.push(TAG_COMPACT);
                out.extend_from_slice(&index.to_le_bytes());
            }
        }
    }
    out
}

pub(crate) fn decode_ops(bytes: &[u8]) -> Result<Vec<DiskOp>, RaftError> {
    let mut r = Reader { bytes, what: "disk writes" };
    let n = r.u32()?;
    let mut ops = Vec::with_capacity(n.min(1024) as usize);
    for _ in 0..n {
        let op = match r.u8()? {
            TAG_APPEND => DiskOp::Append(r.entries()?),
            TAG_HARD_STATE => DiskOp::SetHardState(r.message()?),
            TAG_CONF_STATE => DiskOp::SetConfState(r.message()?),
            TAG_INSTALL_SNAPSHOT => DiskOp::InstallSnapshot(r.message()?),
            TAG_SAVE_SNAPSHOT => DiskOp::SaveSnapshot(r.message()?),
            TAG_COMPACT => DiskOp::Compact(r.u64()?),
            tag => return Err(r.error(format!("unknown write tag {tag}"))),
        };
        ops.push(op);
    }
    r.finish()?;
    Ok(ops)
}

/// The whole durable state.
pub fn encode_state(state: &DiskState) -> Vec<u8> {
    let mut out = Vec::new();
    put_message(&mut out, &state.hard_state);
    put_message(&mut out, &state.conf_state);
    put_message(&mut out, &state.snapshot);
    out.extend_from_slice(&state.truncated_index.to_le_bytes());
    out.extend_from_slice(&state.truncated_term.to_le_bytes());
    put_entries(&mut out, &state.entries);
    out
}

pub(crate) fn decode_state(bytes: &[u8]) -> Result<DiskState, RaftError> {
    let mut r = Reader { bytes, what: "disk state" };
    let hard_state: HardState = r.message()?;
    let conf_state: ConfState = r.message()?;
    let snapshot: Snapshot = r.message()?;
    let truncated_index = r.u64()?;
    let truncated_term = r.u64()?;
    let entries = r.entries()?;
    r.finish()?;
    let state = DiskState { hard_state, conf_state, snapshot, truncated_index, truncated_term, entries };
    // The same layout invariants the model keeps, checked on what came off a disk.
    let contiguous = state.entries.iter().enumerate().all(|(i, e)| e.index == state.truncated_index + 1 + i as u64);
    if !contiguous || state.truncated_index > state.snapshot.get_metadata().index {
        return Err(RaftError::Decode {
            what: "disk state",
            detail: "the log is not contiguous after its snapshot".into(),
        });
    }
    Ok(state)
}

fn put_u32(out: &mut Vec<u8>, n: u32) {
    out.extend_from_slice(&n.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u32(out, u32::try_from(bytes.len()).expect("a disk record under 4 GiB"));
    out.extend_from_slice(bytes);
}

fn put_message(out: &mut Vec<u8>, msg: &impl protobuf::Message) {
    put_bytes(out, &msg.write_to_bytes().expect("an in-memory protobuf message always encodes"));
}

fn put_entries(out: &mut Vec<u8>, entries: &[Entry]) {
    put_u32(out, entries.len() as u32);
    for entry in entries {
        put_message(out, entry);
    }
}

/// Reads what the `put_*` functions wrote, failing (never panicking) on bytes that end early or do not parse.
struct Reader<'a> {
    bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    fn error(&self, detail: String) -> RaftError {
        RaftError::Decode { what: self.what, detail }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], RaftError> {
        if self.bytes.len() < n {
            return Err(self.error(format!("{n} bytes wanted, {} left", self.bytes.len())));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8, RaftError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, RaftError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("took 4 bytes")))
    }

    fn u64(&mut self) -> Result<u64, RaftError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("took 8 bytes")))
    }

    fn message<M: protobuf::Message>(&mut self) -> Result<M, RaftError> {
        let n = self.u32()? as usize;
        let bytes = self.take(n)?;
        M::parse_from_bytes(bytes).map_err(|e| self.error(e.to_string()))
    }

    fn entries(&mut self) -> Result<Vec<Entry>, RaftError> {
        let n = self.u32()?;
        (0..n).map(|_| self.message()).collect()
    }

    fn finish(&self) -> Result<(), RaftError> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(self.error(format!("{} bytes left over", self.bytes.len())))
        }
    }
}

#[cfg(test)]
mod tests {
    use ::raft::eraftpb::SnapshotMetadata;

    use super::*;

    fn entry(index: u64, term: u64) -> Entry {
        Entry { index, term, data: format!("e{index}").into_bytes().into(), ..Entry::default() }
    }

    fn snapshot(index: u64, term: u64) -> Snapshot {
        let mut s = Snapshot::default();
        let mut meta = SnapshotMetadata { index, term, ..SnapshotMetadata::default() };
        meta.set_conf_state(ConfState::from((vec![1, 2, 3], Vec::<u64>::new())));
        s.set_metadata(meta);
        s.data = b"state machine".to_vec().into();
        s
    }

    #[test]
    fn every_write_round_trips() {
        let ops = vec![
            DiskOp::SetConfState(ConfState::from((vec![1, 2, 3], Vec::<u64>::new()))),
            DiskOp::Append(vec![entry(1, 1), entry(2, 1)]),
            DiskOp::SetHardState(HardState { term: 2, vote: 3, commit: 2, ..HardState::default() }),
            DiskOp::SaveSnapshot(snapshot(2, 1)),
            DiskOp::Compact(1),
            DiskOp::InstallSnapshot(snapshot(9, 2)),
        ];
        assert_eq!(decode_ops(&encode_ops(&ops)).unwrap(), ops);
    }

    #[test]
    fn the_state_round_trips() {
        let mut state = DiskState::default();
        for op in [
            DiskOp::SetConfState(ConfState::from((vec![1], Vec::<u64>::new()))),
            DiskOp::Append((1..=5).map(|i| entry(i, 1)).collect()),
            DiskOp::SaveSnapshot(snapshot(3, 1)),
            DiskOp::Compact(2),
            DiskOp::SetHardState(HardState { term: 1, vote: 1, commit: 5, ..HardState::default() }),
        ] {
            op.apply_to(&mut state);
        }
        assert_eq!(decode_state(&encode_state(&state)).unwrap(), state);
    }

    #[test]
    fn short_or_trailing_bytes_are_errors_not_panics() {
        let bytes = encode_ops(&[DiskOp::Append(vec![entry(1, 1)]), DiskOp::Compact(1)]);
        for cut in 0..bytes.len() {
            assert!(decode_ops(&bytes[..cut]).is_err(), "a batch cut at {cut} decoded");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_ops(&longer).is_err());
        assert!(decode_state(&[1, 2, 3]).is_err());
    }
}
