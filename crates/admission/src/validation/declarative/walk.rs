//! The declarative runtime: each kind's rules as a tree of fields (built
//! once), walked once per write along the object and its stored version,
//! every tag checked with kube's `validate` error types and wording.

use keelson_apimachinery::{FieldError, FieldErrorKind};
use serde_json::Value;

use super::table::{Format, KindRules, ListType, Lit, Tag};
use crate::validation::kinds::Path;

/// One field of a kind's rule tree: its tags and the fields under it.
#[derive(Debug, Default)]
pub(crate) struct Node {
    tags: Vec<&'static Tag>,
    children: Vec<(&'static str, Node)>,
}

impl Node {
    fn child(&mut self, name: &'static str) -> &mut Node {
        let i = match self.children.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                self.children.push((name, Node::default()));
                self.children.len() - 1
            }
        };
        &mut self.children[i].1
    }
}

/// A kind's rules as trees, one per subresource scope.
#[derive(Debug)]
pub(crate) struct KindTree {
    /// `+k8s:supportsSubresource`, without the leading `/`.
    subresources: Vec<&'static str>,
    scopes: Vec<(&'static str, Node)>,
}

impl KindTree {
    /// The tree of `k`'s rules.
    pub(crate) fn build(k: &'static KindRules) -> KindTree {
        let mut scopes: Vec<(&'static str, Node)> = Vec::new();
        for r in k.rules {
            let scope = r.subresource.trim_start_matches('/');
            let i = match scopes.iter().position(|(s, _)| *s == scope) {
                Some(i) => i,
                None => {
                    scopes.push((scope, Node::default()));
                    scopes.len() - 1
                }
            };
            let mut n = &mut scopes[i].1;
            for p in r.path {
                n = n.child(p);
            }
            n.tags.extend(r.tags.iter());
        }
        KindTree {
            subresources: k
                .subresources
                .iter()
                .map(|s| s.trim_start_matches('/'))
                .collect(),
            scopes,
        }
    }

    /// The tree a write of `subresource` (`""` for the root) is validated
    /// with: its own scope, else the root's for a supported subresource;
    /// none for an unsupported one.
    pub(crate) fn scope(&self, subresource: &str) -> Option<&Node> {
        if !subresource.is_empty() && !self.subresources.contains(&subresource) {
            return None;
        }
        let find = |s: &str| self.scopes.iter().find(|(n, _)| *n == s).map(|(_, n)| n);
        find(subresource).or_else(|| find(""))
    }
}

/// What one walk found.
#[derive(Default)]
pub(crate) struct Outcome {
    /// The declarative errors, in walk order.
    pub errs: Vec<FieldError>,
    /// The field paths rules were checked at (the handwritten errors there
    /// are the ones the declarative result covers).
    pub covered: Vec<String>,
}

struct Union {
    scope: Path,
    name: &'static str,
    exactly: bool,
    /// (member name, member path, set).
    members: Vec<(String, Path, bool)>,
    /// (discriminator JSON name, its value).
    discriminator: Option<(String, String)>,
}

struct Ctx<'g> {
    gate: &'g dyn Fn(&str) -> bool,
    update: bool,
    out: Outcome,
    unions: Vec<Union>,
}

/// Walk `obj` (and `old` on update) against `root`.
pub(crate) fn walk(
    root: &Node,
    obj: &Value,
    old: Option<&Value>,
    gate: &dyn Fn(&str) -> bool,
) -> Outcome {
    let mut ctx = Ctx {
        gate,
        update: old.is_some(),
        out: Outcome::default(),
        unions: Vec::new(),
    };
    let root_path = Path::new("");
    node(root, Some(obj), old, &root_path, "", &root_path, &mut ctx);
    finish_unions(&mut ctx);
    ctx.out
}

fn node(
    n: &Node,
    v: Option<&Value>,
    old: Option<&Value>,
    path: &Path,
    field: &str,
    parent: &Path,
    ctx: &mut Ctx<'_>,
) {
    if !n.tags.is_empty() {
        ctx.out.covered.push(path.as_str().to_string());
    }
    let tags: Vec<&Tag> = n.tags.to_vec();
    if !tags_on(&tags, v, old, path, field, parent, ctx) {
        return;
    }
    if n.tags.iter().any(|t| matches!(t, Tag::OpaqueType)) {
        return;
    }
    let obj = v.and_then(Value::as_object);
    let old_obj = old.and_then(Value::as_object);
    for (name, c) in &n.children {
        node(
            c,
            obj.and_then(|o| o.get(*name)),
            old_obj.and_then(|o| o.get(*name)),
            &path.child(name),
            name,
            path,
            ctx,
        );
    }
}

fn is_set(v: Option<&Value>) -> bool {
    v.is_some_and(|v| !v.is_null())
}

/// Go's `%v` of a literal.
fn lit_display(l: Lit) -> String {
    match l {
        Lit::Str(s) => s.to_string(),
        Lit::Int(i) => i.to_string(),
        Lit::Bool(b) => b.to_string(),
    }
}

fn lit_eq(l: Lit, v: &Value) -> bool {
    match l {
        Lit::Str(s) => v.as_str() == Some(s),
        Lit::Int(i) => v.as_i64() == Some(i),
        Lit::Bool(b) => v.as_bool() == Some(b),
    }
}

/// Check `tags` on one value; `false` when the value's remaining checks
/// (and its fields) are skipped (`optional`/`required` on an unset value).
fn tags_on(
    tags: &[&Tag],
    v: Option<&Value>,
    old: Option<&Value>,
    path: &Path,
    field: &str,
    parent: &Path,
    ctx: &mut Ctx<'_>,
) -> bool {
    let set = is_set(v);
    for t in tags {
        match t {
            Tag::Optional if !set => return false,
            Tag::Required => {
                let empty = match v {
                    None | Some(Value::Null) => true,
                    Some(Value::Object(m)) => m.is_empty(),
                    Some(Value::Array(a)) => a.is_empty(),
                    Some(_) => false,
                };
                if empty {
                    ctx.out.errs.push(FieldError::required(path.as_str(), ""));
                    return false;
                }
            }
            Tag::Forbidden if set => ctx.out.errs.push(FieldError::forbidden(path.as_str(), "")),
            Tag::IfEnabled(g, inner) | Tag::IfDisabled(g, inner) => {
                let on = (ctx.gate)(g);
                if on == matches!(t, Tag::IfEnabled(..)) {
                    let inner: Vec<&Tag> = inner.iter().collect();
                    if !tags_on(&inner, v, old, path, field, parent, ctx) {
                        return false;
                    }
                }
            }
            Tag::UnionMember { union, member } | Tag::ZeroOrOneOfMember { union, member } => {
                let name = if member.is_empty() { field } else { member };
                let u = union_of(ctx, parent, union, matches!(t, Tag::UnionMember { .. }));
                u.members.push((name.to_string(), path.clone(), set));
            }
            Tag::UnionDiscriminator { union } => {
                let value = v.and_then(Value::as_str).unwrap_or("").to_string();
                let u = union_of(ctx, parent, union, true);
                u.discriminator = Some((field.to_string(), value));
            }
            Tag::Subfield(name, inner) => {
                let inner: Vec<&Tag> = inner.iter().collect();
                let (sv, so) = (v.and_then(|v| v.get(*name)), old.and_then(|o| o.get(*name)));
                tags_on(&inner, sv, so, &path.child(name), name, path, ctx);
            }
            Tag::Item(keys, inner) => {
                let items = v.and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
                let matches = |it: &Value| {
                    keys.iter()
                        .all(|(k, l)| it.get(*k).is_some_and(|x| lit_eq(*l, x)))
                };
                let found = items.iter().position(matches);
                let old_item = old
                    .and_then(Value::as_array)
                    .and_then(|a| a.iter().find(|it| matches(it)));
                let member = keys.first().map_or(String::new(), |(_, l)| lit_display(*l));
                let ipath = found.map_or_else(|| path.clone(), |i| path.index(i));
                let inner: Vec<&Tag> = inner.iter().collect();
                tags_on(
                    &inner,
                    found.map(|i| &items[i]),
                    old_item,
                    &ipath,
                    &member,
                    path,
                    ctx,
                );
            }
            _ if !set => {}
            Tag::Minimum(min) => {
                if let Some(i) = v.and_then(Value::as_i64).filter(|i| i < min) {
                    ctx.out.errs.push(FieldError::invalid(
                        path.as_str(),
                        i,
                        &format!("must be greater than or equal to {min}"),
                    ));
                }
            }
            Tag::MaxLength(max) => {
                if v.and_then(Value::as_str).is_some_and(|s| s.len() > *max) {
                    ctx.out.errs.push(FieldError::too_long(
                        path.as_str(),
                        &format!("may not be more than {max} bytes"),
                    ));
                }
            }
            Tag::MaxItems(max) => {
                if let Some(n) = v
                    .and_then(Value::as_array)
                    .map(Vec::len)
                    .filter(|n| n > max)
                {
                    ctx.out.errs.push(FieldError {
                        kind: FieldErrorKind::TooMany,
                        field: path.as_str().to_string(),
                        value: Some(Value::from(n)),
                        detail: format!("must have at most {max} items"),
                    });
                }
            }
            Tag::Enum(vals) => {
                if let Some(s) = v.and_then(Value::as_str).filter(|s| !vals.contains(s)) {
                    ctx.out
                        .errs
                        .push(FieldError::not_supported(path.as_str(), s, vals));
                }
            }
            Tag::Neq(l) => {
                if let Some(x) = v.filter(|x| lit_eq(*l, x)) {
                    ctx.out.errs.push(FieldError::invalid(
                        path.as_str(),
                        x.clone(),
                        &format!("must not be equal to {}", lit_display(*l)),
                    ));
                }
            }
            Tag::Format(f) => {
                if let Some(s) = v.and_then(Value::as_str) {
                    for msg in format_errors(*f, s) {
                        ctx.out
                            .errs
                            .push(FieldError::invalid(path.as_str(), s, &msg));
                    }
                }
            }
            Tag::Immutable => {
                if ctx.update && v.filter(|x| !x.is_null()) != old.filter(|x| !x.is_null()) {
                    ctx.out
                        .errs
                        .push(FieldError::forbidden(path.as_str(), "field is immutable"));
                }
            }
            Tag::ListType(lt) => {
                let keys: Vec<&str> = tags
                    .iter()
                    .filter_map(|t| match t {
                        Tag::ListMapKey(k) => Some(*k),
                        _ => None,
                    })
                    .collect();
                duplicates(*lt, &keys, v, path, ctx);
            }
            Tag::EachVal(inner) => {
                let inner: Vec<&Tag> = inner.iter().collect();
                match v {
                    Some(Value::Array(a)) => {
                        for (i, it) in a.iter().enumerate() {
                            tags_on(&inner, Some(it), None, &path.index(i), field, path, ctx);
                        }
                    }
                    Some(Value::Object(m)) => {
                        for (k, it) in m {
                            let oi = old.and_then(|o| o.get(k));
                            tags_on(&inner, Some(it), oi, &path.key(k), field, path, ctx);
                        }
                    }
                    _ => {}
                }
            }
            Tag::EachKey(inner) => {
                let inner: Vec<&Tag> = inner.iter().collect();
                if let Some(m) = v.and_then(Value::as_object) {
                    for k in m.keys() {
                        let key = Value::String(k.clone());
                        tags_on(&inner, Some(&key), None, path, field, parent, ctx);
                    }
                }
            }
            Tag::Optional | Tag::Forbidden | Tag::OpaqueType | Tag::ListMapKey(_) => {}
        }
    }
    true
}

fn union_of<'c>(
    ctx: &'c mut Ctx<'_>,
    scope: &Path,
    name: &'static str,
    exactly: bool,
) -> &'c mut Union {
    let i = match ctx
        .unions
        .iter()
        .position(|u| u.scope == *scope && u.name == name)
    {
        Some(i) => i,
        None => {
            ctx.unions.push(Union {
                scope: scope.clone(),
                name,
                exactly,
                members: Vec::new(),
                discriminator: None,
            });
            ctx.unions.len() - 1
        }
    };
    &mut ctx.unions[i]
}

fn finish_unions(ctx: &mut Ctx<'_>) {
    for u in std::mem::take(&mut ctx.unions) {
        let names: Vec<String> = u.members.iter().map(|(n, _, _)| format!("`{n}`")).collect();
        let set: Vec<&str> = u
            .members
            .iter()
            .filter(|(_, _, s)| *s)
            .map(|(n, _, _)| n.as_str())
            .collect();
        let at = u.scope.as_str();
        if let Some((d, value)) = &u.discriminator {
            for (n, p, s) in &u.members {
                if n == value && !s {
                    let msg = format!("must be specified when `{d}` is {value:?}");
                    ctx.out.errs.push(FieldError::required(p.as_str(), &msg));
                } else if n != value && *s {
                    let msg = format!("may only be specified when `{d}` is {n:?}");
                    ctx.out.errs.push(FieldError::invalid(p.as_str(), "", &msg));
                }
            }
            continue;
        }
        let value = format!("{{{}}}", set.join(", "));
        if u.exactly && set.is_empty() {
            let msg = format!("must specify one of: {}", names.join(", "));
            ctx.out.errs.push(FieldError::invalid(at, "", &msg));
        } else if set.len() > 1 {
            let what = if u.exactly { "exactly" } else { "at most" };
            let msg = format!("must specify {what} one of: {}", names.join(", "));
            ctx.out.errs.push(FieldError::invalid(at, value, &msg));
        }
    }
}

fn duplicates(lt: ListType, keys: &[&str], v: Option<&Value>, path: &Path, ctx: &mut Ctx<'_>) {
    let Some(items) = v.and_then(Value::as_array) else {
        return;
    };
    let key = |it: &Value| -> Value {
        match lt {
            ListType::Map => Value::Array(
                keys.iter()
                    .map(|k| it.get(*k).cloned().unwrap_or(Value::Null))
                    .collect(),
            ),
            _ => it.clone(),
        }
    };
    if lt == ListType::Atomic {
        return;
    }
    for (j, it) in items.iter().enumerate() {
        let kj = key(it);
        if items[..j].iter().any(|e| key(e) == kj) {
            ctx.out.errs.push(crate::validation::kinds::duplicate(
                &path.index(j),
                it.clone(),
            ));
        }
    }
}

/// kube's `+k8s:format` checks: one message per problem.
fn format_errors(f: Format, s: &str) -> Vec<String> {
    use keelson_apimachinery::names;
    match f {
        Format::ShortName => names::is_dns1123_label(s),
        Format::LongName => names::is_dns1123_subdomain(s),
        Format::LabelKey => names::is_qualified_name(s),
        Format::Ip => {
            if is_ip_with_leading_zeros(s) {
                Vec::new()
            } else {
                vec!["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)".into()]
            }
        }
    }
}

/// An IPv6 address, or an IPv4 address whose octets may have leading zeros
/// (kube's legacy `ParseIPSloppy`).
fn is_ip_with_leading_zeros(s: &str) -> bool {
    if s.contains(':') {
        return s.parse::<std::net::Ipv6Addr>().is_ok();
    }
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.len() <= 3
                && p.bytes().all(|b| b.is_ascii_digit())
                && p.parse::<u16>().is_ok_and(|n| n <= 255)
        })
}
