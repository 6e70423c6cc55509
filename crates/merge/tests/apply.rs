//! Server-Side Apply and managedFields, case by case.
//!
//! Every case lives in `data/apply.yaml`: a sequence of steps (an apply, or
//! an update recorded as kube's `Update` operation: a create, a replace, a
//! merge or JSON patch) against one object of a built-in kind, and what
//! kube-apiserver 1.34 answers: the object (or the fields that matter), its
//! `metadata.managedFields` (manager, operation, apiVersion, subresource and
//! fieldsV1 exactly, the clock's `time` only by presence) or the error.
//! Each case names the kube test or source file its expectation comes from.
//!
//! One test function per case, so a failure names its case;
//! `every_case_has_a_test` keeps the table and the functions in step.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use keelson_api::{
    FieldOwner, GroupResource, ManagedFieldsRequest, MergeApi, PatchRequest, PatchType,
};
use keelson_merge::LocalMerge;
use serde_json::Value;

/// The `time` the `age` step gives every entry: a second long gone, so a
/// write that refreshes a time is told from one that keeps it.
const AGED: &str = "2001-02-03T04:05:06Z";

/// The uid the harness gives an object when it is first stored (kube's
/// field manager tells a create from an update by the live object's uid).
const UID: &str = "6b1c2f4e-0000-4000-8000-000000000001";

/// Matches a field that is not there.
const ABSENT: &str = "<absent>";
/// Matches a field that is absent, null, `[]` or `{}`.
const EMPTY: &str = "<empty>";

struct Case {
    name: String,
    /// Where kube's expectation comes from.
    source: String,
    /// The object as stored before the first step (default: none).
    initial: Option<Value>,
    steps: Vec<Step>,
    /// The state after the last step.
    expect: Option<Expect>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// A Server-Side Apply patch.
    Apply,
    /// A create, replace or non-apply patch (an `Update` operation).
    Update,
    /// Set every managedFields `time` to [`AGED`] (time passes).
    Age,
}

#[derive(Debug, Clone)]
struct Step {
    op: Op,
    manager: String,
    kind: String,
    subresource: String,
    force: bool,
    /// An apply body as sent (YAML or JSON text).
    body: Option<String>,
    /// The applied configuration, or the object an update stores.
    object: Option<Value>,
    /// An update that is a JSON merge patch of the stored object.
    merge_patch: Option<Value>,
    /// An update that is a JSON patch of the stored object.
    json_patch: Option<Value>,
    /// An update that writes the stored object back with every
    /// managedFields entry's manager renamed to this.
    rename_managers: Option<String>,
    /// An update that writes the stored object back with the subresource
    /// of every managedFields entry cleared.
    drop_subresources: bool,
    /// Run the step this many times, `{i}` in manager and patch replaced by
    /// the round (from 0).
    repeat: Option<usize>,
    /// The step fails with this error (and the stored object stays).
    error: Option<ExpectError>,
    /// The step leaves the stored object, managedFields and times included,
    /// exactly as it was.
    unchanged: bool,
    /// The state after this step.
    expect: Option<Expect>,
}

#[derive(Debug, Clone, Default)]
struct Expect {
    /// The whole object, without managedFields.
    object: Option<Value>,
    /// JSON pointer → value ([`ABSENT`], [`EMPTY`] for absence).
    fields: Vec<(String, Value)>,
    /// JSON pointer → the value a string field holds as JSON text.
    json_fields: Vec<(String, Value)>,
    /// The managedFields entries, in order (`[]` for none).
    managed_fields: Option<Vec<ExpectEntry>>,
    /// How many managedFields entries there are.
    managed_count: Option<usize>,
    /// The managers of the first entries, in order.
    managers_prefix: Option<Vec<String>>,
}

#[derive(Debug, Clone)]
struct ExpectEntry {
    manager: String,
    operation: String,
    api_version: String,
    subresource: String,
    fields_v1: Value,
    /// `present`, `absent`, `aged` ([`AGED`]), `fresh` (present, not
    /// aged), or an exact time; unchecked when not given.
    time: Option<String>,
}

#[derive(Debug, Clone)]
struct ExpectError {
    code: u16,
    /// The Status reason (`""` for kube's `StatusReasonUnknown`).
    reason: String,
    message: Option<String>,
    /// kube picks one of these (a Go map's iteration order decides).
    message_one_of: Option<Vec<String>>,
    causes: Option<Vec<ExpectCause>>,
    /// The causes in any order (kube lists managers in map order).
    causes_unordered: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct ExpectCause {
    reason: String,
    message: String,
    field: String,
}

/// A YAML mapping of the table, read key by key: every key must be known.
struct Fields<'a> {
    what: String,
    map: &'a serde_json::Map<String, Value>,
    known: &'static [&'static str],
}

impl<'a> Fields<'a> {
    fn new(what: String, v: &'a Value, known: &'static [&'static str]) -> Fields<'a> {
        let map = v
            .as_object()
            .unwrap_or_else(|| panic!("{what}: expected a mapping, got {v}"));
        for k in map.keys() {
            assert!(known.contains(&k.as_str()), "{what}: unknown key {k:?}");
        }
        Fields { what, map, known }
    }

    fn get(&self, k: &str) -> Option<&'a Value> {
        debug_assert!(self.known.contains(&k));
        self.map.get(k)
    }

    fn string(&self, k: &str) -> Option<String> {
        self.get(k).map(|v| match v {
            Value::String(s) => s.clone(),
            other => panic!("{}: {k} should be a string, got {other}", self.what),
        })
    }

    fn flag(&self, k: &str) -> bool {
        self.get(k)
            .map(|v| {
                v.as_bool()
                    .unwrap_or_else(|| panic!("{}: {k} is a boolean", self.what))
            })
            .unwrap_or(false)
    }

    fn number(&self, k: &str) -> Option<u64> {
        self.get(k).map(|v| {
            v.as_u64()
                .unwrap_or_else(|| panic!("{}: {k} is a number", self.what))
        })
    }

    fn list(&self, k: &str) -> Option<&'a Vec<Value>> {
        self.get(k).map(|v| {
            v.as_array()
                .unwrap_or_else(|| panic!("{}: {k} is a list", self.what))
        })
    }

    fn pairs(&self, k: &str) -> Vec<(String, Value)> {
        match self.get(k) {
            None => Vec::new(),
            Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            Some(other) => panic!("{}: {k} is a mapping, got {other}", self.what),
        }
    }
}

fn read_case(v: &Value) -> Case {
    let f = Fields::new(
        format!("case {}", v.get("name").unwrap_or(&Value::Null)),
        v,
        &["name", "source", "initial", "steps", "expect"],
    );
    let name = f.string("name").expect("a case has a name");
    Case {
        source: f.string("source").unwrap_or_default(),
        initial: f.get("initial").cloned(),
        steps: f
            .list("steps")
            .unwrap_or_else(|| panic!("{name}: steps"))
            .iter()
            .enumerate()
            .map(|(i, s)| read_step(&format!("{name} step {}", i + 1), s))
            .collect(),
        expect: f
            .get("expect")
            .map(|e| read_expect(&format!("{name} expect"), e)),
        name,
    }
}

fn read_step(what: &str, v: &Value) -> Step {
    let f = Fields::new(
        what.to_string(),
        v,
        &[
            "op",
            "manager",
            "kind",
            "subresource",
            "force",
            "body",
            "object",
            "merge_patch",
            "json_patch",
            "rename_managers",
            "drop_subresources",
            "repeat",
            "error",
            "unchanged",
            "expect",
        ],
    );
    Step {
        op: match f.string("op").as_deref() {
            Some("apply") => Op::Apply,
            Some("update") => Op::Update,
            Some("age") => Op::Age,
            other => panic!("{what}: op {other:?}"),
        },
        manager: f.string("manager").unwrap_or_default(),
        kind: f.string("kind").unwrap_or_else(|| "ConfigMap".into()),
        subresource: f.string("subresource").unwrap_or_default(),
        force: f.flag("force"),
        body: f.string("body"),
        object: f.get("object").cloned(),
        merge_patch: f.get("merge_patch").cloned(),
        json_patch: f.get("json_patch").cloned(),
        rename_managers: f.string("rename_managers"),
        drop_subresources: f.flag("drop_subresources"),
        repeat: f.number("repeat").map(|n| n as usize),
        error: f
            .get("error")
            .map(|e| read_error(&format!("{what} error"), e)),
        unchanged: f.flag("unchanged"),
        expect: f
            .get("expect")
            .map(|e| read_expect(&format!("{what} expect"), e)),
    }
}

fn read_expect(what: &str, v: &Value) -> Expect {
    let f = Fields::new(
        what.to_string(),
        v,
        &[
            "object",
            "fields",
            "json_fields",
            "managed_fields",
            "managed_count",
            "managers_prefix",
        ],
    );
    Expect {
        object: f.get("object").cloned(),
        fields: f.pairs("fields"),
        json_fields: f.pairs("json_fields"),
        managed_fields: f.list("managed_fields").map(|l| {
            l.iter()
                .map(|e| {
                    let g = Fields::new(
                        format!("{what} entry"),
                        e,
                        &[
                            "manager",
                            "operation",
                            "apiVersion",
                            "subresource",
                            "fieldsV1",
                            "time",
                        ],
                    );
                    ExpectEntry {
                        manager: g.string("manager").unwrap_or_default(),
                        operation: g.string("operation").expect("operation"),
                        api_version: g.string("apiVersion").expect("apiVersion"),
                        subresource: g.string("subresource").unwrap_or_default(),
                        fields_v1: g.get("fieldsV1").cloned().expect("fieldsV1"),
                        time: g.string("time"),
                    }
                })
                .collect()
        }),
        managed_count: f.number("managed_count").map(|n| n as usize),
        managers_prefix: f.list("managers_prefix").map(|l| {
            l.iter()
                .map(|m| m.as_str().expect("manager names").to_string())
                .collect()
        }),
    }
}

fn read_error(what: &str, v: &Value) -> ExpectError {
    let f = Fields::new(
        what.to_string(),
        v,
        &[
            "code",
            "reason",
            "message",
            "message_one_of",
            "causes",
            "causes_unordered",
        ],
    );
    ExpectError {
        code: f.number("code").expect("code") as u16,
        reason: f.string("reason").unwrap_or_default(),
        message: f.string("message"),
        message_one_of: f.list("message_one_of").map(|l| {
            l.iter()
                .map(|m| m.as_str().expect("messages").to_string())
                .collect()
        }),
        causes: f.list("causes").map(|l| {
            l.iter()
                .map(|c| {
                    let g =
                        Fields::new(format!("{what} cause"), c, &["reason", "message", "field"]);
                    ExpectCause {
                        reason: g.string("reason").unwrap_or_default(),
                        message: g.string("message").unwrap_or_default(),
                        field: g.string("field").unwrap_or_default(),
                    }
                })
                .collect()
        }),
        causes_unordered: f.flag("causes_unordered"),
    }
}

fn table() -> &'static [Case] {
    static TABLE: OnceLock<Vec<Case>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let doc: Value =
            serde_yaml::from_str(include_str!("data/apply.yaml")).expect("data/apply.yaml parses");
        // `defs` holds YAML anchors the cases refer to.
        let f = Fields::new("data/apply.yaml".into(), &doc, &["defs", "cases"]);
        f.list("cases")
            .expect("a cases list")
            .iter()
            .map(read_case)
            .collect()
    })
}

/// The endpoint of a kind: its resource and the version written.
fn endpoint(kind: &str) -> (GroupResource, &'static str) {
    match kind {
        "ConfigMap" => (GroupResource::new("", "configmaps"), "v1"),
        "Deployment" => (GroupResource::new("apps", "deployments"), "apps/v1"),
        "Service" => (GroupResource::new("", "services"), "v1"),
        "Pod" => (GroupResource::new("", "pods"), "v1"),
        other => panic!("no endpoint for kind {other}"),
    }
}

fn owner(step: &Step, api_version: &str) -> FieldOwner {
    FieldOwner {
        manager: step.manager.clone(),
        api_version: api_version.to_string(),
        subresource: step.subresource.clone(),
    }
}

/// A step with `{i}` replaced by `i` in its manager and patches.
fn round(step: &Step, i: usize) -> Step {
    let sub = |v: &Option<Value>| {
        v.as_ref().map(|v| {
            let text = serde_json::to_string(v)
                .unwrap()
                .replace("{i}", &i.to_string());
            serde_json::from_str(&text).unwrap()
        })
    };
    Step {
        manager: step.manager.replace("{i}", &i.to_string()),
        merge_patch: sub(&step.merge_patch),
        json_patch: sub(&step.json_patch),
        object: sub(&step.object),
        ..step.clone()
    }
}

/// Run one step against `current`: the stored object after it, or the error.
async fn run_step(
    merge: &LocalMerge,
    current: &Value,
    step: &Step,
) -> Result<Value, keelson_api::ApiError> {
    let (gr, api_version) = endpoint(&step.kind);
    match step.op {
        Op::Age => {
            let mut next = current.clone();
            if let Some(list) = next
                .pointer_mut("/metadata/managedFields")
                .and_then(Value::as_array_mut)
            {
                for e in list {
                    if e.get("time").is_some() {
                        e["time"] = Value::from(AGED);
                    }
                }
            }
            Ok(next)
        }
        Op::Apply => {
            let patch = match (&step.body, &step.object) {
                (Some(text), None) => text.clone().into_bytes(),
                (None, Some(obj)) => serde_json::to_vec(obj).unwrap(),
                _ => panic!("an apply step takes one of body or object"),
            };
            merge
                .patch(PatchRequest {
                    patch_type: PatchType::Apply,
                    gr,
                    kind: step.kind.clone(),
                    owner: owner(step, api_version),
                    force: step.force,
                    original: current.clone(),
                    patch,
                })
                .await
        }
        Op::Update => {
            let new = if let Some(obj) = &step.object {
                obj.clone()
            } else if let Some(p) = step
                .merge_patch
                .as_ref()
                .map(|p| (PatchType::Merge, p))
                .or(step.json_patch.as_ref().map(|p| (PatchType::Json, p)))
            {
                merge
                    .patch(PatchRequest {
                        patch_type: p.0,
                        gr: gr.clone(),
                        kind: step.kind.clone(),
                        owner: owner(step, api_version),
                        force: false,
                        original: current.clone(),
                        patch: serde_json::to_vec(p.1).unwrap(),
                    })
                    .await?
            } else {
                let mut new = current.clone();
                if let Some(list) = new
                    .pointer_mut("/metadata/managedFields")
                    .and_then(Value::as_array_mut)
                {
                    for e in list {
                        let e = e.as_object_mut().unwrap();
                        if let Some(name) = &step.rename_managers {
                            e.insert("manager".into(), Value::from(name.clone()));
                        }
                        if step.drop_subresources {
                            e.remove("subresource");
                        }
                    }
                }
                new
            };
            merge
                .update_managed_fields(ManagedFieldsRequest {
                    gr,
                    kind: step.kind.clone(),
                    owner: owner(step, api_version),
                    old: current.clone(),
                    new,
                })
                .await
        }
    }
}

/// What storage adds: a uid when the object is created, and the stored
/// uid kept on every later write (a replace need not send it).
fn store(previous: &Value, mut next: Value) -> Value {
    let uid = previous
        .pointer("/metadata/uid")
        .cloned()
        .unwrap_or_else(|| Value::from(UID));
    if let Some(meta) = next.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.entry("uid").or_insert(uid);
    }
    next
}

/// The object as a client compares it: without managedFields and without
/// the uid storage gave it.
fn visible(obj: &Value) -> Value {
    let mut out = obj.clone();
    if let Some(meta) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
        if meta.get("uid").and_then(Value::as_str) == Some(UID) {
            meta.remove("uid");
        }
    }
    out
}

fn is_empty_value(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::Object(m)) => m.is_empty(),
        Some(_) => false,
    }
}

fn check_state(ctx: &str, obj: &Value, expect: &Expect) {
    let shown = serde_json::to_string_pretty(obj).unwrap();
    if let Some(want) = &expect.object {
        assert_eq!(
            &visible(obj),
            want,
            "{ctx}: object\n--- got (with managedFields):\n{shown}"
        );
    }
    for (pointer, want) in &expect.fields {
        let got = obj.pointer(pointer);
        match want.as_str() {
            Some(ABSENT) => assert!(got.is_none(), "{ctx}: {pointer} should be absent\n{shown}"),
            Some(EMPTY) => assert!(
                is_empty_value(got),
                "{ctx}: {pointer} should be absent or empty\n{shown}"
            ),
            _ => assert_eq!(got, Some(want), "{ctx}: {pointer}\n{shown}"),
        }
    }
    for (pointer, want) in &expect.json_fields {
        let text = obj
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{ctx}: {pointer} is not a string\n{shown}"));
        let got: Value = serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("{ctx}: {pointer} is not JSON ({e}): {text:?}"));
        assert_eq!(&got, want, "{ctx}: JSON in {pointer}");
    }
    let entries: Vec<Value> = match obj.pointer("/metadata/managedFields") {
        None => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(other) => panic!("{ctx}: managedFields is not a list: {other}"),
    };
    if let Some(n) = expect.managed_count {
        assert_eq!(entries.len(), n, "{ctx}: managedFields count\n{shown}");
    }
    if let Some(prefix) = &expect.managers_prefix {
        let got: Vec<&str> = entries
            .iter()
            .map(|e| e["manager"].as_str().unwrap_or(""))
            .take(prefix.len())
            .collect();
        assert_eq!(got, *prefix, "{ctx}: first managers\n{shown}");
    }
    if let Some(want) = &expect.managed_fields {
        if want.is_empty() {
            assert!(
                obj.pointer("/metadata/managedFields").is_none(),
                "{ctx}: managedFields should be absent\n{shown}"
            );
        }
        let text = |e: &Value, k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let got: Vec<_> = entries
            .iter()
            .map(|e| {
                (
                    text(e, "manager"),
                    text(e, "operation"),
                    text(e, "apiVersion"),
                    text(e, "subresource"),
                    text(e, "fieldsType"),
                    e.get("fieldsV1").cloned().unwrap_or(Value::Null),
                )
            })
            .collect();
        let wanted: Vec<_> = want
            .iter()
            .map(|w| {
                (
                    w.manager.clone(),
                    w.operation.clone(),
                    w.api_version.clone(),
                    w.subresource.clone(),
                    "FieldsV1".to_string(),
                    w.fields_v1.clone(),
                )
            })
            .collect();
        assert_eq!(got, wanted, "{ctx}: managedFields\n{shown}");
        for (e, w) in entries.iter().zip(want) {
            let time = e.get("time").and_then(Value::as_str);
            let ok = match w.time.as_deref() {
                None => true,
                Some("present") => time.is_some(),
                Some("absent") => e.get("time").is_none(),
                Some("aged") => time == Some(AGED),
                Some("fresh") => time.is_some_and(|t| t != AGED),
                Some(exact) => time == Some(exact),
            };
            assert!(
                ok,
                "{ctx}: time of {} should be {:?}\n{shown}",
                w.manager, w.time
            );
        }
    }
}

fn check_error(ctx: &str, err: &keelson_api::ApiError, want: &ExpectError) {
    let status = err.to_status_json();
    assert_eq!(
        (err.code, err.reason.as_str()),
        (want.code, want.reason.as_str()),
        "{ctx}: code and reason\n{status:#}"
    );
    if let Some(m) = &want.message {
        assert_eq!(&err.message, m, "{ctx}: message");
    }
    if let Some(options) = &want.message_one_of {
        assert!(
            options.contains(&err.message),
            "{ctx}: message {:?} is none of {options:#?}",
            err.message
        );
    }
    if let Some(causes) = &want.causes {
        let mut got: Vec<ExpectCause> = err
            .details
            .as_ref()
            .map(|d| {
                d.causes
                    .iter()
                    .map(|c| ExpectCause {
                        reason: c.reason.clone(),
                        message: c.message.clone(),
                        field: c.field.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut wanted = causes.clone();
        if want.causes_unordered {
            got.sort();
            wanted.sort();
        }
        assert_eq!(got, wanted, "{ctx}: causes\n{status:#}");
    }
}

async fn run(name: &str) {
    let case = table()
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no case {name} in data/apply.yaml"));
    assert!(!case.source.is_empty(), "{name}: source is required");
    let merge = LocalMerge::new(keelson_registry::Catalog::builtin());
    let mut current = case.initial.clone().unwrap_or(Value::Null);
    for (n, step) in case.steps.iter().enumerate() {
        let rounds = step.repeat.unwrap_or(1);
        for i in 0..rounds {
            let step = if step.repeat.is_some() {
                round(step, i)
            } else {
                step.clone()
            };
            let ctx = format!(
                "{name}: step {} ({:?} by {:?})",
                n + 1,
                step.op,
                step.manager
            );
            match (run_step(&merge, &current, &step).await, &step.error) {
                (Ok(next), None) => {
                    let next = store(&current, next);
                    if step.unchanged {
                        assert_eq!(
                            next, current,
                            "{ctx}: should leave the object unchanged\n--- got:\n{:#}",
                            next
                        );
                    }
                    current = next;
                }
                (Ok(next), Some(want)) => {
                    panic!("{ctx}: should fail with {want:?}, got:\n{next:#}")
                }
                (Err(err), None) => panic!(
                    "{ctx}: failed: {} {}\n{:#}",
                    err.code,
                    err.message,
                    err.to_status_json()
                ),
                (Err(err), Some(want)) => check_error(&ctx, &err, want),
            }
            if let Some(expect) = &step.expect {
                check_state(&ctx, &current, expect);
            }
        }
    }
    if let Some(expect) = &case.expect {
        check_state(&format!("{name}: final state"), &current, expect);
    }
}

macro_rules! cases {
    ($($(#[$attr:meta])* $name:ident,)*) => {
        $(
            $(#[$attr])*
            #[tokio::test]
            async fn $name() {
                run(stringify!($name)).await;
            }
        )*

        /// Every case of the table, by test function.
        const CASES: &[&str] = &[$(stringify!($name)),*];
    };
}

#[test]
fn every_case_has_a_test() {
    let in_table: BTreeSet<&str> = table().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(in_table.len(), table().len(), "case names must be unique");
    let with_fn: BTreeSet<&str> = CASES.iter().copied().collect();
    assert_eq!(in_table, with_fn, "data/apply.yaml and the test functions");
    assert!(CASES.len() >= 70, "{} cases", CASES.len());
}

cases! {
    apply_creates_configmap,
    apply_again_unchanged,
    apply_again_unchanged_deployment_with_empty_map,
    apply_of_identity_fields_only_records_nothing,
    apply_creates_deployment,
    second_applier_of_same_pod_shares_fields,
    apply_creates_service_with_udp_port,
    create_via_update_records_update_entry,
    noop_update_changes_nothing,
    noop_writes_by_other_managers,
    second_applier_adds_a_container,
    applier_removes_container_a_controller_modified,
    container_port_key_defaults_protocol_to_tcp,
    defaulted_protocol_is_the_same_item_as_explicit_tcp,
    applier_removes_container_port_it_stops_specifying,
    service_port_without_protocol_is_the_tcp_item,
    service_ports_differing_in_protocol_are_two_items,
    env_items_are_owned_per_name,
    list_item_added_by_updater_survives_applier,
    duplicate_keys_in_a_stored_list_are_owned_as_a_unit,
    set_list_applied_twice_grows,
    set_list_applier_and_updater_without_overlap,
    set_list_applier_shares_item_added_by_updater,
    set_list_reordered_by_applier,
    set_list_reorder_by_update_takes_no_ownership,
    set_list_items_dropped_by_applier_are_removed,
    set_list_item_kept_while_another_applier_owns_it,
    atomic_lists_are_owned_whole,
    atomic_list_change_conflicts_with_owner,
    atomic_list_with_same_value_is_shared,
    update_of_atomic_list_takes_it_whole,
    granular_labels_from_two_appliers,
    granular_struct_fields_from_two_appliers,
    atomic_deployment_selector_conflicts_as_a_whole,
    forced_atomic_selector_is_replaced_whole,
    service_selector_and_port_conflict_for_another_manager,
    kubectl_may_replace_service_selector_it_applied,
    pod_node_selector_is_atomic,
    other_manager_may_not_purge_node_selector,
    kubectl_may_purge_node_selector_it_applied,
    exclusively_owned_fields_are_removed,
    fields_shared_with_another_applier_are_kept,
    field_taken_by_controller_update_is_kept,
    dropped_map_key_is_removed,
    dropping_every_label_removes_them,
    map_key_owned_by_another_applier_is_kept,
    appliers_of_the_same_value_share_it,
    co_owner_changing_a_shared_value_conflicts,
    co_owner_gives_up_then_the_other_changes_freely,
    ownership_transferred_between_appliers,
    conflict_with_one_applier,
    conflict_with_update_manager_names_its_version,
    conflicts_on_several_fields_of_one_manager,
    conflicts_with_several_managers_sorted_by_manager,
    conflicts_with_an_applier_and_an_updater,
    conflict_with_a_status_subresource_applier,
    conflict_with_a_status_subresource_updater,
    force_takes_ownership,
    force_takes_only_the_conflicting_fields,
    forced_reapply_after_an_update_retakes_the_field,
    update_takes_fields_from_an_applier,
    update_by_the_same_manager_keeps_one_entry,
    update_that_removes_a_field_releases_it,
    replicas_handover_shared_before_user_drops_them,
    replicas_handover_manager_retires_when_controller_writes,
    replicas_kept_by_user_conflict_once_the_controller_writes,
    update_with_empty_managed_fields_clears_them,
    update_with_one_empty_entry_clears_them,
    merge_patch_with_one_empty_entry_clears_them,
    json_patch_with_one_empty_entry_clears_them,
    updates_after_clearing_are_not_tracked,
    apply_to_an_untracked_object_records_before_first_apply,
    apply_to_an_object_without_managed_fields_records_before_first_apply,
    client_managed_fields_in_an_update_are_kept,
    renamed_apply_managers_are_merged,
    renamed_update_managers_are_merged,
    status_update_ignores_client_managed_fields,
    status_update_cannot_clear_managed_fields,
    managed_fields_in_an_apply_body_are_rejected,
    empty_managed_fields_list_in_an_apply_body_is_rejected,
    null_managed_fields_in_an_apply_body_are_accepted,
    apply_of_another_kind_is_rejected,
    apply_of_another_version_is_rejected,
    apply_without_type_meta_is_rejected,
    unknown_field_is_a_500,
    unknown_fields_in_list_items_are_all_reported,
    a_string_for_a_number_is_a_500,
    scalar_type_errors_in_list_items_are_all_reported,
    a_scalar_for_a_map_or_a_list_is_a_500,
    int_or_string_takes_any_scalar_but_no_map,
    only_the_first_unknown_field_of_a_struct_is_reported,
    duplicate_keys_in_an_apply_body_are_a_500,
    empty_map_in_apply_body_is_owned,
    empty_marker_struct_differs_from_none,
    status_apply_owns_status_only,
    main_resource_apply_never_owns_status,
    deployment_status_apply_ignores_spec_and_labels,
    pod_status_apply_can_own_labels,
    dropping_subresource_merges_apply_entries,
    dropping_subresource_merges_update_entries,
    many_updaters_are_capped_with_ancient_changes,
    cap_merges_the_two_oldest_updates,
    cap_folds_into_an_existing_ancient_changes_entry,
    apply_entries_do_not_count_towards_the_cap,
    kubectl_takes_over_client_side_apply_without_conflict,
    kubectl_takes_over_changed_values_client_side_apply_set,
    kubectl_conflicts_on_fields_changed_since_client_side_apply,
    kubectl_allowance_covers_only_unchanged_last_applied_fields,
    other_managers_get_no_last_applied_allowance,
    kubectl_prefixed_managers_get_no_last_applied_allowance,
    last_applied_of_another_version_gives_no_allowance,
    invalid_last_applied_gives_no_allowance_until_forced,
    last_applied_is_not_synced_for_other_managers,
    kubectl_sync_writes_the_applied_configuration_as_go_encodes_it,
    kubectl_sync_keeps_an_emptied_annotations_map,
    entries_of_a_version_that_does_not_exist_are_dropped,
}
