//! PEM keys as kube-apiserver reads them (client-go's `util/keyutil`):
//! private keys in PKCS#1 (`RSA PRIVATE KEY`), PKCS#8 (`PRIVATE KEY`) or
//! SEC1 (`EC PRIVATE KEY`); public keys from `PUBLIC KEY` (SPKI),
//! `RSA PUBLIC KEY` (PKCS#1), `CERTIFICATE` blocks (the certificate's key)
//! and private keys (their public half). Other PEM blocks (such as
//! `EC PARAMETERS`) are skipped, as kube skips them.

use base64::Engine;

/// kube's error when no private key block parses.
pub const NO_PRIVATE_KEY: &str = "data does not contain a valid RSA or ECDSA private key";
/// kube's error when no public key block parses.
pub const NO_PUBLIC_KEYS: &str = "data does not contain any valid RSA or ECDSA public keys";

const OID_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const OID_EC: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const OID_P256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];

/// A private key, normalised to the DER forms the signer takes.
#[derive(Debug, Clone)]
pub enum PrivateKey {
    /// An RSA key: its PKCS#1 `RSAPrivateKey` DER.
    Rsa { pkcs1: Vec<u8>, spki: Vec<u8> },
    /// A P-256 key: its PKCS#8 DER.
    EcP256 { pkcs8: Vec<u8>, spki: Vec<u8> },
}

impl PrivateKey {
    /// The public half as SubjectPublicKeyInfo DER.
    pub fn spki(&self) -> &[u8] {
        match self {
            PrivateKey::Rsa { spki, .. } | PrivateKey::EcP256 { spki, .. } => spki,
        }
    }

    /// The key as an unencrypted PKCS#8 PEM (what rcgen and rustls read).
    pub fn to_pkcs8_pem(&self) -> String {
        let der = match self {
            PrivateKey::Rsa { pkcs1, .. } => seq(&[
                &tlv(0x02, &[0]),
                &seq(&[&tlv(0x06, OID_RSA), &[0x05, 0x00]]),
                &tlv(0x04, pkcs1),
            ]),
            PrivateKey::EcP256 { pkcs8, .. } => pkcs8.clone(),
        };
        pem_encode("PRIVATE KEY", &der)
    }
}

/// One PEM block: its type and decoded contents.
#[derive(Debug, Clone)]
pub struct PemBlock {
    pub label: String,
    pub der: Vec<u8>,
}

/// The PEM blocks of `text` that decode (blocks with headers, such as
/// encrypted keys, or bad base64 are skipped).
pub fn pem_blocks(text: &str) -> Vec<PemBlock> {
    let mut out = Vec::new();
    let mut cur: Option<(String, String, bool)> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(label) = line
            .strip_prefix("-----BEGIN ")
            .and_then(|l| l.strip_suffix("-----"))
        {
            cur = Some((label.to_string(), String::new(), false));
            continue;
        }
        if let Some(label) = line
            .strip_prefix("-----END ")
            .and_then(|l| l.strip_suffix("-----"))
        {
            if let Some((begin, body, headers)) = cur.take() {
                if begin == label && !headers {
                    if let Ok(der) = base64::engine::general_purpose::STANDARD.decode(body) {
                        out.push(PemBlock { label: begin, der });
                    }
                }
            }
            continue;
        }
        if let Some((_, body, headers)) = cur.as_mut() {
            if line.contains(':') {
                *headers = true;
            } else {
                body.push_str(line);
            }
        }
    }
    out
}

/// The first private key of `text`, as kube's `ParsePrivateKeyPEM`.
pub fn parse_private_key_pem(text: &str) -> Result<PrivateKey, String> {
    for block in pem_blocks(text) {
        let key = match block.label.as_str() {
            "EC PRIVATE KEY" => parse_sec1(&block.der, None),
            "RSA PRIVATE KEY" => parse_pkcs1_private(&block.der),
            "PRIVATE KEY" => parse_pkcs8(&block.der),
            _ => None,
        };
        if let Some(k) = key {
            return Ok(k);
        }
    }
    Err(NO_PRIVATE_KEY.to_string())
}

/// Every public key of `text` as SPKI DER, as kube's `ParsePublicKeysPEM`:
/// public keys, certificates' keys and private keys' public halves.
pub fn parse_public_keys_pem(text: &str) -> Result<Vec<Vec<u8>>, String> {
    let mut keys = Vec::new();
    for block in pem_blocks(text) {
        let der = &block.der;
        let spki = parse_pkcs1_private(der)
            .or_else(|| parse_sec1(der, None))
            .or_else(|| parse_pkcs8(der))
            .map(|k| k.spki().to_vec())
            .or_else(|| supported_spki(der))
            .or_else(|| parse_pkcs1_public(der))
            .or_else(|| certificate_spki(der));
        if let Some(s) = spki {
            keys.push(s);
        }
    }
    if keys.is_empty() {
        return Err(NO_PUBLIC_KEYS.to_string());
    }
    Ok(keys)
}

// --- DER -------------------------------------------------------------------

/// One TLV: (tag, contents, rest).
fn read_tlv(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, mut rest) = rest.split_first()?;
    let len = if first < 0x80 {
        first as usize
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let mut len = 0usize;
        for &b in &rest[..n] {
            len = (len << 8) | b as usize;
        }
        rest = &rest[n..];
        len
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

/// The contents of a whole-input TLV of `tag`.
fn expect(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (t, c, rest) = read_tlv(input)?;
    (t == tag).then_some((c, rest))
}

fn tlv(tag: u8, contents: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = contents.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .iter()
            .copied()
            .skip_while(|&b| b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out.extend_from_slice(contents);
    out
}

fn seq(parts: &[&[u8]]) -> Vec<u8> {
    tlv(0x30, &parts.concat())
}

fn bit_string(bytes: &[u8]) -> Vec<u8> {
    let mut c = vec![0];
    c.extend_from_slice(bytes);
    tlv(0x03, &c)
}

fn rsa_spki(rsa_public_key_der: &[u8]) -> Vec<u8> {
    seq(&[
        &seq(&[&tlv(0x06, OID_RSA), &[0x05, 0x00]]),
        &bit_string(rsa_public_key_der),
    ])
}

fn ec_spki(point: &[u8]) -> Vec<u8> {
    seq(&[
        &seq(&[&tlv(0x06, OID_EC), &tlv(0x06, OID_P256)]),
        &bit_string(point),
    ])
}

fn pem_encode(label: &str, der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(chunk));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// PKCS#1 `RSAPrivateKey`: version, n, e, d, p, q, ...
fn parse_pkcs1_private(der: &[u8]) -> Option<PrivateKey> {
    let (body, trailing) = expect(der, 0x30)?;
    if !trailing.is_empty() {
        return None;
    }
    let (version, rest) = expect(body, 0x02)?;
    if version != [0] {
        return None;
    }
    let (n, rest) = expect(rest, 0x02)?;
    let (e, rest) = expect(rest, 0x02)?;
    // d, p, q, dp, dq, qinv must be there.
    let mut rest = rest;
    for _ in 0..6 {
        rest = expect(rest, 0x02)?.1;
    }
    let public = seq(&[&tlv(0x02, n), &tlv(0x02, e)]);
    Some(PrivateKey::Rsa {
        pkcs1: der.to_vec(),
        spki: rsa_spki(&public),
    })
}

/// PKCS#1 `RSAPublicKey`: n, e.
fn parse_pkcs1_public(der: &[u8]) -> Option<Vec<u8>> {
    let (body, trailing) = expect(der, 0x30)?;
    let (_, rest) = expect(body, 0x02)?;
    let (_, rest) = expect(rest, 0x02)?;
    (trailing.is_empty() && rest.is_empty()).then(|| rsa_spki(der))
}

/// SEC1 `ECPrivateKey`: version 1, key, [0] curve, [1] public point. The
/// curve comes from [0] or, inside PKCS#8, from the algorithm.
fn parse_sec1(der: &[u8], curve: Option<&[u8]>) -> Option<PrivateKey> {
    let (body, trailing) = expect(der, 0x30)?;
    if !trailing.is_empty() {
        return None;
    }
    let (version, rest) = expect(body, 0x02)?;
    if version != [1] {
        return None;
    }
    let (scalar, mut rest) = expect(rest, 0x04)?;
    let mut curve = curve.map(<[u8]>::to_vec);
    let mut point = None;
    while !rest.is_empty() {
        let (tag, contents, r) = read_tlv(rest)?;
        match tag {
            0xa0 => curve = Some(expect(contents, 0x06)?.0.to_vec()),
            0xa1 => {
                let (bits, _) = expect(contents, 0x03)?;
                point = Some(bits.get(1..)?.to_vec());
            }
            _ => return None,
        }
        rest = r;
    }
    // P-256 only; the public point must be present (openssl writes it).
    if curve.as_deref() != Some(OID_P256) || scalar.len() != 32 {
        return None;
    }
    let point = point.filter(|p| p.len() == 65 && p[0] == 4)?;
    let inner = seq(&[
        &tlv(0x02, &[1]),
        &tlv(0x04, scalar),
        &tlv(0xa1, &bit_string(&point)),
    ]);
    let pkcs8 = seq(&[
        &tlv(0x02, &[0]),
        &seq(&[&tlv(0x06, OID_EC), &tlv(0x06, OID_P256)]),
        &tlv(0x04, &inner),
    ]);
    Some(PrivateKey::EcP256 {
        pkcs8,
        spki: ec_spki(&point),
    })
}

/// PKCS#8 `PrivateKeyInfo` holding an RSA or EC key.
fn parse_pkcs8(der: &[u8]) -> Option<PrivateKey> {
    let (body, _) = expect(der, 0x30)?;
    let (version, rest) = expect(body, 0x02)?;
    if version != [0] && version != [1] {
        return None;
    }
    let (alg, rest) = expect(rest, 0x30)?;
    let (key, _) = expect(rest, 0x04)?;
    let (oid, params) = expect(alg, 0x06)?;
    if oid == OID_RSA {
        parse_pkcs1_private(key)
    } else if oid == OID_EC {
        let (curve, _) = expect(params, 0x06)?;
        parse_sec1(key, Some(curve))
    } else {
        None
    }
}

/// An SPKI of a supported algorithm (RSA, P-256), as it is.
fn supported_spki(der: &[u8]) -> Option<Vec<u8>> {
    let (body, trailing) = expect(der, 0x30)?;
    if !trailing.is_empty() {
        return None;
    }
    let (alg, rest) = expect(body, 0x30)?;
    let (_, rest) = expect(rest, 0x03)?;
    if !rest.is_empty() {
        return None;
    }
    let (oid, params) = expect(alg, 0x06)?;
    let ok = oid == OID_RSA || (oid == OID_EC && expect(params, 0x06)?.0 == OID_P256);
    ok.then(|| der.to_vec())
}

/// An X.509 certificate's SubjectPublicKeyInfo (RSA or P-256 keys only).
pub fn certificate_spki(der: &[u8]) -> Option<Vec<u8>> {
    use x509_parser::prelude::FromDer;
    let (_, cert) = x509_parser::certificate::X509Certificate::from_der(der).ok()?;
    supported_spki(cert.public_key().raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_kubes_error() {
        assert_eq!(
            parse_private_key_pem("not a key").unwrap_err(),
            NO_PRIVATE_KEY
        );
        assert_eq!(
            parse_public_keys_pem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
                .unwrap_err(),
            NO_PUBLIC_KEYS
        );
    }

    #[test]
    fn pkcs8_round_trip_matches_rcgen() {
        let kp = rcgen::KeyPair::generate().unwrap();
        let k = parse_private_key_pem(&kp.serialize_pem()).unwrap();
        assert_eq!(k.spki(), kp.public_key_der().as_slice());
        let again = rcgen::KeyPair::from_pem(&k.to_pkcs8_pem()).unwrap();
        assert_eq!(again.public_key_der(), kp.public_key_der());
    }
}

/// Keys written by `openssl` in each of kube's formats.
#[cfg(test)]
mod openssl_tests {
    use super::*;
    use crate::serviceaccount::{TokenAuthority, DEFAULT_ISSUER};
    use std::process::Command;

    fn openssl(dir: &std::path::Path, args: &[&str]) -> String {
        let out = Command::new("openssl")
            .current_dir(dir)
            .args(args)
            .output()
            .expect("openssl");
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn every_format_signs_and_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let rsa1 = openssl(d, &["genrsa", "-traditional", "2048"]);
        assert!(rsa1.contains("BEGIN RSA PRIVATE KEY"));
        std::fs::write(d.join("rsa1.key"), &rsa1).unwrap();
        let rsa8 = openssl(d, &["pkcs8", "-topk8", "-nocrypt", "-in", "rsa1.key"]);
        let ec1 = openssl(d, &["ecparam", "-name", "prime256v1", "-genkey"]);
        assert!(ec1.contains("BEGIN EC PARAMETERS") && ec1.contains("BEGIN EC PRIVATE KEY"));
        std::fs::write(d.join("ec1.key"), &ec1).unwrap();
        let ec8 = openssl(d, &["pkcs8", "-topk8", "-nocrypt", "-in", "ec1.key"]);
        let rsa_pub = openssl(d, &["rsa", "-in", "rsa1.key", "-pubout"]);
        let rsa_pub1 = openssl(d, &["rsa", "-in", "rsa1.key", "-RSAPublicKey_out"]);
        assert!(rsa_pub1.contains("BEGIN RSA PUBLIC KEY"));
        let ec_cert = openssl(
            d,
            &[
                "req", "-x509", "-key", "ec1.key", "-subj", "/CN=sa", "-days", "1",
            ],
        );
        for signing in [&rsa1, &rsa8, &ec1, &ec8] {
            let k = parse_private_key_pem(signing).unwrap();
            TokenAuthority::from_pem(signing, &[], DEFAULT_ISSUER, &[]).unwrap();
            // The PKCS#8 form keeps the key.
            let again = parse_private_key_pem(&k.to_pkcs8_pem()).unwrap();
            assert_eq!(again.spki(), k.spki());
        }
        let rsa_spki = parse_private_key_pem(&rsa1).unwrap().spki().to_vec();
        let ec_spki = parse_private_key_pem(&ec1).unwrap().spki().to_vec();
        for (public, spki) in [
            (&rsa_pub, &rsa_spki),
            (&rsa_pub1, &rsa_spki),
            (&rsa1, &rsa_spki),
            (&ec_cert, &ec_spki),
            (&ec8, &ec_spki),
        ] {
            assert_eq!(&parse_public_keys_pem(public).unwrap(), &vec![spki.clone()]);
        }
        // A token signed with the SEC1 key verifies with only its certificate.
        let a = TokenAuthority::from_pem(&ec1, &[], DEFAULT_ISSUER, &[]).unwrap();
        let b =
            TokenAuthority::from_pem(&rsa1, std::slice::from_ref(&ec_cert), DEFAULT_ISSUER, &[])
                .unwrap();
        let t = a.issue_legacy("default", "sa", "uid", "secret").unwrap();
        assert!(b.verify_legacy(&t).is_some());
    }
}
