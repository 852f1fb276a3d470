//! Fuzz target: HTTP requests (`kubesim_fuzz::http`: paths, query strings, headers, bodies in every content
//! type) handed to the apiserver's request handler in-process, over a fake-etcd member; every request gets
//! an answer.
#![no_main]

use kubesim_fuzz::http::{Apiserver, FuzzRequest};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|requests: Vec<FuzzRequest>| {
    let server = Apiserver::get();
    for req in requests.iter().take(4) {
        if let Some(req) = req.request() {
            server.send(req);
        }
    }
});
