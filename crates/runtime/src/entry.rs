//! The `main` of every binary: tracing, the tokio runtime, exit codes.

use std::fmt::Display;
use std::future::Future;
use std::process::ExitCode;

use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::telemetry::{self, TelemetryOptions};

/// Log to stderr, filtered by `RUST_LOG` (default `info`), with ANSI colours
/// only when stderr is a terminal. A second call is a no-op.
pub fn init_tracing() {
    init_subscriber(None);
}

/// The stderr log, and the OTLP exporter of [`telemetry::TARGET`]'s spans
/// when `tracer` is given.
fn init_subscriber(tracer: Option<opentelemetry_sdk::trace::Tracer>) {
    let log = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")));
    let otel = tracer.map(|t| {
        tracing_opentelemetry::layer()
            .with_tracer(t)
            .with_filter(filter_fn(|m| m.target() == telemetry::TARGET))
    });
    let _ = tracing_subscriber::registry()
        .with(log)
        .with(otel)
        .try_init();
}

/// Run `service` as the process: [`init_tracing`], a multi-thread tokio
/// runtime, and on error `NAME: ERROR` on stderr and exit code 1. Traces
/// are exported when the standard `OTEL_*` environment asks for them (see
/// [`telemetry`]).
pub fn main<E: Display>(name: &str, service: impl Future<Output = Result<(), E>>) -> ExitCode {
    main_with(name, TelemetryOptions::default(), service)
}

/// [`main`] with tracing options from flags (kube's
/// `--tracing-config-file`).
pub fn main_with<E: Display>(
    name: &str,
    options: TelemetryOptions,
    service: impl Future<Output = Result<(), E>>,
) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            init_tracing();
            eprintln!("{name}: cannot start the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The exporter's channel and batch task live on the runtime.
    let pipeline = {
        let _entered = runtime.enter();
        telemetry::pipeline(name, &options)
    };
    let pipeline = match pipeline {
        Ok(p) => p,
        Err(e) => {
            init_tracing();
            eprintln!("{name}: {e}");
            return ExitCode::FAILURE;
        }
    };
    init_subscriber(pipeline.as_ref().map(|p| p.tracer.clone()));
    let result = runtime.block_on(service);
    if let Some(p) = pipeline {
        // Flush the last spans; the batch task runs on the runtime.
        let _ = runtime.block_on(tokio::task::spawn_blocking(move || {
            telemetry::shutdown(p.provider)
        }));
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::FAILURE
        }
    }
}
