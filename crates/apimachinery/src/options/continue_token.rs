//! The opaque `continue` token of a paged list, and kube's `410 Expired`
//! for a token older than the store's history.

use base64::Engine;
use serde::{Deserialize, Serialize};

use crate::status::{ApiError, ApiResult, StatusReason};

/// Where the next page of a paged list starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinueToken {
    /// The snapshot revision of the list; 0 continues from the current state
    /// (an "inconsistent" token, as the `410` answer hands out).
    pub revision: u64,
    /// The key (`namespace/name`) of the last item already returned.
    pub start_after: String,
}

/// The token's wire form: base64url (no padding) of this JSON.
#[derive(Serialize, Deserialize)]
struct Wire {
    v: String,
    rv: u64,
    start: String,
}

const TOKEN_VERSION: &str = "meta.k8s.io/v1";

impl ContinueToken {
    /// A token continuing after `start_after` in the snapshot at `revision`.
    pub fn new(revision: u64, start_after: impl Into<String>) -> Self {
        ContinueToken {
            revision,
            start_after: start_after.into(),
        }
    }

    /// The opaque string sent as `metadata.continue`.
    pub fn encode(&self) -> String {
        let w = Wire {
            v: TOKEN_VERSION.into(),
            rv: self.revision,
            start: self.start_after.clone(),
        };
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(serde_json::to_vec(&w).unwrap_or_default())
    }

    /// Decode a `continue` parameter; a malformed one is `400 BadRequest`.
    pub fn decode(s: &str) -> ApiResult<Self> {
        let bad = |why: &str| ApiError::bad_request(format!("invalid continue token: {}", why));
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(s.trim_end_matches('='))
            .map_err(|_| bad("illegal base64 data"))?;
        let w: Wire = serde_json::from_slice(&bytes).map_err(|e| bad(&e.to_string()))?;
        if w.v != TOKEN_VERSION {
            return Err(bad("continue key is not supported by this server"));
        }
        Ok(ContinueToken {
            revision: w.rv,
            start_after: w.start,
        })
    }
}

/// kube's `410 Expired` for a continue token whose snapshot is no longer
/// retained, carrying a fresh token that continues after `start_after`
/// inconsistently, from the current state.
pub fn expired_continue(start_after: &str) -> ApiError {
    let mut e = ApiError::new(
        410,
        StatusReason::Expired,
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
    );
    e.continue_token = Some(ContinueToken::new(0, start_after).encode());
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let t = ContinueToken::new(9, "ns/a");
        assert_eq!(ContinueToken::decode(&t.encode()).unwrap(), t);
        // Padding some clients add is tolerated.
        assert_eq!(
            ContinueToken::decode(&format!("{}==", t.encode())).unwrap(),
            t
        );
    }

    #[test]
    fn keeps_the_wire_format() {
        // Tokens handed out before a restart or an upgrade stay valid.
        let s = ContinueToken::new(9, "ns/a").encode();
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(&s)
            .unwrap();
        assert_eq!(raw, br#"{"v":"meta.k8s.io/v1","rv":9,"start":"ns/a"}"#);
    }

    #[test]
    fn bad_tokens_are_400() {
        let e = ContinueToken::decode("%%%").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (400, "invalid continue token: illegal base64 data")
        );
        let other = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(br#"{"v":"v2","rv":1,"start":""}"#);
        assert_eq!(
            ContinueToken::decode(&other).unwrap_err().message,
            "invalid continue token: continue key is not supported by this server"
        );
        let not_json = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b"[");
        let e = ContinueToken::decode(&not_json).unwrap_err();
        assert_eq!(e.code, 400);
        assert!(e.message.starts_with("invalid continue token: "));
    }

    #[test]
    fn expired_hands_out_an_inconsistent_token() {
        let e = expired_continue("ns/b");
        assert_eq!((e.code, e.reason.as_str()), (410, "Expired"));
        assert!(e
            .message
            .starts_with("The provided continue parameter is too old"));
        let t = ContinueToken::decode(e.continue_token.as_deref().unwrap()).unwrap();
        assert_eq!(t, ContinueToken::new(0, "ns/b"));
    }
}
