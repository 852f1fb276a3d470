//! Gathers the descriptors of Kubernetes' protobuf contract into one `FileDescriptorSet` for
//! `src/endpoints/protobuf`.
//!
//! The `k8s-rs-pb` crate carries protoc's descriptor of every Kubernetes `generated.proto` (as the byte
//! string each generated module embeds), but its own `file_descriptor()` functions cannot be called: a
//! module lists itself among its dependencies, and the lazy initialiser waits on itself forever (seen with
//! 0.4.0 and `meta/v1`). So the build reads those byte strings out of the crate's sources, in file order,
//! and the server builds dynamic descriptors from them at run time. Nothing of the crate is compiled in
//! (the build-dependency enables no Kubernetes version, so it compiles to an empty library); the set is
//! derived from the dependency on every build and never committed.
//!
//! The simulation build has no protobuf (simulated clients speak JSON), so under `cfg(madsim)` it skips
//! that part.
//!
//! Both builds also get the list of `src/go_json`'s fixtures (the key order of kube's JSON), so that a
//! fixture dropped into `upstream/` or `ours/` is compiled in with no other change.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Kubernetes minor whose contract is served; `ServerConfig::version` reports 1.32 too.
const VERSION_DIR: &str = "v1_32";
const MARKER: &str = "static file_descriptor_proto_data: &'static [u8] = ";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    list_go_json_fixtures();
    if std::env::var_os("CARGO_CFG_MADSIM").is_some() {
        return;
    }
    let root = k8s_rs_pb_dir().join("src").join(VERSION_DIR);
    let mut sources = Vec::new();
    collect_modules(&root, &mut sources);
    sources.sort();
    let mut set = Vec::new();
    for source in &sources {
        let text = std::fs::read_to_string(source).unwrap_or_else(|e| panic!("reading {}: {e}", source.display()));
        let Some(at) = text.find(MARKER) else { continue };
        let literal_start = at + MARKER.len();
        let literal_end = literal_start
            + literal_len(&text[literal_start..])
                .unwrap_or_else(|| panic!("unterminated descriptor in {}", source.display()));
        let literal: syn::LitByteStr = syn::parse_str(&text[literal_start..literal_end])
            .unwrap_or_else(|e| panic!("descriptor literal in {}: {e}", source.display()));
        // FileDescriptorSet { repeated FileDescriptorProto file = 1; }: field 1, wire type 2, length, bytes.
        let bytes = literal.value();
        set.push(0x0a);
        put_varint(&mut set, bytes.len() as u64);
        set.extend_from_slice(&bytes);
    }
    assert!(!set.is_empty(), "no descriptors found under {}", root.display());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("k8s-descriptors.pb");
    std::fs::write(&out, set).unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
}

/// Writes `go_json_fixtures.rs`: an array of (file stem, `include_str!` of the file) for every fixture of
/// `src/go_json/upstream` and `src/go_json/ours`, sorted by stem.
fn list_go_json_fixtures() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let mut fixtures = Vec::new();
    for dir in ["upstream", "ours"] {
        let dir = manifest_dir.join("src/go_json").join(dir);
        println!("cargo:rerun-if-changed={}", dir.display());
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.extension().is_some_and(|e| e == "json") {
                let stem = path.file_stem().expect("a file has a name").to_string_lossy().into_owned();
                fixtures.push((stem, path));
            }
        }
    }
    fixtures.sort();
    let mut out = String::from("&[\n");
    for (stem, path) in &fixtures {
        out.push_str(&format!("    ({stem:?}, include_str!({:?})),\n", path.display().to_string()));
    }
    out.push_str("]\n");
    let target = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("go_json_fixtures.rs");
    std::fs::write(&target, out).unwrap_or_else(|e| panic!("writing {}: {e}", target.display()));
}

/// The unpacked sources of the `k8s-rs-pb` package this workspace locked, as `cargo metadata` reports them
/// (the registry, a vendor directory or a path override alike).
fn k8s_rs_pb_dir() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest =
        Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline", "--manifest-path"])
        .arg(&manifest)
        // Only this target's packages: the others may never have been downloaded.
        .arg("--filter-platform")
        .arg(std::env::var_os("TARGET").expect("cargo sets TARGET"))
        .output()
        .expect("running cargo metadata");
    assert!(output.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    let package = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "k8s-rs-pb")
        .expect("k8s-rs-pb is a build-dependency of the apiserver");
    let manifest_path = package["manifest_path"].as_str().expect("a package has a manifest_path");
    Path::new(manifest_path).parent().expect("a manifest lives in a directory").to_path_buf()
}

fn collect_modules(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            collect_modules(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The length of the byte-string literal `b"…"` that `text` starts with, escapes included.
fn literal_len(text: &str) -> Option<usize> {
    let body = text.strip_prefix("b\"")?;
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '"' => return Some(2 + i + 1),
            _ => {}
        }
    }
    None
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}
