//! CBOR request bodies into the JSON value model, by kube's decode mode
//! (`serializer/cbor/internal/modes/decode.go` over fxamacker/cbor), with
//! its error texts:
//!
//! - the input must be one well-formed item (`EOF`, `unexpected EOF`,
//!   extraneous data, reserved additional information, a stray `break`);
//! - at most 64 levels of nesting, 1024 array elements, 1024 map pairs;
//!   indefinite lengths are accepted;
//! - text strings must be UTF-8; byte strings are strings (base64, base64url
//!   or hex of their bytes inside the "expected later encoding" tags 22, 21,
//!   23); map keys must be strings and never repeat;
//! - integers must fit an `int64`; NaN and infinities are refused; of the
//!   simple values only `false`, `true` and `null`;
//! - tags: the self-described tag and unknown tags stand for their content,
//!   time tags 0 and 1 become RFC 3339 strings, bignums (2, 3) are refused.
//!
//! The self-described tag is not required. kube first reads the type meta
//! (`apiVersion`, `kind`) of the whole input and then the object, so an
//! error is reported as one of either [`Stage`]: a malformed input, or a
//! problem in the top-level map's keys or type meta, before any problem
//! deeper in the object.
//!
//! Hand-written over `ciborium-ll`'s heads rather than `ciborium::Value`:
//! kube's limits, duplicate-key rule, messages and stages need the walk.

use base64::Engine;
use ciborium_ll::{Decoder, Header};
use keelson_apimachinery::ApiError;
use serde_json::{Map, Number, Value};

/// The deepest nesting kube accepts.
const MAX_NESTED_LEVELS: usize = 64;
/// The most elements of one array kube accepts.
const MAX_ARRAY_ELEMENTS: usize = 1024;
/// The most pairs of one map kube accepts.
const MAX_MAP_PAIRS: usize = 1024;

/// Which of kube's two reads of a body found the problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Reading the type meta: the input is malformed, or its top-level
    /// map's keys, `apiVersion` or `kind` are wrong.
    Interpret,
    /// Reading the object itself.
    Object,
}

/// A body that is not acceptable CBOR: fxamacker/cbor's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct DecodeError {
    pub message: String,
    pub stage: Stage,
}

/// The name fxamacker gives a major type.
fn type_name(major: u8) -> &'static str {
    match major {
        0 => "positive integer",
        1 => "negative integer",
        2 => "byte string",
        3 => "UTF-8 text string",
        4 => "array",
        5 => "map",
        6 => "tag",
        _ => "primitives",
    }
}

/// Where a value sits, for the stage its problems belong to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// The top-level map's keys and its `apiVersion`/`kind` values.
    TypeMeta,
    /// Anywhere else.
    Object,
}

struct Reader<'a> {
    data: &'a [u8],
    dec: Decoder<&'a [u8]>,
    /// The first problem of each stage in a well-formed input.
    interpret: Option<String>,
    object: Option<String>,
}

type Step<T> = Result<T, String>;

impl<'a> Reader<'a> {
    fn new(data: &'a [u8]) -> Self {
        Reader {
            data,
            dec: Decoder::from(data),
            interpret: None,
            object: None,
        }
    }

    /// Note a problem of a well-formed input; the first of each stage wins.
    fn defer(&mut self, place: Place, message: String) {
        let slot = match place {
            Place::TypeMeta => &mut self.interpret,
            Place::Object => &mut self.object,
        };
        slot.get_or_insert(message);
    }

    /// The next head and the offset of its first byte.
    fn pull(&mut self) -> Step<(Header, usize)> {
        let at = self.dec.offset();
        match self.dec.pull() {
            Ok(h) => Ok((h, at)),
            Err(ciborium_ll::Error::Io(_)) if self.data.is_empty() => Err("EOF".into()),
            Err(ciborium_ll::Error::Io(_)) => Err("unexpected EOF".into()),
            Err(ciborium_ll::Error::Syntax(off)) => {
                let b = self.data.get(off).copied().unwrap_or_default();
                Err(format!(
                    "cbor: invalid additional information {} for type {}",
                    b & 0x1f,
                    type_name(b >> 5)
                ))
            }
        }
    }

    /// The next head without taking it.
    fn peek(&mut self) -> Step<Header> {
        let (h, _) = self.pull()?;
        self.dec.push(h);
        Ok(h)
    }

    /// `n` bytes of string content.
    fn take(&mut self, n: usize) -> Step<Vec<u8>> {
        let left = self.data.len().saturating_sub(self.dec.offset());
        if n > left {
            return Err("unexpected EOF".into());
        }
        let mut buf = vec![0; n];
        ciborium_io::Read::read_exact(&mut self.dec, &mut buf)
            .map_err(|_| String::from("unexpected EOF"))?;
        Ok(buf)
    }

    /// The content of a byte (major 2) or text (major 3) string, chunks
    /// joined; text must be UTF-8.
    fn string(&mut self, major: u8, len: Option<usize>) -> Step<Vec<u8>> {
        let check = |b: &[u8]| {
            if major == 3 && std::str::from_utf8(b).is_err() {
                Err(String::from("cbor: invalid UTF-8 string"))
            } else {
                Ok(())
            }
        };
        if let Some(n) = len {
            let b = self.take(n)?;
            check(&b)?;
            return Ok(b);
        }
        let mut out = Vec::new();
        loop {
            let (h, at) = self.pull()?;
            let n = match h {
                Header::Break => return Ok(out),
                Header::Bytes(Some(n)) if major == 2 => n,
                Header::Text(Some(n)) if major == 3 => n,
                _ => {
                    return Err(format!(
                        "cbor: wrong element type {} for indefinite-length {}",
                        type_name(self.data[at] >> 5),
                        type_name(major)
                    ))
                }
            };
            let chunk = self.take(n)?;
            check(&chunk)?;
            out.extend_from_slice(&chunk);
        }
    }

    /// One data item at nesting `depth`; `later` is the enclosing
    /// "expected later encoding" tag.
    fn item(&mut self, depth: usize, later: Option<u64>, place: Place) -> Step<Value> {
        let (h, at) = self.pull()?;
        Ok(match h {
            Header::Positive(n) => match i64::try_from(n) {
                Ok(i) => Value::from(i),
                Err(_) => {
                    self.defer(place, overflow("positive", i128::from(n)));
                    Value::Null
                }
            },
            Header::Negative(n) => match i64::try_from(n) {
                Ok(i) => Value::from(-1 - i),
                Err(_) => {
                    self.defer(place, overflow("negative", -1 - i128::from(n)));
                    Value::Null
                }
            },
            Header::Float(f) => match Number::from_f64(f) {
                Some(n) => Value::Number(n),
                None => {
                    let what = if f.is_nan() {
                        "floating-point NaN"
                    } else {
                        "floating-point infinity"
                    };
                    self.defer(place, unacceptable("primitives", what));
                    Value::Null
                }
            },
            Header::Simple(x) => {
                if self.data[at] & 0x1f == 24 && x < 32 {
                    return Err(format!(
                        "cbor: invalid simple value {x} for type primitives"
                    ));
                }
                match x {
                    20 => Value::Bool(false),
                    21 => Value::Bool(true),
                    22 => Value::Null,
                    _ => {
                        let what = format!("simple value {x} is not recognized");
                        self.defer(place, unacceptable("primitives", &what));
                        Value::Null
                    }
                }
            }
            Header::Break => return Err("cbor: unexpected \"break\" code".into()),
            Header::Bytes(len) => {
                let b = self.string(2, len)?;
                Value::String(bytes_as_string(&b, later))
            }
            Header::Text(len) => {
                let b = self.string(3, len)?;
                Value::String(String::from_utf8(b).unwrap_or_default())
            }
            Header::Array(len) => {
                let depth = nest(depth)?;
                let mut items = Vec::with_capacity(len.unwrap_or(0).min(MAX_ARRAY_ELEMENTS));
                loop {
                    match len {
                        Some(n) if items.len() == n => break,
                        None if self.peek()? == Header::Break => {
                            self.pull()?;
                            break;
                        }
                        _ => {}
                    }
                    if items.len() == MAX_ARRAY_ELEMENTS {
                        return Err(format!(
                            "cbor: exceeded max number of elements {MAX_ARRAY_ELEMENTS} for CBOR array"
                        ));
                    }
                    items.push(self.item(depth, later, Place::Object)?);
                }
                Value::Array(items)
            }
            Header::Map(len) => {
                let top = depth == 0;
                let depth = nest(depth)?;
                let mut map = Map::new();
                let mut index = 0;
                loop {
                    match len {
                        Some(n) if index == n => break,
                        None if self.peek()? == Header::Break => {
                            self.pull()?;
                            break;
                        }
                        _ => {}
                    }
                    if index == MAX_MAP_PAIRS {
                        return Err(format!(
                            "cbor: exceeded max number of key-value pairs {MAX_MAP_PAIRS} for CBOR map"
                        ));
                    }
                    let key_place = if top { Place::TypeMeta } else { Place::Object };
                    let key = self.key(depth, later, key_place)?;
                    let value_place = if top && (key == "kind" || key == "apiVersion") {
                        Place::TypeMeta
                    } else {
                        Place::Object
                    };
                    let value = self.item(depth, later, value_place)?;
                    if map.contains_key(&key) {
                        self.defer(
                            key_place,
                            format!(
                                "cbor: found duplicate map key \"{key}\" at map element index {index}"
                            ),
                        );
                    } else {
                        map.insert(key, value);
                    }
                    index += 1;
                }
                Value::Object(map)
            }
            Header::Tag(n) => return self.tag(depth, n, later, place),
        })
    }

    /// The content of tag `n`.
    fn tag(&mut self, depth: usize, n: u64, later: Option<u64>, place: Place) -> Step<Value> {
        let (next, at) = self.pull()?;
        self.dec.push(next);
        let content = type_name(self.data[at] >> 5);
        // A tag of a tag is one level deeper.
        let depth = if matches!(next, Header::Tag(_)) {
            nest(depth)?
        } else {
            depth
        };
        match n {
            0 => {
                if !matches!(next, Header::Text(_)) {
                    return Err(inadmissible(0, "text string", content));
                }
                let v = self.item(depth, later, place)?;
                let s = v.as_str().unwrap_or_default();
                match chrono::DateTime::parse_from_rfc3339(s) {
                    Ok(t) => Ok(Value::String(rfc3339_nano(t))),
                    Err(e) => {
                        self.defer(place, format!("cbor: cannot set {s:?} for time.Time: {e}"));
                        Ok(Value::Null)
                    }
                }
            }
            1 => {
                let number = matches!(next, Header::Positive(_) | Header::Negative(_))
                    || (0xf9..=0xfb).contains(&self.data[at]);
                if !number {
                    return Err(inadmissible(1, "integer or floating-point number", content));
                }
                let v = self.item(depth, later, place)?;
                let secs = v.as_f64().unwrap_or_default();
                let whole = secs.floor();
                let nanos = ((secs - whole) * 1e9).round() as u32;
                Ok(
                    match chrono::DateTime::from_timestamp(whole as i64, nanos.min(999_999_999)) {
                        Some(t) => Value::String(rfc3339_nano(t.fixed_offset())),
                        None => Value::Null,
                    },
                )
            }
            2 | 3 => {
                if !matches!(next, Header::Bytes(_)) {
                    return Err(inadmissible(n, "byte string", content));
                }
                Err(unacceptable("tag", "bignum"))
            }
            21..=23 => self.item(depth, Some(n), place),
            _ => self.item(depth, later, place),
        }
    }

    /// A map key: a string (a byte string converted as values are).
    fn key(&mut self, depth: usize, later: Option<u64>, place: Place) -> Step<String> {
        let at = self.dec.offset();
        match self.item(depth, later, place)? {
            Value::String(s) => Ok(s),
            // null leaves Go's string key empty.
            Value::Null if self.data[at] == 0xf6 => Ok(String::new()),
            _ => {
                let major = self.data.get(at).map_or(7, |b| b >> 5);
                self.defer(
                    place,
                    format!(
                        "cbor: cannot unmarshal {} into Go value of type string",
                        type_name(major)
                    ),
                );
                Ok(String::new())
            }
        }
    }
}

/// One level deeper, or kube's nesting error.
fn nest(depth: usize) -> Step<usize> {
    if depth + 1 > MAX_NESTED_LEVELS {
        Err(format!(
            "cbor: exceeded max nested level {MAX_NESTED_LEVELS}"
        ))
    } else {
        Ok(depth + 1)
    }
}

fn overflow(sign: &str, value: i128) -> String {
    format!("cbor: cannot unmarshal {sign} integer into Go value of type int64 ({value} overflows Go's int64)")
}

fn unacceptable(cbor_type: &str, what: &str) -> String {
    format!("cbor: data item of cbor type {cbor_type} is not accepted by protocol: {what}")
}

fn inadmissible(tag: u64, want: &str, got: &str) -> String {
    format!("cbor: tag number {tag} must be followed by {want}, got {got}")
}

/// A byte string as a Go string: its bytes, or their text encoding inside
/// an "expected later encoding" tag.
fn bytes_as_string(b: &[u8], later: Option<u64>) -> String {
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    match later {
        Some(21) => URL_SAFE_NO_PAD.encode(b),
        Some(22) => STANDARD.encode(b),
        Some(23) => b.iter().map(|x| format!("{x:02x}")).collect(),
        // Go keeps the bytes; its JSON shows invalid UTF-8 as U+FFFD.
        _ => String::from_utf8_lossy(b).into_owned(),
    }
}

/// Go's `time.RFC3339Nano` layout: fractional seconds without trailing
/// zeros, `Z` for UTC.
fn rfc3339_nano(t: chrono::DateTime<chrono::FixedOffset>) -> String {
    use chrono::Timelike;
    let mut s = t.format("%Y-%m-%dT%H:%M:%S").to_string();
    let nanos = t.nanosecond() % 1_000_000_000;
    if nanos > 0 {
        let frac = format!("{nanos:09}");
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    if t.offset().local_minus_utc() == 0 {
        s.push('Z');
    } else {
        s.push_str(&t.format("%:z").to_string());
    }
    s
}

/// A well-formed item read whole: its value and the first problem of each
/// stage; `Err` for a malformed input.
struct Read {
    value: Value,
    interpret: Option<String>,
    object: Option<String>,
}

fn read(data: &[u8]) -> Result<Read, String> {
    let mut r = Reader::new(data);
    let value = r.item(0, None, Place::Object)?;
    let end = r.dec.offset();
    if end < data.len() {
        return Err(format!(
            "cbor: {} bytes of extraneous data starting at index {end}",
            data.len() - end
        ));
    }
    Ok(Read {
        value,
        interpret: r.interpret,
        object: r.object,
    })
}

fn interpret(message: String) -> DecodeError {
    DecodeError {
        message,
        stage: Stage::Interpret,
    }
}

fn object(message: String) -> DecodeError {
    DecodeError {
        message,
        stage: Stage::Object,
    }
}

/// Decode one CBOR data item by kube's rules (see the module notes).
pub fn decode(data: &[u8]) -> Result<Value, DecodeError> {
    let r = read(data).map_err(interpret)?;
    if let Some(m) = r.interpret {
        return Err(interpret(m));
    }
    if let Some(m) = r.object {
        return Err(object(m));
    }
    Ok(r.value)
}

/// The major type of the first item, under the self-described tag.
fn top_major(data: &[u8]) -> u8 {
    data.strip_prefix(&super::SELF_DESCRIBED[..])
        .unwrap_or(data)
        .first()
        .map_or(7, |b| b >> 5)
}

/// [`decode`] of an object: the type meta is read into a Go struct first,
/// so the item must be a map (or null), its `apiVersion` and `kind`
/// strings (or null).
fn decode_object(data: &[u8]) -> Result<Value, DecodeError> {
    let r = read(data).map_err(interpret)?;
    if let Some(m) = r.interpret {
        return Err(interpret(m));
    }
    match &r.value {
        Value::Object(map) => {
            for field in ["apiVersion", "kind"] {
                if let Some(v) = map.get(field).filter(|v| !v.is_string() && !v.is_null()) {
                    return Err(interpret(format!(
                        "cbor: cannot unmarshal {} into Go struct field TypeMeta.{field} of type string",
                        json_cbor_type(v)
                    )));
                }
            }
        }
        Value::Null => {}
        _ => {
            return Err(interpret(format!(
                "cbor: cannot unmarshal {} into Go value of type v1.TypeMeta",
                type_name(top_major(data))
            )))
        }
    }
    if let Some(m) = r.object {
        return Err(object(m));
    }
    Ok(r.value)
}

/// The CBOR type a decoded value came from.
fn json_cbor_type(v: &Value) -> &'static str {
    match v {
        Value::Number(n) if n.as_i64().is_some_and(|i| i < 0) => "negative integer",
        Value::Number(n) if n.is_i64() || n.is_u64() => "positive integer",
        Value::Array(_) => "array",
        Value::Object(_) => "map",
        _ => "primitives",
    }
}

/// kube's summary of a body in decode errors (`summarizeData`): JSON-looking
/// bodies as text, others as hex, at most 30 bytes.
pub fn summary(body: &[u8]) -> String {
    const MAX: usize = 30;
    if body.is_empty() {
        return "<empty>".into();
    }
    let cut = &body[..body.len().min(MAX)];
    let mut out = if body[0] == b'{' {
        String::from_utf8_lossy(cut).into_owned()
    } else {
        cut.iter().map(|b| format!("{b:02x}")).collect()
    };
    if body.len() > MAX {
        out.push_str(" ...");
    }
    out
}

/// Decode an `application/cbor` request body for a resource of `kind`
/// served at `version`, with kube's `400` wording (`transformDecodeError`):
/// a type-meta failure is "unrecognized", a failure in the object names
/// the kind and version the body claims.
pub fn decode_request(body: &[u8], kind: &str, version: &str) -> Result<Value, ApiError> {
    decode_object(body).map_err(|e| match e.stage {
        Stage::Interpret => ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {kind}): unable to determine group/version/kind: {} ({})",
            e.message,
            summary(body)
        )),
        Stage::Object => {
            // The type meta read fine: the kind and version the body names,
            // defaulted from the resource's.
            let meta = decode_type_meta(body);
            let claimed_kind = meta.0.filter(|k| !k.is_empty());
            let claimed_version = meta
                .1
                .map(|v| v.rsplit('/').next().unwrap_or_default().to_string())
                .filter(|v| !v.is_empty());
            ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a {kind}: {}",
                claimed_kind.as_deref().unwrap_or(kind),
                claimed_version.as_deref().unwrap_or(version),
                e.message
            ))
        }
    })
}

/// The top-level `kind` and `apiVersion` strings of a body whose object
/// failed to decode (read leniently: the failure is deeper).
fn decode_type_meta(body: &[u8]) -> (Option<String>, Option<String>) {
    let mut r = Reader::new(body);
    match r.item(0, None, Place::Object) {
        Ok(Value::Object(m)) => {
            let s = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_string);
            (s("kind"), s("apiVersion"))
        }
        _ => (None, None),
    }
}

/// Decode an `application/apply-patch+cbor` body (Server-Side Apply) into
/// the apply configuration; kube's `400` names YAML whatever the format.
pub fn decode_apply(body: &[u8]) -> Result<Value, ApiError> {
    let bad = |m: &str| ApiError::bad_request(format!("error decoding YAML: {m}"));
    let value = decode(body).map_err(|e| bad(&e.message))?;
    match value {
        Value::Object(_) => Ok(value),
        Value::Null => Ok(Value::Object(Map::new())),
        _ => Err(bad(&format!(
            "cbor: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            type_name(top_major(body))
        ))),
    }
}

#[cfg(test)]
pub(super) fn decode_object_for_tests(data: &[u8]) -> Result<Value, DecodeError> {
    decode_object(data)
}
