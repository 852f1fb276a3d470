//! `--data-dir`: the real build's disk under the Raft disk model. Every sync of the model ([`Disk::sync`])
//! reaches [`DataDir::persist`], which makes the writes durable on the real disk before the sync returns, so
//! a member killed with SIGKILL and started again on the same directory has every write it acknowledged.
//!
//! Layout, fake-etcd's own (under `<data-dir>/fake-etcd/`, beside nothing etcd would look for):
//! - `image`: the whole durable state at some point, with the member's identity and a generation number.
//!   Written to `image.tmp`, fsynced, renamed over `image`, and the directory fsynced (etcd writes its
//!   snapshot files and WAL segments the same way).
//! - `wal-<generation>`: every sync since that image, one record each (`u32` length, `u32` CRC-32C of the
//!   payload, the payload), appended and fdatasynced, as etcd's WAL syncs each Ready that must be durable.
//!
//! A sync that saves or installs a snapshot or compacts the log writes a new image (generation + 1) and
//! starts an empty WAL for it instead of journaling, so the WAL never holds entries the log dropped. Opening
//! reads the image, replays its WAL, and drops a torn last record (a crash in the middle of an append, which
//! was never acknowledged); damage anywhere else is an error, never silently skipped.
//!
//! Only the real binary uses this; simulations keep the disk model in memory and crash it themselves.
//!
//! [`Disk::sync`]: crate::raft::Disk::sync

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::raft::disk_codec::{decode_ops, decode_state, encode_ops, encode_state};
use crate::raft::{DiskBackend, DiskOp, DiskState, DurableDisk};
use crate::types::{ClusterId, MemberId};

/// The first bytes of an image: what it is and the layout version.
const MAGIC: &[u8; 8] = b"kubesim1";

/// A record header: payload length and checksum.
const RECORD_HEADER: usize = 8;

/// The one error type of the data dir.
#[derive(Debug, thiserror::Error)]
pub enum DataDirError {
    #[error("data dir {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("data dir {path}: {detail}")]
    Corrupt { path: PathBuf, detail: String },
    /// The directory holds another member's (or another cluster's) state: starting on it would mix two
    /// members' logs, so the member refuses to start.
    #[error(
        "data dir {path} belongs to member {found_member} of cluster {found_cluster:x}, but the flags make this \
         member {member} of cluster {cluster:x}; use that member's flags or another --data-dir"
    )]
    Identity { path: PathBuf, found_member: MemberId, found_cluster: u64, member: MemberId, cluster: u64 },
}

/// Who a data dir belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    pub member: MemberId,
    pub cluster: ClusterId,
}

/// The open data dir: the directory and the WAL being appended to.
#[derive(Debug)]
pub struct DataDir {
    dir: PathBuf,
    identity: Identity,
    wal: Mutex<Wal>,
}

#[derive(Debug)]
struct Wal {
    generation: u64,
    file: File,
}

impl DataDir {
    /// Opens (or creates) the data dir at `root` for `identity` and returns the member's durable disk,
    /// holding what the directory held and writing every later sync to it.
    pub fn open(root: &Path, identity: Identity) -> Result<DurableDisk, DataDirError> {
        let dir = root.join("fake-etcd");
        let existed = dir.exists();
        fs::create_dir_all(&dir).map_err(io_at(&dir))?;
        if !existed {
            // The new directories must survive a crash too, before anything is written in them.
            if let Some(parent) = root.parent().filter(|p| !p.as_os_str().is_empty()) {
                sync_dir(parent)?;
            }
            sync_dir(root)?;
        }
        let image = dir.join("image");
        let (generation, mut state) = if image.exists() {
            let (found, generation, state) = read_image(&image)?;
            if found != identity {
                return Err(DataDirError::Identity {
                    path: root.to_path_buf(),
                    found_member: found.member,
                    found_cluster: found.cluster.0,
                    member: identity.member,
                    cluster: identity.cluster.0,
                });
            }
            (generation, state)
        } else {
            write_image(&dir, identity, 0, &DiskState::default())?;
            (0, DiskState::default())
        };
        let wal_path = wal_path(&dir, generation);
        let file = open_wal(&dir, &wal_path)?;
        let corrupt = |detail: String| DataDirError::Corrupt { path: root.to_path_buf(), detail };
        state.validate().map_err(|why| corrupt(format!("image: {why}")))?;
        for op in replay_wal(&wal_path, &file)? {
            op.replay_onto(&mut state).map_err(|why| corrupt(format!("WAL: {why}")))?;
        }
        remove_stale_wals(&dir, generation)?;
        let data_dir = DataDir { dir, identity, wal: Mutex::new(Wal { generation, file }) };
        Ok(DurableDisk::with_backend(state, Arc::new(data_dir)))
    }

    fn append(&self, wal: &mut Wal, ops: &[DiskOp]) -> Result<(), DataDirError> {
        let path = wal_path(&self.dir, wal.generation);
        let payload = encode_ops(ops);
        let mut record = Vec::with_capacity(RECORD_HEADER + payload.len());
        record.extend_from_slice(&u32::try_from(payload.len()).expect("a sync under 4 GiB").to_le_bytes());
        record.extend_from_slice(&checksum(&payload).to_le_bytes());
        record.extend_from_slice(&payload);
        wal.file.write_all(&record).map_err(io_at(&path))?;
        wal.file.sync_data().map_err(io_at(&path))
    }

    /// Writes `state` as the next generation's image and moves to an empty WAL for it. A crash before the
    /// rename leaves the old image and WAL in force; after it, the new image (its WAL is created on open).
    fn rewrite(&self, wal: &mut Wal, state: &DiskState) -> Result<(), DataDirError> {
        let generation = wal.generation + 1;
        write_image(&self.dir, self.identity, generation, state)?;
        let path = wal_path(&self.dir, generation);
        let file = open_wal(&self.dir, &path)?;
        let old = std::mem::replace(wal, Wal { generation, file });
        let old_path = wal_path(&self.dir, old.generation);
        drop(old);
        fs::remove_file(&old_path).map_err(io_at(&old_path))
    }
}

impl DiskBackend for DataDir {
    fn persist(&self, ops: &[DiskOp], after: &DiskState) {
        let mut wal = self.wal.lock().expect("data dir lock poisoned");
        let result = if ops.iter().any(DiskOp::reshapes_log) {
            self.rewrite(&mut wal, after)
        } else {
            self.append(&mut wal, ops)
        };
        if let Err(e) = result {
            // A sync that did not happen cannot be reported as done, and there is no way back: etcd exits
            // when it cannot save to its WAL, and so does fake-etcd.
            tracing::error!(error = %e, "failed to save Raft state to the data dir; stopping");
            eprintln!("fake-etcd: {e}");
            std::process::exit(1);
        }
    }
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> DataDirError + '_ {
    move |source| DataDirError::Io { path: path.to_path_buf(), source }
}

fn corrupt(path: &Path, detail: impl Into<String>) -> DataDirError {
    DataDirError::Corrupt { path: path.to_path_buf(), detail: detail.into() }
}

/// CRC-32C, the checksum etcd's WAL uses.
fn checksum(bytes: &[u8]) -> u32 {
    crc::Crc::<u32>::new(&crc::CRC_32_ISCSI).checksum(bytes)
}

fn wal_path(dir: &Path, generation: u64) -> PathBuf {
    dir.join(format!("wal-{generation}"))
}

fn sync_dir(dir: &Path) -> Result<(), DataDirError> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(io_at(dir))
}

/// Opens a WAL for appending, creating it (and making its directory entry durable) if it is new.
fn open_wal(dir: &Path, path: &Path) -> Result<File, DataDirError> {
    let existed = path.exists();
    let file = OpenOptions::new().create(true).read(true).append(true).open(path).map_err(io_at(path))?;
    if !existed {
        file.sync_all().map_err(io_at(path))?;
        sync_dir(dir)?;
    }
    Ok(file)
}

/// The image: magic, member id, cluster id, generation, the encoded state, then a CRC-32C of all before it.
fn write_image(dir: &Path, identity: Identity, generation: u64, state: &DiskState) -> Result<(), DataDirError> {
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&identity.member.0.to_le_bytes());
    bytes.extend_from_slice(&identity.cluster.0.to_le_bytes());
    bytes.extend_from_slice(&generation.to_le_bytes());
    bytes.extend_from_slice(&encode_state(state));
    let sum = checksum(&bytes);
    bytes.extend_from_slice(&sum.to_le_bytes());
    let tmp = dir.join("image.tmp");
    let mut file = File::create(&tmp).map_err(io_at(&tmp))?;
    file.write_all(&bytes).and_then(|()| file.sync_all()).map_err(io_at(&tmp))?;
    let image = dir.join("image");
    fs::rename(&tmp, &image).map_err(io_at(&image))?;
    sync_dir(dir)
}

fn read_image(path: &Path) -> Result<(Identity, u64, DiskState), DataDirError> {
    let bytes = fs::read(path).map_err(io_at(path))?;
    let header = MAGIC.len() + 24;
    if bytes.len() < header + 4 || &bytes[..MAGIC.len()] != MAGIC {
        return Err(corrupt(path, "not a fake-etcd image (or an older layout)"));
    }
    let (body, sum) = bytes.split_at(bytes.len() - 4);
    if checksum(body) != u32::from_le_bytes(sum.try_into().expect("4 bytes")) {
        return Err(corrupt(path, "checksum mismatch"));
    }
    let u64_at = |at: usize| u64::from_le_bytes(body[at..at + 8].try_into().expect("8 bytes"));
    let identity = Identity { member: MemberId(u64_at(8)), cluster: ClusterId(u64_at(16)) };
    let generation = u64_at(24);
    let state = decode_state(&body[header..]).map_err(|e| corrupt(path, e.to_string()))?;
    Ok((identity, generation, state))
}

/// Reads every record of a WAL. A torn last record is cut off (and the cut made durable); a bad record
/// followed by more data is corruption.
fn replay_wal(path: &Path, file: &File) -> Result<Vec<DiskOp>, DataDirError> {
    let bytes = fs::read(path).map_err(io_at(path))?;
    let mut ops = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        let torn = |detail: &str| {
            tracing::warn!(wal = %path.display(), offset = at, "dropping a torn last WAL record ({detail})");
        };
        if rest.len() < RECORD_HEADER {
            torn("short header");
            break;
        }
        let len = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")) as usize;
        let sum = u32::from_le_bytes(rest[4..8].try_into().expect("4 bytes"));
        if rest.len() < RECORD_HEADER + len {
            torn("short payload");
            break;
        }
        let payload = &rest[RECORD_HEADER..RECORD_HEADER + len];
        if checksum(payload) != sum {
            if rest.len() == RECORD_HEADER + len {
                torn("checksum mismatch");
                break;
            }
            return Err(corrupt(path, format!("checksum mismatch in the record at offset {at}")));
        }
        ops.extend(decode_ops(payload).map_err(|e| corrupt(path, format!("record at offset {at}: {e}")))?);
        at += RECORD_HEADER + len;
    }
    if at < bytes.len() {
        file.set_len(at as u64).and_then(|()| file.sync_all()).map_err(io_at(path))?;
    }
    Ok(ops)
}

/// Removes WALs of other generations: older ones were superseded by the image, and a newer one can only be
/// left from a rewrite whose image never landed (it holds nothing, as nothing is appended before the rename).
fn remove_stale_wals(dir: &Path, generation: u64) -> Result<(), DataDirError> {
    let current = format!("wal-{generation}");
    for entry in fs::read_dir(dir).map_err(io_at(dir))? {
        let entry = entry.map_err(io_at(dir))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("wal-") && name != current {
            fs::remove_file(entry.path()).map_err(io_at(&entry.path()))?;
        }
    }
    let tmp = dir.join("image.tmp");
    if tmp.exists() {
        fs::remove_file(&tmp).map_err(io_at(&tmp))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use ::raft::eraftpb::{ConfState, Entry, HardState, Snapshot};

    use super::*;
    use crate::raft::{Disk, DiskOptions};

    const ME: Identity = Identity { member: MemberId(7), cluster: ClusterId(9) };

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("fake-etcd-data-dir-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn entry(index: u64, term: u64) -> Entry {
        Entry { index, term, data: format!("e{index}").into_bytes().into(), ..Entry::default() }
    }

    fn bootstrap(disk: &mut Disk) {
        disk.set_conf_state(&ConfState::from((vec![7], Vec::<u64>::new())));
        disk.append(&[entry(1, 1), entry(2, 1)]);
        disk.set_hard_state(&HardState { term: 1, vote: 7, commit: 2, ..HardState::default() });
        disk.sync();
    }

    #[test]
    fn synced_writes_survive_a_reopen_and_unsynced_ones_do_not() {
        let root = temp_dir("reopen");
        let mut disk = Disk::open(DataDir::open(&root, ME).unwrap(), DiskOptions::default());
        bootstrap(&mut disk);
        disk.append(&[entry(3, 1)]);
        disk.sync();
        disk.append(&[entry(4, 1)]);
        drop(disk);
        let state = DataDir::open(&root, ME).unwrap().snapshot_state();
        assert_eq!(state.last_index(), 3);
        assert_eq!(state.hard_state.commit, 2);
        assert_eq!(state.conf_state.voters, vec![7]);
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn a_snapshot_rewrites_the_image_and_empties_the_wal() {
        let root = temp_dir("image");
        let mut disk = Disk::open(DataDir::open(&root, ME).unwrap(), DiskOptions::default());
        bootstrap(&mut disk);
        disk.append(&(3..=10).map(|i| entry(i, 2)).collect::<Vec<_>>());
        disk.sync();
        let mut snapshot = Snapshot::default();
        snapshot.mut_metadata().index = 8;
        snapshot.mut_metadata().term = 2;
        snapshot.data = b"sm".to_vec().into();
        disk.save_snapshot(&snapshot);
        disk.compact(6);
        disk.sync();
        disk.append(&[entry(11, 2)]);
        disk.sync();
        let written = disk.state().clone();
        drop(disk);
        assert!(!root.join("fake-etcd/wal-0").exists(), "the old generation's WAL is gone");
        assert_eq!(DataDir::open(&root, ME).unwrap().snapshot_state(), written);
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn a_torn_last_record_is_dropped_and_damage_before_it_is_an_error() {
        let root = temp_dir("torn");
        let mut disk = Disk::open(DataDir::open(&root, ME).unwrap(), DiskOptions::default());
        bootstrap(&mut disk);
        disk.append(&[entry(3, 1)]);
        disk.sync();
        drop(disk);
        let wal = root.join("fake-etcd/wal-0");
        let whole = fs::read(&wal).unwrap();
        // A crash half-way through the last append.
        fs::write(&wal, &whole[..whole.len() - 3]).unwrap();
        assert_eq!(DataDir::open(&root, ME).unwrap().snapshot_state().last_index(), 2);
        assert_eq!(fs::metadata(&wal).unwrap().len() as usize, first_len(&whole), "the torn record was cut off");
        // A flipped byte in the first record, with a good record after it.
        let mut damaged = whole.clone();
        damaged[RECORD_HEADER + 2] ^= 0xff;
        fs::write(&wal, &damaged).unwrap();
        assert!(matches!(DataDir::open(&root, ME), Err(DataDirError::Corrupt { .. })));
        let _ = fs::remove_dir_all(&root);
    }

    /// The length of the first WAL record, header included.
    fn first_len(wal: &[u8]) -> usize {
        RECORD_HEADER + u32::from_le_bytes(wal[..4].try_into().unwrap()) as usize
    }

    #[test]
    fn another_members_data_dir_is_refused() {
        let root = temp_dir("identity");
        let mut disk = Disk::open(DataDir::open(&root, ME).unwrap(), DiskOptions::default());
        bootstrap(&mut disk);
        drop(disk);
        let other = Identity { member: MemberId(8), cluster: ClusterId(9) };
        let err = DataDir::open(&root, other).unwrap_err();
        assert!(err.to_string().contains("belongs to member 7 of cluster 9"), "{err}");
        let _ = fs::remove_dir_all(&root);
    }
}
