//! Generates the tonic clients and servers from `proto/*.proto` with protox
//! (a pure-Rust protobuf parser, so no system `protoc` is needed).

use std::path::PathBuf;

const PROTOS: &[&str] = &[
    "common.proto",
    "store.proto",
    "admission.proto",
    "merge.proto",
    "watch_cache.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    for p in PROTOS {
        println!("cargo:rerun-if-changed={}", proto_dir.join(p).display());
    }
    let fds = protox::compile(PROTOS, [&proto_dir])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // Watch-cache objects are encoded once and shared between watchers:
        // keep them as `Bytes` so serving them is a reference-count bump.
        .bytes(".keelson.watch.v1")
        .compile_fds(fds)?;
    Ok(())
}
