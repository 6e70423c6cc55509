//! The `audit.k8s.io/v1` `Event`, with kube's field names and order, and
//! how its parts are taken from a request and its answer.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use keelson_auth::{Attributes, UserInfo};
use serde::Serialize;
use serde_json::{Map, Value};

use super::policy::{Level, Stage};

/// One audit event (kube's `audit.k8s.io/v1` `Event`), serialized in
/// kube's field order; empty optional fields are left out as Go's
/// `omitempty` does.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub kind: &'static str,
    pub api_version: &'static str,
    pub level: Level,
    #[serde(rename = "auditID")]
    pub audit_id: String,
    pub stage: Stage,
    #[serde(rename = "requestURI")]
    pub request_uri: String,
    pub verb: String,
    pub user: User,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub impersonated_user: Option<User>,
    #[serde(rename = "sourceIPs", skip_serializing_if = "Vec::is_empty")]
    pub source_ips: Vec<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub user_agent: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_ref: Option<ObjectRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_status: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_object: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_object: Option<Value>,
    #[serde(serialize_with = "micro_time")]
    pub request_received_timestamp: DateTime<Utc>,
    #[serde(serialize_with = "micro_time")]
    pub stage_timestamp: DateTime<Utc>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// `authentication.k8s.io/v1` `UserInfo`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct User {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub username: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

impl From<&UserInfo> for User {
    fn from(u: &UserInfo) -> Self {
        User {
            username: u.name.clone(),
            uid: u.uid.clone(),
            groups: u.groups.clone(),
            extra: u.extra.clone(),
        }
    }
}

/// The audit `ObjectReference`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub subresource: String,
}

impl ObjectRef {
    /// The reference of a resource request (kube's `LogRequestMetadata`).
    pub fn of(a: &Attributes) -> Option<ObjectRef> {
        a.resource_request.then(|| ObjectRef {
            resource: a.resource.clone(),
            namespace: a.namespace.clone(),
            name: a.name.clone(),
            api_group: a.api_group.clone(),
            api_version: a.api_version.clone(),
            subresource: a.subresource.clone(),
            ..Default::default()
        })
    }

    /// Fill what the URL did not say from the request's object (kube's
    /// `LogRequestObject`: namespace, name, uid, resourceVersion).
    pub fn complete_from(&mut self, obj: &Value) {
        let Some(meta) = obj.get("metadata").and_then(Value::as_object) else {
            return;
        };
        let get = |k: &str| meta.get(k).and_then(Value::as_str).unwrap_or("");
        for (field, key) in [
            (&mut self.namespace, "namespace"),
            (&mut self.name, "name"),
            (&mut self.uid, "uid"),
            (&mut self.resource_version, "resourceVersion"),
        ] {
            if field.is_empty() {
                *field = get(key).to_string();
            }
        }
    }
}

/// kube's `MicroTime`: RFC 3339 in UTC with microseconds.
fn micro_time<S: serde::Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&t.format("%Y-%m-%dT%H:%M:%S%.6fZ"))
}

/// A `responseStatus` that carries only the code (`{"metadata":{},"code":N}`).
pub fn status_code_only(code: u16) -> Value {
    let mut m = Map::new();
    m.insert("metadata".into(), Value::Object(Map::new()));
    m.insert("code".into(), code.into());
    Value::Object(m)
}

/// The `responseStatus` of an answer that is a `Status`: its status,
/// message, reason, details and code (kube copies these bounded fields).
pub fn status_of(status: &Value, code: u16) -> Value {
    let mut m = Map::new();
    m.insert("metadata".into(), Value::Object(Map::new()));
    for k in ["status", "message", "reason"] {
        if let Some(v) = status
            .get(k)
            .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
        {
            m.insert(k.into(), v.clone());
        }
    }
    if let Some(d) = status.get("details").filter(|d| !d.is_null()) {
        m.insert("details".into(), d.clone());
    }
    m.insert("code".into(), code.into());
    Value::Object(m)
}

/// A `responseStatus` with a message (failed authentication, a panic).
pub fn status_with(code: u16, status: &str, reason: &str, message: &str) -> Value {
    let mut m = Map::new();
    m.insert("metadata".into(), Value::Object(Map::new()));
    if !status.is_empty() {
        m.insert("status".into(), status.into());
    }
    if !message.is_empty() {
        m.insert("message".into(), message.into());
    }
    if !reason.is_empty() {
        m.insert("reason".into(), reason.into());
    }
    m.insert("code".into(), code.into());
    Value::Object(m)
}

/// Drop `metadata.managedFields` from an object, or from each item of a
/// list (kube's `omitManagedFields`).
pub fn omit_managed_fields(v: &mut Value) {
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    if let Some(items) = v.get_mut("items").and_then(Value::as_array_mut) {
        for item in items {
            if let Some(meta) = item.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("managedFields");
            }
        }
    }
}

/// kube's `SourceIPs`: the `X-Forwarded-For` chain, then `X-Real-Ip`, then
/// the connection's peer, each once.
pub fn source_ips(headers: &http::HeaderMap, peer: Option<std::net::IpAddr>) -> Vec<String> {
    let mut ips: Vec<std::net::IpAddr> = Vec::new();
    if let Some(xff) = headers.get("x-forwarded-for").and_then(|v| v.to_str().ok()) {
        ips.extend(
            xff.split(',')
                .filter_map(|p| p.trim().parse::<std::net::IpAddr>().ok()),
        );
    }
    if let Some(ip) = headers
        .get("x-real-ip")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
    {
        if !ips.contains(&ip) {
            ips.push(ip);
        }
    }
    if let Some(ip) = peer {
        if !ips.contains(&ip) {
            ips.push(ip);
        }
    }
    ips.iter().map(|ip| ip.to_string()).collect()
}

/// kube keeps at most 1024 bytes of a User-Agent.
const MAX_USER_AGENT: usize = 1024;

/// The request's User-Agent, cut as kube cuts it.
pub fn user_agent(headers: &http::HeaderMap) -> String {
    let ua = headers
        .get(http::header::USER_AGENT)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    if ua.len() <= MAX_USER_AGENT {
        return ua;
    }
    let mut cut = MAX_USER_AGENT;
    while !ua.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...TRUNCATED", &ua[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_in_kube_order() {
        let t = DateTime::parse_from_rfc3339("2026-01-02T03:04:05.123456789Z")
            .unwrap()
            .with_timezone(&Utc);
        let ev = Event {
            kind: "Event",
            api_version: "audit.k8s.io/v1",
            level: Level::Metadata,
            audit_id: "id".into(),
            stage: Stage::ResponseComplete,
            request_uri: "/api/v1/namespaces/d/secrets/s".into(),
            verb: "get".into(),
            user: User {
                username: "alice".into(),
                groups: vec!["system:authenticated".into()],
                ..Default::default()
            },
            impersonated_user: None,
            source_ips: vec!["127.0.0.1".into()],
            user_agent: String::new(),
            object_ref: Some(ObjectRef {
                resource: "secrets".into(),
                namespace: "d".into(),
                name: "s".into(),
                api_version: "v1".into(),
                ..Default::default()
            }),
            response_status: Some(status_code_only(200)),
            request_object: None,
            response_object: None,
            request_received_timestamp: t,
            stage_timestamp: t,
            annotations: BTreeMap::from([(
                "authorization.k8s.io/decision".to_string(),
                "allow".to_string(),
            )]),
        };
        assert_eq!(
            serde_json::to_string(&ev).unwrap(),
            r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"id","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/d/secrets/s","verb":"get","user":{"username":"alice","groups":["system:authenticated"]},"sourceIPs":["127.0.0.1"],"objectRef":{"resource":"secrets","namespace":"d","name":"s","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-01-02T03:04:05.123456Z","stageTimestamp":"2026-01-02T03:04:05.123456Z","annotations":{"authorization.k8s.io/decision":"allow"}}"#
        );
    }

    #[test]
    fn statuses() {
        let s = serde_json::json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"m","reason":"Forbidden","details":{"kind":"pods"},"code":403});
        assert_eq!(
            serde_json::to_string(&status_of(&s, 403)).unwrap(),
            r#"{"metadata":{},"status":"Failure","message":"m","reason":"Forbidden","details":{"kind":"pods"},"code":403}"#
        );
    }

    #[test]
    fn source_ip_order() {
        let mut h = http::HeaderMap::new();
        h.insert("x-forwarded-for", "10.0.0.1, 10.0.0.2".parse().unwrap());
        h.insert("x-real-ip", "10.0.0.2".parse().unwrap());
        let ips = source_ips(&h, Some("127.0.0.1".parse().unwrap()));
        assert_eq!(ips, ["10.0.0.1", "10.0.0.2", "127.0.0.1"]);
    }
}
