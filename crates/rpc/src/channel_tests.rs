use std::time::Duration;

use tokio::sync::oneshot;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

use super::*;

/// A gRPC server (the health service) on its own runtime and thread, so
/// that killing it drops its listener and every connection at once, as a
/// killed process does.
struct Server {
    endpoint: String,
    kill: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start() -> Server {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (kill, killed) = oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                addr_tx
                    .send(listener.local_addr().expect("addr"))
                    .expect("send");
                let (_reporter, health) = tonic_health::server::health_reporter();
                let serve = tonic::transport::Server::builder()
                    .add_service(health)
                    .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener));
                tokio::select! {
                    _ = serve => {}
                    _ = killed => {}
                }
            });
            // Dropping the runtime drops every connection task.
            drop(rt);
        });
        let addr = addr_rx.recv().expect("address");
        Server {
            endpoint: format!("http://{addr}"),
            kill: Some(kill),
            thread: Some(thread),
        }
    }

    fn kill(&mut self) {
        if let Some(k) = self.kill.take() {
            let _ = k.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// An endpoint nothing listens on.
fn refusing_endpoint() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    drop(l);
    format!("http://{addr}")
}

/// `n` health checks through `channel`: how many failed.
async fn failures(channel: &ReplicaChannel, n: usize) -> usize {
    let mut client = HealthClient::new(channel.clone());
    let mut failed = 0;
    for _ in 0..n {
        if client
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await
            .is_err()
        {
            failed += 1;
        }
    }
    failed
}

#[tokio::test]
async fn every_entry_of_a_comma_separated_list_is_a_replica() {
    let ch = resolving_channel("http://127.0.0.1:7001, http://127.0.0.1:7011").expect("channel");
    assert_eq!(
        ch.replicas(),
        ["http://127.0.0.1:7001", "http://127.0.0.1:7011"]
    );
    let one = resolving_channel("http://127.0.0.1:7001").expect("channel");
    assert_eq!(one.replicas(), ["http://127.0.0.1:7001"]);
}

#[tokio::test]
async fn a_malformed_or_empty_entry_is_a_startup_error() {
    for bad in [
        "not a url",
        "http://127.0.0.1:7001,,http://127.0.0.1:7011",
        "",
    ] {
        let err = resolving_channel(bad).expect_err(bad);
        assert!(
            matches!(err, RpcError::InvalidEndpoint { .. }),
            "{bad:?}: {err}"
        );
    }
}

#[tokio::test]
async fn a_replica_that_refuses_connections_is_skipped() {
    let live = Server::start();
    let dead = refusing_endpoint();
    let ch = resolving_channel(&format!("{dead},{}", live.endpoint)).expect("channel");
    assert_eq!(failures(&ch, 20).await, 0);
}

#[tokio::test]
async fn a_killed_replica_fails_no_later_call() {
    let mut a = Server::start();
    let b = Server::start();
    let ch = resolving_channel(&format!("{},{}", a.endpoint, b.endpoint)).expect("channel");
    assert_eq!(failures(&ch, 10).await, 0, "both replicas up");
    a.kill();
    // The client's connection sees the end of the stream.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(failures(&ch, 40).await, 0, "one replica killed");
}

#[tokio::test]
async fn with_every_replica_down_the_call_fails_unavailable() {
    let ch = resolving_channel(&format!("{},{}", refusing_endpoint(), refusing_endpoint()))
        .expect("channel");
    let err = HealthClient::new(ch)
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .expect_err("nothing listens");
    assert_eq!(err.code(), tonic::Code::Unavailable, "{err}");
}
