//! Timestamps and durations (`timestamp()`, `duration()`, accessors).

use super::no_overload;
use crate::eval::{EvalError, EvalResult};
use crate::value::Value;
use chrono::{Datelike, Timelike};

/// Parses a Go duration string (`1h30m`, `-1.5s`, `300ms`).
pub fn parse_duration(s: &str) -> Result<chrono::Duration, String> {
    let err = || format!("time: invalid duration \"{s}\"");
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Ok(chrono::Duration::zero());
    }
    if rest.is_empty() {
        return Err(err());
    }
    let mut total_nanos: f64 = 0.0;
    while !rest.is_empty() {
        let n_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(err)?;
        let n: f64 = rest[..n_end].parse().map_err(|_| err())?;
        rest = &rest[n_end..];
        let u_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = match &rest[..u_end] {
            "ns" => 1.0,
            "us" | "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return Err(err()),
        };
        total_nanos += n * unit;
        rest = &rest[u_end..];
    }
    let d = chrono::Duration::nanoseconds(total_nanos as i64);
    Ok(if neg { -d } else { d })
}

/// Formats a duration as cel-go's `string()` does (`90s` → `90s`).
pub fn format_duration(d: chrono::Duration) -> String {
    let secs = d.num_nanoseconds().unwrap_or(0) as f64 / 1e9;
    format!("{secs}s")
}

/// `timestamp(string|int)`.
pub fn timestamp(x: Value) -> EvalResult {
    match x {
        Value::Str(s) => chrono::DateTime::parse_from_rfc3339(&s)
            .map(Value::Timestamp)
            .map_err(|e| EvalError::msg(format!("timestamp conversion error: {e}"))),
        Value::Int(i) => chrono::DateTime::from_timestamp(i, 0)
            .map(|t| Value::Timestamp(t.fixed_offset()))
            .ok_or_else(|| EvalError::msg("timestamp overflow")),
        Value::Timestamp(t) => Ok(Value::Timestamp(t)),
        _ => Err(no_overload()),
    }
}

/// `duration(string)`.
pub fn duration(x: Value) -> EvalResult {
    match x {
        Value::Str(s) => parse_duration(&s)
            .map(Value::Duration)
            .map_err(|e| EvalError::msg(format!("duration conversion error: {e}"))),
        Value::Duration(d) => Ok(Value::Duration(d)),
        _ => Err(no_overload()),
    }
}

/// Accessors of timestamps (UTC) and durations.
pub fn call(name: &str, target: Value, _args: Vec<Value>) -> EvalResult {
    match target {
        Value::Timestamp(t) => {
            let t = t.naive_utc();
            Ok(Value::Int(match name {
                "getFullYear" => t.year() as i64,
                "getMonth" => t.month0() as i64,
                "getDayOfMonth" => t.day0() as i64,
                "getDate" => t.day() as i64,
                "getDayOfWeek" => t.weekday().num_days_from_sunday() as i64,
                "getDayOfYear" => t.ordinal0() as i64,
                "getHours" => t.hour() as i64,
                "getMinutes" => t.minute() as i64,
                "getSeconds" => t.second() as i64,
                "getMilliseconds" => (t.nanosecond() / 1_000_000) as i64,
                _ => return Err(no_overload()),
            }))
        }
        Value::Duration(d) => Ok(Value::Int(match name {
            "getHours" => d.num_hours(),
            "getMinutes" => d.num_minutes(),
            "getSeconds" => d.num_seconds(),
            "getMilliseconds" => d.num_milliseconds(),
            _ => return Err(no_overload()),
        })),
        _ => Err(no_overload()),
    }
}
