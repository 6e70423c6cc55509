//! kube's `406 Not Acceptable` answers on non-resource paths.
//!
//! - go-restful routes (`/version`, `/api`) refuse an Accept none of whose
//!   ranges (parameters dropped) is `*/*` or one of the route's `Produces`
//!   exactly; kube's service error handler answers that as a Status
//!   (`406: Not Acceptable\n\nAvailable representations: ...`, details
//!   `{}`), negotiated like any error (`ErrorNegotiated`).
//! - A Status that cannot be negotiated either is written by kube's
//!   `WriteRawJSON`: `json.MarshalIndent` with two spaces, no final
//!   newline, `application/json` ([`raw_json`]); so is a handler's own
//!   negotiation failure (`/apis`).

use http::Response;
use keelson_apimachinery::ApiError;

use crate::filters::pretty::indent;
use crate::http_util::{bytes_response, status_response, Body};

/// go-restful's `Route.matchesAccept`: an empty Accept is `*/*`.
pub(crate) fn restful_accepts(accept: Option<&str>, produces: &[&str]) -> bool {
    let accept = accept.filter(|a| !a.is_empty()).unwrap_or("*/*");
    accept.split(',').any(|range| {
        let essence = range.split(';').next().unwrap_or("").trim();
        essence == "*/*" || produces.contains(&essence)
    })
}

/// go-restful's refusal of a route that produces `produces`, as kube's
/// service error handler writes it for `accept`.
pub(crate) fn restful_refusal(accept: Option<&str>, produces: &[&str]) -> Response<Body> {
    let mut e = ApiError::not_acceptable(format!(
        "406: Not Acceptable\n\nAvailable representations: {}",
        produces.join(", ")
    ));
    e.details = Some(Box::default());
    negotiated(&e, accept)
}

/// kube's `ErrorNegotiated`: the Status in the Accept's format when one is
/// served, else [`raw_json`].
fn negotiated(e: &ApiError, accept: Option<&str>) -> Response<Body> {
    match keelson_codec::negotiate_output(accept) {
        Ok(out) => status_response(e, out),
        Err(_) => raw_json(e),
    }
}

/// kube's `WriteRawJSON` of a Status.
pub(crate) fn raw_json(e: &ApiError) -> Response<Body> {
    match keelson_apimachinery::json::to_vec_go(&e.to_status_json()) {
        Ok(compact) => bytes_response(e.code, "application/json", indent(&compact)),
        Err(err) => bytes_response(500, "text/plain", err.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_as_go_restful() {
        let json = ["application/json"];
        assert!(restful_accepts(None, &json));
        assert!(restful_accepts(Some(""), &json));
        assert!(restful_accepts(Some("text/html, */*;q=0.1"), &json));
        assert!(restful_accepts(
            Some("application/json;as=Table;v=v1"),
            &json
        ));
        assert!(!restful_accepts(Some("application/*"), &json));
        assert!(!restful_accepts(Some("application/yaml"), &json));
        assert!(!restful_accepts(Some("text/html"), &json));
    }
}
