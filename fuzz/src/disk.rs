//! Data dirs written from fuzz input: an image and a WAL in fake-etcd's layout (`service::member::data_dir`),
//! built from structured parts with correct checksums so that the reader gets past them to the records,
//! then torn and damaged as a crash or a bad disk would leave them. The reader must answer every one with
//! a disk state or an error.

use std::fs;
use std::path::{Path, PathBuf};

use arbitrary::Arbitrary;
use fake_etcd::raft::disk::{DiskOp, DiskState};
use fake_etcd::raft::disk_codec::{encode_ops, encode_state};
use raft::eraftpb::{ConfState, Entry, HardState, Snapshot};

/// The identity the reader is opened with; images name it or another.
pub const MEMBER: u64 = 7;
pub const CLUSTER: u64 = 9;

#[derive(Arbitrary, Debug, Clone)]
pub struct FuzzEntry {
    index: u8,
    term: u8,
    data: Vec<u8>,
}

impl FuzzEntry {
    fn entry(&self) -> Entry {
        Entry { index: self.index.into(), term: self.term.into(), data: self.data.clone().into(), ..Entry::default() }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub struct FuzzSnapshot {
    index: u8,
    term: u8,
    voters: Vec<u8>,
    data: Vec<u8>,
}

impl FuzzSnapshot {
    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        s.mut_metadata().index = self.index.into();
        s.mut_metadata().term = self.term.into();
        s.mut_metadata().set_conf_state(ConfState::from((
            self.voters.iter().map(|v| u64::from(*v)).collect::<Vec<_>>(),
            Vec::<u64>::new(),
        )));
        s.data = self.data.clone().into();
        s
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub struct FuzzHardState {
    term: u8,
    vote: u8,
    commit: u8,
}

impl FuzzHardState {
    fn hard_state(&self) -> HardState {
        HardState { term: self.term.into(), vote: self.vote.into(), commit: self.commit.into(), ..HardState::default() }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub enum FuzzOp {
    Append(Vec<FuzzEntry>),
    /// Entries that follow on from `first`, terms rising by the given steps: what a member really writes.
    AppendRun {
        first: u8,
        term: u8,
        steps: Vec<u8>,
    },
    SetHardState(FuzzHardState),
    SetConfState(Vec<u8>),
    InstallSnapshot(FuzzSnapshot),
    SaveSnapshot(FuzzSnapshot),
    Compact(u8),
}

impl FuzzOp {
    fn op(&self) -> DiskOp {
        match self {
            FuzzOp::Append(entries) => DiskOp::Append(entries.iter().map(FuzzEntry::entry).collect()),
            FuzzOp::AppendRun { first, term, steps } => {
                let mut term = u64::from(*term);
                let entries = steps
                    .iter()
                    .enumerate()
                    .map(|(i, step)| {
                        term += u64::from(*step % 2);
                        Entry { index: u64::from(*first) + i as u64, term, ..Entry::default() }
                    })
                    .collect();
                DiskOp::Append(entries)
            }
            FuzzOp::SetHardState(hs) => DiskOp::SetHardState(hs.hard_state()),
            FuzzOp::SetConfState(voters) => DiskOp::SetConfState(ConfState::from((
                voters.iter().map(|v| u64::from(*v)).collect::<Vec<_>>(),
                Vec::<u64>::new(),
            ))),
            FuzzOp::InstallSnapshot(s) => DiskOp::InstallSnapshot(s.snapshot()),
            FuzzOp::SaveSnapshot(s) => DiskOp::SaveSnapshot(s.snapshot()),
            FuzzOp::Compact(index) => DiskOp::Compact((*index).into()),
        }
    }
}

/// What a record's bytes are.
#[derive(Arbitrary, Debug, Clone)]
pub enum Payload {
    Ops(Vec<FuzzOp>),
    Raw(Vec<u8>),
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Record {
    payload: Payload,
    /// A checksum that does not match.
    bad_sum: bool,
    /// A length field that does not match (added to the real one).
    bad_len: Option<u32>,
}

#[derive(Arbitrary, Debug, Clone)]
pub enum ImageBody {
    State {
        hard_state: FuzzHardState,
        voters: Vec<u8>,
        snapshot: FuzzSnapshot,
        truncated_index: u8,
        truncated_term: u8,
        entries: Vec<FuzzEntry>,
    },
    Raw(Vec<u8>),
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Image {
    other_member: bool,
    generation: u8,
    body: ImageBody,
    bad_sum: bool,
    bad_magic: bool,
}

/// A whole data dir.
#[derive(Arbitrary, Debug, Clone)]
pub struct FuzzDataDir {
    image: Option<Image>,
    /// The generation of the WAL the records go to (the image's, unless this differs).
    wal_generation: Option<u8>,
    records: Vec<Record>,
    /// Bytes after the last record: a torn append.
    tail: Vec<u8>,
    /// Bytes cut off the end of the WAL.
    cut: u16,
    /// A byte of the WAL flipped (by offset), as a bad sector.
    flip: Option<u16>,
    /// A leftover `image.tmp` from a rewrite that never landed.
    stale_tmp: bool,
}

fn checksum(bytes: &[u8]) -> u32 {
    crc::Crc::<u32>::new(&crc::CRC_32_ISCSI).checksum(bytes)
}

impl FuzzDataDir {
    /// Writes the data dir under `root` (which must not exist), as `<root>/fake-etcd/...`.
    pub fn write(&self, root: &Path) -> std::io::Result<()> {
        let dir = root.join("fake-etcd");
        fs::create_dir_all(&dir)?;
        let mut generation = 0u64;
        if let Some(image) = &self.image {
            generation = image.generation.into();
            let mut bytes = if image.bad_magic { b"kubesim0".to_vec() } else { b"kubesim1".to_vec() };
            let member = if image.other_member { MEMBER + 1 } else { MEMBER };
            bytes.extend_from_slice(&member.to_le_bytes());
            bytes.extend_from_slice(&CLUSTER.to_le_bytes());
            bytes.extend_from_slice(&generation.to_le_bytes());
            match &image.body {
                ImageBody::State { hard_state, voters, snapshot, truncated_index, truncated_term, entries } => {
                    let state = DiskState {
                        hard_state: hard_state.hard_state(),
                        conf_state: ConfState::from((
                            voters.iter().map(|v| u64::from(*v)).collect::<Vec<_>>(),
                            Vec::<u64>::new(),
                        )),
                        snapshot: snapshot.snapshot(),
                        truncated_index: (*truncated_index).into(),
                        truncated_term: (*truncated_term).into(),
                        entries: entries.iter().map(FuzzEntry::entry).collect(),
                    };
                    bytes.extend_from_slice(&encode_state(&state));
                }
                ImageBody::Raw(raw) => bytes.extend_from_slice(raw),
            }
            let sum = checksum(&bytes) ^ u32::from(image.bad_sum);
            bytes.extend_from_slice(&sum.to_le_bytes());
            fs::write(dir.join("image"), bytes)?;
        }
        let mut wal = Vec::new();
        for record in &self.records {
            let payload = match &record.payload {
                Payload::Ops(ops) => encode_ops(&ops.iter().map(FuzzOp::op).collect::<Vec<_>>()),
                Payload::Raw(raw) => raw.clone(),
            };
            let len = (payload.len() as u32).wrapping_add(record.bad_len.unwrap_or(0));
            wal.extend_from_slice(&len.to_le_bytes());
            wal.extend_from_slice(&(checksum(&payload) ^ u32::from(record.bad_sum)).to_le_bytes());
            wal.extend_from_slice(&payload);
        }
        wal.extend_from_slice(&self.tail);
        wal.truncate(wal.len().saturating_sub(usize::from(self.cut)));
        if let (Some(at), false) = (self.flip, wal.is_empty()) {
            let at = usize::from(at) % wal.len();
            wal[at] ^= 0x10;
        }
        let wal_generation = self.wal_generation.map_or(generation, u64::from);
        fs::write(dir.join(format!("wal-{wal_generation}")), wal)?;
        if self.stale_tmp {
            fs::write(dir.join("image.tmp"), b"half an image")?;
        }
        Ok(())
    }
}

/// A scratch directory for one input, on tmpfs when there is one (the reader fsyncs what it repairs, which
/// costs nothing there), unique to this process.
pub fn scratch() -> PathBuf {
    let base = if Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
    let dir = base.join(format!("kubesim-fuzz-data-dir-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    dir
}
