//! Query and path parameters of OpenAPI operations.
//!
//! Descriptions are Keelson's own short wording; kubectl only looks at
//! `name` and `in` (notably for `fieldValidation` on PATCH).

use serde_json::{json, Value};

fn query(name: &str, ty: &str, description: &str) -> Value {
    json!({
        "name": name,
        "in": "query",
        "description": description,
        "schema": {"type": ty, "uniqueItems": true}
    })
}

/// `{name}` path parameter.
pub fn name(kind: &str) -> Value {
    json!({
        "name": "name",
        "in": "path",
        "description": format!("name of the {kind}"),
        "required": true,
        "schema": {"type": "string", "uniqueItems": true}
    })
}

/// `{namespace}` path parameter.
pub fn namespace() -> Value {
    json!({
        "name": "namespace",
        "in": "path",
        "description": "object name and auth scope, such as for teams and projects",
        "required": true,
        "schema": {"type": "string", "uniqueItems": true}
    })
}

/// `pretty`.
pub fn pretty() -> Value {
    query("pretty", "string", "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).")
}

/// `dryRun`.
pub fn dry_run() -> Value {
    query("dryRun", "string", "When present, indicates that modifications should not be persisted. Valid values: All (run every stage of the request without persisting). An invalid or unrecognized value results in an error response.")
}

/// `fieldManager`.
pub fn field_manager(required_for_apply: bool) -> Value {
    let text = if required_for_apply {
        "fieldManager is a name associated with the actor or entity that is making these changes. Must be at most 128 characters and printable. Required for apply requests (application/apply-patch); optional for the other patch types."
    } else {
        "fieldManager is a name associated with the actor or entity that is making these changes. Must be at most 128 characters and printable."
    };
    query("fieldManager", "string", text)
}

/// `fieldValidation` — kubectl checks for this parameter on PATCH to decide
/// that the server validates fields itself.
pub fn field_validation() -> Value {
    query("fieldValidation", "string", "fieldValidation tells the server what to do with objects in the request (POST/PUT/PATCH) that contain unknown or duplicate fields. Valid values: - Ignore: drop unknown fields silently and keep only the last of duplicated fields. - Warn: drop unknown fields and keep the last duplicate, returning one warning (in the Warning response header) per dropped or duplicated field; the request still succeeds. This is the default since v1.23. - Strict: reject the request with a BadRequest error listing every unknown and duplicated field.")
}

/// `force` (PATCH only).
pub fn force() -> Value {
    json!({
        "name": "force",
        "in": "query",
        "description": "Force is going to \"force\" Apply requests: the request re-acquires fields owned by other managers. Must be unset for non-apply patch requests.",
        "schema": {"type": "boolean", "uniqueItems": true}
    })
}

/// The parameters of list and watch operations.
pub fn list() -> Vec<Value> {
    vec![
        query("allowWatchBookmarks", "boolean", "allowWatchBookmarks asks for watch events of type BOOKMARK. Servers may ignore it. Ignored when watch is not set."),
        query("continue", "string", "The continue token of a previous paged list response; fetches the next page of the same consistent snapshot."),
        query("fieldSelector", "string", "Restrict the returned objects by their fields. Defaults to everything."),
        query("labelSelector", "string", "Restrict the returned objects by their labels. Defaults to everything."),
        json!({"name": "limit", "in": "query", "description": "Maximum number of objects to return in one page; the response carries a continue token when more exist.", "schema": {"type": "integer", "uniqueItems": true}}),
        query("resourceVersion", "string", "Constrains which resource versions the request may be served from. Defaults to unset (the most recent data)."),
        query("resourceVersionMatch", "string", "How resourceVersion applies to list calls: NotOlderThan or Exact. Defaults to unset."),
        query("sendInitialEvents", "boolean", "With watch=true, start the watch with synthetic events for the current state of the collection, followed by a bookmark annotated with k8s.io/initial-events-end."),
        json!({"name": "timeoutSeconds", "in": "query", "description": "Timeout for the list/watch call, regardless of activity.", "schema": {"type": "integer", "uniqueItems": true}}),
        query("watch", "boolean", "Watch for changes to the described resources and return them as a stream of add, update and remove notifications."),
    ]
}

/// The parameters of delete and deletecollection.
pub fn delete() -> Vec<Value> {
    vec![
        dry_run(),
        json!({"name": "gracePeriodSeconds", "in": "query", "description": "Seconds before the object should be deleted; zero means delete immediately. Defaults to the per-type default when unset.", "schema": {"type": "integer", "uniqueItems": true}}),
        query("ignoreStoreReadErrorWithClusterBreakingPotential", "boolean", "When true, delete the object even if it cannot be read from storage (corrupt or undecryptable). Dangerous: may break the cluster."),
        query("orphanDependents", "boolean", "Deprecated: use propagationPolicy. Whether dependent objects are orphaned."),
        query("propagationPolicy", "string", "Whether and how garbage collection is performed: Orphan, Background or Foreground."),
    ]
}
