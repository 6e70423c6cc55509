//! A minimal informer (client-go's `Reflector` without its cache): list
//! each resource through [`StoreApi`], watch it from the list's revision,
//! and hand the caller one [`Event::Listed`] followed by
//! [`Event::Changed`] events (and an [`Event::Resync`] tick if asked for).
//!
//! A failed list or watch, a change stream that fails (a `410 Expired`
//! when compaction overtakes it included) or ends, and a caller's
//! [`Informer::failed`] all do the same: drop every watch, wait
//! [`Informer::retry_after`], list again. The new listing is the next
//! `Listed` event, which means "replace what you knew".
//!
//! It keeps no objects and writes nothing: what a caller remembers of the
//! listing and the changes is the caller's. Bookmarks are not passed on
//! (no caller needs a revision between changes).
//!
//! [`Informer::next`] is cancel-safe (a list in flight, the backoff and
//! the watches live in the informer), so it can sit in a `tokio::select!`
//! beside the caller's own work.
#![forbid(unsafe_code)]

#[cfg(test)]
mod tests;

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::{self, BoxStream, SelectAll};
use futures::StreamExt as _;
use keelson_api::{ApiError, ApiResult, ChangeEvent, EventType, GroupResource, StoreApi};
use serde_json::Value;
use tokio::sync::watch;
use tokio::time::{Instant, Interval, MissedTickBehavior, Sleep};

/// How long an informer waits before listing again, unless told otherwise.
pub const RETRY_AFTER: Duration = Duration::from_secs(1);

/// One resource as a listing found it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    pub resource: GroupResource,
    pub items: Vec<Value>,
    /// The revision of the list; the watch follows from it.
    pub resource_version: u64,
}

/// What [`Informer::next`] hands out.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Every resource listed afresh (the first time, and again after each
    /// failure), in the order they were given; changes follow from here.
    Listed(Vec<Listing>),
    /// One change of one resource (each resource's changes in revision
    /// order).
    Changed(GroupResource, ChangeEvent),
    /// The resync period passed (counted from the listing) while watching.
    Resync,
}

type Changes = SelectAll<BoxStream<'static, (GroupResource, ApiResult<ChangeEvent>)>>;

enum State {
    /// List at the next call.
    Start,
    /// Waiting out the backoff before listing.
    Waiting(Pin<Box<Sleep>>),
    /// Listing and opening the watches.
    Listing(BoxFuture<'static, ApiResult<(Vec<Listing>, Changes)>>),
    /// Following the change streams.
    Watching {
        changes: Changes,
        resync: Option<Interval>,
    },
}

/// What one step of [`Informer::next`] found.
enum Step {
    List,
    Listed(Vec<Listing>, Changes),
    Failed(ApiError),
    Ended,
    Skip,
}

/// Lists and watches a set of resources, listing again after failures.
pub struct Informer {
    name: &'static str,
    store: Arc<dyn StoreApi>,
    resources: Vec<GroupResource>,
    retry_after: Duration,
    resync: Option<Duration>,
    synced: watch::Sender<bool>,
    /// A `Listed` was handed out and not yet followed by another call.
    handed_out: bool,
    state: State,
}

impl Informer {
    /// An informer over `resources` (every namespace) of `store`; `name`
    /// is for logs. It lists on the first [`Self::next`].
    pub fn new(
        name: &'static str,
        store: Arc<dyn StoreApi>,
        resources: Vec<GroupResource>,
    ) -> Self {
        Informer {
            name,
            store,
            resources,
            retry_after: RETRY_AFTER,
            resync: None,
            synced: watch::channel(false).0,
            handed_out: false,
            state: State::Start,
        }
    }

    /// Wait `backoff` before each new listing (default [`RETRY_AFTER`]).
    pub fn retry_after(mut self, backoff: Duration) -> Self {
        self.retry_after = backoff;
        self
    }

    /// Hand out an [`Event::Resync`] every `period` while watching.
    pub fn resync_every(mut self, period: Duration) -> Self {
        self.resync = Some(period);
        self
    }

    /// Report [`Self::synced`] into the caller's own flag.
    pub fn report_synced(mut self, synced: watch::Sender<bool>) -> Self {
        synced.send_replace(*self.synced.borrow());
        self.synced = synced;
        self
    }

    /// True once the caller has handled a listing (it asked for the next
    /// event after `Listed`), false again from a failure until then.
    pub fn synced(&self) -> watch::Receiver<bool> {
        self.synced.subscribe()
    }

    /// Whether the last listing and the changes since are current: false
    /// from a failure until the next `Listed` is handed out. Work that
    /// relies on having seen every change should wait for it.
    pub fn is_watching(&self) -> bool {
        matches!(self.state, State::Watching { .. })
    }

    /// The resources followed.
    pub fn resources(&self) -> &[GroupResource] {
        &self.resources
    }

    /// Follow other resources: drop the watches and list them after the
    /// backoff.
    pub fn set_resources(&mut self, resources: Vec<GroupResource>) {
        tracing::info!("{}: resources changed; re-listing", self.name);
        self.resources = resources;
        self.restart();
    }

    /// The caller could not handle an event (the store failed it): drop
    /// the watches and list again after the backoff.
    pub fn failed(&mut self, error: &ApiError) {
        tracing::warn!(error = %error.message, "{}: re-listing", self.name);
        self.restart();
    }

    fn restart(&mut self) {
        self.synced.send_replace(false);
        self.handed_out = false;
        self.state = State::Waiting(Box::pin(tokio::time::sleep(self.retry_after)));
    }

    /// The next event; waits through failures and backoffs. Cancel-safe.
    pub async fn next(&mut self) -> Event {
        if std::mem::take(&mut self.handed_out) {
            self.synced.send_replace(true);
        }
        loop {
            let step = match &mut self.state {
                State::Start => Step::List,
                State::Waiting(backoff) => {
                    backoff.as_mut().await;
                    Step::List
                }
                State::Listing(listing) => match listing.await {
                    Ok((listings, changes)) => Step::Listed(listings, changes),
                    Err(e) => Step::Failed(e),
                },
                State::Watching { changes, resync } => tokio::select! {
                    change = changes.next() => match change {
                        Some((_, Ok(c))) if c.event_type == EventType::Bookmark => Step::Skip,
                        Some((gr, Ok(c))) => return Event::Changed(gr, c),
                        Some((_, Err(e))) => Step::Failed(e),
                        None => Step::Ended,
                    },
                    () = tick(resync) => return Event::Resync,
                },
            };
            match step {
                Step::List => {
                    let listing = list_and_watch(self.store.clone(), self.resources.clone());
                    self.state = State::Listing(Box::pin(listing));
                }
                Step::Listed(listings, changes) => {
                    let resync = self.resync.map(|period| {
                        let mut i = tokio::time::interval_at(Instant::now() + period, period);
                        i.set_missed_tick_behavior(MissedTickBehavior::Delay);
                        i
                    });
                    self.state = State::Watching { changes, resync };
                    self.handed_out = true;
                    return Event::Listed(listings);
                }
                Step::Failed(e) => self.failed(&e),
                Step::Ended => {
                    tracing::info!("{}: watch ended; re-listing", self.name);
                    self.restart();
                }
                Step::Skip => {}
            }
        }
    }
}

async fn tick(resync: &mut Option<Interval>) {
    match resync {
        Some(interval) => {
            interval.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// List each resource and watch it from its list's revision.
async fn list_and_watch(
    store: Arc<dyn StoreApi>,
    resources: Vec<GroupResource>,
) -> ApiResult<(Vec<Listing>, Changes)> {
    let mut listings = Vec::with_capacity(resources.len());
    let mut streams = Vec::with_capacity(resources.len());
    for resource in resources {
        let listed = store.list(&resource, None).await?;
        let tag = resource.clone();
        let changes = store
            .watch(&resource, None, listed.resource_version)
            .await?
            .map(move |c| (tag.clone(), c));
        streams.push(changes.boxed());
        listings.push(Listing {
            resource,
            items: listed.items,
            resource_version: listed.resource_version,
        });
    }
    Ok((listings, stream::select_all(streams)))
}
