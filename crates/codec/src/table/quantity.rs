//! `resource.Quantity`'s canonical string (`Quantity.String()`), which the
//! printers show for capacities, quotas and metric targets: `1024Mi` is
//! `1Gi`, `1000m` is `1`, `0.5` is `500m`, `1e3` stays in exponent form.

/// How a quantity was written, which decides how it is written back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `Ki`, `Mi`, ... suffixes.
    BinarySi,
    /// No suffix, or `n`, `u`, `m`, `k`, `M`, `G`, `T`, `P`, `E`.
    DecimalSi,
    /// `e<n>` / `E<n>`.
    DecimalExponent,
}

const DECIMAL: [(&str, i32); 9] = [
    ("n", -9),
    ("u", -6),
    ("m", -3),
    ("", 0),
    ("k", 3),
    ("M", 6),
    ("G", 9),
    ("T", 12),
    ("P", 15),
];
const BINARY: [(&str, u32); 7] = [
    ("", 0),
    ("Ki", 10),
    ("Mi", 20),
    ("Gi", 30),
    ("Ti", 40),
    ("Pi", 50),
    ("Ei", 60),
];

/// A parsed quantity: `mantissa × 10^exp` (exactly, for what fits in i128).
struct Parsed {
    mantissa: i128,
    exp: i32,
    format: Format,
}

fn parse(s: &str) -> Option<Parsed> {
    let s = s.trim();
    let (sign, rest) = match s.as_bytes().first()? {
        b'-' => (-1, &s[1..]),
        b'+' => (1, &s[1..]),
        _ => (1, s),
    };
    let num_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(num_end);
    if number.is_empty() || number == "." {
        return None;
    }
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if frac.contains('.') {
        return None;
    }
    let digits = format!("{int}{frac}");
    let mut mantissa: i128 = digits.parse().ok()?;
    let mut exp = -(frac.len() as i32);
    let format = if suffix == "E" {
        exp += 18;
        Format::DecimalSi
    } else if let Some(e) = suffix.strip_prefix(['e', 'E']) {
        exp += e.parse::<i32>().ok()?;
        Format::DecimalExponent
    } else if let Some((_, bits)) = BINARY.iter().find(|(s, _)| !s.is_empty() && *s == suffix) {
        mantissa = mantissa.checked_mul(1i128 << bits)?;
        Format::BinarySi
    } else {
        exp += DECIMAL.iter().find(|(s, _)| *s == suffix)?.1;
        Format::DecimalSi
    };
    // kube keeps nano precision, rounding finer values up (away from zero).
    if exp < -9 {
        let scale = 10i128.checked_pow((-9 - exp) as u32)?;
        let rounded = mantissa / scale + i128::from(mantissa % scale != 0);
        mantissa = rounded;
        exp = -9;
    }
    Some(Parsed {
        mantissa: sign * mantissa,
        exp,
        format,
    })
}

/// `v × 10^exp` with `v` stripped of its trailing zeros.
fn strip10(mut v: i128, mut exp: i32) -> (i128, i32) {
    while v != 0 && v % 10 == 0 {
        v /= 10;
        exp += 1;
    }
    (v, exp)
}

/// The decimal canonical form: the exponent a multiple of 3.
fn decimal(p: &Parsed, format: Format) -> String {
    let (mut v, mut exp) = strip10(p.mantissa, p.exp);
    match exp.rem_euclid(3) {
        1 => {
            v *= 10;
            exp -= 1;
        }
        2 => {
            v *= 100;
            exp -= 2;
        }
        _ => {}
    }
    if format == Format::DecimalExponent {
        return if exp == 0 {
            v.to_string()
        } else {
            format!("{v}e{exp}")
        };
    }
    match DECIMAL.iter().find(|(_, e)| *e == exp) {
        Some((suffix, _)) => format!("{v}{suffix}"),
        None if exp == 18 => format!("{v}E"),
        None => format!("{v}e{exp}"),
    }
}

/// The canonical string of a quantity; `s` itself when it does not parse.
pub fn canonical(s: &str) -> String {
    let Some(p) = parse(s) else {
        return s.to_string();
    };
    if p.mantissa == 0 {
        return "0".to_string();
    }
    if p.format != Format::BinarySi {
        return decimal(&p, p.format);
    }
    // Binary: small or fractional values are shown in decimal.
    let value = if p.exp >= 0 {
        10i128
            .checked_pow(p.exp as u32)
            .and_then(|m| p.mantissa.checked_mul(m))
    } else {
        let d = 10i128.pow((-p.exp) as u32);
        (p.mantissa % d == 0).then(|| p.mantissa / d)
    };
    match value {
        Some(v) if v <= -1024 || v >= 1024 => {
            let mut v = v;
            let mut bits = 0;
            while v % 1024 == 0 && bits < 60 {
                v /= 1024;
                bits += 10;
            }
            let suffix = BINARY.iter().find(|(_, b)| *b == bits).map_or("", |s| s.0);
            format!("{v}{suffix}")
        }
        _ => decimal(&p, Format::DecimalSi),
    }
}

#[cfg(test)]
mod tests {
    use super::canonical;

    // Facts from kube's quantity_test.go.
    #[test]
    fn canonical_strings() {
        for (input, want) in [
            ("0", "0"),
            ("0Mi", "0"),
            ("1", "1"),
            ("1Gi", "1Gi"),
            ("1024Mi", "1Gi"),
            ("1000Mi", "1000Mi"),
            ("1536Mi", "1536Mi"),
            ("1.5Gi", "1536Mi"),
            ("512Ki", "512Ki"),
            ("1Ki", "1Ki"),
            ("0.5Ki", "512"),
            ("100m", "100m"),
            ("1000m", "1"),
            ("1500m", "1500m"),
            ("0.5", "500m"),
            ("1000", "1k"),
            ("10000", "10k"),
            ("100M", "100M"),
            ("1e3", "1e3"),
            ("1E6", "1e6"),
            ("10e2", "1e3"),
            ("1.1", "1100m"),
            ("-5", "-5"),
            ("20Gi", "20Gi"),
            ("2E", "2E"),
            ("1n", "1n"),
            ("0.1n", "1n"),
            ("junk", "junk"),
        ] {
            assert_eq!(canonical(input), want, "{input}");
        }
    }
}
