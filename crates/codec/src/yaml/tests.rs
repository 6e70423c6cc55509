//! go-yaml v2's output, written out by hand from its rules.

use super::*;
use serde_json::json;

fn yaml(v: Value) -> String {
    to_yaml(&v)
}

#[test]
fn keys_sorted_and_each_quoting_rule() {
    let v = json!({
        "kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": "c", "namespace": "default", "uid": "u", "resourceVersion": "12",
            "creationTimestamp": "2026-12-01T19:56:12Z", "labels": {"z": "1", "a": "true"}},
        "data": {
            "num": "2", "bool": "true", "null": "null", "exp": "1e3", "ts": "2026-12-01T19:56:12Z",
            "date": "2026-12-01", "plain": "hello world", "empty": "", "colon": "a: b",
            "hash": "a #b", "lead": " x", "star": "*x", "quote": "it's", "tab": "a\tb",
            "multi": "l1\nl2\n", "multi2": "l1\nl2", "keep": "l1\n\n", "y": "y", "hex": "0x1F",
            "oct": "012", "b60": "1:20", "dot": ".dockerconfigjson", "neg": "-", "dash": "- x",
            "emoji": "\u{1F600}", "ver": "1.2.3", "float": "1.5", "under": "1_000",
        },
    });
    let want = r#"apiVersion: v1
data:
  b60: "1:20"
  bool: "true"
  colon: 'a: b'
  dash: '- x'
  date: "2026-12-01"
  dot: .dockerconfigjson
  emoji: "\U0001F600"
  empty: ""
  exp: "1e3"
  float: "1.5"
  hash: 'a #b'
  hex: "0x1F"
  keep: |+
    l1

  lead: ' x'
  multi: |
    l1
    l2
  multi2: |-
    l1
    l2
  neg: '-'
  "null": "null"
  num: "2"
  oct: "012"
  plain: hello world
  quote: it's
  star: '*x'
  tab: "a\tb"
  ts: "2026-12-01T19:56:12Z"
  under: "1_000"
  ver: 1.2.3
  "y": "y"
kind: ConfigMap
metadata:
  creationTimestamp: "2026-12-01T19:56:12Z"
  labels:
    a: "true"
    z: "1"
  name: c
  namespace: default
  resourceVersion: "12"
  uid: u
"#;
    assert_eq!(yaml(v), want);
}

#[test]
fn lists_sequences_numbers_and_empty_containers() {
    let v: Value = serde_json::from_str(
        r#"{"kind":"List","apiVersion":"v1","metadata":{},"items":[{"a":1,"b":[1,[2,3],{}],"c":{"d":[]},"e":null,"f":1.5,"g":1000000.0,"h":0.0001,"i":0.00001,"j":-3,"k":true,"l":18446744073709551615},[]]}"#,
    )
    .unwrap();
    let want = "apiVersion: v1
items:
- a: 1
  b:
  - 1
  - - 2
    - 3
  - {}
  c:
    d: []
  e: null
  f: 1.5
  g: 1e+06
  h: 0.0001
  i: 1e-05
  j: -3
  k: true
  l: 18446744073709551615
- []
kind: List
metadata: {}
";
    assert_eq!(yaml(v), want);
    assert_eq!(yaml(json!({})), "{}\n");
}

#[test]
fn block_scalars_in_sequences_and_hints() {
    let v = json!({"args": ["a\nb", " lead\n", "\nx"], "m": [{"s": "x\ny\n"}]});
    let want = "args:
- |-
  a
  b
- |2
   lead
- |2-

  x
m:
- s: |
    x
    y
";
    assert_eq!(yaml(v), want);
    // A keep-chomped scalar last leaves the document open.
    assert_eq!(yaml(json!({"a": "x\n\n"})), "a: |+\n  x\n\n...\n");
    // A space before a break cannot be a block: double-quoted.
    assert_eq!(yaml(json!({"a": "x \ny"})), "a: \"x \\ny\"\n");
}

#[test]
fn go_yaml_key_order() {
    let v = json!({"item10": 1, "item9": 1, "a_b": 1, "a1": 1, "a0": 1, "a_": 1, "B": 1, "a": 1});
    assert_eq!(
        yaml(v),
        "B: 1\na: 1\na_: 1\na_b: 1\na0: 1\na1: 1\nitem9: 1\nitem10: 1\n"
    );
}

#[test]
fn long_scalars_fold_at_column_80() {
    let words = vec!["abcdefghi"; 20].join(" ");
    let w = |n: usize| vec!["abcdefghi"; n].join(" ");
    assert_eq!(
        yaml(json!({"description": words})),
        format!("description: {}\n  {}\n  {}\n", w(7), w(8), w(5))
    );
    // Double-quoted (a tab): folded the same way, escapes kept.
    assert_eq!(
        yaml(json!({"description": format!("{words}\t")})),
        format!("description: \"{}\n  {}\n  {}\\t\"\n", w(7), w(8), w(5))
    );
    // Single-quoted (`: ` inside): the first line holds one word more.
    assert_eq!(
        yaml(json!({"d": format!("k: {words}")})),
        format!("d: 'k: {}\n  {}\n  {}'\n", w(8), w(8), w(4))
    );
    // Keys never fold; a key over 128 bytes is a complex key.
    let long_key = "k".repeat(129);
    assert_eq!(
        yaml(json!({long_key.clone(): "v"})),
        format!("? {long_key}\n: v\n")
    );
}

#[test]
fn what_go_yaml_resolves_as_another_type() {
    for s in [
        "",
        "0b101",
        "-0b101",
        "+1",
        "1.",
        ".5",
        "2026-1-2",
        "2026-12-01 19:56:12",
        "2026-12-01T19:56:12+01:00",
        "2026-12-01t19:56:12.123Z",
        "12:30",
        "0o17",
        "09",
        "1_000",
        "~",
        "Yes",
        "on",
        "ON",
        "TRUE",
        ".inf",
        "-.Inf",
        "-12",
        "9223372036854775808",
    ] {
        assert!(resolves_as_other(s), "{s:?} resolves as another type");
    }
    for s in [
        ".",
        "1e999",
        "2026-02-30",
        "1:60",
        "yes please",
        "oN",
        "tRUE",
        "NaN",
        "inf",
        "<<",
        "+",
        "1.2.3",
        "2026-12-01T19:56:12",
        "v1",
        "-0x",
        "0x",
    ] {
        assert!(!resolves_as_other(s), "{s:?} is a string");
    }
}

#[test]
fn floats_as_go_formats_them() {
    for (f, s) in [
        (1e21, "1e+21"),
        (123456.0, "123456"),
        (1234567.0, "1.234567e+06"),
        (0.5, "0.5"),
        (1.0, "1"),
        (-2.5e-7, "-2.5e-07"),
        (1e100, "1e+100"),
        (0.1, "0.1"),
    ] {
        assert_eq!(go_format_g(f), s);
    }
}

#[test]
fn escapes_in_double_quotes() {
    assert_eq!(
        yaml(json!({"a": "\u{7}\u{1b}\"\\\u{7f}\u{85}\u{feff}x\r"})),
        "a: \"\\a\\e\\\"\\\\\\x7F\\N\\uFEFFx\\r\"\n"
    );
    // Printable non-ASCII stays as it is.
    assert_eq!(yaml(json!({"é": "ünï"})), "é: ünï\n");
}
