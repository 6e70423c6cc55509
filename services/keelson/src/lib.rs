//! Keelson in one process, as a library: [`start_embedded`] opens the store
//! (sled, etcd or memory), starts admission, merge, the watch cache, the
//! controllers and the gateway, and returns once the gateway is serving.
//! The `keelson` binary is this plus flag parsing and waiting for SIGTERM;
//! `keelson-testserver` starts it in tests.
#![forbid(unsafe_code)]

pub mod embedded;

pub use embedded::{start_embedded, EmbeddedConfig, EmbeddedError, EmbeddedServer, Phase};
