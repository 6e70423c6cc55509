//! Authenticators that need no store: x509 client certificates and the
//! static token file (`--token-auth-file`).

use std::collections::HashMap;
use std::path::Path;

use crate::user::UserInfo;

/// Errors loading authenticator configuration.
#[derive(Debug, thiserror::Error)]
pub enum AuthnError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: line {line}: {message}")]
    TokenFile {
        path: String,
        line: u64,
        message: String,
    },
    #[error("{0}")]
    Key(String),
}

/// The user of an x509 client certificate (already verified against the
/// cluster CA by the TLS layer): the subject's CommonName is the user, its
/// Organizations are the groups (kube's `CommonNameUserConversion`).
/// `None` when the certificate cannot be parsed or has no CommonName.
/// Like kube 1.32+, the user carries the certificate's fingerprint as the
/// `authentication.kubernetes.io/credential-id` extra
/// (`X509SHA256=<hex of SHA-256 of the DER>`).
pub fn user_from_certificate(der: &[u8]) -> Option<UserInfo> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let subject = cert.subject();
    let name = subject
        .iter_common_name()
        .next()?
        .as_str()
        .ok()?
        .to_string();
    if name.is_empty() {
        return None;
    }
    let groups = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok().map(str::to_string))
        .collect();
    let mut user = UserInfo::new(name, groups);
    user.extra.insert(
        crate::user::CREDENTIAL_ID.into(),
        vec![format!("X509SHA256={}", hex_sha256(der))],
    );
    Some(user)
}

/// Lower-case hex of the SHA-256 of `bytes`.
fn hex_sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// kube's static token file: CSV lines `token,user,uid[,"group1,group2"]`.
#[derive(Debug, Default, Clone)]
pub struct TokenFile {
    tokens: HashMap<String, UserInfo>,
}

impl TokenFile {
    /// Read and parse the file at `path`.
    pub fn load(path: &Path) -> Result<Self, AuthnError> {
        let text = std::fs::read_to_string(path).map_err(|source| AuthnError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parse the file's contents (`origin` names it in errors). As kube's
    /// `tokenfile`: fewer than 3 columns is an error, an empty token line is
    /// skipped with the rest, a repeated token keeps the last line.
    pub fn parse(text: &str, origin: &str) -> Result<Self, AuthnError> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(csv::Trim::All)
            .comment(Some(b'#'))
            .from_reader(text.as_bytes());
        let mut tokens = HashMap::new();
        for (i, record) in reader.records().enumerate() {
            let line = i as u64 + 1;
            let record = record.map_err(|e| AuthnError::TokenFile {
                path: origin.to_string(),
                line: e.position().map(|p| p.line()).unwrap_or(line),
                message: e.to_string(),
            })?;
            if record.len() < 3 {
                return Err(AuthnError::TokenFile {
                    path: origin.to_string(),
                    line: record.position().map(|p| p.line()).unwrap_or(line),
                    message: format!(
                        "token file must have at least 3 columns, found {}",
                        record.len()
                    ),
                });
            }
            let token = record[0].to_string();
            if token.is_empty() {
                continue;
            }
            let mut user = UserInfo::new(&record[1], Vec::new());
            user.uid = record[2].to_string();
            if let Some(groups) = record.get(3) {
                user.groups = groups
                    .split(',')
                    .map(str::trim)
                    .filter(|g| !g.is_empty())
                    .map(str::to_string)
                    .collect();
            }
            tokens.insert(token, user);
        }
        Ok(TokenFile { tokens })
    }

    /// The user of a bearer token, if the file names it.
    pub fn authenticate(&self, token: &str) -> Option<UserInfo> {
        self.tokens.get(token).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_file_csv() {
        let f = TokenFile::parse(
            "t1,alice,1\n# comment\nt2,bob,2,\"dev,ops\"\n,nobody,3\n",
            "tokens.csv",
        )
        .unwrap();
        let a = f.authenticate("t1").unwrap();
        assert_eq!((a.name.as_str(), a.uid.as_str()), ("alice", "1"));
        assert!(a.groups.is_empty());
        assert_eq!(f.authenticate("t2").unwrap().groups, vec!["dev", "ops"]);
        assert!(f.authenticate("").is_none());
        assert!(f.authenticate("t3").is_none());
        let e = TokenFile::parse("t1,alice\n", "x").unwrap_err().to_string();
        assert!(e.contains("at least 3 columns"), "{e}");
    }

    #[test]
    fn certificate_subject() {
        let mut p = rcgen::CertificateParams::default();
        p.distinguished_name.push(rcgen::DnType::CommonName, "jane");
        p.distinguished_name
            .push(rcgen::DnType::OrganizationName, "system:masters");
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = p.self_signed(&key).unwrap();
        let u = user_from_certificate(cert.der()).unwrap();
        assert_eq!(u.name, "jane");
        assert_eq!(u.groups, vec!["system:masters"]);
        let id = &u.extra[crate::user::CREDENTIAL_ID];
        assert_eq!(id, &vec![format!("X509SHA256={}", hex_sha256(cert.der()))]);
        assert_eq!(id[0].len(), "X509SHA256=".len() + 64);
        assert!(user_from_certificate(b"junk").is_none());
    }
}
