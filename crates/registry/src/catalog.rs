//! The live catalog: a handle to the current [`CatalogSnapshot`].
//!
//! Readers take a snapshot and use it for a whole request; writers (a
//! CustomResourceDefinition controller, a test) insert or remove resources,
//! which builds the next generation copy-on-write and swaps it in. A reader
//! holding an older snapshot keeps seeing it unchanged. The handle knows
//! nothing of where resources come from or how they are stored.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use crate::resource::ResourceInfo;
use crate::schema::Schema;
use crate::snapshot::{CatalogError, CatalogSnapshot};

/// A shared, changeable catalog; clones share the same current snapshot.
#[derive(Debug, Clone)]
pub struct Catalog {
    current: Arc<RwLock<Arc<CatalogSnapshot>>>,
}

impl Catalog {
    /// A catalog starting at `snapshot`.
    pub fn new(snapshot: Arc<CatalogSnapshot>) -> Catalog {
        Catalog {
            current: Arc::new(RwLock::new(snapshot)),
        }
    }

    /// A new catalog starting at the built-in Kubernetes 1.34 resources.
    pub fn builtin() -> Catalog {
        Catalog::new(Arc::clone(CatalogSnapshot::builtin()))
    }

    /// The current generation.
    pub fn snapshot(&self) -> Arc<CatalogSnapshot> {
        // A poisoned lock still holds a complete snapshot: swaps are one
        // assignment.
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Add (or replace) `resources` and `definitions` as a new generation;
    /// returns it.
    pub fn insert(
        &self,
        resources: Vec<ResourceInfo>,
        definitions: BTreeMap<String, Schema>,
    ) -> Result<Arc<CatalogSnapshot>, CatalogError> {
        self.update(|s| s.inserted(resources, definitions))
    }

    /// Remove the resource `group`/`version`/`plural` as a new generation;
    /// returns it.
    pub fn remove(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Result<Arc<CatalogSnapshot>, CatalogError> {
        self.update(|s| s.removed(group, version, plural))
    }

    /// Build the next generation from the current one under the write lock,
    /// so concurrent changes are applied one after the other.
    fn update(
        &self,
        change: impl FnOnce(&CatalogSnapshot) -> Result<CatalogSnapshot, CatalogError>,
    ) -> Result<Arc<CatalogSnapshot>, CatalogError> {
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        let next = Arc::new(change(&current)?);
        *current = Arc::clone(&next);
        Ok(next)
    }
}
