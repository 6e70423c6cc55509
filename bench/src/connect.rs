//! `KEELSON_BENCH_CONNECT=IP:PORT`: send every request to that address
//! instead of the kubeconfig's, naming the server `localhost` for TLS (a
//! name every Keelson serving certificate holds). `bench/compose.sh` uses
//! it to reach the gateway container at its own address: a connection to
//! the published port from this machine's loopback goes through Docker's
//! userland proxy, which a client on another machine does not.

use std::net::SocketAddr;

/// The connect-to address, when set.
fn target() -> Option<SocketAddr> {
    std::env::var("KEELSON_BENCH_CONNECT").ok()?.parse().ok()
}

/// The server URL to use: the kubeconfig's, or `https://localhost:PORT`.
pub fn url(kubeconfig_server: String) -> String {
    match target() {
        Some(a) => format!("https://localhost:{}", a.port()),
        None => kubeconfig_server,
    }
}

/// `builder`, resolving `localhost` to the connect-to address when set.
pub fn builder(builder: reqwest::ClientBuilder) -> reqwest::ClientBuilder {
    match target() {
        Some(a) => builder.resolve("localhost", a),
        None => builder,
    }
}
