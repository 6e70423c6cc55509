//! The one service runtime every Keelson binary runs on.
//!
//! - [`main`]: the process entry — tracing to stderr, a multi-thread tokio
//!   runtime, `NAME: ERROR` and exit code 1 on failure;
//! - [`config`]: layered configuration, written once for every service:
//!   defaults < TOML `--config` file < `KEELSON_*` environment < flags;
//! - [`duration`]: duration values as flags and config keys take them;
//! - [`listen`]: binding a listener and announcing `listening on ADDR`;
//! - [`shutdown`]: the shutdown signal, and draining open streams with a
//!   grace period;
//! - [`telemetry`]: OpenTelemetry traces over OTLP, off unless configured.
//!
//! It knows nothing of gRPC, HTTP or Kubernetes: the servers built on it
//! (`keelson-rpc`, the gateway) bring their own protocols.
#![forbid(unsafe_code)]

pub mod config;
pub mod duration;
mod entry;
mod error;
pub mod listen;
pub mod shutdown;
pub mod telemetry;

pub use config::{layer, CommonFlags, ServiceFlags};
pub use duration::parse_duration;
pub use entry::{init_tracing, main, main_with};
pub use error::ServiceError;
pub use listen::{
    bind_and_announce, parse_listen, serve_metrics_beside, set_metrics_bind, MetricsBind,
    METRICS_PORT_OFFSET,
};
pub use shutdown::{draining, shutdown_signal, with_grace, DrainTrigger, Draining, SHUTDOWN_GRACE};
pub use telemetry::{TelemetryOptions, TracingFlags};
