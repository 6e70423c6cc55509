//! `keelson-watch` binary; see the crate docs of `keelson_watch_service`.
#![forbid(unsafe_code)]

use clap::Parser;
use keelson_runtime::{shutdown_signal, ServiceFlags};
use keelson_watch_service::{run, Cli};

fn main() -> std::process::ExitCode {
    keelson_runtime::main("keelson-watch", async {
        run(Cli::parse().into_config()?, shutdown_signal()).await
    })
}
