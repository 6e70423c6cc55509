//! `keelson-store` binary; see the crate docs of `keelson_store_service`.
#![forbid(unsafe_code)]

use clap::Parser;
use keelson_runtime::{shutdown_signal, ServiceFlags};
use keelson_store_service::{run, Cli};

fn main() -> std::process::ExitCode {
    keelson_runtime::main("keelson-store", async {
        run(Cli::parse().into_config()?, shutdown_signal()).await
    })
}
