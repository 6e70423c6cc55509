//! `keelson-merge` binary; see the crate docs of `keelson_merge_service`.
#![forbid(unsafe_code)]

use clap::Parser;
use keelson_merge_service::{run, Cli};
use keelson_runtime::{shutdown_signal, ServiceFlags};

fn main() -> std::process::ExitCode {
    keelson_runtime::main("keelson-merge", async {
        run(Cli::parse().into_config()?, shutdown_signal()).await
    })
}
