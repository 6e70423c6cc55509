//! The catalog follower: keeps one process's [`Catalog`] in step with the
//! stored CustomResourceDefinitions.
//!
//! It lists the CRDs through [`StoreApi`], then follows their change
//! stream from the list's revision (a [`keelson_informer::Informer`]). A
//! CRD whose names are accepted (`NamesAccepted`, which the CRD controller
//! sets just before `Established`) has its served versions inserted into
//! the catalog; a CRD that is gone, or whose versions stop being served,
//! has them removed. Each listing is compared with what this follower had
//! inserted, so CRDs deleted while the stream was down leave too. The
//! printer columns of each version are registered with the codec's Table
//! printer as they are inserted.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use keelson_api::{EventType, StoreApi};
use keelson_codec::table::custom::{set_columns, CustomColumn};
use keelson_informer::{Event, Informer, Listing};
use keelson_registry::{Catalog, ResourceInfo};
use keelson_selectors::{set_custom_fields, CustomFields};
use serde_json::Value;

use crate::crd::Crd;
use crate::crd_resource;
use crate::resources::catalog_entries;

/// How long the follower waits before re-syncing after a failure.
pub const RETRY_AFTER: Duration = Duration::from_millis(500);

/// One inserted resource: group, version, plural, kind.
type Served = (String, String, String, String);

/// Follows the stored CRDs into a [`Catalog`].
pub struct CatalogFollower {
    store: Arc<dyn StoreApi>,
    catalog: Catalog,
    synced: tokio::sync::watch::Sender<bool>,
}

impl CatalogFollower {
    /// A follower reading CRDs from `store` into `catalog`.
    pub fn new(store: Arc<dyn StoreApi>, catalog: Catalog) -> CatalogFollower {
        CatalogFollower {
            store,
            catalog,
            synced: tokio::sync::watch::channel(false).0,
        }
    }

    /// Whether the follower has listed the CRDs and is following them.
    pub fn synced(&self) -> tokio::sync::watch::Receiver<bool> {
        self.synced.subscribe()
    }

    /// Spawn [`Self::run`] on the current runtime until the process ends;
    /// returns the `synced` receiver.
    pub fn spawn(store: Arc<dyn StoreApi>, catalog: Catalog) -> tokio::sync::watch::Receiver<bool> {
        let f = CatalogFollower::new(store, catalog);
        let synced = f.synced();
        tokio::spawn(f.run(std::future::pending()));
        synced
    }

    /// Run until `shutdown` completes, listing again after every failure.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let mut informer = Informer::new(
            "CRD catalog follower",
            self.store.clone(),
            vec![crd_resource()],
        )
        .retry_after(RETRY_AFTER)
        .report_synced(self.synced.clone());
        let mut served: BTreeMap<String, BTreeSet<Served>> = BTreeMap::new();
        let follow = async {
            loop {
                match informer.next().await {
                    Event::Listed(listings) => self.relisted(&mut served, &listings),
                    Event::Changed(_, change) => {
                        let deleted = change.event_type == EventType::Deleted;
                        self.apply(&mut served, &change.object, deleted);
                    }
                    Event::Resync => {}
                }
            }
        };
        tokio::select! {
            () = shutdown => {}
            () = follow => {}
        }
    }

    /// Bring the catalog in line with a fresh listing: CRDs deleted while
    /// the stream was down leave too.
    fn relisted(&self, served: &mut BTreeMap<String, BTreeSet<Served>>, listings: &[Listing]) {
        let mut names = BTreeSet::new();
        for item in listings.iter().flat_map(|l| &l.items) {
            names.insert(self.apply(served, item, false));
        }
        let gone: Vec<String> = served
            .keys()
            .filter(|n| !names.contains(*n))
            .cloned()
            .collect();
        for name in gone {
            self.apply_named(served, &name, BTreeSet::new(), Vec::new(), BTreeMap::new());
        }
    }

    /// Bring the catalog in line with one CRD; returns its name.
    fn apply(
        &self,
        served: &mut BTreeMap<String, BTreeSet<Served>>,
        object: &Value,
        deleted: bool,
    ) -> String {
        let crd = match Crd::from_value(object) {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "skipping a CustomResourceDefinition that does not decode");
                return object
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
            }
        };
        let name = crd.metadata.name.clone();
        let accepted = crd.condition_true("NamesAccepted") || crd.condition_true("Established");
        if deleted || !accepted {
            self.apply_named(served, &name, BTreeSet::new(), Vec::new(), BTreeMap::new());
            return name;
        }
        let entries = catalog_entries(&crd);
        let want: BTreeSet<Served> = entries.resources.iter().map(served_key).collect();
        self.apply_named(served, &name, want, entries.resources, entries.definitions);
        name
    }

    fn apply_named(
        &self,
        served: &mut BTreeMap<String, BTreeSet<Served>>,
        name: &str,
        want: BTreeSet<Served>,
        resources: Vec<ResourceInfo>,
        definitions: BTreeMap<String, keelson_registry::Schema>,
    ) {
        let had = served.remove(name).unwrap_or_default();
        for (g, v, p, k) in had.difference(&want) {
            if let Err(e) = self.catalog.remove(g, v, p) {
                tracing::warn!(error = %e, "removing a custom resource from the catalog");
            }
            set_columns(&format!("{g}/{v}"), k, None);
            tracing::info!(group = %g, version = %v, resource = %p, "custom resource no longer served");
        }
        // Field selectors: every process parsing or matching them (gateway,
        // watch cache) follows the CRDs here.
        for (g, _, p, _) in had.difference(&want) {
            if !want.iter().any(|(wg, _, wp, _)| wg == g && wp == p) {
                set_custom_fields(g, p, None);
            }
        }
        let mut fields: BTreeMap<(String, String), CustomFields> = BTreeMap::new();
        for r in &resources {
            let f = fields
                .entry((r.group.clone(), r.plural.clone()))
                .or_insert_with(|| CustomFields {
                    namespaced: r.namespaced,
                    fields: Vec::new(),
                });
            for label in r.strategy.selectable_fields.iter().flatten() {
                if !f.fields.contains(label) {
                    f.fields.push(label.clone());
                }
            }
        }
        for ((g, p), f) in fields {
            set_custom_fields(&g, &p, Some(f));
        }
        if resources.is_empty() {
            return;
        }
        // Unchanged entries are skipped so an idle CRD write (status only)
        // does not make a new generation.
        let snapshot = self.catalog.snapshot();
        let changed = resources
            .iter()
            .any(|r| snapshot.lookup(&r.group, &r.version, &r.plural) != Some(r));
        for r in &resources {
            let columns = r.custom.as_ref().map(|c| {
                c.printer_columns
                    .iter()
                    .map(|p| CustomColumn {
                        name: p.name.clone(),
                        type_: p.type_.clone(),
                        format: p.format.clone(),
                        description: p.description.clone(),
                        priority: p.priority,
                        json_path: p.json_path.clone(),
                    })
                    .collect()
            });
            set_columns(&r.api_version(), &r.kind, columns);
        }
        if changed {
            for r in &resources {
                tracing::info!(group = %r.group, version = %r.version, resource = %r.plural, "serving custom resource");
            }
            if let Err(e) = self.catalog.insert(resources, definitions) {
                tracing::warn!(error = %e, "inserting a custom resource into the catalog");
                return;
            }
        }
        served.insert(name.to_string(), want);
    }
}

fn served_key(r: &ResourceInfo) -> Served {
    (
        r.group.clone(),
        r.version.clone(),
        r.plural.clone(),
        r.kind.clone(),
    )
}
