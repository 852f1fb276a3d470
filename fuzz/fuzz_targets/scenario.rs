//! Fuzz target: the scenario parser and validator (`sim::scenario::parse`) on any text, the library's
//! scenarios as seeds; every input gets a scenario or a located error, and the error renders.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Err(e) = sim::scenario::parse("fuzz.toml", &text) {
        let _ = e.to_string();
    }
});
