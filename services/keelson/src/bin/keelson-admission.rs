//! `keelson-admission` binary; see the crate docs of `keelson_admission_service`.
#![forbid(unsafe_code)]

use clap::Parser;
use keelson_admission_service::{run, Cli};
use keelson_rpc::service::{main_with, shutdown_signal};

fn main() -> std::process::ExitCode {
    main_with("keelson-admission", async {
        run(Cli::parse().into_config()?, shutdown_signal()).await
    })
}
