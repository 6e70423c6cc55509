//! OpenTelemetry traces, exported over OTLP/gRPC, set up once for every
//! service.
//!
//! Off by default: tracing turns on when the standard environment names an
//! OTLP endpoint (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
//! `OTEL_EXPORTER_OTLP_ENDPOINT`; `OTEL_SDK_DISABLED=true` or
//! `OTEL_TRACES_EXPORTER=none` keep it off), or when the gateway is given
//! kube-apiserver's `--tracing-config-file` (an `apiserver.config.k8s.io/v1`
//! `TracingConfiguration`: `endpoint`, default `localhost:4317`, and
//! `samplingRatePerMillion`, default 0, sampled as kube does: parent-based,
//! else that ratio). `OTEL_SERVICE_NAME` names the service (default: the
//! binary's name); `OTEL_TRACES_SAMPLER`/`_ARG` choose the sampler when no
//! config file does.
//!
//! When off, [`enabled`] is one relaxed atomic load and no span is made:
//! the servers and clients that create spans check it first.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use serde::Deserialize;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The `target` of every span Keelson exports; only spans of this target
/// go to the OTLP exporter (the stderr log is not affected).
pub const TARGET: &str = "keelson::otel";

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Whether traces are exported (spans should be made).
#[inline]
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Why tracing could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// `--tracing-config-file` could not be read.
    #[error("--tracing-config-file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `--tracing-config-file` is not a valid TracingConfiguration.
    #[error("--tracing-config-file {path}: {reason}")]
    Invalid { path: PathBuf, reason: String },
    /// The OTLP exporter could not be built.
    #[error("OTLP exporter: {0}")]
    Exporter(String),
}

/// kube-apiserver's `TracingConfiguration` (`apiserver.config.k8s.io/v1`,
/// also `v1beta1`/`v1alpha1`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TracingConfiguration {
    /// `apiserver.config.k8s.io/v1` (or v1beta1, v1alpha1).
    #[serde(default)]
    pub api_version: String,
    /// `TracingConfiguration`.
    #[serde(default)]
    pub kind: String,
    /// The collector, `host:port` (default `localhost:4317`).
    #[serde(default)]
    pub endpoint: Option<String>,
    /// Spans sampled per million root spans (default 0: only requests that
    /// arrive with a sampled `traceparent` are traced).
    #[serde(default)]
    pub sampling_rate_per_million: Option<i32>,
}

impl TracingConfiguration {
    /// Read and check a `--tracing-config-file`, with kube's rules:
    /// `kind` and `apiVersion`, a rate within 0..=1000000.
    pub fn read(path: &Path) -> Result<TracingConfiguration, TelemetryError> {
        let text = std::fs::read_to_string(path).map_err(|source| TelemetryError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let invalid = |reason: String| TelemetryError::Invalid {
            path: path.to_path_buf(),
            reason,
        };
        let c: TracingConfiguration =
            serde_yaml::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        if c.kind != "TracingConfiguration" {
            return Err(invalid(format!(
                "no kind \"{}\" is registered for version \"{}\"",
                c.kind, c.api_version
            )));
        }
        if !matches!(
            c.api_version.as_str(),
            "apiserver.config.k8s.io/v1"
                | "apiserver.config.k8s.io/v1beta1"
                | "apiserver.config.k8s.io/v1alpha1"
        ) {
            return Err(invalid(format!(
                "no kind \"TracingConfiguration\" is registered for version \"{}\"",
                c.api_version
            )));
        }
        if let Some(rate) = c.sampling_rate_per_million {
            if !(0..=1_000_000).contains(&rate) {
                return Err(invalid(format!(
                    "samplingRatePerMillion: Invalid value: {rate}: sampling rate must be between 0 and 1,000,000"
                )));
            }
        }
        Ok(c)
    }

    /// The collector URL (`http://` added to kube's bare `host:port`).
    fn endpoint_url(&self) -> String {
        let e = self.endpoint.as_deref().unwrap_or("localhost:4317");
        if e.contains("://") {
            e.to_string()
        } else {
            format!("http://{e}")
        }
    }
}

/// Where tracing's settings come from for one process.
#[derive(Debug, Clone, Default)]
pub struct TelemetryOptions {
    /// kube-apiserver's `--tracing-config-file`.
    pub tracing_config_file: Option<PathBuf>,
}

/// The `--tracing-config-file` flag (the gateway and the embedded binary).
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct TracingFlags {
    /// File with the apiserver tracing configuration
    /// (apiserver.config.k8s.io/v1 TracingConfiguration)
    #[arg(long, env = "KEELSON_TRACING_CONFIG_FILE", value_name = "FILE")]
    pub tracing_config_file: Option<PathBuf>,
}

impl From<&TracingFlags> for TelemetryOptions {
    fn from(f: &TracingFlags) -> TelemetryOptions {
        TelemetryOptions {
            tracing_config_file: f.tracing_config_file.clone(),
        }
    }
}

fn env_set(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.trim().is_empty())
}

/// The exporter pipeline, when tracing is on; flushed on drop of the
/// [`Telemetry`] guard.
pub(crate) struct Pipeline {
    pub(crate) provider: SdkTracerProvider,
    pub(crate) tracer: opentelemetry_sdk::trace::Tracer,
}

/// Build the exporter when options or environment turn tracing on. Must
/// run inside the tokio runtime (the exporter's channel and batch task
/// live there).
pub(crate) fn pipeline(
    service: &str,
    options: &TelemetryOptions,
) -> Result<Option<Pipeline>, TelemetryError> {
    let file = match &options.tracing_config_file {
        Some(p) => Some(TracingConfiguration::read(p)?),
        None => None,
    };
    let disabled = std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.eq_ignore_ascii_case("true"))
        || std::env::var("OTEL_TRACES_EXPORTER").is_ok_and(|v| v.eq_ignore_ascii_case("none"));
    let from_env =
        env_set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") || env_set("OTEL_EXPORTER_OTLP_ENDPOINT");
    if disabled || (file.is_none() && !from_env) {
        return Ok(None);
    }
    let mut exporter = opentelemetry_otlp::SpanExporter::builder().with_tonic();
    if let Some(f) = &file {
        exporter = exporter.with_endpoint(f.endpoint_url());
    }
    let exporter = exporter
        .build()
        .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
    let name = std::env::var("OTEL_SERVICE_NAME")
        .ok()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| service.to_string());
    let resource = Resource::builder().with_service_name(name).build();
    let processor =
        opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor::builder(
            exporter,
            opentelemetry_sdk::runtime::Tokio,
        )
        .build();
    let mut builder = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_resource(resource);
    if let Some(f) = &file {
        let ratio = f64::from(f.sampling_rate_per_million.unwrap_or(0)) / 1_000_000.0;
        builder = builder.with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(
            ratio,
        ))));
    }
    let provider = builder.build();
    let tracer = provider.tracer(service.to_string());
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    ENABLED.store(true, Ordering::Relaxed);
    Ok(Some(Pipeline { provider, tracer }))
}

/// Export what is buffered and stop (at exit).
pub(crate) fn shutdown(provider: SdkTracerProvider) {
    ENABLED.store(false, Ordering::Relaxed);
    if let Err(e) = provider.shutdown() {
        eprintln!("tracing: flushing spans at exit: {e}");
    }
}

struct HeaderInjector<'a>(&'a mut http::HeaderMap);

impl Injector for HeaderInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(k), Ok(v)) = (
            http::header::HeaderName::from_bytes(key.as_bytes()),
            http::HeaderValue::from_str(&value),
        ) {
            self.0.insert(k, v);
        }
    }
}

struct HeaderExtractor<'a>(&'a http::HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

/// Write `span`'s context into `headers` as W3C `traceparent` (and
/// `tracestate`).
pub fn inject(span: &tracing::Span, headers: &mut http::HeaderMap) {
    let cx = span.context();
    TraceContextPropagator::new().inject_context(&cx, &mut HeaderInjector(headers));
}

/// Make the W3C `traceparent` in `headers`, if any, `span`'s remote
/// parent.
pub fn set_parent_from(span: &tracing::Span, headers: &http::HeaderMap) {
    if headers.get("traceparent").is_none() {
        return;
    }
    let cx = TraceContextPropagator::new().extract(&HeaderExtractor(headers));
    let _ = span.set_parent(cx);
}

/// Set an attribute on `span`'s exported span.
pub fn set_attribute(
    span: &tracing::Span,
    key: &'static str,
    value: impl Into<opentelemetry::Value>,
) {
    span.set_attribute(key, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("tracing.yaml");
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    #[test]
    fn kubes_tracing_configuration_is_read_and_checked() {
        let (_d, p) = write(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: collector:4317\nsamplingRatePerMillion: 1000000\n",
        );
        let c = TracingConfiguration::read(&p).unwrap();
        assert_eq!(c.endpoint_url(), "http://collector:4317");
        assert_eq!(c.sampling_rate_per_million, Some(1_000_000));
        let (_d, p) = write("apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\n");
        assert_eq!(
            TracingConfiguration::read(&p).unwrap().endpoint_url(),
            "http://localhost:4317"
        );
        let (_d, p) = write(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nsamplingRatePerMillion: 1000001\n",
        );
        let e = TracingConfiguration::read(&p).unwrap_err().to_string();
        assert!(
            e.contains("sampling rate must be between 0 and 1,000,000"),
            "{e}"
        );
        let (_d, p) = write("apiVersion: v1\nkind: TracingConfiguration\n");
        assert!(TracingConfiguration::read(&p).is_err());
    }

    #[test]
    fn headers_round_trip_nothing_when_off() {
        // No pipeline: a span has no context to inject.
        let mut h = http::HeaderMap::new();
        inject(&tracing::Span::none(), &mut h);
        assert!(h.get("traceparent").is_none());
        assert!(!enabled());
    }
}
