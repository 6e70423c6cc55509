//! Server-side printing (`as=Table`) and metadata-only views
//! (`as=PartialObjectMetadata[List]`), as kube-apiserver 1.34 answers them.
//!
//! A Table is `kind`, `apiVersion` (`meta.k8s.io/v1` or `v1beta1`),
//! `metadata` (the list's `resourceVersion`, `continue`,
//! `remainingItemCount`, or the object's `resourceVersion`),
//! `columnDefinitions` and `rows`. The columns and cells are kube's
//! printers (`pkg/printers/internalversion/printers.go`), one module per
//! resource family; every printer is a pure function of the JSON object and
//! the time it is printed at. Resources without a printer get kube's default
//! table (`Name`, `Created At`). The server always prints wide: the
//! `priority: 1` columns are there for `kubectl get -o wide` to show.
//!
//! Each row carries its object as kube's `includeObject` asks: a
//! `PartialObjectMetadata` (`Metadata`, the default), the whole object
//! (`Object`) or nothing (`None`, `"object": null`).

mod admissionregistration;
mod apiregistration;
mod apps;
mod batch;
mod certificates;
pub mod columns;
mod core;
pub mod custom;
mod flowcontrol;
mod networking;
mod node;
mod pods;
mod policy;
pub mod quantity;
mod raw;
mod rbac;
mod resource;
mod storage;
pub mod time;
mod util;

use bytes::{BufMut, Bytes, BytesMut};
use keelson_apimachinery::json::{to_vec_go, to_writer_go};
use keelson_apimachinery::ApiError;
use serde_json::{Map, Value};

use crate::error::CodecError;
use crate::format::MetaVersion;
pub use columns::Column;
use columns::{col, NAME, OBJECT_META_CREATION_TIMESTAMP};
pub use time::Time;

/// kube's `metav1.IncludeObjectPolicy`: what a Table row carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum IncludeObject {
    /// A `PartialObjectMetadata` of the object (the default).
    #[default]
    Metadata,
    /// Nothing (`"object": null`).
    None,
    /// The whole object.
    Object,
}

impl IncludeObject {
    /// Every policy, in [`IncludeObject::index`] order.
    pub const ALL: [IncludeObject; 3] = [
        IncludeObject::Metadata,
        IncludeObject::None,
        IncludeObject::Object,
    ];

    /// The query value: `Metadata`, `None` or `Object`.
    pub fn as_str(self) -> &'static str {
        match self {
            IncludeObject::Metadata => "Metadata",
            IncludeObject::None => "None",
            IncludeObject::Object => "Object",
        }
    }

    /// A dense index in `0..IncludeObject::ALL.len()`.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// kube's `metav1.TableOptions`: the `includeObject` query parameter, and
/// whether the column definitions are left out (`noHeaders`, which only
/// the server sets: every event of a Table watch after the first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TableOptions {
    pub include_object: IncludeObject,
    pub no_headers: bool,
}

impl TableOptions {
    /// The options of a request from its `includeObject` query parameter,
    /// with kube's `400` for an unknown value.
    pub fn from_query(include_object: Option<&str>) -> Result<TableOptions, ApiError> {
        let include_object = match include_object.unwrap_or("") {
            "" | "Metadata" => IncludeObject::Metadata,
            "None" => IncludeObject::None,
            "Object" => IncludeObject::Object,
            other => {
                return Err(ApiError::bad_request(format!(
                    "Unable to convert to Table as requested: includeObject: Invalid value: {}: must be 'Metadata', 'Object', 'None', or empty",
                    serde_json::to_string(other).unwrap_or_default()
                )))
            }
        };
        Ok(TableOptions {
            include_object,
            no_headers: false,
        })
    }
}

/// One row's cells, and the row conditions kube sets for finished pods.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub cells: Vec<Value>,
    pub conditions: Option<Value>,
}

impl Row {
    pub(crate) fn new(cells: Vec<Value>) -> Row {
        Row {
            cells,
            conditions: None,
        }
    }
}

/// A resource's printer: its columns and how one object becomes a row.
pub(crate) struct Printer {
    pub columns: &'static [Column],
    pub print: fn(&Value, Time) -> Row,
}

impl Printer {
    /// kube's default table leaves `rows` null for an empty list (the
    /// printers answer an empty array).
    fn null_when_empty(&self) -> bool {
        std::ptr::eq(self, &DEFAULT)
    }
}

/// kube's default table convertor: Name and the creation time (RFC 3339).
static DEFAULT: Printer = Printer {
    columns: &[
        NAME,
        col("Created At", "date", OBJECT_META_CREATION_TIMESTAMP),
    ],
    print: print_default,
};

fn print_default(o: &Value, _now: Time) -> Row {
    Row::new(vec![
        Value::from(util::name(o)),
        Value::from(time::rfc3339(util::time_at(
            o,
            &["metadata", "creationTimestamp"],
        ))),
    ])
}

/// The API group of an `apiVersion` ("" for the core group).
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// The printer of objects of `kind` in API `group`.
pub(crate) fn printer(group: &str, kind: &str) -> &'static Printer {
    match (group, kind) {
        ("", "Pod") => &pods::POD,
        ("", "PodTemplate") => &core::POD_TEMPLATE,
        ("", "ReplicationController") => &core::REPLICATION_CONTROLLER,
        ("", "Service") => &core::SERVICE,
        ("", "Endpoints") => &core::ENDPOINTS,
        ("", "Node") => &core::NODE,
        ("", "Event") => &core::EVENT,
        ("events.k8s.io", "Event") => &core::EVENTS_EVENT,
        ("", "Namespace") => &core::NAMESPACE,
        ("", "Secret") => &core::SECRET,
        ("", "ServiceAccount") => &core::SERVICE_ACCOUNT,
        ("", "ConfigMap") => &core::CONFIG_MAP,
        ("", "ResourceQuota") => &core::RESOURCE_QUOTA,
        ("", "PersistentVolume") => &storage::PERSISTENT_VOLUME,
        ("", "PersistentVolumeClaim") => &storage::PERSISTENT_VOLUME_CLAIM,
        ("storage.k8s.io", "StorageClass") => &storage::STORAGE_CLASS,
        ("storage.k8s.io", "VolumeAttributesClass") => &storage::VOLUME_ATTRIBUTES_CLASS,
        ("storage.k8s.io", "VolumeAttachment") => &storage::VOLUME_ATTACHMENT,
        ("storage.k8s.io", "CSINode") => &storage::CSI_NODE,
        ("storage.k8s.io", "CSIDriver") => &storage::CSI_DRIVER,
        ("storage.k8s.io", "CSIStorageCapacity") => &storage::CSI_STORAGE_CAPACITY,
        ("apps", "Deployment") => &apps::DEPLOYMENT,
        ("apps", "ReplicaSet") => &apps::REPLICA_SET,
        ("apps", "StatefulSet") => &apps::STATEFUL_SET,
        ("apps", "DaemonSet") => &apps::DAEMON_SET,
        ("apps", "ControllerRevision") => &apps::CONTROLLER_REVISION,
        ("batch", "Job") => &batch::JOB,
        ("batch", "CronJob") => &batch::CRON_JOB,
        ("networking.k8s.io", "Ingress") => &networking::INGRESS,
        ("networking.k8s.io", "IngressClass") => &networking::INGRESS_CLASS,
        ("networking.k8s.io", "NetworkPolicy") => &networking::NETWORK_POLICY,
        ("networking.k8s.io", "ServiceCIDR") => &networking::SERVICE_CIDR,
        ("networking.k8s.io", "IPAddress") => &networking::IP_ADDRESS,
        ("resource.k8s.io", "DeviceClass") => &resource::DEVICE_CLASS,
        ("resource.k8s.io", "ResourceClaim") => &resource::RESOURCE_CLAIM,
        ("resource.k8s.io", "ResourceClaimTemplate") => &resource::RESOURCE_CLAIM_TEMPLATE,
        ("resource.k8s.io", "ResourceSlice") => &resource::RESOURCE_SLICE,
        ("discovery.k8s.io", "EndpointSlice") => &networking::ENDPOINT_SLICE,
        ("rbac.authorization.k8s.io", "RoleBinding") => &rbac::ROLE_BINDING,
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => &rbac::CLUSTER_ROLE_BINDING,
        ("policy", "PodDisruptionBudget") => &policy::POD_DISRUPTION_BUDGET,
        ("autoscaling", "HorizontalPodAutoscaler") => &policy::HORIZONTAL_POD_AUTOSCALER,
        ("scheduling.k8s.io", "PriorityClass") => &policy::PRIORITY_CLASS,
        ("coordination.k8s.io", "Lease") => &policy::LEASE,
        ("autoscaling", "Scale") => &policy::SCALE,
        ("", "ComponentStatus") => &core::COMPONENT_STATUS,
        ("certificates.k8s.io", "CertificateSigningRequest") => {
            &certificates::CERTIFICATE_SIGNING_REQUEST
        }
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
            &admissionregistration::MUTATING_WEBHOOK_CONFIGURATION
        }
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
            &admissionregistration::VALIDATING_WEBHOOK_CONFIGURATION
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") => {
            &admissionregistration::VALIDATING_ADMISSION_POLICY
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding") => {
            &admissionregistration::VALIDATING_ADMISSION_POLICY_BINDING
        }
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => &flowcontrol::FLOW_SCHEMA,
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => {
            &flowcontrol::PRIORITY_LEVEL_CONFIGURATION
        }
        ("apiregistration.k8s.io", "APIService") => &apiregistration::API_SERVICE,
        ("node.k8s.io", "RuntimeClass") => &node::RUNTIME_CLASS,
        _ => &DEFAULT,
    }
}

/// The column definitions of objects of `kind` in `api_version`, as a
/// Table's `columnDefinitions`.
pub fn column_definitions(api_version: &str, kind: &str) -> Value {
    PrinterRef::of(api_version, kind).columns_json()
}

/// A resource's printer: a built-in one, or a custom resource's columns.
enum PrinterRef {
    Static(&'static Printer),
    Custom(std::sync::Arc<custom::CustomPrinter>),
}

impl PrinterRef {
    fn of(api_version: &str, kind: &str) -> PrinterRef {
        match custom::lookup(api_version, kind) {
            Some(c) => PrinterRef::Custom(c),
            None => PrinterRef::Static(printer(group_of(api_version), kind)),
        }
    }

    fn columns_json(&self) -> Value {
        match self {
            PrinterRef::Static(p) => columns_json(p),
            PrinterRef::Custom(c) => c.columns_json(),
        }
    }

    fn print(&self, o: &Value, now: Time) -> Row {
        match self {
            PrinterRef::Static(p) => (p.print)(o, now),
            PrinterRef::Custom(c) => c.print(o, now),
        }
    }

    fn null_when_empty(&self) -> bool {
        match self {
            PrinterRef::Static(p) => p.null_when_empty(),
            PrinterRef::Custom(_) => false,
        }
    }
}

fn columns_json(p: &Printer) -> Value {
    Value::Array(p.columns.iter().map(Column::to_json).collect())
}

/// The Go package kube's internal types of an API group live in, for
/// kube's `%T` in 406 messages (`*core.PodList`); custom resources are
/// unstructured.
fn internal_package(group: &str) -> Option<&'static str> {
    Some(match group {
        "" | "events.k8s.io" => "core",
        "apps" => "apps",
        "batch" => "batch",
        "autoscaling" => "autoscaling",
        "policy" => "policy",
        "networking.k8s.io" => "networking",
        "rbac.authorization.k8s.io" => "rbac",
        "storage.k8s.io" => "storage",
        "coordination.k8s.io" => "coordination",
        "discovery.k8s.io" => "discovery",
        "scheduling.k8s.io" => "scheduling",
        "node.k8s.io" => "node",
        "certificates.k8s.io" => "certificates",
        "flowcontrol.apiserver.k8s.io" => "flowcontrol",
        "admissionregistration.k8s.io" => "admissionregistration",
        "apiextensions.k8s.io" => "apiextensions",
        "apiregistration.k8s.io" => "apiregistration",
        "resource.k8s.io" => "resource",
        "storagemigration.k8s.io" => "storagemigration",
        "internal.apiserver.k8s.io" => "apiserverinternal",
        "authentication.k8s.io" => "authentication",
        "authorization.k8s.io" => "authorization",
        _ => return None,
    })
}

/// kube's `%T` of the object (or list) a handler holds: `*core.Pod`,
/// `*apps.DeploymentList`, `*unstructured.Unstructured[List]`.
pub fn go_type(api_version: &str, kind: &str) -> String {
    match internal_package(group_of(api_version)) {
        Some(pkg) => format!("*{pkg}.{kind}"),
        None if kind.ends_with("List") => "*unstructured.UnstructuredList".to_string(),
        None => "*unstructured.Unstructured".to_string(),
    }
}

/// `metav1.ObjectMeta` fields in their Go order, to place a missing
/// `creationTimestamp` where Go writes it.
const META_ORDER: [&str; 15] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// An object's metadata as Go writes a `metav1.ObjectMeta`: its fields in
/// the struct's order, a zero `creationTimestamp` as `null` (metav1.Time is
/// not omitted when empty); fields Go does not know keep their order, last.
fn object_meta(object: &Value) -> Value {
    let empty = Map::new();
    let meta = object
        .get("metadata")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut out = Map::new();
    for field in META_ORDER {
        match meta.get(field) {
            Some(v) => {
                out.insert(field.to_string(), v.clone());
            }
            None if field == "creationTimestamp" => {
                out.insert(field.to_string(), Value::Null);
            }
            None => {}
        }
    }
    for (k, v) in meta {
        if !META_ORDER.contains(&k.as_str()) {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Object(out)
}

/// kube's `meta.AsPartialObjectMetadata` in `meta.k8s.io/<version>`.
pub fn partial_object_metadata(version: MetaVersion, object: &Value) -> Value {
    let mut out = Map::new();
    out.insert("kind".into(), Value::from("PartialObjectMetadata"));
    out.insert("apiVersion".into(), Value::from(version.api_version()));
    out.insert("metadata".into(), object_meta(object));
    Value::Object(out)
}

/// `item` with `kind` and `apiVersion` first (a list item as the object
/// kube converts to its version for `includeObject=Object`).
fn with_type_meta(item: &Value, kind: &str, api_version: &str) -> Value {
    let Some(map) = item.as_object() else {
        return item.clone();
    };
    if map.contains_key("kind") {
        return item.clone();
    }
    let mut out = Map::new();
    out.insert("kind".into(), Value::from(kind));
    out.insert("apiVersion".into(), Value::from(api_version));
    for (k, v) in map {
        out.insert(k.clone(), v.clone());
    }
    Value::Object(out)
}

/// What turns objects of one resource into rows.
pub(crate) struct Rows {
    printer: PrinterRef,
    version: MetaVersion,
    include: IncludeObject,
    now: Time,
    kind: String,
    api_version: String,
}

impl Rows {
    /// Rows of objects of `kind` in `api_version`.
    pub(crate) fn new(
        version: MetaVersion,
        api_version: &str,
        kind: &str,
        opts: &TableOptions,
        now: Time,
    ) -> Rows {
        Rows {
            printer: PrinterRef::of(api_version, kind),
            version,
            include: opts.include_object,
            now,
            kind: kind.to_string(),
            api_version: api_version.to_string(),
        }
    }

    /// Whether an empty table has `"rows": null`.
    pub(crate) fn null_when_empty(&self) -> bool {
        self.printer.null_when_empty()
    }

    /// The order kube's list printer prints the rows in, when it sorts
    /// them (FlowSchemas: by matching precedence, then name); `None` when
    /// rows follow the list's order.
    fn order(&self) -> Option<fn(&Value, &Value) -> std::cmp::Ordering> {
        match &self.printer {
            PrinterRef::Static(p) if std::ptr::eq(*p, &flowcontrol::FLOW_SCHEMA) => {
                Some(flowcontrol::flow_schema_order)
            }
            _ => None,
        }
    }

    /// Whether the rows of a list are sorted: its items must all be read
    /// before the first row is written.
    pub(crate) fn sorts(&self) -> bool {
        self.order().is_some()
    }

    /// A list's items in the order their rows are printed.
    pub(crate) fn sort(&self, items: &mut [Value]) {
        if let Some(order) = self.order() {
            items.sort_by(order);
        }
    }

    /// One row (`cells`, `conditions`, `object`) of an object or list item.
    pub(crate) fn row(&self, object: &Value) -> Value {
        let Row { cells, conditions } = self.printer.print(object, self.now);
        let mut row = Map::new();
        row.insert("cells".into(), Value::Array(cells));
        if let Some(c) = conditions {
            row.insert("conditions".into(), c);
        }
        let object = match self.include {
            IncludeObject::Metadata => partial_object_metadata(self.version, object),
            IncludeObject::None => Value::Null,
            IncludeObject::Object => with_type_meta(object, &self.kind, &self.api_version),
        };
        row.insert("object".into(), object);
        Value::Object(row)
    }

    /// [`Rows::row`] of a list item given as JSON bytes, written to `out`.
    /// With a built-in printer and `includeObject=Metadata` (the default)
    /// the item is parsed without its `managedFields` and its `metadata`
    /// bytes are copied into the row ([`raw::split`]); otherwise, or when
    /// the item's metadata is not in `ObjectMeta`'s order, it is parsed
    /// whole. Both give the same row.
    pub(crate) fn write_row(&self, item: &[u8], out: &mut BytesMut) -> Result<(), CodecError> {
        let split = match (&self.printer, self.include) {
            (PrinterRef::Static(_), IncludeObject::Metadata) => raw::split(item),
            _ => None,
        };
        let Some(split) = split else {
            let row = self.row(&serde_json::from_slice(item)?);
            to_writer_go((&mut *out).writer(), &row)?;
            return Ok(());
        };
        let Row { cells, conditions } = self.printer.print(&split.object, self.now);
        out.put_slice(b"{\"cells\":");
        to_writer_go((&mut *out).writer(), &cells)?;
        if let Some(c) = conditions {
            out.put_slice(b",\"conditions\":");
            to_writer_go((&mut *out).writer(), &c)?;
        }
        out.put_slice(b",\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"");
        out.put_slice(self.version.api_version().as_bytes());
        out.put_slice(b"\",\"metadata\":");
        out.put_slice(split.metadata.as_bytes());
        out.put_slice(b"}}");
        Ok(())
    }

    /// The Table up to `rows`: kind, apiVersion, metadata and (unless
    /// `no_headers`) the column definitions.
    pub(crate) fn head(&self, metadata: Value, no_headers: bool) -> Map<String, Value> {
        let mut t = Map::new();
        t.insert("kind".into(), Value::from("Table"));
        t.insert("apiVersion".into(), Value::from(self.version.api_version()));
        t.insert("metadata".into(), metadata);
        t.insert(
            "columnDefinitions".into(),
            if no_headers {
                Value::Null
            } else {
                self.printer.columns_json()
            },
        );
        t
    }
}

/// The Table of one object (a get, a write's answer, a watch event): one
/// row, `metadata.resourceVersion` the object's.
pub fn object_table(version: MetaVersion, object: &Value, opts: &TableOptions, now: Time) -> Value {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let rows = Rows::new(version, api_version, kind, opts, now);
    let mut metadata = Map::new();
    let rv = util::str_at(object, &["metadata", "resourceVersion"]);
    if !rv.is_empty() {
        metadata.insert("resourceVersion".into(), Value::from(rv));
    }
    let mut t = rows.head(Value::Object(metadata), opts.no_headers);
    t.insert("rows".into(), Value::Array(vec![rows.row(object)]));
    Value::Object(t)
}

/// A JSON Table encoded without column definitions (`"columnDefinitions":
/// null`, as every event of a Table watch but the first), given them: the
/// shared bytes of a watch event with the definitions of `kind` in
/// `api_version` spliced in, for the first event of one watcher. `None`
/// when `encoded` is not such a table.
pub fn with_headers(encoded: &[u8], api_version: &str, kind: &str) -> Option<Bytes> {
    const NULL: &[u8] = b"\"columnDefinitions\":null";
    // The first occurrence is the Table's own: only kind, apiVersion and a
    // metadata of revisions precede it.
    let at = encoded.windows(NULL.len()).position(|w| w == NULL)?;
    let columns = to_vec_go(&column_definitions(api_version, kind)).ok()?;
    let mut out = BytesMut::with_capacity(encoded.len() + columns.len());
    out.put_slice(&encoded[..at]);
    out.put_slice(b"\"columnDefinitions\":");
    out.put_slice(&columns);
    out.put_slice(&encoded[at + NULL.len()..]);
    Some(out.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::table::time::test_now as now;

    fn pod() -> Value {
        json!({"kind": "Pod", "apiVersion": "v1",
               "metadata": {"name": "p", "namespace": "ns", "resourceVersion": "7", "creationTimestamp": "2024-05-01T11:00:00Z", "labels": {"app": "x"}},
               "spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Pending"}})
    }

    #[test]
    fn table_of_one_object() {
        let t = object_table(MetaVersion::V1, &pod(), &TableOptions::default(), now());
        let text = serde_json::to_string(&t).unwrap();
        assert!(
            text.starts_with(r#"{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"7"},"columnDefinitions":[{"name":"Name","type":"string","format":"name","description":"Name must be unique"#),
            "{text}"
        );
        assert_eq!(t["columnDefinitions"].as_array().unwrap().len(), 9);
        assert_eq!(
            t["rows"],
            json!([{"cells": ["p", "0/1", "Pending", "0", "60m", "<none>", "<none>", "<none>", "<none>"],
                    "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                               "metadata": {"name": "p", "namespace": "ns", "resourceVersion": "7", "creationTimestamp": "2024-05-01T11:00:00Z", "labels": {"app": "x"}}}}])
        );
        let none = TableOptions {
            include_object: IncludeObject::None,
            no_headers: true,
        };
        let t = object_table(MetaVersion::V1beta1, &pod(), &none, now());
        assert_eq!(t["apiVersion"], "meta.k8s.io/v1beta1");
        assert_eq!(t["columnDefinitions"], Value::Null);
        assert_eq!(t["rows"][0]["object"], Value::Null);
        let whole = TableOptions {
            include_object: IncludeObject::Object,
            no_headers: false,
        };
        let t = object_table(MetaVersion::V1, &pod(), &whole, now());
        assert_eq!(t["rows"][0]["object"], pod());
    }

    #[test]
    fn default_table_for_other_resources() {
        let role = json!({"kind": "Role", "apiVersion": "rbac.authorization.k8s.io/v1",
                          "metadata": {"name": "r", "creationTimestamp": "2024-05-01T11:00:00Z"}});
        let t = object_table(MetaVersion::V1, &role, &TableOptions::default(), now());
        assert_eq!(
            t["columnDefinitions"],
            json!([
                {"name": "Name", "type": "string", "format": "name", "description": columns::OBJECT_META_NAME, "priority": 0},
                {"name": "Created At", "type": "date", "format": "", "description": OBJECT_META_CREATION_TIMESTAMP, "priority": 0}
            ])
        );
        assert_eq!(t["rows"][0]["cells"], json!(["r", "2024-05-01T11:00:00Z"]));
        assert_eq!(t["metadata"], json!({}));
        let cr =
            json!({"kind": "Widget", "apiVersion": "example.com/v1", "metadata": {"name": "w"}});
        let t = object_table(MetaVersion::V1, &cr, &TableOptions::default(), now());
        assert_eq!(t["rows"][0]["cells"], json!(["w", "0001-01-01T00:00:00Z"]));
        assert!(printer("example.com", "Widget").null_when_empty());
        assert!(!printer("", "Pod").null_when_empty());
    }

    #[test]
    fn list_items_get_their_type_meta_back() {
        let rows = Rows::new(
            MetaVersion::V1,
            "v1",
            "ConfigMap",
            &TableOptions {
                include_object: IncludeObject::Object,
                no_headers: false,
            },
            now(),
        );
        let row = rows.row(&json!({"metadata": {"name": "cm"}, "data": {"a": "b"}}));
        assert_eq!(
            serde_json::to_string(&row["object"]).unwrap(),
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm"},"data":{"a":"b"}}"#
        );
        assert_eq!(row["cells"], json!(["cm", 1, "<unknown>"]));
    }

    #[test]
    fn table_options_from_the_query() {
        assert_eq!(
            TableOptions::from_query(None).unwrap().include_object,
            IncludeObject::Metadata
        );
        assert_eq!(
            TableOptions::from_query(Some("Object"))
                .unwrap()
                .include_object,
            IncludeObject::Object
        );
        assert_eq!(
            TableOptions::from_query(Some("None"))
                .unwrap()
                .include_object,
            IncludeObject::None
        );
        let e = TableOptions::from_query(Some("Foo")).unwrap_err();
        assert_eq!(e.code, 400);
        assert_eq!(
            e.message,
            r#"Unable to convert to Table as requested: includeObject: Invalid value: "Foo": must be 'Metadata', 'Object', 'None', or empty"#
        );
    }

    #[test]
    fn metadata_in_go_order() {
        let pom = partial_object_metadata(
            MetaVersion::V1,
            &json!({"metadata": {"labels": {"a": "b"}, "managedFields": [], "name": "n", "extra": 1, "namespace": "ns", "creationTimestamp": "2024-05-01T11:00:00Z", "uid": "u"}}),
        );
        assert_eq!(
            serde_json::to_string(&pom["metadata"]).unwrap(),
            r#"{"name":"n","namespace":"ns","uid":"u","creationTimestamp":"2024-05-01T11:00:00Z","labels":{"a":"b"},"managedFields":[],"extra":1}"#
        );
    }

    #[test]
    fn metadata_views() {
        let pom = partial_object_metadata(
            MetaVersion::V1,
            &json!({"kind": "Pod", "metadata": {"resourceVersion": "5", "annotations": {"a": "b"}}}),
        );
        assert_eq!(
            serde_json::to_string(&pom).unwrap(),
            r#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5","creationTimestamp":null,"annotations":{"a":"b"}}}"#
        );
        assert_eq!(
            partial_object_metadata(MetaVersion::V1beta1, &json!({}))["metadata"],
            json!({"creationTimestamp": null})
        );
        assert_eq!(go_type("v1", "PodList"), "*core.PodList");
        assert_eq!(go_type("apps/v1", "Deployment"), "*apps.Deployment");
        assert_eq!(go_type("events.k8s.io/v1", "EventList"), "*core.EventList");
        assert_eq!(
            go_type("example.com/v1", "WidgetList"),
            "*unstructured.UnstructuredList"
        );
        assert_eq!(
            go_type("example.com/v1", "Widget"),
            "*unstructured.Unstructured"
        );
    }

    #[test]
    fn headers_are_spliced_into_a_shared_event() {
        let bare = TableOptions {
            include_object: IncludeObject::Metadata,
            no_headers: true,
        };
        let t = object_table(MetaVersion::V1, &pod(), &bare, now());
        let frame = format!(
            "{{\"type\":\"ADDED\",\"object\":{}}}\n",
            serde_json::to_string(&t).unwrap()
        );
        let with = with_headers(frame.as_bytes(), "v1", "Pod").unwrap();
        let full = object_table(MetaVersion::V1, &pod(), &TableOptions::default(), now());
        assert_eq!(
            std::str::from_utf8(&with).unwrap(),
            format!(
                "{{\"type\":\"ADDED\",\"object\":{}}}\n",
                serde_json::to_string(&full).unwrap()
            )
        );
        assert!(with_headers(b"{}", "v1", "Pod").is_none());
    }

    #[test]
    fn every_printer_row_matches_its_columns() {
        let objects = [
            ("", "Pod"),
            ("", "PodTemplate"),
            ("", "ReplicationController"),
            ("", "Service"),
            ("", "Endpoints"),
            ("", "Node"),
            ("", "Event"),
            ("events.k8s.io", "Event"),
            ("", "Namespace"),
            ("", "Secret"),
            ("", "ServiceAccount"),
            ("", "ConfigMap"),
            ("", "ResourceQuota"),
            ("", "PersistentVolume"),
            ("", "PersistentVolumeClaim"),
            ("storage.k8s.io", "StorageClass"),
            ("apps", "Deployment"),
            ("apps", "ReplicaSet"),
            ("apps", "StatefulSet"),
            ("apps", "DaemonSet"),
            ("apps", "ControllerRevision"),
            ("batch", "Job"),
            ("batch", "CronJob"),
            ("networking.k8s.io", "Ingress"),
            ("networking.k8s.io", "IngressClass"),
            ("networking.k8s.io", "NetworkPolicy"),
            ("discovery.k8s.io", "EndpointSlice"),
            ("rbac.authorization.k8s.io", "RoleBinding"),
            ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
            ("policy", "PodDisruptionBudget"),
            ("autoscaling", "HorizontalPodAutoscaler"),
            ("scheduling.k8s.io", "PriorityClass"),
            ("coordination.k8s.io", "Lease"),
            ("rbac.authorization.k8s.io", "Role"),
            ("autoscaling", "Scale"),
            ("", "ComponentStatus"),
            ("certificates.k8s.io", "CertificateSigningRequest"),
            (
                "admissionregistration.k8s.io",
                "MutatingWebhookConfiguration",
            ),
            (
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration",
            ),
            ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
            (
                "admissionregistration.k8s.io",
                "ValidatingAdmissionPolicyBinding",
            ),
            ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
            ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
            ("apiregistration.k8s.io", "APIService"),
            ("node.k8s.io", "RuntimeClass"),
        ];
        for (group, kind) in objects {
            let p = printer(group, kind);
            let row = (p.print)(&json!({"metadata": {"name": "x"}}), now());
            assert_eq!(row.cells.len(), p.columns.len(), "{group}/{kind}");
            assert!(
                kind == "Scale" || p.columns.iter().any(|c| c.format == "name"),
                "{group}/{kind}"
            );
        }
    }
}
