//! `keelson-watch` binary; see the crate docs of `keelson_watch_service`.
#![forbid(unsafe_code)]

use clap::Parser;
use keelson_rpc::service::{main_with, shutdown_signal};
use keelson_watch_service::{run, Cli};

fn main() -> std::process::ExitCode {
    main_with("keelson-watch", async {
        run(Cli::parse().into_config()?, shutdown_signal()).await
    })
}
