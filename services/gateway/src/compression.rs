//! Response compression as kube-apiserver does it (`APIResponseCompression`,
//! on by default): when the client sends `Accept-Encoding: gzip` and the
//! body is larger than 128 KiB, the body is gzipped at level 1 with
//! `Content-Encoding: gzip` and `Vary: Accept-Encoding`. Smaller bodies go
//! out as they are. Watch streams are never compressed (kube's watch
//! handler writes its frames directly); a handler marks such a response
//! with [`Uncompressed`].
//!
//! A streamed body (a large list) is read until it passes the threshold
//! before the headers go out, as kube's deferred response writer buffers
//! its first 128 KiB; from there it is compressed as it streams.

use std::io::Write;

use bytes::{Bytes, BytesMut};
use flate2::write::GzEncoder;
use flate2::Compression;
use futures::stream::{self, StreamExt};
use http::header::{CONTENT_ENCODING, CONTENT_LENGTH, VARY};
use http::{HeaderMap, HeaderValue, Response};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;

use crate::http_util::{full, Body};

/// Bodies up to this size are never compressed (kube's
/// `defaultGzipThresholdBytes`).
pub const THRESHOLD: usize = 128 * 1024;

/// A response extension: never compress this response (watch streams).
#[derive(Debug, Clone, Copy)]
pub struct Uncompressed;

/// Whether the request accepts gzip: one of the comma-separated
/// `Accept-Encoding` tokens is exactly `gzip` (kube's check; a token with
/// parameters, such as `gzip;q=0`, does not count).
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(http::header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim() == "gzip")
}

/// Gzip `resp`'s body when the client accepts it and it is larger than
/// [`THRESHOLD`].
pub async fn compress(resp: Response<Body>, accepts: bool) -> Response<Body> {
    if !accepts
        || resp.extensions().get::<Uncompressed>().is_some()
        || resp.headers().contains_key(CONTENT_ENCODING)
    {
        return resp;
    }
    let (mut parts, mut body) = resp.into_parts();
    let mut head = BytesMut::new();
    let mut ended = false;
    while head.len() <= THRESHOLD {
        match body.frame().await {
            None => {
                ended = true;
                break;
            }
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    head.extend_from_slice(&data);
                }
            }
            Some(Err(never)) => match never {},
        }
    }
    if ended && head.len() <= THRESHOLD {
        return Response::from_parts(parts, full(head.freeze()));
    }
    parts
        .headers
        .insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    parts
        .headers
        .append(VARY, HeaderValue::from_static("Accept-Encoding"));
    parts.headers.remove(CONTENT_LENGTH);
    let mut gz = GzEncoder::new(Vec::with_capacity(head.len() / 4), Compression::new(1));
    // Writing to a Vec cannot fail.
    let _ = gz.write_all(&head);
    if ended {
        let out = gz.finish().unwrap_or_default();
        return Response::from_parts(parts, full(out));
    }
    let first = Bytes::from(std::mem::take(gz.get_mut()));
    let rest = stream::unfold(Some((body, gz)), |state| async move {
        let (mut body, mut gz) = state?;
        loop {
            match body.frame().await {
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    let _ = gz.write_all(&data);
                    if gz.get_ref().is_empty() {
                        continue;
                    }
                    let out = Bytes::from(std::mem::take(gz.get_mut()));
                    return Some((out, Some((body, gz))));
                }
                Some(Err(never)) => match never {},
                None => {
                    let out = Bytes::from(gz.finish().unwrap_or_default());
                    return Some((out, None));
                }
            }
        }
    });
    let frames = stream::once(async move { first })
        .chain(rest)
        .filter(|b| std::future::ready(!b.is_empty()))
        .map(|b| Ok(Frame::data(b)));
    Response::from_parts(parts, BodyExt::boxed_unsync(StreamBody::new(frames)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::GzDecoder;
    use std::io::Read;

    fn headers(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            http::header::ACCEPT_ENCODING,
            HeaderValue::from_str(v).unwrap(),
        );
        h
    }

    #[test]
    fn only_an_exact_gzip_token_counts() {
        assert!(accepts_gzip(&headers("gzip")));
        assert!(accepts_gzip(&headers("deflate, gzip")));
        assert!(!accepts_gzip(&headers("gzip;q=1")));
        assert!(!accepts_gzip(&headers("br")));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    async fn body_of(resp: Response<Body>) -> Vec<u8> {
        resp.into_body()
            .collect()
            .await
            .map(|c| c.to_bytes().to_vec())
            .unwrap_or_default()
    }

    fn gunzip(b: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        GzDecoder::new(b).read_to_end(&mut out).unwrap();
        out
    }

    #[tokio::test]
    async fn small_bodies_and_refusing_clients_are_left_alone() {
        let small = vec![b'a'; THRESHOLD];
        let r = compress(Response::new(full(small.clone())), true).await;
        assert!(!r.headers().contains_key(CONTENT_ENCODING));
        assert_eq!(body_of(r).await, small);
        let big = vec![b'a'; THRESHOLD + 1];
        let r = compress(Response::new(full(big.clone())), false).await;
        assert_eq!(body_of(r).await, big);
        let mut marked = Response::new(full(big.clone()));
        marked.extensions_mut().insert(Uncompressed);
        let r = compress(marked, true).await;
        assert!(!r.headers().contains_key(CONTENT_ENCODING));
    }

    #[tokio::test]
    async fn large_bodies_are_gzipped() {
        let big: Vec<u8> = (0..THRESHOLD * 3).map(|i| (i % 251) as u8).collect();
        let r = compress(Response::new(full(big.clone())), true).await;
        assert_eq!(r.headers()[CONTENT_ENCODING], "gzip");
        assert_eq!(r.headers()[VARY], "Accept-Encoding");
        assert_eq!(gunzip(&body_of(r).await), big);
    }

    #[tokio::test]
    async fn streamed_bodies_are_gzipped_as_they_stream() {
        let chunks: Vec<Bytes> = (0..100)
            .map(|i| Bytes::from(format!("{{\"item\":{i},\"pad\":\"{}\"}}", "x".repeat(4000))))
            .collect();
        let want: Vec<u8> = chunks.iter().flat_map(|c| c.to_vec()).collect();
        let s = stream::iter(chunks.clone().into_iter().map(|c| Ok(Frame::data(c))));
        let r = compress(
            Response::new(BodyExt::boxed_unsync(StreamBody::new(s))),
            true,
        )
        .await;
        assert_eq!(r.headers()[CONTENT_ENCODING], "gzip");
        assert_eq!(gunzip(&body_of(r).await), want);
        // A short stream is sent as it is.
        let first_three: Vec<Bytes> = chunks.iter().take(3).cloned().collect();
        let s = stream::iter(first_three.into_iter().map(|c| Ok(Frame::data(c))));
        let r = compress(
            Response::new(BodyExt::boxed_unsync(StreamBody::new(s))),
            true,
        )
        .await;
        assert!(!r.headers().contains_key(CONTENT_ENCODING));
        assert_eq!(
            body_of(r).await.len(),
            chunks[..3].iter().map(|c| c.len()).sum::<usize>()
        );
    }
}
