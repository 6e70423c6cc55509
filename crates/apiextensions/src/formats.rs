//! The string formats kube-apiserver checks in custom objects (the
//! `kube-openapi` strfmt registry it keeps); unknown formats pass.
//! Hand-written: each is a few lines and no maintained crate carries this
//! exact set with Go's acceptance rules.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use base64::Engine as _;
use regex::Regex;

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    // The patterns are constants of this file and compile.
    cell.get_or_init(|| Regex::new(pattern).unwrap_or_else(|_| Regex::new("$^").expect("empty")))
}

/// Whether `s` is a valid value of `format`.
pub fn valid(format: &str, s: &str) -> bool {
    static EMAIL: OnceLock<Regex> = OnceLock::new();
    static HOSTNAME: OnceLock<Regex> = OnceLock::new();
    static UUID: OnceLock<Regex> = OnceLock::new();
    static MAC: OnceLock<Regex> = OnceLock::new();
    static DATE: OnceLock<Regex> = OnceLock::new();
    static DURATION: OnceLock<Regex> = OnceLock::new();
    static HEXCOLOR: OnceLock<Regex> = OnceLock::new();
    static BSON: OnceLock<Regex> = OnceLock::new();
    match format {
        "email" => re(&EMAIL, r"^[^@\s]+@[^@\s]+\.[^@\s]+$").is_match(s),
        "hostname" => {
            s.len() <= 255
                && re(
                    &HOSTNAME,
                    r"^([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\.?$",
                )
                .is_match(s)
        }
        "ipv4" => s.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<Ipv6Addr>().is_ok(),
        "cidr" => s.split_once('/').is_some_and(|(ip, bits)| {
            let Ok(bits) = bits.parse::<u8>() else {
                return false;
            };
            (ip.parse::<Ipv4Addr>().is_ok() && bits <= 32)
                || (ip.parse::<Ipv6Addr>().is_ok() && bits <= 128)
        }),
        "mac" => re(&MAC, r"^([0-9A-Fa-f]{2}[:-]){5}([0-9A-Fa-f]{2})$").is_match(s),
        "uuid" | "uuid3" | "uuid4" | "uuid5" => re(
            &UUID,
            r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$",
        )
        .is_match(s),
        "byte" => base64::engine::general_purpose::STANDARD.decode(s).is_ok(),
        "date" => {
            re(&DATE, r"^\d{4}-\d{2}-\d{2}$").is_match(s)
                && chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
        }
        "date-time" | "datetime" => chrono::DateTime::parse_from_rfc3339(s).is_ok(),
        "duration" => re(
            &DURATION,
            r"^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d|w))+$|^\d+(\.\d+)?\s*(nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)$",
        )
        .is_match(s),
        "hexcolor" => re(&HEXCOLOR, r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$").is_match(s),
        "bsonobjectid" => re(&BSON, r"^[0-9a-fA-F]{24}$").is_match(s),
        "uri" => s.contains(':') && !s.contains(char::is_whitespace),
        _ => true,
    }
}
