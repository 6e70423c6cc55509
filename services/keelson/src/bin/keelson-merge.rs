//! `keelson-merge` binary; see the crate docs of `keelson_merge_service`.
#![forbid(unsafe_code)]

use clap::Parser;
use keelson_merge_service::{run, Cli};
use keelson_rpc::service::{main_with, shutdown_signal};

fn main() -> std::process::ExitCode {
    main_with("keelson-merge", async {
        run(Cli::parse().into_config()?, shutdown_signal()).await
    })
}
