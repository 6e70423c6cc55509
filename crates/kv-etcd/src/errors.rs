//! etcd's errors as the seam's.

use keelson_kv::KvError;
use tonic::Code;

/// etcd's `ErrCompacted` wording.
const COMPACTED: &str = "required revision has been compacted";
/// etcd's `ErrFutureRev` wording.
const FUTURE: &str = "required revision is a future revision";

/// What tonic says when the connection under a call or stream broke.
const CONNECTION_LOST: &[&str] = &[
    "transport error",
    "h2 protocol error",
    "error reading a body from connection",
    "connection reset",
    "broken pipe",
    "connection refused",
];

/// A failed etcd call: the two revision errors, whose numbers the caller
/// fills in, or a seam error.
#[derive(Debug)]
pub(crate) enum Failure {
    Compacted,
    Future,
    Other(KvError),
}

impl Failure {
    /// As a seam error, for calls where a revision error cannot arise.
    pub(crate) fn into_kv(self) -> KvError {
        match self {
            Failure::Compacted => KvError::Backend(format!("etcdserver: mvcc: {COMPACTED}")),
            Failure::Future => KvError::Backend(format!("etcdserver: mvcc: {FUTURE}")),
            Failure::Other(e) => e,
        }
    }
}

/// Sort an etcd client error: revision errors by etcd's message; an
/// unreachable or timed-out cluster is `Unavailable`; the rest `Backend`.
pub(crate) fn classify(e: etcd_client::Error) -> Failure {
    use etcd_client::Error as E;
    match e {
        E::GRpcStatus(s) => {
            let msg = s.message();
            if msg.contains(COMPACTED) {
                Failure::Compacted
            } else if msg.contains(FUTURE) {
                Failure::Future
            } else if matches!(
                s.code(),
                Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled | Code::Aborted
            ) || msg.contains("no leader")
                || msg.contains("request timed out")
                // tonic's statuses for a connection that failed underneath.
                || CONNECTION_LOST.iter().any(|m| msg.contains(m))
            {
                Failure::Other(KvError::Unavailable(format!("etcd: {msg}")))
            } else {
                Failure::Other(KvError::Backend(format!("etcd: {msg}")))
            }
        }
        E::TransportError(t) => Failure::Other(KvError::Unavailable(format!("etcd: {t}"))),
        E::IoError(io) => Failure::Other(KvError::Unavailable(format!("etcd: {io}"))),
        E::WatchError(w) => Failure::Other(KvError::Unavailable(format!("etcd watch: {w}"))),
        other => Failure::Other(KvError::Backend(format!("etcd: {other}"))),
    }
}
