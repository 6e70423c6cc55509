//! CEL evaluation per object for a ten-rule schema.
//! Run: `cargo bench -p keelson-cel --bench eval`.

use keelson_cel::{CompileOptions, CompiledSchema};
use serde_json::json;
use std::time::Instant;

fn main() {
    let rules = [
        "self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas",
        "self.name.startsWith('app-')",
        "self.name.matches('^[a-z0-9-]+$')",
        "self.tags.all(t, t.size() < 32)",
        "self.tags.exists(t, t == 'prod')",
        "'Available' in self.stateCounts",
        "self.ports.all(p, p.port > 0 && p.port < 65536)",
        "self.ports.map(p, p.port).isSorted()",
        "quantity(self.memory).isLessThan(quantity('4Gi'))",
        "url(self.endpoint).getScheme() == 'https'",
    ];
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
    "x-kubernetes-validations": rules.iter().map(|r| json!({"rule": r})).collect::<Vec<_>>(),
    "properties": {
        "minReplicas": {"type": "integer"}, "replicas": {"type": "integer"}, "maxReplicas": {"type": "integer"},
        "name": {"type": "string", "maxLength": 63},
        "tags": {"type": "array", "maxItems": 16, "items": {"type": "string", "maxLength": 32}},
        "stateCounts": {"type": "object", "maxProperties": 8, "additionalProperties": {"type": "integer"}},
        "ports": {"type": "array", "maxItems": 16, "items": {"type": "object", "properties": {"port": {"type": "integer"}}}},
        "memory": {"type": "string", "maxLength": 16},
        "endpoint": {"type": "string", "maxLength": 256}
    }}}});
    let compiled =
        CompiledSchema::compile(&schema, CompileOptions::default()).expect("schema compiles");
    let obj = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
        "spec": {"minReplicas": 1, "replicas": 2, "maxReplicas": 3, "name": "app-frontend",
            "tags": ["prod", "web", "eu"], "stateCounts": {"Available": 2, "Pending": 0},
            "ports": [{"port": 80}, {"port": 443}], "memory": "512Mi", "endpoint": "https://example.com/api"}});
    assert!(compiled.validate(&obj, None).is_empty());
    for _ in 0..1000 {
        std::hint::black_box(compiled.validate(&obj, None));
    }
    let n = 20_000;
    let start = Instant::now();
    for _ in 0..n {
        std::hint::black_box(compiled.validate(std::hint::black_box(&obj), None));
    }
    let per = start.elapsed().as_secs_f64() * 1e6 / n as f64;
    println!("cel: ten-rule schema, {per:.1} µs per object ({n} objects)");
}
