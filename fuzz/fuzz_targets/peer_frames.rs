//! Fuzz target: traffic from a peer to a member of a three-member cluster. An input whose first byte is
//! even is one raw `RaftBatch` (the frame decoder, then each raft-rs message in it); otherwise the rest is
//! a structure-aware sequence of batches (`kubesim_fuzz::peer`). A commit index past the member's log stops
//! it, as etcd's Raft stops (`kubesim_fuzz::peer::tolerating_commit_past_log`); any other panic is a crash.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use etcd_proto::kubesimpeer::RaftBatch;
use kubesim_fuzz::peer::{Cluster, PeerOp};
use libfuzzer_sys::fuzz_target;
use prost::Message;

fuzz_target!(|data: &[u8]| {
    let Some((mode, rest)) = data.split_first() else { return };
    kubesim_fuzz::peer::tolerating_commit_past_log(|| {
        kubesim_fuzz::paused_runtime().block_on(async {
            let cluster = Cluster::start();
            if mode % 2 == 0 {
                if let Ok(batch) = RaftBatch::decode(rest) {
                    cluster.deliver(batch).await;
                }
                return;
            }
            let Ok(ops) = Vec::<PeerOp>::arbitrary_take_rest(Unstructured::new(rest)) else { return };
            for op in ops.iter().take(32) {
                cluster.step(op).await;
            }
        })
    });
});
