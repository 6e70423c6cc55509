//! `keelson-probe`: the health check of Keelson's containers, which have no
//! shell or curl (`FROM scratch`). Exits 0 when the target is healthy,
//! 1 otherwise, printing why.
//!
//! ```text
//! keelson-probe grpc  http://127.0.0.1:7001           # grpc.health.v1 of a gRPC service
//! keelson-probe https https://127.0.0.1:6443/readyz   # the gateway (its certificate is not checked)
//! keelson-probe http  http://127.0.0.1:7006/livez     # plain HTTP (the controllers)
//! ```
#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::time::Duration;

/// How long a probe waits for its answer.
const TIMEOUT: Duration = Duration::from_secs(3);

async fn grpc(endpoint: &str) -> Result<(), String> {
    let channel = tonic::transport::Endpoint::from_shared(endpoint.to_string())
        .map_err(|e| e.to_string())?
        .connect_timeout(TIMEOUT)
        .timeout(TIMEOUT)
        .connect()
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let mut client = tonic_health::pb::health_client::HealthClient::new(channel);
    let answer = client
        .check(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        })
        .await
        .map_err(|e| format!("check: {e}"))?
        .into_inner();
    if answer.status == tonic_health::pb::health_check_response::ServingStatus::Serving as i32 {
        Ok(())
    } else {
        Err(format!("status {}", answer.status))
    }
}

async fn http(url: &str) -> Result<(), String> {
    // The probe runs next to the server, in its container: the serving
    // certificate is the server's own and is not what is being checked.
    let client = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .timeout(TIMEOUT)
        .build()
        .map_err(|e| e.to_string())?;
    let r = client.get(url).send().await.map_err(|e| e.to_string())?;
    if r.status().is_success() {
        Ok(())
    } else {
        let code = r.status();
        let body = r.text().await.unwrap_or_default();
        Err(format!("{code}: {body}"))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [kind, target] if kind == "grpc" => grpc(target).await,
        [kind, target] if kind == "http" || kind == "https" => http(target).await,
        _ => Err("usage: keelson-probe grpc|http|https TARGET".to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("keelson-probe: {e}");
            ExitCode::FAILURE
        }
    }
}
