//! Fuzz target: structure-aware etcd request sequences (`kubesim_fuzz::ops`: ranges, puts, deletes, txns
//! with nested txns, compactions, leases, watch streams with creates, cancels and progress requests, time
//! passing, auth) served by a fresh single member.
#![no_main]

use kubesim_fuzz::etcd::Etcd;
use kubesim_fuzz::ops::Step;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|steps: Vec<Step>| {
    kubesim_fuzz::paused_runtime().block_on(async {
        let mut etcd = Etcd::start();
        for step in steps.iter().take(64) {
            etcd.call(step.op.call(), step.with_token).await;
        }
        etcd.close();
    });
});
