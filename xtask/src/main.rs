//! `cargo run -p xtask -- gen-catalog --definitions <_definitions.json>`
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
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
    }
}
