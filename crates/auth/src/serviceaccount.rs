//! ServiceAccount tokens: JWTs issued by the TokenRequest subresource,
//! signed with `--service-account-signing-key-file` and verified with the
//! keys of `--service-account-key-file`, the issuer
//! (`--service-account-issuer`), audiences and expiry; and the issuer
//! discovery documents (`/.well-known/openid-configuration`,
//! `/openid/v1/jwks`). ES256 (P-256) and RS256 keys, in the PEM forms
//! [`crate::keyutil`] reads.

use std::path::Path;

use base64::Engine;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::Digest;

use crate::authn::AuthnError;

/// kubeadm's default issuer (and API audience).
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";
/// TokenRequest's default lifetime.
pub const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
/// TokenRequest's shortest lifetime.
pub const MIN_EXPIRATION_SECONDS: i64 = 600;
/// go-jose's `jwt.DefaultLeeway`, which kube's claim validation allows on
/// `exp`, `nbf` and `iat`.
pub const JWT_LEEWAY_SECONDS: i64 = 60;

/// Whether `token` looks like a compact JWT whose unverified `iss` is
/// `issuer` (kube's `hasCorrectIssuer`, which picks the authenticator).
fn has_issuer(token: &str, issuer: &str) -> bool {
    if token.trim_start().starts_with('{') {
        return false;
    }
    let parts: Vec<&str> = token.split('.').collect();
    if parts.len() != 3 {
        return false;
    }
    let Ok(payload) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(parts[1]) else {
        return false;
    };
    #[derive(Deserialize)]
    struct Iss {
        #[serde(default)]
        iss: String,
    }
    serde_json::from_slice::<Iss>(&payload).is_ok_and(|c| c.iss == issuer)
}

/// The private claims kube puts under `kubernetes.io`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KubeClaims {
    pub namespace: String,
    pub serviceaccount: ObjectRef,
}

/// A name and uid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectRef {
    pub name: String,
    pub uid: String,
}

/// A bound ServiceAccount token's claims.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    pub aud: Vec<String>,
    pub exp: i64,
    pub iat: i64,
    pub iss: String,
    pub jti: String,
    #[serde(rename = "kubernetes.io")]
    pub kubernetes: KubeClaims,
    pub nbf: i64,
    pub sub: String,
}

/// The issuer of legacy (Secret-based) ServiceAccount tokens.
pub const LEGACY_ISSUER: &str = "kubernetes/serviceaccount";

/// A legacy (Secret-based) ServiceAccount token's claims, as kube's
/// tokens controller writes them: no audience, no expiry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegacyClaims {
    pub iss: String,
    #[serde(rename = "kubernetes.io/serviceaccount/namespace", default)]
    pub namespace: String,
    #[serde(rename = "kubernetes.io/serviceaccount/secret.name", default)]
    pub secret_name: String,
    #[serde(rename = "kubernetes.io/serviceaccount/service-account.name", default)]
    pub service_account_name: String,
    #[serde(rename = "kubernetes.io/serviceaccount/service-account.uid", default)]
    pub service_account_uid: String,
    #[serde(default)]
    pub sub: String,
}

impl LegacyClaims {
    /// kube's legacy validator's claim checks: every private claim set and
    /// `sub` naming the same ServiceAccount.
    pub fn check(&self) -> Result<(), &'static str> {
        if self.sub.is_empty() {
            return Err("sub claim is missing");
        }
        if self.namespace.is_empty() {
            return Err("namespace claim is missing");
        }
        if self.secret_name.is_empty() {
            return Err("secretName claim is missing");
        }
        if self.service_account_name.is_empty() {
            return Err("serviceAccountName claim is missing");
        }
        if self.service_account_uid.is_empty() {
            return Err("serviceAccountUID claim is missing");
        }
        if self.sub
            != crate::user::service_account_user(&self.namespace, &self.service_account_name)
        {
            return Err("sub claim is invalid");
        }
        Ok(())
    }
}

struct PublicKey {
    kid: String,
    alg: Algorithm,
    key: DecodingKey,
    jwk: Value,
}

struct SigningKey {
    kid: String,
    alg: Algorithm,
    key: EncodingKey,
}

/// Issues and verifies ServiceAccount tokens.
pub struct TokenAuthority {
    issuer: String,
    api_audiences: Vec<String>,
    signer: SigningKey,
    keys: Vec<PublicKey>,
}

impl std::fmt::Debug for TokenAuthority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenAuthority")
            .field("issuer", &self.issuer)
            .field("api_audiences", &self.api_audiences)
            .finish()
    }
}

/// A new P-256 private key in PKCS#8 PEM (for a data dir's first start).
pub fn generate_signing_key() -> Result<String, AuthnError> {
    rcgen::KeyPair::generate()
        .map(|k| k.serialize_pem())
        .map_err(|e| AuthnError::Key(e.to_string()))
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// kube's key id: the SHA-256 of the SPKI DER, base64url.
fn key_id(spki_der: &[u8]) -> String {
    b64(&sha2::Sha256::digest(spki_der))
}

/// A verification key from its SPKI DER.
fn public_key(der: &[u8]) -> Result<PublicKey, AuthnError> {
    use x509_parser::prelude::FromDer;
    use x509_parser::public_key::PublicKey as Pk;
    let kid = key_id(der);
    let (_, spki) = x509_parser::x509::SubjectPublicKeyInfo::from_der(der)
        .map_err(|e| AuthnError::Key(format!("bad public key: {e}")))?;
    let parsed = spki
        .parsed()
        .map_err(|e| AuthnError::Key(format!("bad public key: {e}")))?;
    match parsed {
        Pk::EC(point) if point.data().len() == 65 => {
            let (x, y) = (&point.data()[1..33], &point.data()[33..]);
            let key = DecodingKey::from_ec_components(&b64(x), &b64(y))
                .map_err(|e| AuthnError::Key(e.to_string()))?;
            let jwk = json!({"use": "sig", "kty": "EC", "kid": kid, "crv": "P-256", "alg": "ES256", "x": b64(x), "y": b64(y)});
            Ok(PublicKey {
                kid,
                alg: Algorithm::ES256,
                key,
                jwk,
            })
        }
        Pk::RSA(rsa) => {
            let strip = |b: &[u8]| {
                let i = b.iter().position(|&x| x != 0).unwrap_or(b.len());
                b64(&b[i..])
            };
            let (n, e) = (strip(rsa.modulus), strip(rsa.exponent));
            let key = DecodingKey::from_rsa_components(&n, &e)
                .map_err(|e| AuthnError::Key(e.to_string()))?;
            let jwk =
                json!({"use": "sig", "kty": "RSA", "kid": kid, "alg": "RS256", "n": n, "e": e});
            Ok(PublicKey {
                kid,
                alg: Algorithm::RS256,
                key,
                jwk,
            })
        }
        _ => Err(AuthnError::Key(
            "unsupported key type (P-256 ECDSA or RSA keys are supported)".into(),
        )),
    }
}

fn read(path: &Path) -> Result<String, AuthnError> {
    std::fs::read_to_string(path).map_err(|source| AuthnError::Io {
        path: path.display().to_string(),
        source,
    })
}

impl TokenAuthority {
    /// Build from PEM texts: the signing key (PKCS#8) and the verification
    /// keys (the signing key's public half is always one of them).
    pub fn from_pem(
        signing_pem: &str,
        verify_pems: &[String],
        issuer: &str,
        api_audiences: &[String],
    ) -> Result<Self, AuthnError> {
        let private =
            crate::keyutil::parse_private_key_pem(signing_pem).map_err(AuthnError::Key)?;
        let signing_public = public_key(private.spki())?;
        let key = match &private {
            crate::keyutil::PrivateKey::EcP256 { pkcs8, .. } => EncodingKey::from_ec_der(pkcs8),
            crate::keyutil::PrivateKey::Rsa { pkcs1, .. } => EncodingKey::from_rsa_der(pkcs1),
        };
        let signer = SigningKey {
            kid: signing_public.kid.clone(),
            alg: signing_public.alg,
            key,
        };
        let mut keys = vec![signing_public];
        for pem in verify_pems {
            for der in crate::keyutil::parse_public_keys_pem(pem).map_err(AuthnError::Key)? {
                let k = public_key(&der)?;
                if !keys.iter().any(|x| x.kid == k.kid) {
                    keys.push(k);
                }
            }
        }
        let api_audiences = if api_audiences.is_empty() {
            vec![issuer.to_string()]
        } else {
            api_audiences.to_vec()
        };
        Ok(TokenAuthority {
            issuer: issuer.to_string(),
            api_audiences,
            signer,
            keys,
        })
    }

    /// Build from key files.
    pub fn load(
        signing_key_file: &Path,
        key_files: &[std::path::PathBuf],
        issuer: &str,
        api_audiences: &[String],
    ) -> Result<Self, AuthnError> {
        // kube-apiserver's wording for unreadable keys.
        let signing = read(signing_key_file)?;
        let private = crate::keyutil::parse_private_key_pem(&signing).map_err(|e| {
            AuthnError::Key(format!(
                "failed to parse service-account-issuer-key-file: error reading private key file {}: {e}",
                signing_key_file.display()
            ))
        })?;
        let signing = private.to_pkcs8_pem();
        let mut verify = Vec::new();
        for p in key_files {
            let text = read(p)?;
            crate::keyutil::parse_public_keys_pem(&text).map_err(|e| {
                AuthnError::Key(format!(
                    "failed to parse key file {:?}: error reading public key file {}: {e}",
                    p.display().to_string(),
                    p.display()
                ))
            })?;
            verify.push(text);
        }
        Self::from_pem(&signing, &verify, issuer, api_audiences)
    }

    /// The issuer (`iss`).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The audiences the API server accepts (`--api-audiences`, else the
    /// issuer); a TokenRequest without audiences gets these.
    pub fn api_audiences(&self) -> &[String] {
        &self.api_audiences
    }

    /// Sign a token for the ServiceAccount `namespace/name` (uid `uid`).
    pub fn issue(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        audiences: &[String],
        now: i64,
        expiration_seconds: i64,
    ) -> Result<(String, i64), AuthnError> {
        let exp = now + expiration_seconds;
        let claims = Claims {
            aud: if audiences.is_empty() {
                self.api_audiences.clone()
            } else {
                audiences.to_vec()
            },
            exp,
            iat: now,
            iss: self.issuer.clone(),
            jti: uuid::Uuid::new_v4().to_string(),
            kubernetes: KubeClaims {
                namespace: namespace.to_string(),
                serviceaccount: ObjectRef {
                    name: name.to_string(),
                    uid: uid.to_string(),
                },
            },
            nbf: now,
            sub: crate::user::service_account_user(namespace, name),
        };
        let mut header = Header::new(self.signer.alg);
        header.kid = Some(self.signer.kid.clone());
        let token = jsonwebtoken::encode(&header, &claims, &self.signer.key)
            .map_err(|e| AuthnError::Key(e.to_string()))?;
        Ok((token, exp))
    }

    /// The claims of a token this authority accepts for the API server's
    /// own audiences: see [`Self::verify_for`]. `None` for anything else.
    pub fn verify(&self, token: &str) -> Option<Claims> {
        let now = chrono::Utc::now().timestamp();
        self.verify_for(token, &[], now)
            .ok()
            .flatten()
            .map(|(c, _)| c)
    }

    /// kube's bound ServiceAccount token authenticator for a request that
    /// targets `audiences` (empty: the API audiences) at `now`: `Ok(None)`
    /// when the token is not a JWT of this issuer (another authenticator's
    /// business), `Err` with kube's words when it is one but is refused
    /// (signature, audiences, expiry with go-jose's one-minute leeway),
    /// else the claims and the audiences it is good for (the targets it
    /// names, in the targets' order). The ServiceAccount itself is the
    /// caller's to check.
    pub fn verify_for(
        &self,
        token: &str,
        audiences: &[String],
        now: i64,
    ) -> Result<Option<(Claims, Vec<String>)>, String> {
        let Some((raw, auds)) = self.check_jwt(token, &self.issuer, audiences)? else {
            return Ok(None);
        };
        let time = |k: &str| raw.get(k).and_then(Value::as_i64);
        if time("nbf").is_some_and(|nbf| now + JWT_LEEWAY_SECONDS < nbf) {
            return Err("service account token is not valid yet".into());
        }
        if time("exp").is_some_and(|exp| now - JWT_LEEWAY_SECONDS > exp) {
            return Err("service account token has expired".into());
        }
        let unexpected = || {
            "service account token claims could not be validated due to unexpected validation error"
                .to_string()
        };
        if time("iat").is_some_and(|iat| now + JWT_LEEWAY_SECONDS < iat) {
            return Err(unexpected());
        }
        let claims: Claims = serde_json::from_value(raw).map_err(|_| unexpected())?;
        Ok(Some((claims, auds)))
    }

    /// kube's `jwtTokenAuthenticator` up to its validator: the issuer
    /// (unverified, to pick the authenticator), the signature by a key of
    /// the token's `kid` (else any key), then the audiences. The verified
    /// payload and the audiences it is good for.
    fn check_jwt(
        &self,
        token: &str,
        issuer: &str,
        targets: &[String],
    ) -> Result<Option<(Value, Vec<String>)>, String> {
        if !has_issuer(token, issuer) {
            return Ok(None);
        }
        let Ok(header) = jsonwebtoken::decode_header(token) else {
            return Ok(None);
        };
        let keys: Vec<&PublicKey> = self
            .keys
            .iter()
            .filter(|k| header.kid.as_deref().is_none_or(|kid| kid == k.kid))
            .collect();
        if keys.is_empty() {
            return Err("invalid signature, no keys found".into());
        }
        let mut payload = None;
        for k in keys {
            if header.alg != k.alg {
                continue;
            }
            let mut v = Validation::new(k.alg);
            v.validate_exp = false;
            v.validate_nbf = false;
            v.validate_aud = false;
            v.required_spec_claims = Default::default();
            if let Ok(data) = jsonwebtoken::decode::<Value>(token, &k.key, &v) {
                payload = Some(data.claims);
                break;
            }
        }
        let Some(payload) = payload else {
            return Err("go-jose/go-jose: error in cryptographic primitive".into());
        };
        let iss = payload.get("iss").and_then(Value::as_str).unwrap_or("");
        if iss != issuer {
            return Err(format!("token issuer {iss:?} is invalid"));
        }
        let mut token_auds: Vec<String> = match payload.get("aud") {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        if token_auds.is_empty() {
            // Legacy tokens have none: only the API audiences.
            token_auds = self.api_audiences.clone();
        }
        let requested = if targets.is_empty() {
            &self.api_audiences
        } else {
            targets
        };
        let auds = crate::audiences::intersect(&token_auds, requested);
        if auds.is_empty() && !self.api_audiences.is_empty() {
            return Err(format!(
                "token audiences {} is invalid for the target audiences {}",
                crate::audiences::go_quote_list(&token_auds),
                crate::audiences::go_quote_list(requested)
            ));
        }
        Ok(Some((payload, auds)))
    }

    /// Sign a legacy token for the ServiceAccount `namespace/name` (uid
    /// `uid`) kept in the Secret `secret_name` (kube's tokens controller):
    /// issuer `kubernetes/serviceaccount`, no audience and no expiry.
    pub fn issue_legacy(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        secret_name: &str,
    ) -> Result<String, AuthnError> {
        let claims = LegacyClaims {
            iss: LEGACY_ISSUER.to_string(),
            namespace: namespace.to_string(),
            secret_name: secret_name.to_string(),
            service_account_name: name.to_string(),
            service_account_uid: uid.to_string(),
            sub: crate::user::service_account_user(namespace, name),
        };
        let mut header = Header::new(self.signer.alg);
        header.kid = Some(self.signer.kid.clone());
        jsonwebtoken::encode(&header, &claims, &self.signer.key)
            .map_err(|e| AuthnError::Key(e.to_string()))
    }

    /// The claims of a legacy token this authority accepts for the API
    /// audiences: see [`Self::verify_legacy_for`]. `None` for anything else.
    pub fn verify_legacy(&self, token: &str) -> Option<LegacyClaims> {
        self.verify_legacy_for(token, &[])
            .ok()
            .flatten()
            .map(|(c, _)| c)
    }

    /// kube's legacy ServiceAccount token authenticator for `audiences`
    /// (empty: the API audiences): a JWT of issuer
    /// `kubernetes/serviceaccount` signed by one of this authority's keys,
    /// good for the targets (a legacy token has only the API audiences)
    /// and passing kube's claim checks ([`LegacyClaims::check`]).
    /// `Ok(None)` for a token of another issuer, `Err` with kube's words;
    /// the caller still checks the Secret and the ServiceAccount.
    pub fn verify_legacy_for(
        &self,
        token: &str,
        audiences: &[String],
    ) -> Result<Option<(LegacyClaims, Vec<String>)>, String> {
        let Some((raw, auds)) = self.check_jwt(token, LEGACY_ISSUER, audiences)? else {
            return Ok(None);
        };
        let claims: LegacyClaims = serde_json::from_value(raw).map_err(|e| e.to_string())?;
        claims.check().map_err(str::to_string)?;
        Ok(Some((claims, auds)))
    }

    /// `/.well-known/openid-configuration`.
    pub fn openid_configuration(&self, jwks_uri: &str) -> Value {
        let mut algs: Vec<&str> = self
            .keys
            .iter()
            .map(|k| {
                if k.alg == Algorithm::ES256 {
                    "ES256"
                } else {
                    "RS256"
                }
            })
            .collect();
        algs.sort();
        algs.dedup();
        json!({
            "issuer": self.issuer,
            "jwks_uri": jwks_uri,
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": algs,
        })
    }

    /// `/openid/v1/jwks`: the verification keys.
    pub fn jwks(&self) -> Value {
        json!({"keys": self.keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_and_verify() {
        let key = generate_signing_key().unwrap();
        let a = TokenAuthority::from_pem(&key, &[], DEFAULT_ISSUER, &[]).unwrap();
        let now = chrono::Utc::now().timestamp();
        let (t, exp) = a.issue("ns", "sa", "uid-1", &[], now, 3600).unwrap();
        assert_eq!(exp, now + 3600);
        let c = a.verify(&t).unwrap();
        assert_eq!(c.sub, "system:serviceaccount:ns:sa");
        assert_eq!(c.kubernetes.serviceaccount.uid, "uid-1");
        // Expired.
        let (old, _) = a.issue("ns", "sa", "u", &[], now - 7200, 3600).unwrap();
        assert!(a.verify(&old).is_none());
        // Another audience.
        let (aud, _) = a
            .issue("ns", "sa", "u", &["vault".into()], now, 3600)
            .unwrap();
        assert!(a.verify(&aud).is_none());
        // Another key.
        let other =
            TokenAuthority::from_pem(&generate_signing_key().unwrap(), &[], DEFAULT_ISSUER, &[])
                .unwrap();
        assert!(other.verify(&t).is_none());
        assert!(a.verify("not.a.jwt").is_none());
        // Bound and legacy tokens are not mistaken for one another.
        assert!(a.verify_legacy(&t).is_none());
        let legacy = a.issue_legacy("ns", "sa", "uid-1", "sa-token").unwrap();
        assert!(a.verify(&legacy).is_none());
        let lc = a.verify_legacy(&legacy).unwrap();
        assert_eq!(lc.iss, LEGACY_ISSUER);
        assert_eq!(lc.sub, "system:serviceaccount:ns:sa");
        assert_eq!(lc.secret_name, "sa-token");
        assert_eq!(lc.service_account_uid, "uid-1");
        assert!(other.verify_legacy(&legacy).is_none());
        // kube's words for tokens of this issuer that are refused.
        let kid_other = other.issue("ns", "sa", "u", &[], now, 3600).unwrap().0;
        assert_eq!(
            a.verify_for(&kid_other, &[], now).unwrap_err(),
            "invalid signature, no keys found"
        );
        assert_eq!(
            a.verify_for(&old, &[], now).unwrap_err(),
            "service account token has expired"
        );
        // go-jose's one-minute leeway.
        let (just, _) = a.issue("ns", "sa", "u", &[], now - 3630, 3600).unwrap();
        assert!(a.verify_for(&just, &[], now).unwrap().is_some());
        assert_eq!(
            a.verify_for(&aud, &[], now).unwrap_err(),
            format!(
                r#"token audiences ["vault"] is invalid for the target audiences ["{DEFAULT_ISSUER}"]"#
            )
        );
        let (_, auds) = a
            .verify_for(&aud, &["x".into(), "vault".into()], now)
            .unwrap()
            .unwrap();
        assert_eq!(auds, vec!["vault".to_string()]);
        assert_eq!(
            a.verify_for(&t, &["api".into()], now).unwrap_err(),
            format!(
                r#"token audiences ["{DEFAULT_ISSUER}"] is invalid for the target audiences ["api"]"#
            )
        );
        // Not this issuer's: another authenticator's business.
        assert!(a.verify_for("not.a.jwt", &[], now).unwrap().is_none());
        assert!(a.verify_for(&legacy, &[], now).unwrap().is_none());
        let mut tampered = t.clone();
        tampered.pop();
        tampered.push(if t.ends_with('A') { 'B' } else { 'A' });
        assert_eq!(
            a.verify_for(&tampered, &[], now).unwrap_err(),
            "go-jose/go-jose: error in cryptographic primitive"
        );
        // Legacy tokens are good only for the API audiences.
        let (_, lauds) = a.verify_legacy_for(&legacy, &[]).unwrap().unwrap();
        assert_eq!(lauds, vec![DEFAULT_ISSUER.to_string()]);
        assert_eq!(
            a.verify_legacy_for(&legacy, &["api".into()]).unwrap_err(),
            format!(
                r#"token audiences ["{DEFAULT_ISSUER}"] is invalid for the target audiences ["api"]"#
            )
        );
        let payload = legacy.split('.').nth(1).unwrap();
        let raw: Value = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(payload)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(raw["kubernetes.io/serviceaccount/namespace"], "ns");
        assert_eq!(
            raw["kubernetes.io/serviceaccount/service-account.name"],
            "sa"
        );
        assert!(raw.get("exp").is_none() && raw.get("aud").is_none());
        // A sub naming another ServiceAccount is refused.
        let mut bad = lc.clone();
        bad.sub = "system:serviceaccount:ns:other".into();
        assert_eq!(bad.check(), Err("sub claim is invalid"));
        bad.secret_name.clear();
        assert_eq!(bad.check(), Err("secretName claim is missing"));
        let jwks = a.jwks();
        assert_eq!(jwks["keys"][0]["kty"], "EC");
        assert_eq!(a.openid_configuration("u")["issuer"], DEFAULT_ISSUER);
    }
}
