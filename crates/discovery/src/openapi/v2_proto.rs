//! The Swagger 2.0 document as gnostic's `openapi.v2.Document` protobuf
//! (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`), the
//! only form client-go's `OpenAPISchema()` reads: it asks for it and
//! `proto.Unmarshal`s the body, with no JSON fallback.
//!
//! Encodes the subset of the message set [`super::v2::document`] writes;
//! field numbers are those of gnostic's `openapiv2/OpenAPIv2.proto`.
//! Vendor extensions, `default`, `enum` and `example` values are
//! `Any { yaml }` (JSON is YAML), as gnostic's compiler stores them.
//!
//! Hand-written: no maintained crate carries gnostic's messages, and
//! generating prost types would mean vendoring its `.proto` file.

use serde_json::{Map, Value};

/// Protobuf bytes of a Swagger 2.0 JSON document.
pub fn encode(doc: &Value) -> Vec<u8> {
    let mut b = Buf::default();
    b.string(1, str_of(doc, "swagger"));
    if let Some(info) = doc.get("info") {
        let mut i = Buf::default();
        i.string(1, str_of(info, "title"));
        i.string(2, str_of(info, "version"));
        i.string(3, str_of(info, "description"));
        extensions(&mut i, 7, info);
        b.message(2, i);
    }
    b.strings(5, doc.get("schemes"));
    b.strings(6, doc.get("consumes"));
    b.strings(7, doc.get("produces"));
    if let Some(paths) = doc.get("paths").and_then(Value::as_object) {
        let mut p = Buf::default();
        extensions_of(&mut p, 1, Some(paths));
        for (name, item) in paths.iter().filter(|(k, _)| !k.starts_with("x-")) {
            p.named(2, name, path_item(item));
        }
        b.message(8, p);
    }
    if let Some(defs) = doc.get("definitions").and_then(Value::as_object) {
        b.message(9, named_schemas(defs));
    }
    for req in doc
        .get("security")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        b.message(12, security_requirement(req));
    }
    if let Some(defs) = doc.get("securityDefinitions").and_then(Value::as_object) {
        let mut d = Buf::default();
        for (name, s) in defs {
            let mut item = Buf::default();
            if s.get("type").and_then(Value::as_str) == Some("apiKey") {
                let mut k = Buf::default();
                k.string(1, str_of(s, "type"));
                k.string(2, str_of(s, "name"));
                k.string(3, str_of(s, "in"));
                k.string(4, str_of(s, "description"));
                extensions(&mut k, 5, s);
                item.message(2, k);
            }
            d.named(1, name, item);
        }
        b.message(13, d);
    }
    extensions(&mut b, 16, doc);
    b.0
}

#[derive(Default)]
struct Buf(Vec<u8>);

impl Buf {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn key(&mut self, field: u32, wire: u8) {
        self.varint(u64::from(field) << 3 | u64::from(wire));
    }

    fn bytes(&mut self, field: u32, data: &[u8]) {
        self.key(field, 2);
        self.varint(data.len() as u64);
        self.0.extend_from_slice(data);
    }

    /// A proto3 string: omitted when empty.
    fn string(&mut self, field: u32, s: &str) {
        if !s.is_empty() {
            self.bytes(field, s.as_bytes());
        }
    }

    /// `repeated string` from a JSON array of strings.
    fn strings(&mut self, field: u32, v: Option<&Value>) {
        for s in v.and_then(Value::as_array).into_iter().flatten() {
            if let Some(s) = s.as_str() {
                self.bytes(field, s.as_bytes());
            }
        }
    }

    /// A proto3 bool: omitted when false.
    fn boolean(&mut self, field: u32, v: Option<&Value>) {
        if v.and_then(Value::as_bool) == Some(true) {
            self.key(field, 0);
            self.varint(1);
        }
    }

    fn int64(&mut self, field: u32, v: Option<&Value>) {
        if let Some(n) = v.and_then(Value::as_i64).filter(|n| *n != 0) {
            self.key(field, 0);
            self.varint(n as u64);
        }
    }

    fn double(&mut self, field: u32, v: Option<&Value>) {
        if let Some(n) = v.and_then(Value::as_f64).filter(|n| *n != 0.0) {
            self.key(field, 1);
            self.0.extend_from_slice(&n.to_le_bytes());
        }
    }

    /// An embedded message, written even when empty (oneof members and
    /// present-but-empty objects must stay present).
    fn message(&mut self, field: u32, m: Buf) {
        self.bytes(field, &m.0);
    }

    /// A `Named*` entry: `{1: name, 2: value}`.
    fn named(&mut self, field: u32, name: &str, value: Buf) {
        let mut n = Buf::default();
        n.string(1, name);
        n.message(2, value);
        self.message(field, n);
    }

    /// `Any { yaml }`.
    fn any(&mut self, field: u32, v: &Value) {
        self.message(field, any(v));
    }
}

fn any(v: &Value) -> Buf {
    let mut a = Buf::default();
    let mut yaml = serde_json::to_string(v).unwrap_or_default();
    yaml.push('\n');
    a.string(2, &yaml);
    a
}

fn str_of<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

/// `repeated NamedAny vendor_extension` from the `x-` keys of `v`.
fn extensions(b: &mut Buf, field: u32, v: &Value) {
    extensions_of(b, field, v.as_object());
}

fn extensions_of(b: &mut Buf, field: u32, m: Option<&Map<String, Value>>) {
    for (k, x) in m.into_iter().flatten().filter(|(k, _)| k.starts_with("x-")) {
        b.named(field, k, any(x));
    }
}

fn security_requirement(req: &Value) -> Buf {
    let mut r = Buf::default();
    for (name, scopes) in req.as_object().into_iter().flatten() {
        let mut arr = Buf::default();
        arr.strings(1, Some(scopes));
        r.named(1, name, arr);
    }
    r
}

fn path_item(item: &Value) -> Buf {
    let mut p = Buf::default();
    p.string(1, str_of(item, "$ref"));
    for (field, method) in [
        (2, "get"),
        (3, "put"),
        (4, "post"),
        (5, "delete"),
        (6, "options"),
        (7, "head"),
        (8, "patch"),
    ] {
        if let Some(op) = item.get(method) {
            p.message(field, operation(op));
        }
    }
    for param in item
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        p.message(9, parameters_item(param));
    }
    extensions(&mut p, 10, item);
    p
}

fn operation(op: &Value) -> Buf {
    let mut o = Buf::default();
    o.strings(1, op.get("tags"));
    o.string(2, str_of(op, "summary"));
    o.string(3, str_of(op, "description"));
    o.string(5, str_of(op, "operationId"));
    o.strings(6, op.get("produces"));
    o.strings(7, op.get("consumes"));
    for param in op
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        o.message(8, parameters_item(param));
    }
    if let Some(responses) = op.get("responses").and_then(Value::as_object) {
        let mut rs = Buf::default();
        for (code, r) in responses.iter().filter(|(k, _)| !k.starts_with("x-")) {
            let mut resp = Buf::default();
            resp.string(1, str_of(r, "description"));
            if let Some(s) = r.get("schema") {
                let mut item = Buf::default();
                item.message(1, schema(s));
                resp.message(2, item);
            }
            extensions(&mut resp, 5, r);
            let mut value = Buf::default();
            value.message(1, resp);
            rs.named(1, code, value);
        }
        o.message(9, rs);
    }
    o.strings(10, op.get("schemes"));
    o.boolean(11, op.get("deprecated"));
    extensions(&mut o, 13, op);
    o
}

/// `ParametersItem { Parameter { BodyParameter | NonBodyParameter } }`.
fn parameters_item(p: &Value) -> Buf {
    let mut item = Buf::default();
    if let Some(r) = p.get("$ref").and_then(Value::as_str) {
        let mut j = Buf::default();
        j.string(1, r);
        item.message(2, j);
        return item;
    }
    let mut param = Buf::default();
    let loc = str_of(p, "in");
    if loc == "body" {
        let mut b = Buf::default();
        b.string(1, str_of(p, "description"));
        b.string(2, str_of(p, "name"));
        b.string(3, loc);
        b.boolean(4, p.get("required"));
        if let Some(s) = p.get("schema") {
            b.message(5, schema(s));
        }
        extensions(&mut b, 6, p);
        param.message(1, b);
    } else {
        // Query/FormData share a layout with `allow_empty_value` (5); header
        // and path parameters lack it and shift by one.
        let (member, shift) = match loc {
            "header" => (1, 1),
            "formData" => (2, 0),
            "path" => (4, 1),
            _ => (3, 0),
        };
        let mut s = Buf::default();
        s.boolean(1, p.get("required"));
        s.string(2, loc);
        s.string(3, str_of(p, "description"));
        s.string(4, str_of(p, "name"));
        if shift == 0 {
            s.boolean(5, p.get("allowEmptyValue"));
        }
        let f = |n: u32| n - shift;
        s.string(f(6), str_of(p, "type"));
        s.string(f(7), str_of(p, "format"));
        s.string(f(9), str_of(p, "collectionFormat"));
        if let Some(d) = p.get("default") {
            s.any(f(10), d);
        }
        s.boolean(f(20), p.get("uniqueItems"));
        for e in p
            .get("enum")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            s.any(f(21), e);
        }
        extensions(&mut s, f(23), p);
        let mut nb = Buf::default();
        nb.message(member, s);
        param.message(2, nb);
    }
    item.message(1, param);
    item
}

fn named_schemas(m: &Map<String, Value>) -> Buf {
    let mut b = Buf::default();
    for (name, s) in m {
        b.named(1, name, schema(s));
    }
    b
}

/// `Schema`.
fn schema(s: &Value) -> Buf {
    let mut b = Buf::default();
    b.string(1, str_of(s, "$ref"));
    b.string(2, str_of(s, "format"));
    b.string(3, str_of(s, "title"));
    b.string(4, str_of(s, "description"));
    if let Some(d) = s.get("default") {
        b.any(5, d);
    }
    b.double(6, s.get("multipleOf"));
    b.double(7, s.get("maximum"));
    b.boolean(8, s.get("exclusiveMaximum"));
    b.double(9, s.get("minimum"));
    b.boolean(10, s.get("exclusiveMinimum"));
    b.int64(11, s.get("maxLength"));
    b.int64(12, s.get("minLength"));
    b.string(13, str_of(s, "pattern"));
    b.int64(14, s.get("maxItems"));
    b.int64(15, s.get("minItems"));
    b.boolean(16, s.get("uniqueItems"));
    b.int64(17, s.get("maxProperties"));
    b.int64(18, s.get("minProperties"));
    b.strings(19, s.get("required"));
    for e in s
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        b.any(20, e);
    }
    match s.get("additionalProperties") {
        Some(Value::Bool(v)) => {
            let mut a = Buf::default();
            a.key(2, 0);
            a.varint(u64::from(*v));
            b.message(21, a);
        }
        Some(ap @ Value::Object(_)) => {
            let mut a = Buf::default();
            a.message(1, schema(ap));
            b.message(21, a);
        }
        _ => {}
    }
    match s.get("type") {
        Some(Value::String(t)) => {
            let mut t_buf = Buf::default();
            t_buf.string(1, t);
            b.message(22, t_buf);
        }
        Some(t @ Value::Array(_)) => {
            let mut t_buf = Buf::default();
            t_buf.strings(1, Some(t));
            b.message(22, t_buf);
        }
        _ => {}
    }
    match s.get("items") {
        Some(i @ Value::Object(_)) => {
            let mut items = Buf::default();
            items.message(1, schema(i));
            b.message(23, items);
        }
        Some(Value::Array(list)) => {
            let mut items = Buf::default();
            for i in list {
                items.message(1, schema(i));
            }
            b.message(23, items);
        }
        _ => {}
    }
    for a in s
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        b.message(24, schema(a));
    }
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        b.message(25, named_schemas(props));
    }
    b.string(26, str_of(s, "discriminator"));
    b.boolean(27, s.get("readOnly"));
    if let Some(e) = s.get("example") {
        b.any(30, e);
    }
    extensions(&mut b, 31, s);
    b
}
