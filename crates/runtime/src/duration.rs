//! Duration values: bare seconds (`300`) or a unit string (`10s`, `5m`,
//! `1h30m`, as kube's `--etcd-compaction-interval` takes them), as flags
//! and as config-file keys (a number of seconds or a string).

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

/// `#[serde(with = "keelson_runtime::duration::option")]` for an
/// `Option<Duration>` config key: a number of seconds or a duration string.
pub mod option {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Value {
        Seconds(u64),
        Text(String),
    }

    /// Written as a `humantime` string, which [`deserialize`] reads back.
    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_str(&humantime::format_duration(*d).to_string()),
            None => s.serialize_none(),
        }
    }

    /// Seconds or a string parsed by [`super::parse_duration`].
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        match Option::<Value>::deserialize(d)? {
            None => Ok(None),
            Some(Value::Seconds(s)) => Ok(Some(Duration::from_secs(s))),
            Some(Value::Text(t)) => super::parse_duration(&t)
                .map(Some)
                .map_err(serde::de::Error::custom),
        }
    }
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

    #[derive(Debug, serde::Serialize, serde::Deserialize, PartialEq)]
    struct Key {
        #[serde(default, with = "option")]
        d: Option<Duration>,
    }

    #[test]
    fn config_values_round_trip() {
        for d in [Duration::from_millis(250), Duration::from_secs(5400)] {
            let k = Key { d: Some(d) };
            let v = serde_json::to_value(&k).unwrap();
            assert_eq!(serde_json::from_value::<Key>(v).unwrap(), k);
        }
        let k: Key = serde_json::from_value(serde_json::json!({"d": 45})).unwrap();
        assert_eq!(k.d, Some(Duration::from_secs(45)));
        let k: Key = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!(k.d, None);
    }
}
