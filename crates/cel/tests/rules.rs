//! The CEL examples of kube's "Common Expression Language in Kubernetes"
//! page, each as a rule on a small schema: an object it accepts, one it
//! rejects, with kube's message; plus transition rules, messageExpression,
//! reasons, fieldPath, escaping, cost rejection and runtime budget.

use keelson_cel::{CompileOptions, CompiledSchema};
use serde_json::{json, Value};

fn compile(schema: Value) -> CompiledSchema {
    match CompiledSchema::compile(&schema, CompileOptions::default()) {
        Ok(c) => c,
        Err(e) => panic!("compile failed: {e:?}"),
    }
}

/// A root schema with `spec` carrying `props` and one rule.
fn spec_rule(props: Value, rule: &str) -> CompiledSchema {
    compile(json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": props,
            "x-kubernetes-validations": [{"rule": rule}]}}
    }))
}

fn errs(c: &CompiledSchema, spec: Value) -> Vec<String> {
    c.validate(
        &json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"}, "spec": spec}),
        None,
    )
    .iter()
    .map(|e| e.to_string())
    .collect()
}

fn check(props: Value, rule: &str, good: Value, bad: Value) {
    let c = spec_rule(props, rule);
    assert_eq!(
        errs(&c, good),
        Vec::<String>::new(),
        "rule {rule} should accept"
    );
    assert_eq!(
        errs(&c, bad),
        vec![format!(
            "spec: Invalid value: \"object\": failed rule: {rule}"
        )],
        "rule {rule} should reject"
    );
}

#[test]
fn seed_page_examples() {
    check(
        json!({"minReplicas": {"type": "integer"}, "replicas": {"type": "integer"}, "maxReplicas": {"type": "integer"}}),
        "self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas",
        json!({"minReplicas": 1, "replicas": 2, "maxReplicas": 3}),
        json!({"minReplicas": 3, "replicas": 2, "maxReplicas": 3}),
    );
    check(
        json!({"stateCounts": {"type": "object", "additionalProperties": {"type": "integer"}}}),
        "'Available' in self.stateCounts",
        json!({"stateCounts": {"Available": 1}}),
        json!({"stateCounts": {"Down": 1}}),
    );
    let lists = json!({"list1": {"type": "array", "items": {"type": "string"}}, "list2": {"type": "array", "items": {"type": "string"}}});
    check(
        lists,
        "(self.list1.size() == 0) != (self.list2.size() == 0)",
        json!({"list1": ["a"], "list2": []}),
        json!({"list1": ["a"], "list2": ["b"]}),
    );
    let envars = json!({"envars": {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "maxLength": 64}, "value": {"type": "string", "maxLength": 64}}}}});
    check(
        envars,
        "self.envars.filter(e, e.name == 'MY_ENV').all(e, e.value.matches('^[a-zA-Z]*$'))",
        json!({"envars": [{"name": "MY_ENV", "value": "abc"}]}),
        json!({"envars": [{"name": "MY_ENV", "value": "a1"}]}),
    );
    check(
        json!({"created": {"type": "string", "format": "date-time"}, "ttl": {"type": "string", "format": "duration"}, "expired": {"type": "string", "format": "date-time"}}),
        "has(self.expired) && self.created + self.ttl < self.expired",
        json!({"created": "2024-01-01T00:00:00Z", "ttl": "1h", "expired": "2024-01-01T02:00:00Z"}),
        json!({"created": "2024-01-01T00:00:00Z", "ttl": "3h", "expired": "2024-01-01T02:00:00Z"}),
    );
    check(
        json!({"health": {"type": "string"}}),
        "self.health.startsWith('ok')",
        json!({"health": "ok now"}),
        json!({"health": "bad"}),
    );
    let widgets = json!({"widgets": {"type": "array", "maxItems": 10, "items": {"type": "object", "properties": {"key": {"type": "string", "maxLength": 10}, "foo": {"type": "integer"}}}}});
    check(
        widgets,
        "self.widgets.exists(w, w.key == 'x' && w.foo < 10)",
        json!({"widgets": [{"key": "x", "foo": 5}]}),
        json!({"widgets": [{"key": "x", "foo": 50}]}),
    );
    check(
        json!({"set1": {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "set", "items": {"type": "string", "maxLength": 10}},
                 "set2": {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "set", "items": {"type": "string", "maxLength": 10}}}),
        "self.set1.all(e, !(e in self.set2))",
        json!({"set1": ["a"], "set2": ["b"]}),
        json!({"set1": ["a"], "set2": ["a"]}),
    );
    let details = json!({"names": {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "set", "items": {"type": "string", "maxLength": 10}},
        "details": {"type": "object", "maxProperties": 10, "additionalProperties": {"type": "string", "maxLength": 10}}});
    check(
        details.clone(),
        "self.names.size() == self.details.size() && self.names.all(n, n in self.details)",
        json!({"names": ["a"], "details": {"a": "x"}}),
        json!({"names": ["a"], "details": {"b": "x"}}),
    );
    check(
        details.clone(),
        "self.details.all(key, key.matches('^[a-zA-Z]*$'))",
        json!({"details": {"ab": "x"}}),
        json!({"details": {"a1": "x"}}),
    );
    check(
        details,
        "self.details.all(key, self.details[key].matches('^[a-zA-Z]*$'))",
        json!({"details": {"a": "xy"}}),
        json!({"details": {"a": "x1"}}),
    );
}

#[test]
fn int_or_string_and_metadata() {
    let c = compile(
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "v": {"x-kubernetes-int-or-string": true, "x-kubernetes-validations": [{"rule": "type(self) == string ? self == '99%' : self == 42"}]}}}}}),
    );
    assert!(errs(&c, json!({"v": "99%"})).is_empty());
    assert!(errs(&c, json!({"v": 42})).is_empty());
    assert_eq!(errs(&c, json!({"v": 41})), vec!["spec.v: Invalid value: \"\": failed rule: type(self) == string ? self == '99%' : self == 42"]);

    let c = compile(
        json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.metadata.name == 'singleton'"}],
        "properties": {"spec": {"type": "object"}}}),
    );
    let ok = c.validate(&json!({"metadata": {"name": "singleton"}}), None);
    assert!(ok.is_empty(), "{ok:?}");
    let bad: Vec<String> = c
        .validate(&json!({"metadata": {"name": "other"}}), None)
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(
        bad,
        vec!["<nil>: Invalid value: \"object\": failed rule: self.metadata.name == 'singleton'"]
    );
}

#[test]
fn integer_written_as_float_is_an_int() {
    let c = spec_rule(
        json!({"n": {"type": "integer"}}),
        "self.n == 1 && type(self.n) == int",
    );
    assert!(errs(&c, json!({"n": 1.0})).is_empty());
}

#[test]
fn libraries() {
    let s = json!({"s": {"type": "string", "maxLength": 64}, "l": {"type": "array", "maxItems": 10, "items": {"type": "integer"}},
        "w": {"type": "array", "maxItems": 10, "items": {"type": "number"}}});
    for rule in [
        "self.l.isSorted()",
        "self.l.sum() == 6",
        "self.l.min() == 1 && self.l.max() == 3",
        "self.l.indexOf(2) == 1 && self.l.lastIndexOf(9) == -1",
        "self.w.sum() == 1.0",
        "sets.contains([1, 2, 3], [1]) && sets.equivalent([1, 2], [2, 1]) && sets.intersects([1], [1, 5])",
        "'abc 123'.find('[0-9]+') == '123'",
        "'1 2 3 4 5'.findAll('[0-9]+').map(x, int(x)).sum() < 100",
        "self.s.lowerAscii() == 'hello world' && self.s.upperAscii() == 'HELLO WORLD'",
        "self.s.replace('o', '0') == 'HeLL0 W0rLd' && self.s.split(' ').size() == 2",
        "['a', 'b'].join('-') == 'a-b' && '  x '.trim() == 'x' && 'hello'.substring(1, 3) == 'el'",
        "'hello'.indexOf('l') == 2 && 'hello'.lastIndexOf('l') == 3 && 'hello'.charAt(1) == 'e'",
        "url('https://example.com:80/').getHost() == 'example.com:80'",
        "url('https://example.com/path').getEscapedPath() == '/path' && url('https://example.com/p').getScheme() == 'https'",
        "isURL('https://example.com/') && !isURL('not a url')",
        "ip('10.0.0.1').family() == 4 && ip('::1').isLoopback() && isIP('1.2.3.4') && !isIP('1.2.3')",
        "cidr('10.0.0.0/8').containsIP(ip('10.1.2.3')) && cidr('10.0.0.0/8').prefixLength() == 8",
        "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && isCIDR('192.168.0.0/16')",
        "quantity('500000G').isInteger() && quantity('50k').asInteger() == 50000",
        "quantity('50k').add(quantity('20k')).isGreaterThan(quantity('60k'))",
        "quantity('50k').sub(20000).compareTo(quantity('30k')) == 0",
        "quantity('200M').compareTo(quantity('0.2G')) == 0 && quantity('150Mi').isGreaterThan(quantity('100Mi'))",
        "quantity('50M').isLessThan(quantity('100M')) && isQuantity('1Gi') && !isQuantity('abc')",
        "quantity('9999999999999999999999999999999999999G').asApproximateFloat() > 1.0",
        "!format.dns1123Label().validate('my-name').hasValue() && format.dns1123Label().validate('My_Name').hasValue()",
        "format.named('dns1123Subdomain').value().validate('a.b').orValue([]).size() == 0",
        "!format.named('unknownFormat').hasValue()",
        "semver('1.2.3').isLessThan(semver('1.10.0')) && semver('1.2.3').major() == 1 && isSemver('1.0.0')",
        "has(self.s) && has(self.l)",
        "[1, 2, 3].exists_one(x, x == 2) && [1, 2].map(x, x * 2) == [2, 4] && [1, 2, 3].filter(x, x > 1).size() == 2",
        "optional.of(1).hasValue() && !optional.none().hasValue() && {'a': 1}.?b.orValue(2) == 2",
    ] {
        let c = spec_rule(s.clone(), rule);
        let e = errs(&c, json!({"s": "HeLLo WorLd", "l": [1, 2, 3], "w": [0.5, 0.5]}));
        assert!(e.is_empty(), "{rule}: {e:?}");
    }
}

#[test]
fn transition_rules() {
    let c = compile(
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "Value is immutable"}]},
        "count": {"type": "integer", "x-kubernetes-validations": [{"rule": "!oldSelf.hasValue() || self >= oldSelf.value()", "optionalOldSelf": true, "message": "may not decrease"}]}}}}}),
    );
    let new = json!({"spec": {"name": "a", "count": 1}});
    // create: transition rule skipped; optionalOldSelf rule runs with none()
    assert!(c.validate(&new, None).is_empty());
    let old = json!({"spec": {"name": "b", "count": 2}});
    let e: Vec<String> = c
        .validate(&new, Some(&old))
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(
        e,
        vec![
            "spec.name: Invalid value: \"string\": Value is immutable",
            "spec.count: Invalid value: \"integer\": may not decrease",
        ]
    );
}

#[test]
fn transition_rule_on_uncorrelatable_list_is_rejected() {
    let schema = json!({"type": "object", "properties": {"l": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10,
        "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}});
    let e = CompiledSchema::compile(&schema, CompileOptions::default()).unwrap_err();
    assert_eq!(e[0].to_string(), "spec.validation.openAPIV3Schema.properties[l].items.x-kubernetes-validations[0].rule: Invalid value: \"self == oldSelf\": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[l]");
}

#[test]
fn message_expression_reason_and_field_path() {
    let c = compile(
        json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "x-kubernetes-validations": [
            {"rule": "self.x < 10", "messageExpression": "'x is ' + string(self.x) + ', must be below 10'", "fieldPath": ".x"},
            {"rule": "self.y != 0", "reason": "FieldValueForbidden", "message": "y may not be zero"},
            {"rule": "self.y != 1", "reason": "FieldValueRequired", "message": "y is required"},
            {"rule": "self.y != 2", "reason": "FieldValueDuplicate"},
            {"rule": "self.x != 11", "messageExpression": "''", "message": "fallback"}
        ]}}}),
    );
    let e = |spec: Value| -> Vec<(String, &'static str)> {
        c.validate(&json!({"spec": spec}), None)
            .iter()
            .map(|e| (e.to_string(), e.kind.cause_reason()))
            .collect()
    };
    assert_eq!(
        e(json!({"x": 12, "y": 5})),
        vec![(
            "spec.x: Invalid value: \"object\": x is 12, must be below 10".to_string(),
            "FieldValueInvalid"
        )]
    );
    assert_eq!(
        e(json!({"x": 1, "y": 0})),
        vec![(
            "spec: Forbidden: y may not be zero".to_string(),
            "FieldValueForbidden"
        )]
    );
    assert_eq!(
        e(json!({"x": 1, "y": 1})),
        vec![(
            "spec: Required value: y is required".to_string(),
            "FieldValueRequired"
        )]
    );
    assert_eq!(
        e(json!({"x": 1, "y": 2})),
        vec![(
            "spec: Duplicate value: \"object\"".to_string(),
            "FieldValueDuplicate"
        )]
    );
    assert_eq!(
        e(json!({"x": 11, "y": 3})),
        vec![
            (
                "spec.x: Invalid value: \"object\": x is 11, must be below 10".to_string(),
                "FieldValueInvalid"
            ),
            (
                "spec: Invalid value: \"object\": fallback".to_string(),
                "FieldValueInvalid"
            ),
        ]
    );
}

#[test]
fn escaping() {
    let c = compile(
        json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"namespace": {"type": "integer"}, "x-prop": {"type": "integer"}, "redact__d": {"type": "integer"}, "a.b/c": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.__namespace__ > 0 && self.x__dash__prop > 0 && self.redact__underscores__d > 0 && self.a__dot__b__slash__c > 0"}]}}}),
    );
    assert!(c
        .validate(
            &json!({"spec": {"namespace": 1, "x-prop": 1, "redact__d": 1, "a.b/c": 1}}),
            None
        )
        .is_empty());
    assert_eq!(
        c.validate(
            &json!({"spec": {"namespace": 0, "x-prop": 1, "redact__d": 1, "a.b/c": 1}}),
            None
        )
        .len(),
        1
    );
}

#[test]
fn compile_errors() {
    let e = CompiledSchema::compile(&json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"a": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.b == 1"}, {"rule": "self.a +"}, {"rule": "self.a"}, {"rule": ""}]}}}), CompileOptions::default()).unwrap_err();
    let s: Vec<String> = e.iter().map(|e| e.to_string()).collect();
    assert_eq!(s, vec!["spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[3].rule: Required value: rule is not specified"]);
    // without the structural error, the rules compile and fail as kube's do
    let e = CompiledSchema::compile(&json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"a": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.b == 1"}, {"rule": "self.a +"}, {"rule": "self.a"}]}}}), CompileOptions::default()).unwrap_err();
    let s: Vec<String> = std::iter::once(String::new())
        .chain(e.iter().map(|e| e.to_string()))
        .collect();
    assert!(s[1].starts_with("spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {\"Rule\":\"self.b == 1\",\"Message\":\"\",\"MessageExpression\":\"\",\"Reason\":null,\"FieldPath\":\"\",\"OptionalOldSelf\":null}: compilation failed: ERROR: <input>:1:5: undefined field 'b'"), "{}", s[1]);
    assert!(s[2].contains("x-kubernetes-validations[1].rule: Invalid value: {\"Rule\":\"self.a +\",\"Message\":\"\",\"MessageExpression\":\"\",\"Reason\":null,\"FieldPath\":\"\",\"OptionalOldSelf\":null}: compilation failed: ERROR: <input>:1:"), "{}", s[2]);
    assert_eq!(s[3], "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[2].rule: Invalid value: {\"Rule\":\"self.a\",\"Message\":\"\",\"MessageExpression\":\"\",\"Reason\":null,\"FieldPath\":\"\",\"OptionalOldSelf\":null}: cel expression must evaluate to a bool");
}

#[test]
fn cost_rejection() {
    // the seed's too-expensive rule: unbounded list of unbounded strings
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "foo": {"type": "array", "items": {"type": "string"}, "x-kubernetes-validations": [{"rule": "self.all(x, x.contains('a string'))"}]}}}}});
    let e: Vec<String> = CompiledSchema::compile(&schema, CompileOptions::default())
        .unwrap_err()
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(e[0], "spec.validation.openAPIV3Schema.properties[spec].properties[foo].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)");
    assert_eq!(e[1], "spec.validation.openAPIV3Schema.properties[spec].properties[foo].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema");
    assert!(e[2].starts_with("spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x"));
    // with bounds it compiles
    let bounded = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "foo": {"type": "array", "maxItems": 100, "items": {"type": "string", "maxLength": 100}, "x-kubernetes-validations": [{"rule": "self.all(x, x.contains('a string'))"}]}}}}});
    assert!(CompiledSchema::compile(&bounded, CompileOptions::default()).is_ok());
    // nested all over unbounded lists of unbounded strings
    let nested = json!({"type": "object", "properties": {"l": {"type": "array", "maxItems": 1000, "items": {"type": "array", "items": {"type": "string"}}}},
        "x-kubernetes-validations": [{"rule": "self.l.all(x, x.all(y, y.startsWith('a')))"}]});
    assert!(CompiledSchema::compile(&nested, CompileOptions::default()).is_err());
}

#[test]
fn runtime_budget() {
    // each rule runs well under the per-call limit; together they exhaust the budget
    let mut rules = vec![];
    for i in 0..80 {
        rules.push(json!({"rule": format!("self.l.all(x, x.matches('^[a-z]*$') && x.size() > {i} - 100)")}));
    }
    let schema = json!({"type": "object", "properties": {"l": {"type": "array", "maxItems": 2000, "items": {"type": "string", "maxLength": 500}}},
        "x-kubernetes-validations": rules});
    let opts = CompileOptions {
        per_expression_limit: u64::MAX,
        crd_limit: u64::MAX,
        ..Default::default()
    };
    let c = CompiledSchema::compile(&schema, opts).expect("compiles");
    let big: Vec<String> = (0..2000).map(|_| "a".repeat(500)).collect();
    let e: Vec<String> = c
        .validate(&json!({"l": big}), None)
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(e, vec!["<nil>: Invalid value: \"object\": validation failed due to running out of cost budget, no further validation rules will be run"]);

    // one rule over the per-call limit
    let schema = json!({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"}}},
        "x-kubernetes-validations": [{"rule": "self.l.all(x, self.l.all(y, x == y))"}]});
    let opts = CompileOptions {
        per_expression_limit: u64::MAX,
        crd_limit: u64::MAX,
        ..Default::default()
    };
    let c = CompiledSchema::compile(&schema, opts).expect("compiles");
    let big: Vec<String> = (0..2000).map(|_| "a".to_string()).collect();
    let e: Vec<String> = c
        .validate(&json!({"l": big}), None)
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(e, vec!["<nil>: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.l.all(x, self.l.all(y, x == y))"]);
}

#[test]
fn runtime_errors_are_worded_like_kube() {
    let c = spec_rule(
        json!({"a": {"type": "integer"}, "b": {"type": "integer"}}),
        "self.a / self.b > 0",
    );
    assert_eq!(errs(&c, json!({"a": 1, "b": 0})), vec!["spec: Invalid value: \"object\": division by zero evaluating rule: self.a / self.b > 0"]);
    let c = spec_rule(json!({"a": {"type": "integer"}}), "self.a > 0");
    assert_eq!(
        errs(&c, json!({})),
        vec!["spec: Invalid value: \"object\": no such key: a evaluating rule: self.a > 0"]
    );
}

#[test]
fn ratcheting_turns_unchanged_failures_into_warnings() {
    let c = spec_rule(json!({"a": {"type": "integer"}}), "self.a > 5");
    let obj = json!({"spec": {"a": 1}});
    let out = c.validate_with_warnings(&obj, Some(&obj));
    assert!(out.errors.is_empty());
    assert_eq!(
        out.warnings,
        vec!["spec: Invalid value: \"object\": failed rule: self.a > 5"]
    );
}

/// The estimator matches kube's on the page's canonical rule: with
/// `maxLength: 16` items the largest accepted `maxItems` is 909,090, with
/// `maxLength: 63` it is 333,333 (measured against kube's validator).
#[test]
fn estimated_cost_matches_kube_at_the_boundary() {
    let compiles = |max_items: u64, max_len: u64| {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "tags": {"type": "array", "maxItems": max_items, "items": {"type": "string", "maxLength": max_len},
                "x-kubernetes-validations": [{"rule": "self.all(x, x.contains('gpu'))"}]}}}}});
        CompiledSchema::compile(&schema, CompileOptions::default()).is_ok()
    };
    assert!(compiles(909_090, 16));
    assert!(!compiles(909_091, 16));
    assert!(compiles(333_333, 63));
    assert!(!compiles(333_334, 63));
}

#[test]
fn type_errors_are_reported_as_cel_go_does() {
    let detail = |rule: &str| -> String {
        let s = json!({"type": "object", "properties": {"a": {"type": "string"}}, "x-kubernetes-validations": [{"rule": rule}]});
        let e = CompiledSchema::compile(&s, CompileOptions::default()).unwrap_err();
        e[0].detail.clone()
    };
    assert_eq!(detail("self.a == 1"), "compilation failed: ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(string, int)'\n | self.a == 1\n | .......^");
    assert_eq!(detail("self.a.startsWith(1)"), "compilation failed: ERROR: <input>:1:18: found no matching overload for 'startsWith' applied to 'string.(int)'\n | self.a.startsWith(1)\n | .................^");
    assert_eq!(detail("foo == 1"), "compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n | foo == 1\n | ^");
    assert!(detail("self.a +").starts_with(
        "compilation failed: ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting"
    ));
}

#[test]
fn embedded_resources_nulls_and_list_set_equality() {
    let c = compile(
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true,
            "x-kubernetes-validations": [{"rule": "self.kind == 'Pod' && self.metadata.name.startsWith('p')"}]},
        "opt": {"type": "string", "nullable": true},
        "s": {"type": "array", "x-kubernetes-list-type": "set", "maxItems": 5, "items": {"type": "string", "maxLength": 5}}},
        "x-kubernetes-validations": [{"rule": "!has(self.opt)"}, {"rule": "!has(self.s) || self.s == ['b', 'a']"}]}}}),
    );
    let ok = json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "labels": {"a": "b"}}, "spec": {}},
        "opt": null, "s": ["a", "b"]}});
    assert!(
        c.validate(&ok, None).is_empty(),
        "{:?}",
        c.validate(&ok, None)
    );
    let bad = json!({"spec": {"template": {"kind": "Job", "metadata": {"name": "p1"}}}});
    assert_eq!(c.validate(&bad, None).len(), 1);
    // unknown fields of an embedded resource are not visible to CEL
    let e = CompiledSchema::compile(&json!({"type": "object", "properties": {"t": {"type": "object",
        "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true,
        "x-kubernetes-validations": [{"rule": "has(self.spec)"}, {"rule": "self.metadata.namespace == 'x'"}]}}}), CompileOptions::default()).unwrap_err();
    assert_eq!(e.len(), 2);
    assert!(
        e[0].detail.contains("undefined field 'spec'"),
        "{}",
        e[0].detail
    );
    assert!(
        e[1].detail.contains("undefined field 'namespace'"),
        "{}",
        e[1].detail
    );
}

#[test]
fn list_map_items_correlate_for_transition_rules() {
    let c = compile(
        json!({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"], "maxItems": 10,
        "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "maxLength": 10}, "v": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.v >= oldSelf.v", "message": "v may not decrease"}]}}}}),
    );
    let old = json!({"l": [{"name": "a", "v": 2}, {"name": "b", "v": 1}]});
    let new = json!({"l": [{"name": "b", "v": 1}, {"name": "a", "v": 1}, {"name": "c", "v": 0}]});
    let e: Vec<String> = c
        .validate(&new, Some(&old))
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(
        e,
        vec!["l[1]: Invalid value: \"object\": v may not decrease"]
    );
}

#[test]
fn non_ascii_rules_do_not_panic() {
    for rule in [
        "'héllo wörld' == self.nope",
        "self.a == 'ü' &&",
        "'日本' + self.a == 1",
    ] {
        let s = json!({"type": "object", "properties": {"a": {"type": "string"}}, "x-kubernetes-validations": [{"rule": rule}]});
        let e = CompiledSchema::compile(&s, CompileOptions::default()).unwrap_err();
        assert!(
            e[0].detail
                .starts_with("compilation failed: ERROR: <input>:1:"),
            "{}",
            e[0].detail
        );
    }
    let c = spec_rule(
        json!({"a": {"type": "string", "maxLength": 10}}),
        "self.a.size() == 2 && self.a.substring(1) == 'ü' && self.a.indexOf('ü') == 1",
    );
    assert!(errs(&c, json!({"a": "aü"})).is_empty());
}

#[test]
fn more_runtime_errors() {
    let c = spec_rule(
        json!({"l": {"type": "array", "maxItems": 5, "items": {"type": "integer"}}}),
        "self.l[3] == 1",
    );
    assert_eq!(errs(&c, json!({"l": [1]})), vec!["spec: Invalid value: \"object\": index '3' out of range in list size '1' evaluating rule: self.l[3] == 1"]);
    let c = spec_rule(
        json!({"v": {"x-kubernetes-int-or-string": true}}),
        "self.v > 1",
    );
    assert_eq!(errs(&c, json!({"v": "a"})), vec!["spec: Invalid value: \"object\": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: self.v > 1"]);
}

#[test]
fn rule_shape_errors() {
    let e = CompiledSchema::compile(
        &json!({"type": "object", "properties": {"a": {"type": "integer"}}, "x-kubernetes-validations": [
            {"rule": "self.a > 0", "reason": "Bogus"},
            {"rule": "self.a > 0", "fieldPath": ".nope"},
            {"rule": "self.a >\n 0"},
        ]}),
        CompileOptions::default(),
    )
    .unwrap_err();
    let s: Vec<String> = e.iter().map(|e| e.to_string()).collect();
    assert_eq!(s, vec![
        "spec.validation.openAPIV3Schema.x-kubernetes-validations[0].reason: Unsupported value: \"Bogus\": supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\"",
        "spec.validation.openAPIV3Schema.x-kubernetes-validations[1].fieldPath: Invalid value: \".nope\": fieldPath must be a valid path",
        "spec.validation.openAPIV3Schema.x-kubernetes-validations[2].message: Required value: message must be specified if rule contains line breaks",
    ]);
    let e = CompiledSchema::compile(
        &json!({"type": "object", "properties": {"a": {"type": "integer"}}, "x-kubernetes-validations": [
            {"rule": "self.a > 0", "optionalOldSelf": true}]}),
        CompileOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e[0].to_string(), "spec.validation.openAPIV3Schema.x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule");
}

#[test]
fn common_expressions() {
    let s = json!({"n": {"type": "integer"}, "s": {"type": "string", "maxLength": 20},
        "l": {"type": "array", "maxItems": 10, "items": {"type": "integer"}},
        "m": {"type": "object", "maxProperties": 10, "additionalProperties": {"type": "integer"}},
        "o": {"type": "object", "properties": {"p": {"type": "string", "maxLength": 5}}}});
    for rule in [
        "self.?o.?p.orValue('') == 'x' && {'k': 1}.?q.orValue(2) == 2",
        "size(self.l) <= 3 && self.l.size() == 3 && size(self.s) > 0",
        "self.l.all(x, x in [1, 2, 3]) && !(self.n in [3, 4])",
        "timestamp('2024-01-01T00:00:00Z') < timestamp('2025-01-01T00:00:00Z')",
        "duration('1h') > duration('30m') && duration('90m') == duration('1h30m')",
        "timestamp('2024-01-01T00:00:00Z') + duration('24h') == timestamp('2024-01-02T00:00:00Z')",
        "string(1) == '1' && int('5') == 5 && double(1) == 1.0 && uint(3) == 3u && string(true) == 'true'",
        "self.n == 1 || self.n == 2",
        "self.l.map(x, x * 2).all(y, y > 0) && self.m.exists(k, self.m[k] > 0)",
        "dyn(self.n) == 1 && type(self.n) == int && type(self.s) == string",
        "self.s.endsWith('z') ? false : true",
        "self.l.filter(x, x > 1).map(x, x + 1) == [3, 4]",
        "{'a': 1}['a'] == 1 && 'b' in {'b': 2} && 'a' in self.m",
        "b'abc'.size() == 3 && 1u + 2u == 3u && 7 % 3 == 1 && 7 / 2 == 3 && -self.n == -1",
        "self.n < 1.5 && 2.0 > self.n && self.n >= 1u",
        "[1, 2] + [3] == [1, 2, 3] && 'a' + 'b' == 'ab'",
        "has(self.o.p) && !has(self.m.zz)",
    ] {
        let c = spec_rule(s.clone(), rule);
        let e = errs(&c, json!({"n": 1, "s": "xy", "l": [1, 2, 3], "m": {"a": 1}, "o": {"p": "x"}}));
        assert!(e.is_empty(), "{rule}: {e:?}");
    }
}
