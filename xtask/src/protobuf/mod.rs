//! `gen-protobuf`: the Kubernetes Protobuf message schemas of every
//! built-in kind → `crates/codec/data/protobuf.json`, the data
//! `keelson-codec`'s transcoder reads (JSON ⇄ Kubernetes Protobuf).
//!
//! Inputs:
//! - the `k8s-pb` crate's sources (prost code generated from upstream's
//!   `generated.proto` files of Kubernetes v1.34): messages, field numbers,
//!   scalar / message / map types, repeated;
//! - the catalog (`crates/registry/data/catalog.json`): the served kinds
//!   (`x-kubernetes-group-version-kind`), each field's JSON name (matched
//!   to the proto field name), and required fields;
//! - a Go binary built from `k8s.io/api` (the machine's kubectl): which Go
//!   fields are pointers and which values (gogo writes a value even when it
//!   is zero), which carry `omitempty`, and which are embedded inline
//!   (`json:",inline"`, a nested message on the wire, flat in JSON);
//! - `xtask/protobuf-go.yaml`: the same facts for the packages kubectl does
//!   not link.
//!
//! Output (minified, deterministic): `{"kubernetesVersion", "kinds":
//! [[apiVersion, kind, message]], "messages": {name: [[number, jsonName,
//! type, flags]]}}` where `type` is `string|bool|int32|int64|double|bytes`
//! or a message name (a map's value type for maps) and `flags` is a bit
//! set: 1 repeated, 2 map, 4 written when zero or absent (a Go value),
//! 8 omitted from JSON when zero (`omitempty`), 16 inline.

mod gotypes;
mod pbsrc;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

pub use gotypes::{read_binary, GoField, GoKind, GoTypes};
pub use pbsrc::{parse_module, read_crate, Label, PbField, PbMessage, PbType};

/// Field flag: repeated.
pub const REPEATED: u8 = 1;
/// Field flag: `map<string, V>`.
pub const MAP: u8 = 2;
/// Field flag: a Go value, written even when zero or absent.
pub const VALUE: u8 = 4;
/// Field flag: `omitempty` (a zero value is left out of JSON).
pub const OMITEMPTY: u8 = 8;
/// Field flag: embedded inline (nested on the wire, flat in JSON).
pub const INLINE: u8 = 16;

/// Failures of `gen-protobuf`.
#[derive(Debug, thiserror::Error)]
pub enum ProtoError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("k8s-pb sources: {0}")]
    K8sPb(String),
    #[error("go binary: {0}")]
    Go(String),
    #[error("catalog: {0}")]
    Catalog(String),
    #[error("overrides: {0}")]
    Overrides(#[from] serde_yaml::Error),
    #[error("{0}")]
    Schema(String),
    #[error("serialise: {0}")]
    Json(#[from] serde_json::Error),
}

/// The inputs of one generation.
pub struct Inputs<'a> {
    pub k8s_pb_src: &'a Path,
    pub catalog: &'a Path,
    pub go_binary: &'a Path,
    pub overrides: &'a Path,
}

/// Kinds served that the catalog does not list (the meta.k8s.io views and
/// options).
const EXTRA_KINDS: [(&str, &str, &str); 5] = [
    (
        "meta.k8s.io/v1",
        "DeleteOptions",
        "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    ),
    (
        "meta.k8s.io/v1",
        "PartialObjectMetadata",
        "io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata",
    ),
    (
        "meta.k8s.io/v1",
        "PartialObjectMetadataList",
        "io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList",
    ),
    (
        "meta.k8s.io/v1beta1",
        "PartialObjectMetadata",
        "io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata",
    ),
    (
        "meta.k8s.io/v1beta1",
        "PartialObjectMetadataList",
        "io.k8s.apimachinery.pkg.apis.meta.v1beta1.PartialObjectMetadataList",
    ),
];

/// Go packages whose 1.34 version kubectl 1.33 does not have yet, and the
/// package with the same types that it has.
const GO_FALLBACK: [(&str, &str); 2] = [
    ("k8s.io/api/resource/v1", "k8s.io/api/resource/v1beta2"),
    ("k8s.io/api/storage/v1", "k8s.io/api/storage/v1beta1"),
];

/// `api::core::v1` → `io.k8s.api.core.v1`.
fn package_of_module(module: &str) -> String {
    let mut segs: Vec<String> = module.split("::").map(str::to_string).collect();
    if let Some(first) = segs.first_mut() {
        *first = first.replace('_', "-");
    }
    format!("io.k8s.{}", segs.join("."))
}

/// `io.k8s.api.core.v1` → `k8s.io/api/core/v1`.
fn go_package(package: &str) -> String {
    format!(
        "k8s.io/{}",
        package.trim_start_matches("io.k8s.").replace('.', "/")
    )
}

fn normalize(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in snake.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.push(c.to_ascii_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Generate the data file's JSON value.
pub fn generate(inputs: &Inputs<'_>) -> Result<Value, ProtoError> {
    let read = |p: &Path| {
        std::fs::read(p).map_err(|source| ProtoError::Io {
            path: p.to_path_buf(),
            source,
        })
    };
    let messages = read_crate(inputs.k8s_pb_src)?;
    let catalog: Value = serde_json::from_slice(&read(inputs.catalog)?)?;
    let go = read_binary(&read(inputs.go_binary)?).map_err(ProtoError::Go)?;
    let overrides: BTreeMap<String, Vec<String>> =
        serde_yaml::from_slice(&read(inputs.overrides)?)?;
    generate_from(&messages, &catalog, &go, &overrides)
}

/// Generate from already-read inputs.
pub fn generate_from(
    messages: &BTreeMap<String, PbMessage>,
    catalog: &Value,
    go: &GoTypes,
    overrides: &BTreeMap<String, Vec<String>>,
) -> Result<Value, ProtoError> {
    let defs = catalog
        .get("definitions")
        .and_then(Value::as_object)
        .ok_or_else(|| ProtoError::Catalog("no definitions".into()))?;
    // Exact (upstream-cased) names per package, from the catalog and Go.
    let mut exact: BTreeMap<(String, String), String> = BTreeMap::new();
    for name in defs.keys() {
        if let Some((pkg, short)) = name.rsplit_once('.') {
            exact.insert(
                (pkg.to_string(), short.to_ascii_lowercase()),
                short.to_string(),
            );
        }
    }
    for name in go.keys() {
        if let Some((pkg, short)) = name.rsplit_once('.') {
            let package = format!(
                "io.k8s.{}",
                pkg.trim_start_matches("k8s.io/").replace('/', ".")
            );
            exact
                .entry((package, short.to_ascii_lowercase()))
                .or_insert_with(|| short.to_string());
        }
    }
    // Rust path → definition-style name.
    let mut names: BTreeMap<&str, String> = BTreeMap::new();
    let mut by_name: BTreeMap<String, &PbMessage> = BTreeMap::new();
    for (path, m) in messages {
        let package = package_of_module(&m.module);
        let short = exact
            .get(&(package.clone(), m.rust_name.to_ascii_lowercase()))
            .cloned()
            .unwrap_or_else(|| m.rust_name.clone());
        let name = format!("{package}.{short}");
        names.insert(path.as_str(), name.clone());
        by_name.insert(name, m);
    }

    // Kinds: every catalog definition with a group-version-kind that is a
    // message, and the meta.k8s.io views.
    let mut kinds: BTreeSet<(String, String, String)> = BTreeSet::new();
    for (name, def) in defs {
        if !by_name.contains_key(name) {
            continue;
        }
        for gvk in def
            .get("gvk")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let s = |k: &str| gvk.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let (group, version, kind) = (s("group"), s("version"), s("kind"));
            let api_version = if group.is_empty() {
                version
            } else {
                format!("{group}/{version}")
            };
            kinds.insert((api_version, kind, name.clone()));
        }
    }
    for (av, kind, name) in EXTRA_KINDS {
        if !by_name.contains_key(name) {
            return Err(ProtoError::Schema(format!("k8s-pb has no message {name}")));
        }
        kinds.insert((av.into(), kind.into(), name.into()));
    }
    // One message per (apiVersion, kind).
    let mut seen: BTreeMap<(String, String), String> = BTreeMap::new();
    for (av, kind, name) in &kinds {
        if let Some(other) = seen.insert((av.clone(), kind.clone()), name.clone()) {
            return Err(ProtoError::Schema(format!(
                "{av} {kind} is carried by {other} and {name}"
            )));
        }
    }

    // A field's Go facts, JSON name and whether it is inline; `None` for a
    // field newer than the catalog's Kubernetes version (that
    // kube-apiserver skips it as an unknown field).
    let go_struct = |name: &str| -> Option<&Vec<GoField>> {
        let (package, short) = name.rsplit_once('.')?;
        let gopkg = go_package(package);
        go.get(&format!("{gopkg}.{short}")).or_else(|| {
            GO_FALLBACK
                .iter()
                .find(|(from, _)| *from == gopkg)
                .and_then(|(_, to)| go.get(&format!("{to}.{short}")))
        })
    };
    let json_name = |name: &str, f: &PbField| -> Option<(String, bool, Option<GoField>)> {
        let def = defs.get(name);
        let props: BTreeMap<String, String> = def
            .and_then(|d| d.get("properties"))
            .and_then(Value::as_object)
            .map(|p| p.keys().map(|k| (normalize(k), k.clone())).collect())
            .unwrap_or_default();
        let gf = go_struct(name)
            .and_then(|g| g.iter().find(|gf| gf.number == Some(f.number)))
            .cloned();
        let inline = gf.as_ref().is_some_and(|gf| gf.inline);
        let json = if inline {
            camel(&f.rust_name)
        } else if let Some(j) = props.get(&normalize(&f.rust_name)) {
            j.clone()
        } else if let Some(gf) = gf.as_ref().filter(|gf| !gf.json.is_empty()) {
            gf.json.clone()
        } else {
            camel(&f.rust_name)
        };
        if def.is_some_and(|d| d.get("properties").is_some())
            && !inline
            && !props.contains_key(&normalize(&json))
        {
            return None;
        }
        Some((json, inline, gf))
    };

    // The messages reachable from the kinds.
    let mut queue: VecDeque<String> = kinds.iter().map(|(_, _, n)| n.clone()).collect();
    let mut reachable: BTreeSet<String> = BTreeSet::new();
    while let Some(n) = queue.pop_front() {
        if !reachable.insert(n.clone()) {
            continue;
        }
        let m = by_name
            .get(&n)
            .ok_or_else(|| ProtoError::Schema(format!("no message {n}")))?;
        for f in &m.fields {
            if let PbType::Message(p) = &f.ty {
                if json_name(&n, f).is_none() {
                    continue;
                }
                let target = names
                    .get(p.as_str())
                    .ok_or_else(|| ProtoError::Schema(format!("{n}: unknown message {p}")))?;
                queue.push_back(target.clone());
            }
        }
    }

    let mut out_messages = serde_json::Map::new();
    let mut skipped = Vec::new();
    for name in &reachable {
        let m = by_name[name];
        let def = defs.get(name);
        let required: BTreeSet<String> = def
            .and_then(|d| d.get("required"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let go_fields = go_struct(name);
        let values = overrides.get(name);
        let mut fields = Vec::new();
        for f in &m.fields {
            let ty = match &f.ty {
                PbType::Scalar(s) => s.to_string(),
                PbType::Message(p) => names[p.as_str()].clone(),
            };
            let Some((json_name, inline, gf)) = json_name(name, f) else {
                skipped.push(format!("{name}.{}", f.rust_name));
                continue;
            };
            let gf = gf.as_ref();
            let mut flags = match f.label {
                Label::Repeated => REPEATED,
                Label::Map => MAP,
                Label::Optional => 0,
            };
            let is_required = required.contains(&json_name);
            let listed = go_fields.is_none() && values.is_some_and(|v| v.contains(&json_name));
            match (f.label, gf) {
                (Label::Optional, Some(gf)) => {
                    if matches!(gf.kind, GoKind::Struct | GoKind::Value) {
                        flags |= VALUE;
                    }
                    if gf.omitempty || gf.kind == GoKind::Pointer {
                        flags |= OMITEMPTY;
                    }
                }
                (Label::Optional, None) if listed => flags |= VALUE | OMITEMPTY,
                (Label::Optional, None) if is_required => flags |= VALUE,
                (Label::Optional, None) => flags |= OMITEMPTY,
                (_, Some(gf)) => {
                    if gf.omitempty {
                        flags |= OMITEMPTY;
                    }
                }
                (_, None) if is_required => {}
                (_, None) => flags |= OMITEMPTY,
            }
            // `bytes` is a Go slice: written when set, whatever its Go type.
            if f.label == Label::Optional && ty == "bytes" {
                flags &= !VALUE;
            }
            if inline {
                flags |= INLINE | VALUE;
            }
            fields.push(json!([f.number, json_name, ty, flags]));
        }
        out_messages.insert(name.clone(), Value::Array(fields));
    }
    for s in &skipped {
        eprintln!("gen-protobuf: skipped {s}: not in the catalog's Kubernetes version");
    }
    Ok(json!({
        "kubernetesVersion": catalog.get("kubernetesVersion").cloned().unwrap_or(Value::Null),
        "kinds": kinds.iter().map(|(a, k, n)| json!([a, k, n])).collect::<Vec<_>>(),
        "messages": Value::Object(out_messages),
    }))
}

/// The `k8s-pb` source directory of the version `Cargo.lock` pins, in the
/// cargo registry (`$CARGO_HOME/registry/src/*/k8s-pb-<version>/src`).
pub fn locate_k8s_pb(workspace: &Path) -> Result<PathBuf, ProtoError> {
    let lock = workspace.join("Cargo.lock");
    let text = std::fs::read_to_string(&lock).map_err(|source| ProtoError::Io {
        path: lock.clone(),
        source,
    })?;
    let version = text
        .split("[[package]]")
        .find(|p| p.contains("name = \"k8s-pb\""))
        .and_then(|p| p.split("version = \"").nth(1))
        .and_then(|v| v.split('"').next())
        .ok_or_else(|| ProtoError::K8sPb("Cargo.lock pins no k8s-pb".into()))?;
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .ok_or_else(|| ProtoError::K8sPb("neither CARGO_HOME nor HOME is set".into()))?;
    let registry = home.join("registry").join("src");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&registry)
        .map_err(|source| ProtoError::Io {
            path: registry.clone(),
            source,
        })?
        .filter_map(Result::ok)
        .map(|e| e.path().join(format!("k8s-pb-{version}")).join("src"))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter().next().ok_or_else(|| {
        ProtoError::K8sPb(format!(
            "k8s-pb {version} is not in {} (run `cargo fetch`)",
            registry.display()
        ))
    })
}

/// What one generation produced.
#[derive(Debug, Clone, Copy)]
pub struct ProtoStats {
    pub kinds: usize,
    pub messages: usize,
    pub bytes: usize,
}

/// Generate and write the data file.
pub fn gen_protobuf_file(inputs: &Inputs<'_>, out: &Path) -> Result<ProtoStats, ProtoError> {
    let v = generate(inputs)?;
    let mut bytes = serde_json::to_vec(&v)?;
    bytes.push(b'\n');
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).map_err(|source| ProtoError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    std::fs::write(out, &bytes).map_err(|source| ProtoError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    Ok(ProtoStats {
        kinds: v["kinds"].as_array().map_or(0, Vec::len),
        messages: v["messages"].as_object().map_or(0, |m| m.len()),
        bytes: bytes.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed data is what the generator makes from today's inputs
    /// (skipped where the Go binary is not installed).
    #[test]
    fn committed_data_is_regenerated_byte_for_byte() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let go_binary = Path::new("/usr/lib/google-cloud-sdk/bin/kubectl.1.33");
        if !go_binary.exists() {
            eprintln!("skipped: {} is not installed", go_binary.display());
            return;
        }
        let src = locate_k8s_pb(&root).unwrap();
        let inputs = Inputs {
            k8s_pb_src: &src,
            catalog: &root.join("crates/registry/data/catalog.json"),
            go_binary,
            overrides: &root.join("xtask/protobuf-go.yaml"),
        };
        let mut bytes = serde_json::to_vec(&generate(&inputs).unwrap()).unwrap();
        bytes.push(b'\n');
        let committed = std::fs::read(root.join("crates/codec/data/protobuf.json")).unwrap();
        assert!(
            bytes == committed,
            "crates/codec/data/protobuf.json is stale: run `cargo run -p xtask -- gen-protobuf`"
        );
    }

    #[test]
    fn names() {
        assert_eq!(package_of_module("api::core::v1"), "io.k8s.api.core.v1");
        assert_eq!(
            package_of_module("apiextensions_apiserver::pkg::apis::apiextensions::v1"),
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1"
        );
        assert_eq!(
            go_package("io.k8s.apimachinery.pkg.apis.meta.v1"),
            "k8s.io/apimachinery/pkg/apis/meta/v1"
        );
        assert_eq!(normalize("x-kubernetes-list-type"), "xkuberneteslisttype");
        assert_eq!(camel("volume_id"), "volumeId");
    }

    fn go_field(json: &str, number: u32, kind: GoKind, omitempty: bool, inline: bool) -> GoField {
        GoField {
            go_name: String::new(),
            json: json.into(),
            omitempty,
            inline,
            number: Some(number),
            kind,
        }
    }

    #[test]
    fn flags_from_go_and_catalog() {
        let src = r#"
pub struct Probe {
    #[prost(message, optional, tag = "1")]
    pub handler: ::core::option::Option<ProbeHandler>,
    #[prost(int32, optional, tag = "2")]
    pub initial_delay_seconds: ::core::option::Option<i32>,
    #[prost(int64, optional, tag = "3")]
    pub termination_grace_period_seconds: ::core::option::Option<i64>,
}
pub struct ProbeHandler {
    #[prost(string, repeated, tag = "1")]
    pub command: ::prost::alloc::vec::Vec<::prost::alloc::string::String>,
}
pub struct Pod {
    #[prost(message, optional, tag = "1")]
    pub probe: ::core::option::Option<Probe>,
}
"#;
        let messages: BTreeMap<String, PbMessage> = parse_module(src, "api::core::v1")
            .unwrap()
            .into_iter()
            .map(|m| (format!("{}::{}", m.module, m.rust_name), m))
            .collect();
        let catalog = json!({"kubernetesVersion": "v1.34.0", "definitions": {
            "io.k8s.api.core.v1.Probe": {"properties": {"command": {}, "initialDelaySeconds": {}, "terminationGracePeriodSeconds": {}}},
            "io.k8s.api.core.v1.Pod": {"properties": {"probe": {}}, "gvk": [{"group": "", "version": "v1", "kind": "Pod"}]},
        }});
        let mut go = GoTypes::new();
        go.insert(
            "k8s.io/api/core/v1.Probe".into(),
            vec![
                go_field("", 1, GoKind::Struct, false, true),
                go_field("initialDelaySeconds", 2, GoKind::Value, true, false),
                go_field(
                    "terminationGracePeriodSeconds",
                    3,
                    GoKind::Pointer,
                    true,
                    false,
                ),
            ],
        );
        // The extra meta.k8s.io kinds must exist: give them empty messages.
        let mut all = messages;
        for m in [
            ("apimachinery::pkg::apis::meta::v1", "DeleteOptions"),
            ("apimachinery::pkg::apis::meta::v1", "PartialObjectMetadata"),
            (
                "apimachinery::pkg::apis::meta::v1",
                "PartialObjectMetadataList",
            ),
            (
                "apimachinery::pkg::apis::meta::v1beta1",
                "PartialObjectMetadataList",
            ),
        ] {
            all.insert(
                format!("{}::{}", m.0, m.1),
                PbMessage {
                    module: m.0.into(),
                    rust_name: m.1.into(),
                    fields: vec![],
                },
            );
        }
        let v = generate_from(&all, &catalog, &go, &BTreeMap::new()).unwrap();
        assert_eq!(
            v["messages"]["io.k8s.api.core.v1.Probe"],
            json!([
                [
                    1,
                    "handler",
                    "io.k8s.api.core.v1.ProbeHandler",
                    INLINE | VALUE
                ],
                [2, "initialDelaySeconds", "int32", VALUE | OMITEMPTY],
                [3, "terminationGracePeriodSeconds", "int64", OMITEMPTY]
            ])
        );
        assert_eq!(
            v["messages"]["io.k8s.api.core.v1.ProbeHandler"],
            json!([[1, "command", "string", REPEATED | OMITEMPTY]])
        );
        assert!(v["kinds"].as_array().unwrap().contains(&json!([
            "v1",
            "Pod",
            "io.k8s.api.core.v1.Pod"
        ])));
    }
}
