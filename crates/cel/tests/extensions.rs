//! The cel-go extensions kube-apiserver 1.34's CEL environment has beyond
//! the standard library: `ext.Strings` v2 (`format`, `strings.quote`,
//! `join`), `ext.TwoVarComprehensions`, and the optional library's
//! `optMap`/`optFlatMap`; and what it does not have (`ext.Math`, strings
//! v3's `reverse`), rejected at CRD write time as kube rejects it.

use keelson_cel::expr::{Activation, Expression, Outcome};
use keelson_cel::{CompileOptions, CompiledSchema};
use serde_json::{json, Value};

fn eval(src: &str) -> Result<Outcome, String> {
    let e = Expression::compile(src)?;
    Activation::new().eval(&e)
}

fn s(v: &str) -> Result<Outcome, String> {
    Ok(Outcome::Str(v.to_string()))
}

fn t() -> Result<Outcome, String> {
    Ok(Outcome::Bool(true))
}

/// A spec schema with a few bounded fields and one rule on it.
fn spec_schema(rule: &str) -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 10},
        "n": {"type": "integer"},
        "d": {"type": "number"},
        "opt": {"type": "string"},
        "m": {"type": "object", "maxProperties": 5, "additionalProperties": {"type": "integer"}},
        "l": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 5}}
    }, "x-kubernetes-validations": [{"rule": rule}]}}})
}

/// The CRD-time error details of `rule`, or `OK`.
fn compile_detail(rule: &str) -> String {
    match CompiledSchema::compile(&spec_schema(rule), CompileOptions::default()) {
        Ok(_) => "OK".into(),
        Err(e) => e
            .iter()
            .map(|e| e.detail.clone())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[test]
fn format_renders_as_cel_go() {
    assert_eq!(
        eval("'%s is %d, %.2f%%'.format(['x', 42, 99.555])"),
        s("x is 42, 99.56%")
    );
    assert_eq!(eval("'%f'.format([1234567.5])"), s("1,234,567.500000"));
    assert_eq!(
        eval("'%e'.format([-0.00025])"),
        s("-2.500000\u{202f}×\u{202f}10⁻⁰⁴")
    );
    assert_eq!(
        eval("'%b %o %x %X'.format([5, 8, 255, 'hi'])"),
        s("101 10 ff 6869")
    );
    assert_eq!(
        eval("'%s'.format([[1, 'a', 2.5, null, true, b'y', {'k': [1u]}]])"),
        s(r#"[1, "a", 2.500000, null, true, b"y", {"k":[1]}]"#)
    );
    assert_eq!(
        eval("'%s %s %s'.format([duration('1h45m47s'), timestamp('2023-02-03T23:31:20Z'), 2.0])"),
        s("6347s 2023-02-03T23:31:20Z 2")
    );
    assert_eq!(
        eval("'%s'.format([{'b': 1, 'a': 2}])"),
        s(r#"{"a":2, "b":1}"#)
    );
    assert_eq!(eval("'%s'.format([type(1)])"), s("int"));
    // the format string need not be a literal
    assert_eq!(
        eval("strings.quote('%s %s').format(['hello', 'world'])"),
        s("\"hello world\"")
    );
}

#[test]
fn format_misuse_fails_with_cel_go_errors_at_run_time() {
    assert_eq!(
        eval("'%d %d'.format([dyn(1)].filter(x, true))"),
        Err("index 1 out of range".into())
    );
    assert_eq!(
        eval("'%d'.format([dyn('a')])"),
        Err("error during formatting: decimal clause can only be used on integers, was given string".into())
    );
    assert_eq!(
        eval("'%q'.format([dyn(1)])"),
        Err("could not parse formatting clause: unrecognized formatting clause \"q\"".into())
    );
    assert_eq!(
        eval("'%s'.format([dyn(optional.none())])"),
        Err("error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given optional_type".into())
    );
}

#[test]
fn format_is_validated_at_crd_write_time() {
    assert_eq!(
        compile_detail("'%d'.format([self.name]) == ''"),
        "compilation failed: ERROR: <input>:1:18: error during formatting: decimal clause can only be used on integers, was given string\n | '%d'.format([self.name]) == ''\n | .................^"
    );
    assert_eq!(
        compile_detail("'%s %s'.format(['a']) == ''"),
        "compilation failed: ERROR: <input>:1:15: index 1 out of range\n | '%s %s'.format(['a']) == ''\n | ..............^"
    );
    assert_eq!(
        compile_detail("'%s'.format(['a', 'b']) == ''"),
        "compilation failed: ERROR: <input>:1:12: too many arguments supplied to string.format (expected 1, got 2)\n | '%s'.format(['a', 'b']) == ''\n | ...........^"
    );
    assert_eq!(
        compile_detail("'%x'.format([self.d]) == ''"),
        "compilation failed: ERROR: <input>:1:18: error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given double\n | '%x'.format([self.d]) == ''\n | .................^"
    );
    assert_eq!(
        compile_detail("self.name.format(1) == ''"),
        "compilation failed: ERROR: <input>:1:17: found no matching overload for 'format' applied to 'string.(int)'\n | self.name.format(1) == ''\n | ................^"
    );
    // mixed-type list literals are allowed for format, and dyn arguments pass
    assert_eq!(
        compile_detail("'%s %d %f'.format([self.name, self.n, dyn(self.opt)]) != ''"),
        "OK"
    );
}

#[test]
fn format_result_is_unbounded_for_the_cost_estimator() {
    // cel-go gives format no result size: a traversal of it costs the unknown maximum
    assert_eq!(compile_detail("'%s'.format([self.name]) == 'a'"), "OK");
    assert!(compile_detail("'%s'.format([self.name]).contains('a')")
        .starts_with("estimated rule cost exceeds budget by factor of more than 100x"));
}

#[test]
fn quote_and_strings_v2() {
    assert_eq!(
        eval("strings.quote('a\"b\\n\\t\\\\')"),
        s(r#""a\"b\n\t\\""#)
    );
    assert_eq!(eval("strings.quote('завтра')"), s("\"завтра\""));
    assert_eq!(
        compile_detail("strings.quote(self.n) == ''"),
        "compilation failed: ERROR: <input>:1:14: found no matching overload for 'strings.quote' applied to '(int)'\n | strings.quote(self.n) == ''\n | .............^"
    );
    assert_eq!(eval("'hello mellow'.indexOf('ello', 2) == 7"), t());
    assert_eq!(eval("'hello mellow'.indexOf('', 2) == 2"), t());
    assert_eq!(eval("'hello mellow'.indexOf('ello', 20) == -1"), t());
    assert_eq!(
        eval("'hello'.indexOf('l', -1)"),
        Err("index out of range: -1".into())
    );
    assert_eq!(eval("'hello mellow'.lastIndexOf('ello', 6) == 1"), t());
    assert_eq!(eval("'hello mellow'.lastIndexOf('ello', 20) == -1"), t());
    assert_eq!(eval("'hello mellow'.lastIndexOf('') == 12"), t());
    assert_eq!(eval("'abc'.split('', 2) == ['a', 'bc']"), t());
    assert_eq!(
        eval("'hello hello'.replace('he', 'we', 1)"),
        s("wello hello")
    );
    assert_eq!(eval("['a', 'b'].join('-')"), s("a-b"));
    assert_eq!(eval("[].join()"), s(""));
    assert_eq!(
        eval("[dyn(1)].join()"),
        Err("join: invalid input: 1".into())
    );
    assert_eq!(
        eval("string(1e6) + ' ' + string(0.000000002)"),
        s("1e+06 2e-09")
    );
}

#[test]
fn libraries_kube_134_lacks_are_rejected() {
    // ext.Math is not in kube 1.34's environment: cel-go checks `math` as a
    // variable and `greatest` as a member function
    assert_eq!(
        compile_detail("math.greatest(1, self.n) == 1"),
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'math' (in container '')\n | math.greatest(1, self.n) == 1\n | ^\nERROR: <input>:1:14: undeclared reference to 'greatest' (in container '')\n | math.greatest(1, self.n) == 1\n | .............^"
    );
    // reverse() on strings is ext.Strings v3; kube 1.34 has v2
    assert_eq!(
        compile_detail("self.name.reverse() == ''"),
        "compilation failed: ERROR: <input>:1:18: found no matching overload for 'reverse' applied to 'string.()'\n | self.name.reverse() == ''\n | .................^"
    );
}

#[test]
fn two_variable_comprehensions() {
    assert_eq!(eval("[1, 2, 3].all(i, v, i < v)"), t());
    assert_eq!(
        eval("{'hello': 'world', 'taco': 'taco'}.all(k, v, k != v)"),
        Ok(Outcome::Bool(false))
    );
    assert_eq!(
        eval("[1, 2, 4, 8, 16].exists(i, v, v == 1024 && i == 10)"),
        Ok(Outcome::Bool(false))
    );
    assert_eq!(
        eval("{'greeting': 'hello', 'farewell': 'goodbye'}.exists(k, v, k.startsWith('good') || v.endsWith('bye'))"),
        t()
    );
    assert_eq!(
        eval("[1, 2, 1, 3, 1, 4].existsOne(i, v, i == 1 || v == 1)"),
        Ok(Outcome::Bool(false))
    );
    assert_eq!(
        eval("[1, 1, 2, 2, 3, 3].exists_one(i, v, i == 2 && v == 2)"),
        t()
    );
    assert_eq!(
        eval("[1, 2, 3].transformList(i, v, i * v + v) == [1, 4, 9]"),
        t()
    );
    assert_eq!(
        eval("[1, 2, 3].transformList(i, v, i % 2 == 0, i * v + v) == [1, 9]"),
        t()
    );
    assert_eq!(
        eval("{'a': 1, 'b': 2}.transformList(k, _, k) == ['a', 'b']"),
        t()
    );
    assert_eq!(
        eval("[1, 2, 3].transformMap(i, v, i % 2 == 0, v * 10) == {0: 10, 2: 30}"),
        t()
    );
    assert_eq!(
        eval("{'greeting': 'hello'}.transformMap(k, v, v + '!') == {'greeting': 'hello!'}"),
        t()
    );
    assert_eq!(
        eval("[1, 2, 3].transformMapEntry(i, v, {v: i}) == {1: 0, 2: 1, 3: 2}"),
        t()
    );
    assert_eq!(
        eval("{'greeting': 'aloha', 'farewell': 'aloha'}.transformMapEntry(k, v, {v: k})"),
        Err("insert failed: key aloha already exists".into())
    );
    // the two-variable forms type their variables: a list's index is an int
    assert_eq!(
        compile_detail("self.l.all(i, v, i < 5 && v.size() <= 5)"),
        "OK"
    );
    assert_eq!(
        compile_detail("self.l.all(i, v, i == 'x')"),
        "compilation failed: ERROR: <input>:1:20: found no matching overload for '_==_' applied to '(int, string)'\n | self.l.all(i, v, i == 'x')\n | ...................^"
    );
    assert_eq!(
        compile_detail("self.m.all(k, k, true)"),
        "compilation failed: ERROR: <input>:1:15: duplicate variable name: k\n | self.m.all(k, k, true)\n | ..............^"
    );
    assert_eq!(
        compile_detail("self.m.all(k, v.x, true)"),
        "compilation failed: ERROR: <input>:1:16: argument must be a simple name\n | self.m.all(k, v.x, true)\n | ...............^"
    );
    // kube's standard macros have no one-variable existsOne
    assert!(compile_detail("self.l.existsOne(x, x == 'a')")
        .contains("undeclared reference to 'existsOne'"));
}

#[test]
fn optional_map_and_flat_map() {
    assert_eq!(eval("optional.of(42).optMap(y, y + 1).value() == 43"), t());
    assert_eq!(
        eval("optional.none().optMap(y, y + 1).hasValue()"),
        Ok(Outcome::Bool(false))
    );
    assert_eq!(
        eval("{'k': {'s': 'v'}}.?k.optFlatMap(k, k.?s).value()"),
        s("v")
    );
    assert_eq!(
        eval("{'k': {}}.?k.optFlatMap(k, k.?s).hasValue()"),
        Ok(Outcome::Bool(false))
    );
    assert_eq!(
        compile_detail("optional.of(1).optMap(1, 2).hasValue()"),
        "compilation failed: ERROR: <input>:1:23: optMap() variable name must be a simple identifier\n | optional.of(1).optMap(1, 2).hasValue()\n | ......................^"
    );
    assert_eq!(
        compile_detail("self.?opt.optMap(o, o.size()).orValue(0) < 5"),
        "OK"
    );
}

/// A CRD rule using `format` in its messageExpression and a two-variable
/// `all`, accepted at write time and enforced with its message.
#[test]
fn crd_rules_with_extensions_are_enforced() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
    "properties": {
        "replicas": {"type": "integer"},
        "ports": {"type": "array", "maxItems": 8, "items": {"type": "integer"}}
    },
    "x-kubernetes-validations": [
        {"rule": "self.ports.all(i, p, i == 0 || p > self.ports[i - 1])",
         "messageExpression": "'ports must ascend: %s'.format([self.ports])"},
        {"rule": "self.replicas <= 5",
         "messageExpression": "'replicas %d exceeds %d (%.1f%% over)'.format([self.replicas, 5, (double(self.replicas) - 5.0) * 20.0])"}
    ]}}});
    let c = CompiledSchema::compile(&schema, CompileOptions::default()).expect("compiles");
    let errs = |spec: Value| -> Vec<String> {
        c.validate(&json!({"spec": spec}), None)
            .iter()
            .map(|e| e.to_string())
            .collect()
    };
    assert_eq!(
        errs(json!({"replicas": 3, "ports": [80, 443]})),
        Vec::<String>::new()
    );
    assert_eq!(
        errs(json!({"replicas": 7, "ports": [443, 80]})),
        vec![
            "spec: Invalid value: \"object\": ports must ascend: [443, 80]".to_string(),
            "spec: Invalid value: \"object\": replicas 7 exceeds 5 (40.0% over)".to_string(),
        ]
    );
}
