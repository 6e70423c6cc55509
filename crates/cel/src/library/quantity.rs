//! Kubernetes quantity library (`quantity()`, `isQuantity()`, `isInteger`,
//! `asInteger`, `asApproximateFloat`, `add`, `sub`, `compareTo`,
//! `isGreaterThan`, `isLessThan`, `sign`).
//!
//! Hand-written: no crate parses apimachinery's `resource.Quantity`
//! grammar. Values are held exactly in nano-units (i128) when they fit, with
//! an f64 for the rest; `string()` prints the quantity as written.

use super::no_overload;
use crate::eval::{EvalError, EvalResult};
use crate::value::Value;
use std::cmp::Ordering;
use std::sync::Arc;

/// A parsed quantity.
#[derive(Debug, Clone)]
pub struct Quantity {
    /// Value × 10^9, when it fits.
    nanos: Option<i128>,
    approx: f64,
    text: String,
}

impl std::fmt::Display for Quantity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl Quantity {
    /// Parses apimachinery's quantity syntax.
    pub fn parse(s: &str) -> Option<Quantity> {
        let b = s.as_bytes();
        let mut i = 0;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let num_start = i;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        let num = &s[..i];
        let digits = &s[num_start..i];
        if digits.is_empty() || digits == "." || digits.matches('.').count() > 1 {
            return None;
        }
        let suffix = &s[i..];
        // (base-10 exponent, binary multiplier)
        let (exp10, mul2): (i32, u32) = match suffix {
            "" => (0, 0),
            "n" => (-9, 0),
            "u" => (-6, 0),
            "m" => (-3, 0),
            "k" => (3, 0),
            "M" => (6, 0),
            "G" => (9, 0),
            "T" => (12, 0),
            "P" => (15, 0),
            "E" => (18, 0),
            "Ki" => (0, 10),
            "Mi" => (0, 20),
            "Gi" => (0, 30),
            "Ti" => (0, 40),
            "Pi" => (0, 50),
            "Ei" => (0, 60),
            sfx if sfx.starts_with(['e', 'E']) => (sfx[1..].parse::<i32>().ok()?, 0),
            _ => return None,
        };
        let approx = num.parse::<f64>().ok()? * 10f64.powi(exp10) * 2f64.powi(mul2 as i32);
        let nanos = exact_nanos(num, exp10, mul2);
        Some(Quantity {
            nanos,
            approx,
            text: s.to_string(),
        })
    }

    fn from_nanos(n: i128) -> Quantity {
        let whole = n / 1_000_000_000;
        let frac = (n % 1_000_000_000).abs();
        let text = if frac == 0 {
            whole.to_string()
        } else if frac % 1_000_000 == 0 {
            format!("{}m", n / 1_000_000)
        } else {
            format!("{n}n")
        };
        Quantity {
            nanos: Some(n),
            approx: n as f64 / 1e9,
            text,
        }
    }

    /// The value in nano-units (sub-nano precision rounded up, as kube's
    /// quantities do), when it fits.
    pub fn nanos(&self) -> Option<i128> {
        self.nanos
    }

    /// Whether the value is below zero.
    pub fn is_negative(&self) -> bool {
        match self.nanos {
            Some(n) => n < 0,
            None => self.approx < 0.0,
        }
    }

    /// Orders two quantities.
    pub fn cmp_to(&self, o: &Quantity) -> Ordering {
        match (self.nanos, o.nanos) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => self
                .approx
                .partial_cmp(&o.approx)
                .unwrap_or(Ordering::Equal),
        }
    }
}

/// How a quantity was written, which decides how kube writes it back
/// (`resource.Format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `Ki`, `Mi`, ... suffixes.
    BinarySi,
    /// No suffix, or `n`, `u`, `m`, `k`, `M`, `G`, `T`, `P`, `E`.
    DecimalSi,
    /// `e<n>` / `E<n>`.
    DecimalExponent,
}

impl Quantity {
    /// The format the quantity was written in.
    pub fn format(&self) -> Format {
        let suffix = self
            .text
            .trim_start_matches(['+', '-'])
            .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        if suffix.ends_with('i') {
            Format::BinarySi
        } else if suffix.len() > 1 && suffix.starts_with(['e', 'E']) {
            Format::DecimalExponent
        } else {
            Format::DecimalSi
        }
    }

    /// kube's canonical string (`Quantity.String()`) of `nanos` nano-units
    /// in `format`: `1024Mi` is `1Gi`, `1000m` is `1`, `0.5` is `500m`;
    /// a binary value below 1024 or with a fraction is written in decimal.
    pub fn canonical(nanos: i128, format: Format) -> String {
        if nanos == 0 {
            return "0".to_string();
        }
        if format == Format::BinarySi && nanos % 1_000_000_000 == 0 {
            let mut v = nanos / 1_000_000_000;
            if v.abs() >= 1024 {
                let mut bits = 0;
                while v % 1024 == 0 && bits < 60 {
                    v /= 1024;
                    bits += 10;
                }
                let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][bits / 10];
                return format!("{v}{suffix}");
            }
        }
        let (mut v, mut exp) = (nanos, -9i32);
        while v % 10 == 0 {
            v /= 10;
            exp += 1;
        }
        let r = exp.rem_euclid(3);
        v *= 10i128.pow(r as u32);
        exp -= r;
        if format == Format::DecimalExponent {
            return if exp == 0 {
                v.to_string()
            } else {
                format!("{v}e{exp}")
            };
        }
        let suffix = match exp {
            -9 => "n",
            -6 => "u",
            -3 => "m",
            0 => "",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            18 => "E",
            _ => return format!("{v}e{exp}"),
        };
        format!("{v}{suffix}")
    }
}

fn exact_nanos(num: &str, exp10: i32, mul2: u32) -> Option<i128> {
    let neg = num.starts_with('-');
    let num = num.trim_start_matches(['+', '-']);
    let (int_part, frac_part) = num.split_once('.').unwrap_or((num, ""));
    let mut mantissa: i128 = 0;
    for c in int_part.chars().chain(frac_part.chars()) {
        mantissa = mantissa
            .checked_mul(10)?
            .checked_add(c.to_digit(10)? as i128)?;
    }
    let mut scale = 9 + exp10 - frac_part.len() as i32;
    mantissa = mantissa.checked_mul(1i128.checked_shl(mul2)?)?;
    while scale > 0 {
        mantissa = mantissa.checked_mul(10)?;
        scale -= 1;
    }
    while scale < 0 {
        // sub-nano precision rounds up, as kube's quantities do
        let r = mantissa % 10;
        mantissa /= 10;
        if r != 0 {
            mantissa += 1;
        }
        scale += 1;
    }
    Some(if neg { -mantissa } else { mantissa })
}

/// `quantity(s)`, `isQuantity(s)`.
pub fn global(name: &str, x: Value) -> EvalResult {
    let Value::Str(s) = x else {
        return Err(no_overload());
    };
    let q = Quantity::parse(&s);
    if name == "isQuantity" {
        return Ok(Value::Bool(q.is_some()));
    }
    q.map(|q| Value::Quantity(Arc::new(q)))
        .ok_or_else(|| EvalError::msg("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"))
}

fn operand(v: Option<&Value>) -> Result<Quantity, EvalError> {
    match v {
        Some(Value::Quantity(q)) => Ok((**q).clone()),
        Some(Value::Int(i)) => Ok(Quantity::from_nanos(*i as i128 * 1_000_000_000)),
        _ => Err(no_overload()),
    }
}

/// `q.name(args)`.
pub fn call(name: &str, target: Value, args: Vec<Value>) -> EvalResult {
    let Value::Quantity(q) = &target else {
        return Err(no_overload());
    };
    match name {
        "isInteger" => Ok(Value::Bool(q.nanos.is_some_and(|n| {
            n % 1_000_000_000 == 0 && i64::try_from(n / 1_000_000_000).is_ok()
        }))),
        "asInteger" => q
            .nanos
            .filter(|n| n % 1_000_000_000 == 0)
            .and_then(|n| i64::try_from(n / 1_000_000_000).ok())
            .map(Value::Int)
            .ok_or_else(|| EvalError::msg("cannot convert value to integer")),
        "asApproximateFloat" => Ok(Value::Double(q.approx)),
        "sign" => Ok(Value::Int(match q.cmp_to(&Quantity::from_nanos(0)) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        })),
        "add" | "sub" => {
            let o = operand(args.first())?;
            let (Some(a), Some(b)) = (q.nanos, o.nanos) else {
                return Err(EvalError::msg("quantity overflow"));
            };
            let n = if name == "add" {
                a.checked_add(b)
            } else {
                a.checked_sub(b)
            };
            n.map(|n| Value::Quantity(Arc::new(Quantity::from_nanos(n))))
                .ok_or_else(|| EvalError::msg("quantity overflow"))
        }
        "compareTo" => Ok(Value::Int(q.cmp_to(&operand(args.first())?) as i64)),
        "isGreaterThan" => Ok(Value::Bool(
            q.cmp_to(&operand(args.first())?) == Ordering::Greater,
        )),
        "isLessThan" => Ok(Value::Bool(
            q.cmp_to(&operand(args.first())?) == Ordering::Less,
        )),
        _ => Err(EvalError::msg(format!("no such overload: Quantity.{name}"))),
    }
}

#[cfg(test)]
mod canonical_tests {
    use super::{Format, Quantity};

    fn canon(s: &str) -> String {
        let q = Quantity::parse(s).unwrap();
        Quantity::canonical(q.nanos().unwrap(), q.format())
    }

    // Facts from kube's quantity_test.go.
    #[test]
    fn canonical_strings() {
        for (input, want) in [
            ("0", "0"),
            ("0Mi", "0"),
            ("1Gi", "1Gi"),
            ("1024Mi", "1Gi"),
            ("1000Mi", "1000Mi"),
            ("1.5Gi", "1536Mi"),
            ("0.5Ki", "512"),
            ("100m", "100m"),
            ("1000m", "1"),
            ("1500m", "1500m"),
            ("0.5", "500m"),
            ("1000", "1k"),
            ("100M", "100M"),
            ("1e3", "1e3"),
            ("10e2", "1e3"),
            ("1.1", "1100m"),
            ("-5", "-5"),
            ("2E", "2E"),
            ("0.1n", "1n"),
        ] {
            assert_eq!(canon(input), want, "{input}");
        }
        assert_eq!(Quantity::canonical(2_000_000_000, Format::DecimalSi), "2");
    }
}
