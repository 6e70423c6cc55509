//! `gen-validation`: compiles the declarative validation rule files
//! (`crates/admission/src/validation/declarative/rules/*.rules`, kube's
//! `+k8s:` tag syntax) into the Rust tables the admission runtime walks
//! (`.../declarative/generated.rs`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A rule file that does not parse, or a file that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ValidationGenError {
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("{file}:{line}: {msg}")]
    Parse {
        file: String,
        line: usize,
        msg: String,
    },
}

/// The rules directory and generated file of the workspace.
pub fn default_paths() -> (PathBuf, PathBuf) {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/admission/src/validation/declarative");
    (base.join("rules"), base.join("generated.rs"))
}

/// Generate the table module from every `*.rules` file of `dir` (sorted by
/// name).
pub fn gen_validation(dir: &Path) -> Result<String, ValidationGenError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| ValidationGenError::Io(dir.into(), e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rules"))
        .collect();
    files.sort();
    let mut kinds = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).map_err(|e| ValidationGenError::Io(f.clone(), e))?;
        let name = f
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        parse_file(&name, &text, &mut kinds)?;
    }
    rustfmt(&render(&kinds))
}

/// `src` as `cargo fmt` leaves it (so the checked-in file passes
/// `cargo fmt --check`).
fn rustfmt(src: &str) -> Result<String, ValidationGenError> {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let io = |e| ValidationGenError::Io(PathBuf::from("rustfmt"), e);
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2021", "--emit", "stdout"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(io)?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(src.as_bytes()).map_err(io)?;
    }
    let out = child.wait_with_output().map_err(io)?;
    if !out.status.success() {
        return Err(io(std::io::Error::other("rustfmt failed")));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

struct KindOut {
    group: String,
    version: String,
    kind: String,
    subresources: Vec<String>,
    rules: Vec<(String, Vec<String>, Vec<String>)>,
}

fn parse_file(file: &str, text: &str, kinds: &mut Vec<KindOut>) -> Result<(), ValidationGenError> {
    let mut scope = String::new();
    for (n, raw) in text.lines().enumerate() {
        let err = |msg: String| ValidationGenError::Parse {
            file: file.to_string(),
            line: n + 1,
            msg,
        };
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let toks = tokens(line).map_err(err)?;
        if toks[0] == "kind" {
            let (gv, kind) = match (toks.get(1), toks.get(2)) {
                (Some(gv), Some(k)) => (gv, k),
                _ => return Err(err("kind needs <group>/<version> <Kind>".into())),
            };
            let (group, version) = gv
                .split_once('/')
                .ok_or_else(|| err(format!("{gv}: want <group>/<version>")))?;
            let group = if group == "core" { "" } else { group };
            let mut subresources = Vec::new();
            for t in &toks[3..] {
                match t.strip_prefix("+k8s:supportsSubresource=") {
                    Some(s) => subresources.push(unquote(s).map_err(err)?),
                    None => {
                        return Err(err(format!(
                            "{t}: only +k8s:supportsSubresource on a kind line"
                        )))
                    }
                }
            }
            scope.clear();
            kinds.push(KindOut {
                group: group.into(),
                version: version.into(),
                kind: kind.clone(),
                subresources,
                rules: Vec::new(),
            });
            continue;
        }
        if let Some(s) = toks[0].strip_prefix("+k8s:isSubresource=") {
            scope = unquote(s).map_err(err)?;
            continue;
        }
        let k = kinds
            .last_mut()
            .ok_or_else(|| err("a field line before any kind line".into()))?;
        if toks.len() < 2 {
            return Err(err(format!("{}: no tags", toks[0])));
        }
        let path: Vec<String> = toks[0].split('.').map(str::to_string).collect();
        let mut tags = Vec::new();
        for t in &toks[1..] {
            tags.push(tag(t).map_err(err)?);
        }
        k.rules.push((scope.clone(), path, tags));
    }
    Ok(())
}

/// Split on whitespace outside quotes and parentheses.
fn tokens(line: &str) -> Result<Vec<String>, String> {
    let (mut out, mut cur, mut depth, mut quoted) = (Vec::new(), String::new(), 0i32, false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            c if c.is_whitespace() && !quoted && depth == 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if quoted || depth != 0 {
        return Err("unbalanced quotes or parentheses".into());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

fn unquote(s: &str) -> Result<String, String> {
    s.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .map(str::to_string)
        .ok_or_else(|| format!("{s}: want a quoted string"))
}

fn lit(s: &str) -> Result<String, String> {
    let s = s.trim();
    if s.starts_with('"') {
        return Ok(format!("Lit::Str({:?})", unquote(s)?));
    }
    if s == "true" || s == "false" {
        return Ok(format!("Lit::Bool({s})"));
    }
    s.parse::<i64>()
        .map(|i| format!("Lit::Int({i})"))
        .map_err(|_| format!("{s}: want a string, integer or bool"))
}

/// `k: v, k2: v2` named arguments.
fn named_args(args: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for a in args.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        let (k, v) = a
            .split_once(':')
            .ok_or_else(|| format!("{a}: want <name>: <value>"))?;
        out.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok(out)
}

fn int<T: std::str::FromStr>(name: &str, payload: Option<&str>) -> Result<T, String> {
    payload
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| format!("+k8s:{name} wants an integer payload"))
}

/// One tag as a `Tag` expression.
fn tag(t: &str) -> Result<String, String> {
    let body = t
        .strip_prefix("+k8s:")
        .ok_or_else(|| format!("{t}: a tag starts with +k8s:"))?;
    let name_end = body.find(['(', '=']).unwrap_or(body.len());
    let name = &body[..name_end];
    let mut rest = &body[name_end..];
    let mut args = None;
    if let Some(r) = rest.strip_prefix('(') {
        let close = r
            .find(')')
            .ok_or_else(|| format!("{t}: unclosed arguments"))?;
        args = Some(&r[..close]);
        rest = &r[close + 1..];
    }
    let payload = rest.strip_prefix('=');
    let nested = |p: Option<&str>| -> Result<String, String> {
        let p = p.ok_or_else(|| format!("+k8s:{name} wants a tag payload"))?;
        Ok(format!("&[{}]", tag(p)?))
    };
    let arg_str = |a: Option<&str>| -> Result<String, String> {
        unquote(
            a.ok_or_else(|| format!("+k8s:{name} wants an argument"))?
                .trim(),
        )
    };
    let union_args = |a: Option<&str>| -> Result<(String, String), String> {
        let mut union = String::new();
        let mut member = String::new();
        for (k, v) in named_args(a.unwrap_or(""))? {
            match k.as_str() {
                "union" => union = unquote(&v)?,
                "memberName" => member = unquote(&v)?,
                _ => return Err(format!("+k8s:{name}: unknown argument {k}")),
            }
        }
        Ok((union, member))
    };
    Ok(match name {
        "optional" => "Tag::Optional".into(),
        "required" => "Tag::Required".into(),
        "forbidden" => "Tag::Forbidden".into(),
        "immutable" => "Tag::Immutable".into(),
        "opaqueType" => "Tag::OpaqueType".into(),
        "minimum" => format!("Tag::Minimum({})", int::<i64>(name, payload)?),
        "maxLength" => format!("Tag::MaxLength({})", int::<usize>(name, payload)?),
        "maxItems" => format!("Tag::MaxItems({})", int::<usize>(name, payload)?),
        "enum" => {
            let vals: Vec<String> = payload
                .ok_or("+k8s:enum wants the type's constants: +k8s:enum=A,B")?
                .split(',')
                .map(|v| format!("{:?}", v.trim()))
                .collect();
            format!("Tag::Enum(&[{}])", vals.join(", "))
        }
        "neq" => format!(
            "Tag::Neq({})",
            lit(payload.ok_or("+k8s:neq wants a value")?)?
        ),
        "format" => {
            let f = match payload {
                Some("k8s-ip") => "Ip",
                Some("k8s-long-name") => "LongName",
                Some("k8s-short-name") => "ShortName",
                Some("k8s-label-key") => "LabelKey",
                other => return Err(format!("+k8s:format: unknown format {other:?}")),
            };
            format!("Tag::Format(Format::{f})")
        }
        "listType" => {
            let l = match payload {
                Some("atomic") => "Atomic",
                Some("set") => "Set",
                Some("map") => "Map",
                other => return Err(format!("+k8s:listType: unknown type {other:?}")),
            };
            format!("Tag::ListType(ListType::{l})")
        }
        "listMapKey" => format!(
            "Tag::ListMapKey({:?})",
            payload.ok_or("+k8s:listMapKey wants a field name")?
        ),
        "eachVal" => format!("Tag::EachVal({})", nested(payload)?),
        "eachKey" => format!("Tag::EachKey({})", nested(payload)?),
        "subfield" => format!("Tag::Subfield({:?}, {})", arg_str(args)?, nested(payload)?),
        "ifEnabled" => format!("Tag::IfEnabled({:?}, {})", arg_str(args)?, nested(payload)?),
        "ifDisabled" => format!(
            "Tag::IfDisabled({:?}, {})",
            arg_str(args)?,
            nested(payload)?
        ),
        "item" => {
            let keys: Result<Vec<String>, String> = named_args(args.unwrap_or(""))?
                .into_iter()
                .map(|(k, v)| Ok(format!("({k:?}, {})", lit(&v)?)))
                .collect();
            format!("Tag::Item(&[{}], {})", keys?.join(", "), nested(payload)?)
        }
        "unionDiscriminator" => {
            let (union, _) = union_args(args)?;
            format!("Tag::UnionDiscriminator {{ union: {union:?} }}")
        }
        "unionMember" | "zeroOrOneOfMember" => {
            let (union, member) = union_args(args)?;
            let v = if name == "unionMember" {
                "UnionMember"
            } else {
                "ZeroOrOneOfMember"
            };
            format!("Tag::{v} {{ union: {union:?}, member: {member:?} }}")
        }
        _ => return Err(format!("+k8s:{name}: not in the tag catalog")),
    })
}

fn render(kinds: &[KindOut]) -> String {
    let mut s = String::from(
        "// @generated by `cargo xtask gen-validation` from rules/*.rules; do not edit.\n\n\
         #[allow(unused_imports)]\n\
         use super::table::{Format, KindRules, ListType, Lit, Rule, Tag};\n\n\
         /// Every kind's declarative rules.\n\
         pub(crate) static KINDS: &[KindRules] = &[\n",
    );
    for k in kinds {
        let _ = writeln!(
            s,
            "    KindRules {{\n        group: {:?},\n        version: {:?},\n        kind: {:?},\n        subresources: &[{}],\n        rules: &[",
            k.group,
            k.version,
            k.kind,
            k.subresources
                .iter()
                .map(|x| format!("{x:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for (scope, path, tags) in &k.rules {
            let path: Vec<String> = path.iter().map(|p| format!("{p:?}")).collect();
            let _ = writeln!(
                s,
                "            Rule {{\n                subresource: {scope:?},\n                path: &[{}],\n                tags: &[{}],\n            }},",
                path.join(", "),
                tags.join(", ")
            );
        }
        s.push_str("        ],\n    },\n");
    }
    s.push_str("];\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checked-in generated.rs is what the rule files compile to.
    #[test]
    fn generated_tables_are_current() {
        let (dir, out) = default_paths();
        let want = gen_validation(&dir).expect("rule files parse");
        let have = std::fs::read_to_string(&out).unwrap_or_default();
        assert!(
            want == have,
            "{} is stale: run `cargo run -p xtask -- gen-validation`",
            out.display()
        );
    }

    #[test]
    fn nested_tags_and_errors() {
        assert_eq!(
            tag("+k8s:eachVal=+k8s:minimum=1").as_deref(),
            Ok("Tag::EachVal(&[Tag::Minimum(1)])")
        );
        assert_eq!(
            tag(r#"+k8s:item(type: "Approved")=+k8s:zeroOrOneOfMember"#).as_deref(),
            Ok(
                r#"Tag::Item(&[("type", Lit::Str("Approved"))], &[Tag::ZeroOrOneOfMember { union: "", member: "" }])"#
            )
        );
        assert_eq!(
            tag(r#"+k8s:ifEnabled("G")=+k8s:required"#).as_deref(),
            Ok(r#"Tag::IfEnabled("G", &[Tag::Required])"#)
        );
        assert!(tag("+k8s:nope")
            .unwrap_err()
            .contains("not in the tag catalog"));
        let mut k = Vec::new();
        let e = parse_file("x.rules", "spec.a +k8s:optional\n", &mut k).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.rules:1: a field line before any kind line"
        );
    }
}
