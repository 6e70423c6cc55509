//! `cargo run -p xtask -- gen-catalog --definitions <_definitions.json>`
//! `cargo run -p xtask -- gen-protobuf`
//! `cargo run -p xtask -- gen-validation`
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "xtask", about = "Keelson developer tasks")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// The variants are the subcommands' names (`gen-catalog`, ...).
#[allow(clippy::enum_variant_names)]
#[derive(Subcommand)]
enum Command {
    /// Generate crates/registry/data/catalog.json.
    GenCatalog {
        /// Upstream `_definitions.json` (kubernetes-validate, v1.34.0-local).
        #[arg(long)]
        definitions: PathBuf,
        /// The hand-written resource table.
        #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/resources.yaml"))]
        resources: PathBuf,
        /// Where to write the catalog.
        #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../crates/registry/data/catalog.json"))]
        out: PathBuf,
    },
    /// Generate crates/codec/data/protobuf.json (the Protobuf message
    /// schemas of every built-in kind).
    GenProtobuf {
        /// The `k8s-pb` crate's `src` directory (default: the version
        /// Cargo.lock pins, in the cargo registry).
        #[arg(long)]
        k8s_pb: Option<PathBuf>,
        /// A Go binary built from k8s.io/api, for Go pointer facts.
        #[arg(long, default_value = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33")]
        go_binary: PathBuf,
        /// The catalog (JSON names, required fields, kinds).
        #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../crates/registry/data/catalog.json"))]
        catalog: PathBuf,
        /// Go facts of the packages the Go binary does not link.
        #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/protobuf-go.yaml"))]
        overrides: PathBuf,
        /// Where to write the data.
        #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../crates/codec/data/protobuf.json"))]
        out: PathBuf,
    },
    /// Generate crates/admission/src/validation/declarative/generated.rs
    /// from the declarative validation rule files next to it.
    GenValidation,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::GenValidation => {
            let (dir, out) = xtask::validation::default_paths();
            let res = xtask::validation::gen_validation(&dir)
                .map_err(|e| e.to_string())
                .and_then(|src| std::fs::write(&out, src).map_err(|e| e.to_string()));
            match res {
                Ok(()) => {
                    println!("wrote {}", out.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("gen-validation: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::GenCatalog {
            definitions,
            resources,
            out,
        } => match xtask::gen_catalog_files(&definitions, &resources, &out) {
            Ok(stats) => {
                println!(
                    "wrote {}: {} resources, {} definitions, {} bytes",
                    out.display(),
                    stats.resources,
                    stats.definitions,
                    stats.bytes
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("gen-catalog: {e}");
                ExitCode::FAILURE
            }
        },
        Command::GenProtobuf {
            k8s_pb,
            go_binary,
            catalog,
            overrides,
            out,
        } => {
            use xtask::protobuf::{gen_protobuf_file, locate_k8s_pb, Inputs};
            let workspace = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
            let src = match k8s_pb.map_or_else(|| locate_k8s_pb(&workspace), Ok) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("gen-protobuf: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let inputs = Inputs {
                k8s_pb_src: &src,
                catalog: &catalog,
                go_binary: &go_binary,
                overrides: &overrides,
            };
            match gen_protobuf_file(&inputs, &out) {
                Ok(stats) => {
                    println!(
                        "wrote {}: {} kinds, {} messages, {} bytes",
                        out.display(),
                        stats.kinds,
                        stats.messages,
                        stats.bytes
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("gen-protobuf: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
