//! `keelson-merge` binary; see the crate docs of `keelson_merge_service`.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;
use keelson_merge_service::{run, Cli};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    let result = match Cli::parse().into_config() {
        Ok(config) => run(config, keelson_rpc::service::shutdown_signal()).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("keelson-merge: {e}");
            ExitCode::FAILURE
        }
    }
}
