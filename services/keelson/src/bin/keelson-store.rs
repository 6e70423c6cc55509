//! `keelson-store` binary; see the crate docs of `keelson_store_service`.
#![forbid(unsafe_code)]

use clap::Parser;
use keelson_rpc::service::{main_with, shutdown_signal};
use keelson_store_service::{run, Cli};

fn main() -> std::process::ExitCode {
    main_with("keelson-store", async {
        run(Cli::parse().into_config()?, shutdown_signal()).await
    })
}
