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

    /// The claims of a token this authority accepts: a valid signature by
    /// one of its keys, its issuer, one of the API audiences, not expired
    /// and not before its `nbf`. `None` for anything else (a JWT of
    /// another issuer is simply not ours).
    pub fn verify(&self, token: &str) -> Option<Claims> {
        let header = jsonwebtoken::decode_header(token).ok()?;
        for k in &self.keys {
            if header.kid.as_deref().is_some_and(|kid| kid != k.kid) || header.alg != k.alg {
                continue;
            }
            let mut v = Validation::new(k.alg);
            v.set_issuer(&[&self.issuer]);
            v.set_audience(&self.api_audiences);
            v.leeway = 0;
            v.validate_nbf = true;
            v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
            if let Ok(data) = jsonwebtoken::decode::<Claims>(token, &k.key, &v) {
                return Some(data.claims);
            }
        }
        None
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

    /// The claims of a legacy token signed by one of this authority's keys
    /// with issuer `kubernetes/serviceaccount` and kube's claim checks
    /// ([`LegacyClaims::check`]); the caller still checks the Secret and
    /// the ServiceAccount. `None` for anything else.
    pub fn verify_legacy(&self, token: &str) -> Option<LegacyClaims> {
        let header = jsonwebtoken::decode_header(token).ok()?;
        for k in &self.keys {
            if header.kid.as_deref().is_some_and(|kid| kid != k.kid) || header.alg != k.alg {
                continue;
            }
            let mut v = Validation::new(k.alg);
            v.set_issuer(&[LEGACY_ISSUER]);
            v.validate_aud = false;
            v.validate_exp = false;
            v.leeway = 0;
            v.set_required_spec_claims(&["iss"]);
            if let Ok(data) = jsonwebtoken::decode::<LegacyClaims>(token, &k.key, &v) {
                return data.claims.check().is_ok().then_some(data.claims);
            }
        }
        None
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
