//! The JSON forms of kube's well-known wire types: `metav1.Time` and
//! `MicroTime` (RFC 3339 in UTC, to the second / microsecond),
//! `metav1.Duration` (a Go duration string).

use chrono::{DateTime, SecondsFormat, Utc};

/// `metav1.Time`'s JSON: RFC 3339 seconds in UTC (nanoseconds dropped, as
/// kube's protobuf unmarshaler drops them).
pub fn time_to_json(seconds: i64) -> Option<String> {
    DateTime::<Utc>::from_timestamp(seconds, 0)
        .map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
}

/// `metav1.MicroTime`'s JSON: RFC 3339 with six fractional digits.
pub fn micro_time_to_json(seconds: i64, nanos: i32) -> Option<String> {
    let nanos = u32::try_from(nanos).ok().filter(|n| *n < 1_000_000_000)?;
    DateTime::<Utc>::from_timestamp(seconds, nanos - nanos % 1000)
        .map(|t| t.to_rfc3339_opts(SecondsFormat::Micros, true))
}

/// An RFC 3339 time (any offset, any fraction) as seconds and nanoseconds
/// since the epoch.
pub fn parse_time(s: &str) -> Option<(i64, i32)> {
    let t = DateTime::parse_from_rfc3339(s).ok()?;
    Some((t.timestamp(), t.timestamp_subsec_nanos() as i32))
}

/// Go's `time.Duration.String()` of `ns` nanoseconds (`1h2m3.5s`, `1.5µs`,
/// `0s`).
pub fn duration_to_json(ns: i64) -> String {
    if ns == 0 {
        return "0s".into();
    }
    let neg = ns < 0;
    let u = ns.unsigned_abs();
    let mut out = String::new();
    if u < 1_000_000_000 {
        // Sub-second: one unit with a fraction.
        let (unit, scale) = if u < 1_000 {
            ("ns", 1u64)
        } else if u < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        out.push_str(&fraction(u, scale));
        out.push_str(unit);
    } else {
        let h = u / 3_600_000_000_000;
        let rem = u % 3_600_000_000_000;
        let m = rem / 60_000_000_000;
        let s = rem % 60_000_000_000;
        if h > 0 {
            out.push_str(&format!("{h}h"));
        }
        if h > 0 || m > 0 {
            out.push_str(&format!("{m}m"));
        }
        out.push_str(&fraction(s, 1_000_000_000));
        out.push('s');
    }
    if neg {
        out.insert(0, '-');
    }
    out
}

/// `v / scale` with the fraction's trailing zeros dropped.
fn fraction(v: u64, scale: u64) -> String {
    let whole = v / scale;
    let frac = v % scale;
    if frac == 0 {
        return whole.to_string();
    }
    let digits = scale.to_string().len() - 1;
    let f = format!("{frac:0digits$}");
    format!("{whole}.{}", f.trim_end_matches('0'))
}

/// Go's `time.ParseDuration`: `[-+]` then numbers with units (`ns`, `us`,
/// `µs`, `μs`, `ms`, `s`, `m`, `h`), or `0`.
pub fn parse_duration(s: &str) -> Option<i64> {
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let num = &rest[..num_end];
        if num.is_empty() || num == "." {
            return None;
        }
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale: u128 = match &rest[..unit_end] {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        rest = &rest[unit_end..];
        let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
        let whole: u128 = if whole.is_empty() {
            0
        } else {
            whole.parse().ok()?
        };
        let mut v = whole.checked_mul(scale)?;
        let mut f_scale = scale;
        for d in frac.bytes() {
            f_scale /= 10;
            v += u128::from(d - b'0') * f_scale;
        }
        total = total.checked_add(v)?;
        if total > i64::MAX as u128 + u128::from(neg) {
            return None;
        }
    }
    let t = total as i128;
    i64::try_from(if neg { -t } else { t }).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(time_to_json(0).unwrap(), "1970-01-01T00:00:00Z");
        assert_eq!(time_to_json(1_700_000_000).unwrap(), "2023-11-14T22:13:20Z");
        assert_eq!(time_to_json(-86_400).unwrap(), "1969-12-31T00:00:00Z");
        assert_eq!(
            micro_time_to_json(1_700_000_000, 123_456_789).unwrap(),
            "2023-11-14T22:13:20.123456Z"
        );
        assert_eq!(micro_time_to_json(0, -1), None);
        assert_eq!(parse_time("2023-11-14T22:13:20Z"), Some((1_700_000_000, 0)));
        assert_eq!(
            parse_time("2023-11-15T00:13:20.5+02:00"),
            Some((1_700_000_000, 500_000_000))
        );
        assert_eq!(parse_time("yesterday"), None);
    }

    #[test]
    fn durations_as_go_writes_them() {
        for (ns, s) in [
            (0, "0s"),
            (1, "1ns"),
            (1_500, "1.5µs"),
            (2_000_000, "2ms"),
            (1_000_000_000, "1s"),
            (90_000_000_000, "1m30s"),
            (3_600_000_000_000, "1h0m0s"),
            (3_723_500_000_000, "1h2m3.5s"),
            (-5_000_000_000, "-5s"),
        ] {
            assert_eq!(duration_to_json(ns), s);
            assert_eq!(parse_duration(s), Some(ns), "{s}");
        }
        assert_eq!(parse_duration("1h30m"), Some(5_400_000_000_000));
        assert_eq!(parse_duration("0"), Some(0));
        assert_eq!(parse_duration("1.5us"), Some(1_500));
        for bad in ["", "1", "1d", "-", "h", ".s", "99999999999999h"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
