//! Fuzz target: the data-dir reader (`DataDir::open`) on images and WALs written from fuzz input
//! (`kubesim_fuzz::disk`), torn and damaged; it must return a disk state or an error. A state it returns
//! must also start a member, as the binary would start one on it.
#![no_main]

use fake_etcd::service::member::data_dir::{DataDir, Identity};
use fake_etcd::{ClusterId, MemberId};
use kubesim_fuzz::disk::{scratch, FuzzDataDir, CLUSTER, MEMBER};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|dir: FuzzDataDir| {
    let root = scratch();
    dir.write(&root).expect("the scratch dir is writable");
    let identity = Identity { member: MemberId(MEMBER), cluster: ClusterId(CLUSTER) };
    let _ = DataDir::open(&root, identity);
    let _ = std::fs::remove_dir_all(&root);
});
