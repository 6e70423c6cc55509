//! The `k8s-pb` crate's sources (prost code generated from upstream's
//! `generated.proto` files) read back into message descriptions: every
//! `pub struct` with its `#[prost(...)]` fields — tag, scalar or message
//! type, optional / repeated / map.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::ProtoError;

/// A field's value type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PbType {
    /// `string`, `bool`, `int32`, `int64`, `double` or `bytes`.
    Scalar(&'static str),
    /// A message, as its module path and Rust name (`api::core::v1::Pod`).
    Message(String),
}

/// How often a field occurs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    Optional,
    Repeated,
    /// `map<string, V>` (every Kubernetes map has string keys).
    Map,
}

/// One `#[prost]` field.
#[derive(Debug, Clone)]
pub struct PbField {
    /// The Rust field name (snake case, without `r#`).
    pub rust_name: String,
    pub number: u32,
    pub label: Label,
    /// For maps: the value type.
    pub ty: PbType,
}

/// One message.
#[derive(Debug, Clone)]
pub struct PbMessage {
    /// Module path, `api::core::v1`.
    pub module: String,
    /// The Rust (prost-cased) name, `AwsElasticBlockStoreVolumeSource`.
    pub rust_name: String,
    /// Fields in declaration order (upstream's Go struct order).
    pub fields: Vec<PbField>,
}

/// Every message of the crate, keyed by `module::RustName`.
pub fn read_crate(src: &Path) -> Result<BTreeMap<String, PbMessage>, ProtoError> {
    let mut files = Vec::new();
    collect(src, &mut files)?;
    files.sort();
    let mut out = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap_or(&f);
        let mut module: Vec<String> = rel
            .parent()
            .map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        if f.file_name().is_some_and(|n| n != "mod.rs") {
            continue;
        }
        if module.is_empty() {
            continue;
        }
        let text = std::fs::read_to_string(&f).map_err(|source| ProtoError::Io {
            path: f.clone(),
            source,
        })?;
        for m in parse_module(&text, &module.join("::"))
            .map_err(|e| ProtoError::K8sPb(format!("{}: {e}", f.display())))?
        {
            out.insert(format!("{}::{}", m.module, m.rust_name), m);
        }
        module.clear();
    }
    Ok(out)
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ProtoError> {
    let rd = std::fs::read_dir(dir).map_err(|source| ProtoError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for e in rd {
        let e = e.map_err(|source| ProtoError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let p = e.path();
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

/// The messages of one generated module file.
pub fn parse_module(text: &str, module: &str) -> Result<Vec<PbMessage>, String> {
    let mut out = Vec::new();
    let mut current: Option<PbMessage> = None;
    let mut attr: Option<String> = None;
    let mut decl = String::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("pub struct ") {
            let empty = rest.trim_end().ends_with("{}");
            let name = rest
                .trim_end()
                .trim_end_matches("{}")
                .trim_end_matches('{')
                .trim();
            let m = PbMessage {
                module: module.to_string(),
                rust_name: name.to_string(),
                fields: Vec::new(),
            };
            if empty {
                out.push(m);
            } else {
                current = Some(m);
            }
            continue;
        }
        if line == "}" {
            if let Some(m) = current.take() {
                out.push(m);
            }
            continue;
        }
        let Some(msg) = current.as_mut() else {
            continue;
        };
        let t = line.trim();
        if t.starts_with("///") || t.starts_with("//") {
            continue;
        }
        if let Some(a) = t.strip_prefix("#[prost(") {
            attr = Some(a.trim_end_matches(")]").to_string());
            continue;
        }
        if attr.is_none() {
            continue;
        }
        decl.push_str(t);
        let depth: i32 = decl
            .chars()
            .map(|c| match c {
                '<' => 1,
                '>' => -1,
                _ => 0,
            })
            .sum();
        if !(decl.ends_with(',') && depth == 0) {
            continue;
        }
        let a = attr.take().unwrap_or_default();
        let d = std::mem::take(&mut decl);
        msg.fields.push(parse_field(&a, &d, module)?);
    }
    Ok(out)
}

fn parse_field(attr: &str, decl: &str, module: &str) -> Result<PbField, String> {
    let decl = decl.trim_end_matches(',');
    let (name, ty) = decl
        .strip_prefix("pub ")
        .and_then(|d| d.split_once(':'))
        .ok_or_else(|| format!("cannot read field declaration {decl:?}"))?;
    let rust_name = name.trim().trim_start_matches("r#").to_string();
    let ty: String = ty.chars().filter(|c| !c.is_whitespace()).collect();
    let number = attr
        .split("tag = \"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("no tag in #[prost({attr})]"))?;
    let label = if attr.starts_with("btree_map") || attr.starts_with("map") {
        Label::Map
    } else if attr.contains("repeated") {
        Label::Repeated
    } else {
        Label::Optional
    };
    let kind = if label == Label::Map {
        // `btree_map = "string, V"`
        attr.split('"')
            .nth(1)
            .and_then(|kv| kv.split_once(','))
            .map(|(_, v)| v.trim().to_string())
            .ok_or_else(|| format!("cannot read map types of #[prost({attr})]"))?
    } else {
        attr.split([',', ' ']).next().unwrap_or("").to_string()
    };
    let ty = match kind.as_str() {
        "string" => PbType::Scalar("string"),
        "bool" => PbType::Scalar("bool"),
        "int32" => PbType::Scalar("int32"),
        "int64" => PbType::Scalar("int64"),
        "double" => PbType::Scalar("double"),
        "bytes" => PbType::Scalar("bytes"),
        "message" => PbType::Message(resolve(&message_path(&ty), module)?),
        other => {
            return Err(format!(
                "unsupported prost type {other:?} in #[prost({attr})]"
            ))
        }
    };
    Ok(PbField {
        rust_name,
        number,
        label,
        ty,
    })
}

/// The message path inside a field's Rust type (wrappers removed).
fn message_path(ty: &str) -> String {
    let mut t = ty;
    if let Some(rest) = t.strip_prefix("::prost::alloc::collections::BTreeMap<") {
        t = rest
            .split_once(',')
            .map(|(_, v)| v)
            .unwrap_or(rest)
            .trim_end_matches('>');
    }
    for wrapper in [
        "::core::option::Option<",
        "::prost::alloc::vec::Vec<",
        "::prost::alloc::boxed::Box<",
    ] {
        while let Some(rest) = t.strip_prefix(wrapper) {
            t = rest.strip_suffix('>').unwrap_or(rest).trim_end_matches(',');
        }
    }
    t.trim_end_matches(['>', ',']).to_string()
}

/// `super::super::x::Y` seen from `module` → `x::Y` from the crate root.
fn resolve(path: &str, module: &str) -> Result<String, String> {
    let mut base: Vec<&str> = module.split("::").collect();
    let mut segs = path.split("::").peekable();
    if path.starts_with("crate::") {
        segs.next();
        base.clear();
    }
    while segs.peek() == Some(&"super") {
        segs.next();
        base.pop()
            .ok_or_else(|| format!("{path} climbs above the crate"))?;
    }
    base.extend(segs);
    Ok(base.join("::"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_prost_structs() {
        let src = r#"
/// Doc.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Pod {
    /// +optional
    #[prost(message, optional, tag = "1")]
    pub metadata: ::core::option::Option<super::super::super::apimachinery::pkg::apis::meta::v1::ObjectMeta>,
    #[prost(message, repeated, tag = "2")]
    pub containers: ::prost::alloc::vec::Vec<Container>,
    #[prost(btree_map = "string, message", tag = "3")]
    pub limits: ::prost::alloc::collections::BTreeMap<
        ::prost::alloc::string::String,
        super::super::super::apimachinery::pkg::api::resource::Quantity,
    >,
    #[prost(string, optional, tag = "4")]
    pub r#type: ::core::option::Option<::prost::alloc::string::String>,
    #[prost(int32, repeated, packed = "false", tag = "5")]
    pub ports: ::prost::alloc::vec::Vec<i32>,
    #[prost(bytes = "vec", optional, tag = "6")]
    pub raw: ::core::option::Option<::prost::alloc::vec::Vec<u8>>,
}
"#;
        let m = parse_module(src, "api::core::v1").unwrap();
        assert_eq!(m.len(), 1);
        let f = &m[0].fields;
        assert_eq!(
            f[0].ty,
            PbType::Message("apimachinery::pkg::apis::meta::v1::ObjectMeta".into())
        );
        assert_eq!(f[1].ty, PbType::Message("api::core::v1::Container".into()));
        assert_eq!(f[1].label, Label::Repeated);
        assert_eq!(
            f[2].ty,
            PbType::Message("apimachinery::pkg::api::resource::Quantity".into())
        );
        assert_eq!(f[2].label, Label::Map);
        assert_eq!((f[3].rust_name.as_str(), f[3].number), ("type", 4));
        assert_eq!(
            (f[4].ty.clone(), f[4].label),
            (PbType::Scalar("int32"), Label::Repeated)
        );
        assert_eq!(f[5].ty, PbType::Scalar("bytes"));
    }
}
