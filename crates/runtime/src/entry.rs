//! The `main` of every binary: tracing, the tokio runtime, exit codes.

use std::fmt::Display;
use std::future::Future;
use std::process::ExitCode;

use tracing_subscriber::EnvFilter;

/// Log to stderr, filtered by `RUST_LOG` (default `info`), with ANSI colours
/// only when stderr is a terminal. A second call is a no-op.
pub fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .try_init();
}

/// Run `service` as the process: [`init_tracing`], a multi-thread tokio
/// runtime, and on error `NAME: ERROR` on stderr and exit code 1.
pub fn main<E: Display>(name: &str, service: impl Future<Output = Result<(), E>>) -> ExitCode {
    init_tracing();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{name}: cannot start the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(service) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::FAILURE
        }
    }
}
