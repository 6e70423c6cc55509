//! Store configuration.

use std::time::Duration;

/// How a [`crate::LocalStore`] is run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    /// How long old versions and change-log entries are kept (default 5 min).
    pub retention: Duration,
    /// How often the background compactor runs (default 5 s); `None`
    /// disables it (tests call `compact_now`).
    pub compaction_interval: Option<Duration>,
    /// sled page cache size in bytes (default 64 MiB).
    pub cache_capacity: u64,
    /// Create the system namespaces (`default`, `kube-system`, ...) on open
    /// when absent (default true).
    pub bootstrap_namespaces: bool,
    /// How object keys are laid out: Keelson's (sled, the default) or
    /// kube-apiserver's (etcd).
    pub key_layout: crate::keys::KeyLayout,
    /// How object values are encoded: Keelson's JSON (the default) or
    /// kube-apiserver's (Protobuf for built-in kinds).
    pub value_codec: crate::codec::ValueCodec,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            retention: Duration::from_secs(300),
            compaction_interval: Some(Duration::from_secs(5)),
            cache_capacity: 64 * 1024 * 1024,
            bootstrap_namespaces: true,
            key_layout: crate::keys::KeyLayout::Keelson,
            value_codec: crate::codec::ValueCodec::Json,
        }
    }
}
