//! ETag and content hashes.

use sha2::{Digest, Sha512};

/// Upper-case hex SHA-512 of `bytes` (the form kube-apiserver uses for the
/// OpenAPI `?hash=` parameter).
pub fn sha512_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let digest = Sha512::digest(bytes);
    // Hand-written: a two-line hex loop is not worth a dependency.
    digest.iter().fold(String::with_capacity(128), |mut s, b| {
        let _ = write!(s, "{b:02X}");
        s
    })
}

/// A quoted strong ETag for a response body, e.g. `"3F2A…"`.
pub fn etag(bytes: &[u8]) -> String {
    format!("\"{}\"", sha512_hex(bytes))
}
