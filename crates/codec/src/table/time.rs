//! Timestamps and kube's human-readable durations
//! (`k8s.io/apimachinery/pkg/util/duration.HumanDuration`, the printers'
//! `translateTimestampSince`).

use chrono::{DateTime, SecondsFormat, Utc};

/// A point in time (the clock a Table is printed at, or a parsed timestamp).
pub type Time = DateTime<Utc>;

/// The current time.
pub fn now() -> Time {
    Utc::now()
}

/// An RFC 3339 timestamp as metav1.Time / MicroTime hold it; `None` for a
/// missing, unparsable or zero (`0001-01-01T00:00:00Z`) one — Go's zero time.
pub fn parse(s: &str) -> Option<Time> {
    let t = DateTime::parse_from_rfc3339(s).ok()?.with_timezone(&Utc);
    (t.timestamp() != ZERO_SECS || t.timestamp_subsec_nanos() != 0).then_some(t)
}

/// Go's zero time, 0001-01-01T00:00:00Z, in seconds since the Unix epoch.
const ZERO_SECS: i64 = -62_135_596_800;

/// `time.Time.UTC().Format(time.RFC3339)`; the zero time for `None`.
pub fn rfc3339(t: Option<Time>) -> String {
    match t {
        Some(t) => t.to_rfc3339_opts(SecondsFormat::Secs, true),
        None => "0001-01-01T00:00:00Z".to_string(),
    }
}

const SECOND: i128 = 1_000_000_000;
const MINUTE: i128 = 60 * SECOND;
const HOUR: i128 = 60 * MINUTE;

/// kube's `HumanDuration` of a duration in nanoseconds: about 2–3
/// significant figures (`45s`, `3m20s`, `12m`, `5h10m`, `2d3h`, `1y20d`).
pub fn human_duration(nanos: i128) -> String {
    // Up to two seconds in the future is "now" (clock skew).
    let seconds = nanos / SECOND;
    if seconds < -1 {
        return "<invalid>".to_string();
    }
    if seconds < 0 {
        return "0s".to_string();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = nanos / MINUTE;
    if minutes < 10 {
        let s = (nanos / SECOND) % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = nanos / HOUR;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{}h", hours / 24, h)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{}d", hours / 24 / 365, dy)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// Nanoseconds from `earlier` to `later`.
pub fn between(earlier: Time, later: Time) -> i128 {
    let secs = i128::from(later.timestamp()) - i128::from(earlier.timestamp());
    let nanos =
        i128::from(later.timestamp_subsec_nanos()) - i128::from(earlier.timestamp_subsec_nanos());
    secs * SECOND + nanos
}

/// kube's `translateTimestampSince`: `<unknown>` for the zero time, else
/// the human duration since it.
pub fn since(t: Option<Time>, now: Time) -> String {
    match t {
        Some(t) => human_duration(between(t, now)),
        None => "<unknown>".to_string(),
    }
}

/// The fixed "now" of the printers' tests (kube's printers_test.go cases
/// are written against a fixed clock too).
#[cfg(test)]
pub(crate) fn test_now() -> Time {
    parse("2024-05-01T12:00:00Z").expect("a valid time")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(secs: i128) -> String {
        human_duration(secs * SECOND)
    }

    // kube's duration_test.go cases.
    #[test]
    fn human_durations() {
        let cases: &[(i128, &str)] = &[
            (1, "1s"),
            (70, "70s"),
            (190, "3m10s"),
            (70 * 60, "70m"),
            (47 * 3600, "47h"),
            (49 * 3600, "2d1h"),
            ((8 * 24 + 2) * 3600, "8d"),
            (367 * 24 * 3600, "367d"),
            ((365 * 2 * 24 + 25) * 3600, "2y1d"),
            ((365 * 8 * 24 + 2) * 3600, "8y"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (599, "9m59s"),
            (600, "10m"),
            (179 * 60, "179m"),
            (180 * 60, "3h"),
            (7 * 3600 + 59 * 60, "7h59m"),
            (8 * 3600, "8h"),
            (48 * 3600, "2d"),
            (7 * 24 * 3600 + 23 * 3600, "7d23h"),
            (729 * 24 * 3600, "729d"),
            (730 * 24 * 3600, "2y"),
            (-1, "0s"),
            (-2, "<invalid>"),
        ];
        for (secs, want) in cases {
            assert_eq!(&d(*secs), want, "{secs}s");
        }
        // Truncation, not rounding, and sub-second skew is "now".
        assert_eq!(human_duration(SECOND * 3 / 2), "1s");
        assert_eq!(human_duration(-SECOND * 3 / 2), "0s");
    }

    #[test]
    fn timestamps() {
        let t = parse("2024-01-02T03:04:05Z").unwrap();
        assert_eq!(rfc3339(Some(t)), "2024-01-02T03:04:05Z");
        let micro = parse("2024-01-02T03:04:05.250000Z").unwrap();
        assert_eq!(between(t, micro), SECOND / 4);
        assert_eq!(
            parse("2024-01-02T05:04:05+02:00"),
            Some(t),
            "offsets are UTC instants"
        );
        assert_eq!(parse("0001-01-01T00:00:00Z"), None);
        assert_eq!(parse("garbage"), None);
        assert_eq!(rfc3339(None), "0001-01-01T00:00:00Z");
        assert_eq!(since(None, t), "<unknown>");
        assert_eq!(since(Some(t), parse("2024-01-02T03:09:05Z").unwrap()), "5m");
    }
}
