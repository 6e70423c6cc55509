//! `keelson-controllers` binary; see the crate docs of
//! `keelson_controllers_service`.
#![forbid(unsafe_code)]

use clap::Parser;
use keelson_controllers_service::{run, Cli};
use keelson_runtime::{shutdown_signal, ServiceFlags};

fn main() -> std::process::ExitCode {
    keelson_runtime::main("keelson-controllers", async {
        run(Cli::parse().into_config()?, shutdown_signal()).await
    })
}
