//! Shared helpers: run a tonic router on 127.0.0.1:0 and stop it.

#![allow(dead_code)]

use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::server::Router;

/// A running test server.
pub struct TestServer {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl TestServer {
    /// `http://127.0.0.1:PORT`
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stop accepting, finish in-flight calls and wait for the server.
    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        (&mut self.task).await.unwrap();
    }
}

/// Serve `router` on a fresh port (or `addr` when given).
pub async fn start(router: Router, addr: Option<SocketAddr>) -> TestServer {
    let listener = TcpListener::bind(addr.unwrap_or_else(|| "127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        keelson_rpc::serve(listener, router, async {
            let _ = rx.await;
        })
        .await
        .unwrap();
    });
    TestServer {
        addr,
        stop: Some(tx),
        task,
    }
}

/// An address where nothing listens.
pub async fn dead_endpoint() -> String {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    format!("http://{addr}")
}
