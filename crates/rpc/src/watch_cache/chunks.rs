//! A cached list on the wire: the local item stream cut into bounded
//! [`pb::ListChunk`]s (server side) and the chunks turned back into an item
//! stream (client side). Neither side holds more than one chunk.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::stream::{BoxStream, Stream, StreamExt};
use keelson_api::CacheList;
use keelson_apimachinery::ApiResult;
use tonic::{Status, Streaming};

use crate::change_stream::stream_error;
use crate::pb::watch as pb;
use crate::status::to_grpc_status;

/// Most items in one chunk.
pub(crate) const CHUNK_ITEMS: usize = 500;

/// Target size of one chunk's items; a single larger item travels alone.
/// Small, so that a list in flight holds little memory on either side
/// (peak RSS growth of a 10,000-item list stays within a few pages).
pub(crate) const CHUNK_BYTES: usize = 128 * 1024;

/// Server side: a [`CacheList`] as a stream of chunks.
///
/// The first chunk carries the page's metadata. A chunk is sent when it is
/// full, or as soon as the local stream has nothing ready, so a slow
/// stream's items are not held back (and the metadata goes out at once). An
/// error item ends the stream as the call's status, after the items before
/// it.
pub(crate) struct ListChunks {
    items: BoxStream<'static, ApiResult<Bytes>>,
    /// Taken by the first chunk.
    meta: Option<pb::ListMeta>,
    /// An item that did not fit in the previous chunk.
    carry: Option<Bytes>,
    /// An error to send after the chunk of the items before it.
    error: Option<Status>,
    done: bool,
    max_items: usize,
    max_bytes: usize,
}

impl ListChunks {
    pub(crate) fn new(list: CacheList) -> Self {
        Self::with_limits(list, CHUNK_ITEMS, CHUNK_BYTES)
    }

    pub(crate) fn with_limits(list: CacheList, max_items: usize, max_bytes: usize) -> Self {
        ListChunks {
            meta: Some(pb::ListMeta {
                resource_version: list.resource_version,
                continue_after: list.continue_after,
                remaining: list.remaining,
            }),
            items: list.items,
            carry: None,
            error: None,
            done: false,
            max_items: max_items.max(1),
            max_bytes,
        }
    }

    fn chunk(&mut self, items: Vec<Bytes>) -> pb::ListChunk {
        pb::ListChunk {
            meta: self.meta.take(),
            items,
        }
    }
}

impl Stream for ListChunks {
    type Item = Result<pb::ListChunk, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(err) = this.error.take() {
            this.done = true;
            return Poll::Ready(Some(Err(err)));
        }
        let mut items = Vec::new();
        let mut size = 0;
        if let Some(b) = this.carry.take() {
            size += b.len();
            items.push(b);
        }
        while !this.done && items.len() < this.max_items && size < this.max_bytes {
            match this.items.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(b))) => {
                    if !items.is_empty() && size + b.len() > this.max_bytes {
                        this.carry = Some(b);
                        break;
                    }
                    size += b.len();
                    items.push(b);
                }
                Poll::Ready(Some(Err(e))) => {
                    this.error = Some(to_grpc_status(&e));
                    this.done = true;
                }
                Poll::Ready(None) => this.done = true,
                Poll::Pending => {
                    if items.is_empty() && this.meta.is_none() {
                        return Poll::Pending;
                    }
                    break;
                }
            }
        }
        if items.is_empty() && this.meta.is_none() {
            // Only reached when done: an error right after a full chunk, or
            // the end of the items.
            return Poll::Ready(this.error.take().map(Err));
        }
        Poll::Ready(Some(Ok(this.chunk(items))))
    }
}

/// Client side: the items of the first chunk, then those of every following
/// chunk; a failure is the last item (`503` when the connection broke).
/// Dropping the stream cancels the call.
pub(crate) fn items_from_pb(
    service: &'static str,
    first: Vec<Bytes>,
    stream: Streaming<pb::ListChunk>,
) -> BoxStream<'static, ApiResult<Bytes>> {
    futures::stream::unfold(
        (first.into_iter(), Some(stream)),
        move |(mut buffered, mut stream)| async move {
            loop {
                if let Some(b) = buffered.next() {
                    return Some((Ok(b), (buffered, stream)));
                }
                let s = stream.as_mut()?;
                match s.message().await {
                    Ok(Some(chunk)) => buffered = chunk.items.into_iter(),
                    Ok(None) => return None,
                    Err(st) => return Some((Err(stream_error(service, &st)), (buffered, None))),
                }
            }
        },
    )
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::stream;
    use keelson_apimachinery::ApiError;

    fn list(items: Vec<ApiResult<Bytes>>) -> CacheList {
        CacheList {
            resource_version: 12,
            continue_after: Some("ns/last".into()),
            remaining: Some(3),
            items: stream::iter(items).boxed(),
        }
    }

    fn collect(chunks: ListChunks) -> Vec<Result<pb::ListChunk, Status>> {
        futures::executor::block_on(chunks.collect())
    }

    fn item(i: usize, len: usize) -> Bytes {
        let mut v = format!("{i:06}").into_bytes();
        v.resize(len.max(6), b'x');
        Bytes::from(v)
    }

    #[test]
    fn an_empty_list_is_one_chunk_with_the_metadata() {
        let chunks = collect(ListChunks::new(list(vec![])));
        assert_eq!(chunks.len(), 1);
        let c = chunks[0].as_ref().unwrap();
        assert!(c.items.is_empty());
        assert_eq!(
            c.meta,
            Some(pb::ListMeta {
                resource_version: 12,
                continue_after: Some("ns/last".into()),
                remaining: Some(3),
            })
        );
    }

    #[test]
    fn big_lists_split_in_order_by_size() {
        // 10 items of 40 KiB: at most 3 per 128 KiB chunk.
        let items: Vec<Bytes> = (0..10).map(|i| item(i, 40 * 1024)).collect();
        let chunks = collect(ListChunks::new(list(
            items.iter().cloned().map(Ok).collect(),
        )));
        assert_eq!(chunks.len(), 4, "{} chunks", chunks.len());
        let chunks: Vec<pb::ListChunk> = chunks.into_iter().map(Result::unwrap).collect();
        assert!(chunks[0].meta.is_some());
        assert!(chunks[1..].iter().all(|c| c.meta.is_none()));
        for c in &chunks {
            let size: usize = c.items.iter().map(Bytes::len).sum();
            assert!(size <= CHUNK_BYTES, "chunk of {size} bytes");
        }
        let back: Vec<Bytes> = chunks.into_iter().flat_map(|c| c.items).collect();
        assert_eq!(back, items);
    }

    #[test]
    fn long_lists_split_in_order_by_count() {
        let items: Vec<Bytes> = (0..1234).map(|i| item(i, 10)).collect();
        let chunks: Vec<pb::ListChunk> = collect(ListChunks::new(list(
            items.iter().cloned().map(Ok).collect(),
        )))
        .into_iter()
        .map(Result::unwrap)
        .collect();
        let sizes: Vec<usize> = chunks.iter().map(|c| c.items.len()).collect();
        assert_eq!(sizes, [500, 500, 234]);
        let back: Vec<Bytes> = chunks.into_iter().flat_map(|c| c.items).collect();
        assert_eq!(back, items);
    }

    #[test]
    fn an_oversized_item_travels_alone() {
        let items = vec![item(0, 10), item(1, 3 * CHUNK_BYTES), item(2, 10)];
        let chunks: Vec<pb::ListChunk> = collect(ListChunks::new(list(
            items.iter().cloned().map(Ok).collect(),
        )))
        .into_iter()
        .map(Result::unwrap)
        .collect();
        let sizes: Vec<usize> = chunks.iter().map(|c| c.items.len()).collect();
        assert_eq!(sizes, [1, 1, 1]);
        let back: Vec<Bytes> = chunks.into_iter().flat_map(|c| c.items).collect();
        assert_eq!(back, items);
    }

    #[test]
    fn an_error_follows_the_items_before_it_and_ends_the_stream() {
        let gone = ApiError::new(410, "Expired", "too old resource version: 1 (5)");
        let chunks = collect(ListChunks::with_limits(
            list(vec![
                Ok(item(0, 10)),
                Ok(item(1, 10)),
                Ok(item(2, 10)),
                Err(gone.clone()),
                Ok(item(3, 10)),
            ]),
            2,
            CHUNK_BYTES,
        ));
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks[0].as_ref().unwrap().items.len(), 2);
        assert_eq!(chunks[1].as_ref().unwrap().items, vec![item(2, 10)]);
        let st = chunks[2].as_ref().unwrap_err();
        assert_eq!(crate::status::from_grpc_status("watch cache", st), gone);
    }

    #[test]
    fn an_error_first_still_sends_the_metadata() {
        let chunks = collect(ListChunks::new(list(vec![Err(ApiError::internal("x"))])));
        assert_eq!(chunks.len(), 2);
        let c = chunks[0].as_ref().unwrap();
        assert!(c.meta.is_some() && c.items.is_empty());
        assert_eq!(
            chunks[1].as_ref().unwrap_err().code(),
            tonic::Code::Internal
        );
    }

    #[tokio::test]
    async fn ready_items_are_sent_without_waiting_for_a_full_chunk() {
        let (tx, rx) = futures::channel::mpsc::unbounded::<ApiResult<Bytes>>();
        let mut chunks = ListChunks::new(list(vec![]));
        chunks.items = rx.boxed();
        // The metadata goes out before any item exists.
        let first = chunks.next().await.unwrap().unwrap();
        assert!(first.meta.is_some() && first.items.is_empty());
        tx.unbounded_send(Ok(item(0, 10))).unwrap();
        tx.unbounded_send(Ok(item(1, 10))).unwrap();
        let second = chunks.next().await.unwrap().unwrap();
        assert!(second.meta.is_none());
        assert_eq!(second.items, vec![item(0, 10), item(1, 10)]);
        tx.unbounded_send(Ok(item(2, 10))).unwrap();
        drop(tx);
        let third = chunks.next().await.unwrap().unwrap();
        assert_eq!(third.items, vec![item(2, 10)]);
        assert!(chunks.next().await.is_none());
    }
}
