//! Fuzzing of every request-body decoder (JSON, YAML, Kubernetes Protobuf,
//! CBOR): seeds written by our own encoders, mutated (bit flips, cuts,
//! random runs, insertions, duplicated slices, noise), plus inputs built
//! from random CBOR heads. Every input must decode or fail with a 400-class
//! Status; none may panic.
//!
//! The always-run tests try 20,000 inputs per decoder; the `#[ignore]`d
//! ones a million each:
//! `cargo test -p keelson-codec --release --test fuzz -- --ignored`.
//!
//! A seeded xorshift generator rather than a fuzzing framework: the inputs
//! are reproducible and the run needs no nightly toolchain.

use keelson_codec::decode::decode_object_at;
use keelson_codec::{encode, Encoding, Format};
use serde_json::{json, Value};

/// xorshift64*: reproducible, fast.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn objects() -> Vec<Value> {
    vec![
        json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "n", "labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}],
            "resources": {"limits": {"cpu": "500m"}}}], "terminationGracePeriodSeconds": 5},
            "status": {"phase": "Running", "podIP": "10.0.0.1"}}),
        json!({"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "d"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}}),
        json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c"}, "data": {"k": "v", "é": "✓"}}),
        json!({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "s"}, "data": {"a": "AAEC"}}),
        json!({"kind": "Service", "apiVersion": "v1", "spec": {"ports": [{"port": 80, "targetPort": "http"}]}}),
    ]
}

/// The seeds of one encoding: our encoder's output for each object.
fn seeds(encoding: Encoding) -> Vec<Vec<u8>> {
    objects()
        .iter()
        .map(|o| encode(Format::object(encoding), o).unwrap().to_vec())
        .collect()
}

/// Append one random CBOR data item (random heads, lengths and nesting,
/// valid or not).
fn random_cbor(rng: &mut Rng, depth: usize, out: &mut Vec<u8>) {
    let major = rng.below(8) as u8;
    let ai = match rng.below(10) {
        0 => 24 + rng.below(8) as u8, // 24..31: longer arguments, reserved, indefinite
        _ => rng.below(24) as u8,
    };
    out.push(major << 5 | ai);
    let extra = match ai {
        24 => 1,
        25 => 2,
        26 => 4,
        27 => 8,
        _ => 0,
    };
    for _ in 0..extra {
        // Mostly small arguments, so lengths stay plausible.
        out.push(if rng.below(4) == 0 {
            rng.next() as u8
        } else {
            0
        });
    }
    if depth > 5 {
        return;
    }
    let n = if ai < 24 { ai as usize } else { rng.below(4) };
    match major {
        2 | 3 => out.extend((0..n).map(|_| rng.next() as u8)),
        4..=6 => {
            // Few items whatever the head says: the input stays small.
            let n = n.min(4);
            let items = if major == 5 { n * 2 } else { n.max(1) };
            for _ in 0..items {
                random_cbor(rng, depth + 1, out);
            }
            if ai == 31 {
                out.push(0xff);
            }
        }
        _ => {}
    }
}

/// One hostile input derived from `seed`.
fn mutate(rng: &mut Rng, seed: &[u8], encoding: Encoding) -> Vec<u8> {
    let mut b = seed.to_vec();
    match rng.below(8) {
        // Flip a few bits.
        0 | 1 => {
            for _ in 0..=rng.below(4) {
                let at = rng.below(b.len());
                b[at] ^= 1 << rng.below(8);
            }
        }
        // Cut it short.
        2 => b.truncate(rng.below(b.len())),
        // Overwrite a run with random bytes.
        3 => {
            let at = rng.below(b.len());
            for i in at..(at + 1 + rng.below(16)).min(b.len()) {
                b[i] = rng.next() as u8;
            }
        }
        // Insert random bytes.
        4 => {
            let at = rng.below(b.len());
            let junk: Vec<u8> = (0..1 + rng.below(8)).map(|_| rng.next() as u8).collect();
            b.splice(at..at, junk);
        }
        // Duplicate a slice of itself (repeated keys, deeper nesting).
        5 => {
            let from = rng.below(b.len());
            let to = (from + 1 + rng.below(32)).min(b.len());
            let at = rng.below(b.len());
            let copy = b[from..to].to_vec();
            b.splice(at..at, copy);
        }
        // Structured noise: random CBOR items (after the tag, sometimes).
        6 if encoding == Encoding::Cbor => {
            b.clear();
            if rng.below(2) == 0 {
                b.extend([0xd9, 0xd9, 0xf7]);
            }
            random_cbor(rng, 0, &mut b);
            if rng.below(8) == 0 {
                random_cbor(rng, 0, &mut b);
            }
        }
        // Pure noise, after the Protobuf magic for Protobuf.
        _ => {
            b.clear();
            if encoding == Encoding::Protobuf {
                b.extend(b"k8s\0");
            }
            b.extend((0..rng.below(64)).map(|_| rng.next() as u8));
        }
    }
    b
}

/// Decode `rounds` hostile inputs in `encoding`: each decodes, or fails
/// with a 400-class Status (never a panic, never a 5xx). Returns how many
/// decoded.
fn drive(encoding: Encoding, rounds: usize) -> usize {
    let seeds = seeds(encoding);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ encoding as u64);
    let mut ok = 0;
    for round in 0..rounds {
        let input = mutate(&mut rng, &seeds[round % seeds.len()], encoding);
        match decode_object_at(encoding, &input, "Pod", "v1") {
            Ok(_) => ok += 1,
            Err(e) => assert!(
                (400..500).contains(&e.code),
                "{encoding:?} input {input:02x?}: {} {}",
                e.code,
                e.message
            ),
        }
        if encoding == Encoding::Cbor {
            if let Err(e) = keelson_codec::cbor::decode_apply(&input) {
                assert_eq!(e.code, 400, "{}", e.message);
            }
        }
    }
    assert!(ok < rounds, "{encoding:?}: nothing was refused");
    ok
}

const SMALL: usize = 20_000;
const MILLION: usize = 1_000_000;

#[test]
fn json_bodies() {
    drive(Encoding::Json, SMALL);
}

#[test]
fn yaml_bodies() {
    drive(Encoding::Yaml, SMALL);
}

#[test]
fn protobuf_bodies() {
    drive(Encoding::Protobuf, SMALL);
}

#[test]
fn cbor_bodies() {
    let ok = drive(Encoding::Cbor, SMALL);
    assert!(ok > 0, "some mutations stay valid CBOR");
}

#[test]
#[ignore = "a million inputs: run with --release -- --ignored"]
fn json_bodies_million() {
    drive(Encoding::Json, MILLION);
}

#[test]
#[ignore = "a million inputs: run with --release -- --ignored"]
fn yaml_bodies_million() {
    drive(Encoding::Yaml, MILLION);
}

#[test]
#[ignore = "a million inputs: run with --release -- --ignored"]
fn protobuf_bodies_million() {
    drive(Encoding::Protobuf, MILLION);
}

#[test]
#[ignore = "a million inputs: run with --release -- --ignored"]
fn cbor_bodies_million() {
    drive(Encoding::Cbor, MILLION);
}
