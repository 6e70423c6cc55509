//! JSON (kube's field names) ⇄ Protobuf (gogo's bytes), driven by the
//! schema data: one walk for every message, the well-known types handled
//! here once.
//!
//! Writing follows gogo-generated `MarshalToSizedBuffer`: fields in
//! field-number order; a Go value (non-pointer scalar or struct) written
//! even when zero or absent; a pointer, slice or map only when set; map
//! entries by sorted key; repeated scalars unpacked (proto2).
//!
//! Reading follows gogo's `Unmarshal` then Go's `encoding/json`: unknown
//! fields are skipped; a zero Go value with `omitempty` is left out of the
//! JSON, a pointer keeps its zero; a Go value without `omitempty` always
//! appears (a struct as `{}`, a nil slice or map as `null`); fields come in
//! Go's declaration order.

use base64::Engine as _;
use serde_json::{Map, Number, Value};

use super::schema::{
    Field, MsgId, Scalar, Schema, Special, Ty, INLINE, MAP, OMITEMPTY, REPEATED, VALUE,
};
use super::wire::{self, put_key, put_len, put_varint, Raw, Reader, WireError};
use super::wkt;

/// How deep messages may nest (a guard against hostile input).
const MAX_DEPTH: u32 = 100;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

// ---------------------------------------------------------------------
// Protobuf → JSON
// ---------------------------------------------------------------------

/// A message's bytes as its JSON value.
pub(crate) fn to_json(s: &Schema, id: MsgId, buf: &[u8]) -> Result<Value, WireError> {
    Decoder { s }.message(id, buf, 0)
}

struct Decoder<'s> {
    s: &'s Schema,
}

fn go_name(json: &str) -> String {
    let mut c = json.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn wrong_wire(wire: u8, f: &Field) -> WireError {
    WireError(format!(
        "proto: wrong wireType = {wire} for field {}",
        go_name(&f.json)
    ))
}

/// The occurrences of each field of a message, by field index.
fn collect<'a>(s: &Schema, id: MsgId, buf: &'a [u8]) -> Result<Vec<Vec<Raw<'a>>>, WireError> {
    let m = &s.messages[id];
    let mut seen: Vec<Vec<Raw<'a>>> = vec![Vec::new(); m.fields.len()];
    let mut r = Reader::new(buf);
    while !r.done() {
        let (number, raw) = r.field(m.short())?;
        if let Some(i) = m.field(number) {
            seen[i].push(raw);
        }
    }
    Ok(seen)
}

impl Decoder<'_> {
    fn message(&self, id: MsgId, buf: &[u8], depth: u32) -> Result<Value, WireError> {
        if depth > MAX_DEPTH {
            return Err(WireError("proto: message nesting too deep".into()));
        }
        let m = &self.s.messages[id];
        if m.special != Special::None {
            return self.special(id, buf, depth);
        }
        let mut out = Map::new();
        self.fields_into(id, buf, depth, &mut out)?;
        Ok(Value::Object(out))
    }

    /// The JSON fields of a message, added to `out` (inline fields merge
    /// into their parent).
    fn fields_into(
        &self,
        id: MsgId,
        buf: &[u8],
        depth: u32,
        out: &mut Map<String, Value>,
    ) -> Result<(), WireError> {
        let m = &self.s.messages[id];
        let seen = collect(self.s, id, buf)?;
        for (f, occ) in m.fields.iter().zip(seen) {
            if f.has(INLINE) {
                let Ty::Message(sub) = f.ty else { continue };
                let bytes = match occ.last() {
                    Some(Raw::Len(b)) => *b,
                    Some(r) => return Err(wrong_wire(r.wire_type(), f)),
                    None => &[],
                };
                self.fields_into(sub, bytes, depth + 1, out)?;
                continue;
            }
            if f.has(MAP) {
                if occ.is_empty() {
                    if !f.has(OMITEMPTY) {
                        out.insert(f.json.to_string(), Value::Null);
                    }
                    continue;
                }
                let mut entries: Vec<(String, Value)> = Vec::with_capacity(occ.len());
                for raw in occ {
                    let Raw::Len(b) = raw else {
                        return Err(wrong_wire(raw.wire_type(), f));
                    };
                    entries.push(self.map_entry(f, b, depth)?);
                }
                // Go writes map keys sorted; a repeated key keeps its last
                // value.
                entries.reverse();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                entries.dedup_by(|a, b| a.0 == b.0);
                out.insert(
                    f.json.to_string(),
                    Value::Object(entries.into_iter().collect()),
                );
                continue;
            }
            if f.has(REPEATED) {
                if occ.is_empty() {
                    if !f.has(OMITEMPTY) {
                        out.insert(f.json.to_string(), Value::Null);
                    }
                    continue;
                }
                let mut items = Vec::with_capacity(occ.len());
                for raw in occ {
                    match (f.ty, raw) {
                        // Packed varints (gogo accepts both forms).
                        (
                            Ty::Scalar(sc @ (Scalar::Int32 | Scalar::Int64 | Scalar::Bool)),
                            Raw::Len(b),
                        ) => {
                            let mut r = Reader::new(b);
                            while !r.done() {
                                items.push(scalar(sc, Raw::Varint(r.varint()?), f)?);
                            }
                        }
                        (Ty::Scalar(Scalar::Double), Raw::Len(b)) => {
                            if b.len() % 8 != 0 {
                                return Err(WireError::eof());
                            }
                            for c in b.chunks(8) {
                                let v =
                                    u64::from_le_bytes(c.try_into().map_err(|_| WireError::eof())?);
                                items.push(scalar(Scalar::Double, Raw::Fixed64(v), f)?);
                            }
                        }
                        (Ty::Scalar(sc), raw) => items.push(scalar(sc, raw, f)?),
                        (Ty::Message(sub), Raw::Len(b)) => {
                            items.push(self.message(sub, b, depth + 1)?)
                        }
                        (Ty::Message(_), raw) => return Err(wrong_wire(raw.wire_type(), f)),
                    }
                }
                out.insert(f.json.to_string(), Value::Array(items));
                continue;
            }
            let v = match (f.ty, occ.last()) {
                (Ty::Scalar(sc), Some(raw)) => {
                    let v = scalar(sc, *raw, f)?;
                    if f.has(VALUE) && f.has(OMITEMPTY) && is_zero(&v) {
                        continue;
                    }
                    v
                }
                (Ty::Scalar(sc), None) => {
                    if !f.has(VALUE) || f.has(OMITEMPTY) || sc == Scalar::Bytes {
                        continue;
                    }
                    zero(sc)
                }
                (Ty::Message(sub), Some(Raw::Len(b))) => self.message(sub, b, depth + 1)?,
                (Ty::Message(_), Some(raw)) => return Err(wrong_wire(raw.wire_type(), f)),
                // A Go struct is always in its JSON, zero or not.
                (Ty::Message(sub), None) if f.has(VALUE) => self.message(sub, &[], depth + 1)?,
                (Ty::Message(_), None) => continue,
            };
            out.insert(f.json.to_string(), v);
        }
        Ok(())
    }

    fn map_entry(&self, f: &Field, b: &[u8], depth: u32) -> Result<(String, Value), WireError> {
        let mut r = Reader::new(b);
        let mut key = String::new();
        let mut value: Option<Raw<'_>> = None;
        while !r.done() {
            match r.field("MapEntry")? {
                (1, Raw::Len(k)) => key = String::from_utf8_lossy(k).into_owned(),
                (1, raw) => return Err(wrong_wire(raw.wire_type(), f)),
                (2, raw) => value = Some(raw),
                _ => {}
            }
        }
        let v = match (f.ty, value) {
            (Ty::Scalar(sc), Some(raw)) => scalar(sc, raw, f)?,
            (Ty::Scalar(sc), None) => zero(sc),
            (Ty::Message(sub), Some(Raw::Len(b))) => self.message(sub, b, depth + 1)?,
            (Ty::Message(_), Some(raw)) => return Err(wrong_wire(raw.wire_type(), f)),
            (Ty::Message(sub), None) => self.message(sub, &[], depth + 1)?,
        };
        Ok((key, v))
    }

    /// The well-known types' JSON.
    fn special(&self, id: MsgId, buf: &[u8], depth: u32) -> Result<Value, WireError> {
        let m = &self.s.messages[id];
        let mut varints: [Option<u64>; 4] = [None; 4];
        let mut lens: [Option<&[u8]>; 4] = [None; 4];
        let mut repeated: Vec<&[u8]> = Vec::new();
        let mut r = Reader::new(buf);
        while !r.done() {
            let (n, raw) = r.field(m.short())?;
            let slot = n as usize;
            if slot >= 4 {
                continue;
            }
            match raw {
                Raw::Varint(v) => varints[slot] = Some(v),
                Raw::Len(b) => {
                    if n == 2 {
                        repeated.push(b);
                    }
                    lens[slot] = Some(b);
                }
                _ => {}
            }
        }
        let bad = |what: &str| WireError(format!("proto: {}: {what}", m.short()));
        let raw_json = |b: Option<&[u8]>| -> Result<Value, WireError> {
            match b {
                None | Some([]) => Ok(Value::Null),
                Some(b) => {
                    serde_json::from_slice(b).map_err(|e| bad(&format!("raw is not JSON: {e}")))
                }
            }
        };
        // The message type of a special's `schema` field.
        let schema_of = |number: u32| -> Option<MsgId> {
            m.field(number).and_then(|i| match m.fields[i].ty {
                Ty::Message(sub) => Some(sub),
                Ty::Scalar(_) => None,
            })
        };
        Ok(match m.special {
            Special::Time | Special::MicroTime => {
                if buf.is_empty() {
                    return Ok(Value::Null);
                }
                let secs = varints[1].unwrap_or(0) as i64;
                let nanos = varints[2].unwrap_or(0) as i32;
                let s = if m.special == Special::Time {
                    wkt::time_to_json(secs)
                } else {
                    wkt::micro_time_to_json(secs, nanos)
                };
                Value::String(s.ok_or_else(|| bad("time out of range"))?)
            }
            Special::Duration => {
                Value::String(wkt::duration_to_json(varints[1].unwrap_or(0) as i64))
            }
            Special::Quantity => Value::String(match lens[1] {
                Some(b) => String::from_utf8_lossy(b).into_owned(),
                None => "0".into(),
            }),
            Special::IntOrString => {
                if varints[1] == Some(1) {
                    Value::String(String::from_utf8_lossy(lens[3].unwrap_or(b"")).into_owned())
                } else {
                    Value::from(varints[2].unwrap_or(0) as i32)
                }
            }
            Special::RawExtension => match lens[1] {
                Some(b) if b.starts_with(super::MAGIC) => {
                    super::decode_envelope_in(self.s, b, depth + 1)?
                }
                other => raw_json(other)?,
            },
            Special::FieldsV1 | Special::Json => raw_json(lens[1])?,
            Special::PropsOrArray => {
                let sub = schema_of(1).ok_or_else(|| bad("no schema"))?;
                if !repeated.is_empty() {
                    Value::Array(
                        repeated
                            .iter()
                            .map(|b| self.message(sub, b, depth + 1))
                            .collect::<Result<_, _>>()?,
                    )
                } else if let Some(b) = lens[1] {
                    self.message(sub, b, depth + 1)?
                } else {
                    Value::Null
                }
            }
            Special::PropsOrBool => {
                let sub = schema_of(2).ok_or_else(|| bad("no schema"))?;
                match lens[2] {
                    Some(b) => self.message(sub, b, depth + 1)?,
                    None => Value::Bool(varints[1].unwrap_or(0) != 0),
                }
            }
            Special::StringArray => {
                let mut items = Vec::new();
                let mut r = Reader::new(buf);
                while !r.done() {
                    if let (1, Raw::Len(b)) = r.field(m.short())? {
                        items.push(Value::String(String::from_utf8_lossy(b).into_owned()));
                    }
                }
                if items.is_empty() {
                    Value::Null
                } else {
                    Value::Array(items)
                }
            }
            Special::PropsOrStringArray => {
                let sub = schema_of(1).ok_or_else(|| bad("no schema"))?;
                if !repeated.is_empty() {
                    Value::Array(
                        repeated
                            .iter()
                            .map(|b| Value::String(String::from_utf8_lossy(b).into_owned()))
                            .collect(),
                    )
                } else if let Some(b) = lens[1] {
                    self.message(sub, b, depth + 1)?
                } else {
                    Value::Null
                }
            }
            Special::None => Value::Null,
        })
    }
}

fn scalar(sc: Scalar, raw: Raw<'_>, f: &Field) -> Result<Value, WireError> {
    Ok(match (sc, raw) {
        (Scalar::String, Raw::Len(b)) => Value::String(String::from_utf8_lossy(b).into_owned()),
        (Scalar::Bytes, Raw::Len(b)) => Value::String(B64.encode(b)),
        (Scalar::Bool, Raw::Varint(v)) => Value::Bool(v != 0),
        (Scalar::Int32, Raw::Varint(v)) => Value::from(v as i32),
        (Scalar::Int64, Raw::Varint(v)) => Value::from(v as i64),
        (Scalar::Double, Raw::Fixed64(v)) => Number::from_f64(f64::from_bits(v))
            .map(Value::Number)
            .unwrap_or(Value::Null),
        (_, raw) => return Err(wrong_wire(raw.wire_type(), f)),
    })
}

/// The JSON Go writes for a scalar's zero value (a zero `float64` is `0`).
pub(crate) fn zero(sc: Scalar) -> Value {
    match sc {
        Scalar::String | Scalar::Bytes => Value::String(String::new()),
        Scalar::Bool => Value::Bool(false),
        Scalar::Int32 | Scalar::Int64 | Scalar::Double => Value::from(0),
    }
}

/// Whether a scalar's JSON is its Go zero value (or `null`).
pub(crate) fn is_zero(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Null => true,
        _ => false,
    }
}

// ---------------------------------------------------------------------
// JSON → Protobuf
// ---------------------------------------------------------------------

/// A JSON value that does not fit its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError(pub String);

/// A message's bytes from its JSON value (`null` is the zero message).
pub(crate) fn from_json(
    s: &Schema,
    id: MsgId,
    v: &Value,
    out: &mut Vec<u8>,
) -> Result<(), ShapeError> {
    Encoder { s }.message(id, v, out, 0)
}

struct Encoder<'s> {
    s: &'s Schema,
}

impl Encoder<'_> {
    fn message(
        &self,
        id: MsgId,
        v: &Value,
        out: &mut Vec<u8>,
        depth: u32,
    ) -> Result<(), ShapeError> {
        if depth > MAX_DEPTH {
            return Err(ShapeError("an object nests too deep".into()));
        }
        let m = &self.s.messages[id];
        if m.special != Special::None {
            return self.special(id, v, out, depth);
        }
        let empty = Map::new();
        let obj = match v {
            Value::Object(o) => o,
            Value::Null => &empty,
            other => {
                return Err(ShapeError(format!(
                    "{} must be an object, not {}",
                    m.short(),
                    kind_of(other)
                )))
            }
        };
        for &i in &m.by_number {
            let f = &m.fields[i];
            if f.has(INLINE) {
                let Ty::Message(sub) = f.ty else { continue };
                let mut b = Vec::new();
                self.message(sub, v, &mut b, depth + 1)?;
                put_len(out, f.number, &b);
                continue;
            }
            let value = obj.get(&*f.json).filter(|v| !v.is_null());
            if f.has(MAP) {
                let Some(value) = value else { continue };
                let map = value.as_object().ok_or_else(|| {
                    ShapeError(format!("{}.{} must be an object", m.short(), f.json))
                })?;
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                for k in keys {
                    let mut entry = Vec::new();
                    put_len(&mut entry, 1, k.as_bytes());
                    self.value(f, 2, &map[k], &mut entry, depth, true)?;
                    put_len(out, f.number, &entry);
                }
                continue;
            }
            if f.has(REPEATED) {
                let Some(value) = value else { continue };
                let items = value.as_array().ok_or_else(|| {
                    ShapeError(format!("{}.{} must be an array", m.short(), f.json))
                })?;
                for item in items {
                    self.value(f, f.number, item, out, depth, true)?;
                }
                continue;
            }
            match value {
                Some(v) => self.value(f, f.number, v, out, depth, true)?,
                None if f.has(VALUE) => self.value(f, f.number, &Value::Null, out, depth, false)?,
                None => {}
            }
        }
        Ok(())
    }

    /// One value of field `f` under `number` (`present`: the JSON has it).
    fn value(
        &self,
        f: &Field,
        number: u32,
        v: &Value,
        out: &mut Vec<u8>,
        depth: u32,
        present: bool,
    ) -> Result<(), ShapeError> {
        let shape =
            |want: &str| ShapeError(format!("{} must be {want}, not {}", f.json, kind_of(v)));
        match f.ty {
            Ty::Message(sub) => {
                let mut b = Vec::new();
                self.message(sub, v, &mut b, depth + 1)?;
                put_len(out, number, &b);
            }
            Ty::Scalar(Scalar::String) => {
                let s = match v {
                    Value::String(s) => s.as_str(),
                    Value::Null if !present => "",
                    _ => return Err(shape("a string")),
                };
                put_len(out, number, s.as_bytes());
            }
            Ty::Scalar(Scalar::Bytes) => {
                let b = match v {
                    Value::String(s) => B64
                        .decode(s)
                        .map_err(|e| ShapeError(format!("{} is not base64: {e}", f.json)))?,
                    Value::Null => Vec::new(),
                    _ => return Err(shape("a base64 string")),
                };
                put_len(out, number, &b);
            }
            Ty::Scalar(Scalar::Bool) => {
                let b = match v {
                    Value::Bool(b) => *b,
                    Value::Null => false,
                    _ => return Err(shape("a boolean")),
                };
                put_key(out, number, wire::VARINT);
                put_varint(out, u64::from(b));
            }
            Ty::Scalar(sc @ (Scalar::Int32 | Scalar::Int64)) => {
                let n = match v {
                    Value::Null => 0,
                    Value::Number(n) => n
                        .as_i64()
                        .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
                        .ok_or_else(|| shape("an integer"))?,
                    _ => return Err(shape("an integer")),
                };
                let n = if sc == Scalar::Int32 {
                    i64::from(i32::try_from(n).map_err(|_| shape("a 32-bit integer"))?)
                } else {
                    n
                };
                put_key(out, number, wire::VARINT);
                put_varint(out, n as u64);
            }
            Ty::Scalar(Scalar::Double) => {
                let d = match v {
                    Value::Null => 0.0,
                    Value::Number(n) => n.as_f64().ok_or_else(|| shape("a number"))?,
                    _ => return Err(shape("a number")),
                };
                put_key(out, number, wire::FIXED64);
                out.extend_from_slice(&d.to_bits().to_le_bytes());
            }
        }
        Ok(())
    }

    fn special(
        &self,
        id: MsgId,
        v: &Value,
        out: &mut Vec<u8>,
        depth: u32,
    ) -> Result<(), ShapeError> {
        let m = &self.s.messages[id];
        let shape = |want: &str| {
            ShapeError(format!(
                "a {} must be {want}, not {}",
                m.short(),
                kind_of(v)
            ))
        };
        let schema_of = |number: u32| -> Result<MsgId, ShapeError> {
            m.field(number)
                .and_then(|i| match m.fields[i].ty {
                    Ty::Message(sub) => Some(sub),
                    Ty::Scalar(_) => None,
                })
                .ok_or_else(|| ShapeError(format!("{} has no schema field", m.short())))
        };
        match m.special {
            Special::Time | Special::MicroTime => match v {
                Value::Null => {}
                Value::String(s) if s.is_empty() => {}
                Value::String(s) => {
                    let (secs, nanos) =
                        wkt::parse_time(s).ok_or_else(|| shape("an RFC 3339 time"))?;
                    put_key(out, 1, wire::VARINT);
                    put_varint(out, secs as u64);
                    put_key(out, 2, wire::VARINT);
                    put_varint(out, i64::from(nanos) as u64);
                }
                _ => return Err(shape("a time string")),
            },
            Special::Duration => {
                let ns = match v {
                    Value::Null => 0,
                    Value::String(s) => {
                        wkt::parse_duration(s).ok_or_else(|| shape("a duration"))?
                    }
                    _ => return Err(shape("a duration string")),
                };
                put_key(out, 1, wire::VARINT);
                put_varint(out, ns as u64);
            }
            Special::Quantity => {
                let s = match v {
                    Value::Null => "0".to_string(),
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => return Err(shape("a quantity")),
                };
                put_len(out, 1, s.as_bytes());
            }
            Special::IntOrString => {
                let (t, i, s) = match v {
                    Value::Null => (0, 0i64, ""),
                    Value::Number(n) => (
                        0,
                        n.as_i64()
                            .and_then(|i| i32::try_from(i).ok())
                            .ok_or_else(|| shape("a 32-bit integer"))?
                            .into(),
                        "",
                    ),
                    Value::String(s) => (1, 0, s.as_str()),
                    _ => return Err(shape("an integer or a string")),
                };
                put_key(out, 1, wire::VARINT);
                put_varint(out, t);
                put_key(out, 2, wire::VARINT);
                put_varint(out, i as u64);
                put_len(out, 3, s.as_bytes());
            }
            Special::RawExtension | Special::FieldsV1 | Special::Json => {
                if !v.is_null() {
                    let raw = serde_json::to_vec(v).map_err(|e| ShapeError(e.to_string()))?;
                    put_len(out, 1, &raw);
                }
            }
            Special::PropsOrArray => {
                let sub = schema_of(1)?;
                match v {
                    Value::Array(items) => {
                        for item in items {
                            let mut b = Vec::new();
                            self.message(sub, item, &mut b, depth + 1)?;
                            put_len(out, 2, &b);
                        }
                    }
                    Value::Null => {}
                    other => {
                        let mut b = Vec::new();
                        self.message(sub, other, &mut b, depth + 1)?;
                        put_len(out, 1, &b);
                    }
                }
            }
            Special::PropsOrBool => {
                let sub = schema_of(2)?;
                match v {
                    Value::Bool(b) => {
                        put_key(out, 1, wire::VARINT);
                        put_varint(out, u64::from(*b));
                    }
                    Value::Null => {
                        put_key(out, 1, wire::VARINT);
                        put_varint(out, 0);
                    }
                    other => {
                        put_key(out, 1, wire::VARINT);
                        put_varint(out, 1);
                        let mut b = Vec::new();
                        self.message(sub, other, &mut b, depth + 1)?;
                        put_len(out, 2, &b);
                    }
                }
            }
            Special::StringArray => match v {
                Value::Array(items) => {
                    for item in items {
                        let s = item.as_str().ok_or_else(|| shape("an array of strings"))?;
                        put_len(out, 1, s.as_bytes());
                    }
                }
                Value::Null => {}
                _ => return Err(shape("an array of strings")),
            },
            Special::PropsOrStringArray => {
                let sub = schema_of(1)?;
                match v {
                    Value::Array(items) => {
                        for item in items {
                            let s = item.as_str().ok_or_else(|| shape("an array of strings"))?;
                            put_len(out, 2, s.as_bytes());
                        }
                    }
                    Value::Null => {}
                    other => {
                        let mut b = Vec::new();
                        self.message(sub, other, &mut b, depth + 1)?;
                        put_len(out, 1, &b);
                    }
                }
            }
            Special::None => {}
        }
        Ok(())
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
