//! Fuzz target: etcd requests as protobuf bytes (`kubesim_fuzz::raw`), decoded as tonic decodes them and
//! served in order by a fresh single member's gRPC services and watch streams.
#![no_main]

use kubesim_fuzz::etcd::Etcd;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let calls = kubesim_fuzz::raw::calls(data);
    kubesim_fuzz::paused_runtime().block_on(async {
        let mut etcd = Etcd::start();
        for (call, with_token) in calls {
            etcd.call(call, with_token).await;
        }
        etcd.close();
    });
});
