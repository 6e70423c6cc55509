//! `keelson-admission` binary; see the crate docs of `keelson_admission_service`.
#![forbid(unsafe_code)]

use clap::Parser;
use keelson_admission_service::{run, Cli};
use keelson_runtime::{shutdown_signal, ServiceFlags};

fn main() -> std::process::ExitCode {
    keelson_runtime::main("keelson-admission", async {
        run(Cli::parse().into_config()?, shutdown_signal()).await
    })
}
