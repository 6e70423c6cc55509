//! Lists from the cache: a page of `Arc`s to cached objects is cut under the
//! lock, then its items are streamed one by one (each a copy of one cached
//! object's JSON, made as the reader asks for it).

use std::sync::Arc;
use std::time::Duration;

use futures::stream::StreamExt;
use keelson_api::{CacheList, CacheListRequest, EventType, ListRevision, StoreApi};
use keelson_apimachinery::{ApiError, ApiResult};
use keelson_codec::Format;
use keelson_selectors::{FieldSelector, LabelSelector};

use crate::object::CachedObject;
use crate::resource::{objects_at, ResourceCache};

/// How long a read waits for the cache to reach a revision (kube-apiserver's
/// watch cache waits 3 s).
pub(crate) const FRESHNESS_WAIT: Duration = Duration::from_secs(3);

/// Parsed selectors and namespace of a list or watch.
pub(crate) struct Filter {
    pub namespace: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
    /// The format answers are encoded in.
    pub format: Format,
    /// What a Table's rows carry (watches with `as=Table`).
    pub include_object: keelson_codec::IncludeObject,
}

impl Filter {
    pub fn new(
        gr: &keelson_apimachinery::GroupResource,
        namespace: Option<String>,
        labels: &str,
        fields: &str,
        format: Format,
    ) -> ApiResult<Filter> {
        Ok(Filter {
            format,
            include_object: keelson_codec::IncludeObject::Metadata,
            namespace,
            labels: LabelSelector::parse(labels)?,
            fields: FieldSelector::parse(fields, &gr.group, &gr.resource)?,
        })
    }

    /// Whether any selector is set.
    pub fn selects(&self) -> bool {
        !self.labels.is_empty() || !self.fields.is_empty()
    }

    /// Whether an object passes the selectors (not the namespace).
    pub fn matches(&self, o: &CachedObject) -> bool {
        self.labels.matches_attrs(&o.attrs)
            && self
                .fields
                .matches_cached(&o.attrs, || serde_json::from_slice(&o.object()).ok())
    }

    /// Whether an object is in the namespace and passes the selectors.
    pub fn admits(&self, o: &CachedObject) -> bool {
        self.namespace
            .as_deref()
            .is_none_or(|ns| o.namespace() == ns)
            && self.matches(o)
    }
}

/// A page cut from objects in key order.
struct Page {
    items: Vec<Arc<CachedObject>>,
    continue_after: Option<String>,
    remaining: Option<u64>,
}

fn cut<'a>(
    objects: impl Iterator<Item = &'a Arc<CachedObject>>,
    filter: &Filter,
    limit: usize,
) -> Page {
    let selects = filter.selects();
    let mut items = Vec::new();
    let mut more = false;
    let mut remaining = 0u64;
    for o in objects.filter(|o| filter.matches(o)) {
        if limit == 0 || items.len() < limit {
            items.push(o.clone());
            continue;
        }
        more = true;
        if selects {
            break;
        }
        remaining += 1;
    }
    let continue_after = if more {
        items.last().map(|o| o.key.to_string())
    } else {
        None
    };
    Page {
        items,
        continue_after,
        remaining: (more && !selects).then_some(remaining),
    }
}

fn answer(page: Page, resource_version: u64, format: Format) -> CacheList {
    CacheList {
        resource_version,
        continue_after: page.continue_after,
        remaining: page.remaining,
        items: futures::stream::iter(page.items.into_iter().map(move |o| o.item(format))).boxed(),
    }
}

/// Serve a list from the store when the cache cannot: a revision older
/// than its history, or a consistent read it could not catch up with.
async fn from_store(
    store: &Arc<dyn StoreApi>,
    req: &CacheListRequest,
    filter: &Filter,
    exact: Option<u64>,
) -> ApiResult<CacheList> {
    let ns = req.namespace.as_deref();
    let list = match exact {
        Some(r) => store.list_at(&req.gr, ns, r).await?,
        None => store.list(&req.gr, ns).await?,
    };
    let mut objects = list
        .items
        .into_iter()
        .map(|v| CachedObject::new(&req.gr, v, EventType::Added).map(Arc::new))
        .collect::<ApiResult<Vec<_>>>()?;
    objects.sort_by(|a, b| a.key.cmp(&b.key));
    let start = req.start_after.as_deref();
    let page = cut(
        objects.iter().filter(|o| start.is_none_or(|s| &*o.key > s)),
        filter,
        req.limit,
    );
    Ok(answer(page, list.resource_version, filter.format))
}

/// Serve one list request.
pub(crate) async fn list(
    store: &Arc<dyn StoreApi>,
    rc: &ResourceCache,
    req: CacheListRequest,
) -> ApiResult<CacheList> {
    let filter = Filter::new(
        &req.gr,
        req.namespace.clone(),
        &req.label_selector,
        &req.field_selector,
        req.format,
    )?;
    let exact = match req.revision {
        ListRevision::Any => None,
        ListRevision::Consistent => {
            let target = store.current_revision().await?;
            if !rc.wait_for(target, FRESHNESS_WAIT).await {
                tracing::warn!(resource = %rc.gr, target, cache = rc.revision(), "watch cache behind the store; listing from the store");
                return from_store(store, &req, &filter, None).await;
            }
            None
        }
        ListRevision::NotOlderThan(r) => {
            fresh(rc, r).await?;
            None
        }
        ListRevision::Exact(r) => {
            fresh(rc, r).await?;
            // The cache's history may reach further back than the store's
            // retention window; a revision the store has compacted is gone
            // (410) however it is read.
            if r < rc.revision() && r < store.compacted_revision().await? {
                return from_store(store, &req, &filter, Some(r)).await;
            }
            Some(r)
        }
    };
    let page = {
        let st = rc.lock();
        let revision = exact.unwrap_or(st.revision);
        if revision < st.oldest {
            None
        } else {
            let objects = objects_at(
                &st,
                revision,
                req.namespace.as_deref(),
                req.start_after.as_deref(),
            );
            Some((cut(objects, &filter, req.limit), revision))
        }
    };
    match page {
        Some((page, revision)) => Ok(answer(page, revision, filter.format)),
        None => from_store(store, &req, &filter, exact).await,
    }
}

/// Wait up to 3 s for the cache to reach `r`; `504` if it does not.
pub(crate) async fn fresh(rc: &ResourceCache, r: u64) -> ApiResult<()> {
    if rc.wait_for(r, FRESHNESS_WAIT).await {
        Ok(())
    } else {
        Err(ApiError::too_large_resource_version(r, rc.revision()))
    }
}
