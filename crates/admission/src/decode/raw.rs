//! A JSON tree that keeps every key of an object, duplicates included.
//!
//! `serde_json::Value` keeps only the last of two equal keys, so duplicate
//! fields would be invisible. This tree is built by a serde visitor that sees
//! every key in document order.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

/// One JSON value; objects keep all their entries in document order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawNode {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<RawNode>),
    Object(Vec<(String, RawNode)>),
}

impl RawNode {
    /// Parse JSON bytes, keeping duplicate keys.
    pub fn parse(bytes: &[u8]) -> Result<RawNode, serde_json::Error> {
        serde_json::from_slice(bytes)
    }

    /// The same tree from a `Value` (which has no duplicates).
    pub fn from_value(v: &Value) -> RawNode {
        match v {
            Value::Null => RawNode::Null,
            Value::Bool(b) => RawNode::Bool(*b),
            Value::Number(n) => RawNode::Number(n.clone()),
            Value::String(s) => RawNode::String(s.clone()),
            Value::Array(a) => RawNode::Array(a.iter().map(RawNode::from_value).collect()),
            Value::Object(m) => RawNode::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), RawNode::from_value(v)))
                    .collect(),
            ),
        }
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = RawNode;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<RawNode, E> {
        Ok(RawNode::Null)
    }
    fn visit_none<E>(self) -> Result<RawNode, E> {
        Ok(RawNode::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<RawNode, E> {
        Ok(RawNode::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<RawNode, E> {
        Ok(RawNode::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<RawNode, E> {
        Ok(RawNode::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<RawNode, E> {
        Ok(Number::from_f64(v).map_or(RawNode::Null, RawNode::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<RawNode, E> {
        Ok(RawNode::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<RawNode, E> {
        Ok(RawNode::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawNode, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<RawNode>()? {
            items.push(item);
        }
        Ok(RawNode::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawNode, A::Error> {
        let mut entries = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, RawNode>()? {
            entries.push((k, v));
        }
        Ok(RawNode::Object(entries))
    }
}

impl<'de> Deserialize<'de> for RawNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawNode, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_duplicate_keys_in_order() {
        let n = RawNode::parse(br#"{"a":1,"b":{"c":true},"a":"x"}"#).unwrap();
        let RawNode::Object(e) = n else { panic!() };
        let keys: Vec<&str> = e.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["a", "b", "a"]);
        assert_eq!(e[2].1, RawNode::String("x".into()));
    }
}
