//! Compiled schemas of the catalog's custom resources, built once per CRD
//! revision and version.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use keelson_registry::ResourceInfo;

use crate::props::Props;
use crate::values::Compiled;

type Key = (String, String, String);

/// A cache of [`Compiled`] schemas keyed by CRD uid, resourceVersion and
/// version; entries of older revisions are dropped when a newer one is
/// compiled.
#[derive(Debug, Default)]
pub struct SchemaCache {
    map: Mutex<HashMap<Key, Arc<Compiled>>>,
}

impl SchemaCache {
    /// An empty cache.
    pub fn new() -> SchemaCache {
        SchemaCache::default()
    }

    /// The compiled schema of a custom resource (`None` for a built-in
    /// resource or a version without a schema).
    pub fn get(&self, info: &ResourceInfo) -> Option<Arc<Compiled>> {
        let custom = info.custom.as_deref()?;
        let key = (
            custom.crd_uid.clone(),
            custom.crd_generation.to_string(),
            info.version.clone(),
        );
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = map.get(&key) {
            return Some(Arc::clone(c));
        }
        let raw = custom.schema.as_ref()?;
        let props: Props = serde_json::from_value(raw.clone()).ok()?;
        let compiled = Arc::new(Compiled::new(props).with_cel(raw));
        map.retain(|k, _| !(k.0 == key.0 && k.2 == key.2));
        map.insert(key, Arc::clone(&compiled));
        Some(compiled)
    }
}
