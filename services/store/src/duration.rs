//! Duration flag values: bare seconds (`300`) or a unit string (`10s`,
//! `5m`, `1h30m`, as kube's `--etcd-compaction-interval` takes them).

use std::time::Duration;

/// Parse `300` (seconds) or a duration with units via `humantime`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse::<u64>()
            .map(Duration::from_secs)
            .map_err(|e| e.to_string());
    }
    humantime::parse_duration(s).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_units() {
        assert_eq!(parse_duration("300"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("5m0s"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(parse_duration("").is_err());
        assert!(parse_duration("ten").is_err());
        assert!(parse_duration("-5s").is_err());
        assert!(parse_duration("99999999999999999999999").is_err());
    }
}
