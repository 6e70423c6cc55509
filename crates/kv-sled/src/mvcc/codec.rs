//! Byte layouts of the MVCC tables.
//!
//! - `Versions`: `key 0x00 rev(u64 BE)` → `kind(u8) [create_rev(u64 BE)] payload`
//! - `Current`:  `key` → `rev(u64 BE) kind(u8) [create_rev(u64 BE)] payload`
//! - `Log`:      `rev(u64 BE)` → `event(u8) unix_millis(u64 BE) key`
//! - `Meta`:     `"rev"` / `"compacted"` → `u64 BE`
//!
//! Hand-written rather than serde-encoded: the layouts are a few fixed-width
//! fields, and the big-endian revision must sort bytewise.

use crate::error::MvccError;

use super::ChangeOp;

/// `Meta` key of the last assigned revision.
pub const META_REV: &[u8] = b"rev";
/// `Meta` key of the compacted revision.
pub const META_COMPACTED: &[u8] = b"compacted";

/// A put written before create revisions were recorded.
const KIND_PUT: u8 = 0;
const KIND_TOMBSTONE: u8 = 1;
/// A put followed by its key's create revision.
const KIND_PUT_CREATED: u8 = 2;

/// A decoded version: live value or tombstone (holding the last state).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// True for a delete tombstone.
    pub tombstone: bool,
    /// The key's create revision (puts only; `None` for tombstones and for
    /// puts stored before create revisions were recorded).
    pub create_revision: Option<u64>,
    /// The value (for a tombstone: the state that was deleted).
    pub payload: Vec<u8>,
}

/// Encode a u64 so bytewise order is numeric order.
pub fn u64_key(v: u64) -> [u8; 8] {
    v.to_be_bytes()
}

/// Decode [`u64_key`].
pub fn decode_u64(b: &[u8]) -> Result<u64, MvccError> {
    let arr: [u8; 8] = b
        .get(..8)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| MvccError::Corrupt("short u64".into()))?;
    Ok(u64::from_be_bytes(arr))
}

/// `key \0` — the prefix of all versions of `key`.
pub fn versions_prefix(key: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(key.len() + 9);
    v.extend_from_slice(key);
    v.push(0);
    v
}

/// `key \0 rev`.
pub fn version_key(key: &[u8], rev: u64) -> Vec<u8> {
    let mut v = versions_prefix(key);
    v.extend_from_slice(&u64_key(rev));
    v
}

/// Split a versions-table key into `(key, rev)`.
pub fn split_version_key(vk: &[u8]) -> Result<(&[u8], u64), MvccError> {
    if vk.len() < 9 || vk[vk.len() - 9] != 0 {
        return Err(MvccError::Corrupt("malformed version key".into()));
    }
    let (key, rest) = vk.split_at(vk.len() - 9);
    Ok((key, decode_u64(&rest[1..])?))
}

/// What a write stores: a put with its key's create revision, or a
/// tombstone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A live value; the key was created at this revision.
    Put {
        /// The key's create revision.
        create_revision: u64,
    },
    /// A delete tombstone (its payload is the deleted state).
    Tombstone,
}

fn push_version(v: &mut Vec<u8>, kind: Kind, payload: &[u8]) {
    match kind {
        Kind::Put { create_revision } => {
            v.push(KIND_PUT_CREATED);
            v.extend_from_slice(&u64_key(create_revision));
        }
        Kind::Tombstone => v.push(KIND_TOMBSTONE),
    }
    v.extend_from_slice(payload);
}

/// Encode a versions-table value.
pub fn encode_version(kind: Kind, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(payload.len() + 9);
    push_version(&mut v, kind, payload);
    v
}

/// Decode a versions-table value.
pub fn decode_version(b: &[u8]) -> Result<Version, MvccError> {
    match b.split_first() {
        Some((&KIND_PUT_CREATED, rest)) => Ok(Version {
            tombstone: false,
            create_revision: Some(decode_u64(rest)?),
            payload: rest[8..].to_vec(),
        }),
        Some((&KIND_PUT, p)) => Ok(Version {
            tombstone: false,
            create_revision: None,
            payload: p.to_vec(),
        }),
        Some((&KIND_TOMBSTONE, p)) => Ok(Version {
            tombstone: true,
            create_revision: None,
            payload: p.to_vec(),
        }),
        _ => Err(MvccError::Corrupt("unknown version kind".into())),
    }
}

/// Encode a current-table value.
pub fn encode_current(rev: u64, kind: Kind, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(payload.len() + 17);
    v.extend_from_slice(&u64_key(rev));
    push_version(&mut v, kind, payload);
    v
}

/// Decode a current-table value into `(rev, version)`.
pub fn decode_current(b: &[u8]) -> Result<(u64, Version), MvccError> {
    let rev = decode_u64(b)?;
    Ok((rev, decode_version(&b[8..])?))
}

/// Encode a change-log value.
pub fn encode_log(event: ChangeOp, unix_millis: u64, key: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(key.len() + 9);
    v.push(event.code());
    v.extend_from_slice(&u64_key(unix_millis));
    v.extend_from_slice(key);
    v
}

/// Decode a change-log value into `(event, unix_millis, key)`.
pub fn decode_log(b: &[u8]) -> Result<(ChangeOp, u64, Vec<u8>), MvccError> {
    let (&code, rest) = b
        .split_first()
        .ok_or_else(|| MvccError::Corrupt("empty log entry".into()))?;
    let event = ChangeOp::from_code(code)?;
    let millis = decode_u64(rest)?;
    Ok((event, millis, rest[8..].to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_keys_sort_by_key_then_revision() {
        let mut keys = [
            version_key(b"a-b", 1),
            version_key(b"a", 300),
            version_key(b"a", 2),
            version_key(b"ab", 1),
        ];
        keys.sort();
        let decoded: Vec<(Vec<u8>, u64)> = keys
            .iter()
            .map(|k| split_version_key(k).map(|(a, r)| (a.to_vec(), r)).unwrap())
            .collect();
        assert_eq!(
            decoded,
            vec![
                (b"a".to_vec(), 2),
                (b"a".to_vec(), 300),
                (b"a-b".to_vec(), 1),
                (b"ab".to_vec(), 1)
            ]
        );
    }

    #[test]
    fn values_round_trip() {
        let (rev, v) = decode_current(&encode_current(7, Kind::Tombstone, b"x")).unwrap();
        assert_eq!(
            (rev, v.tombstone, v.payload.as_slice()),
            (7, true, &b"x"[..])
        );
        let put = Kind::Put { create_revision: 3 };
        let (rev, v) = decode_current(&encode_current(7, put, b"y")).unwrap();
        assert_eq!(
            (rev, v.tombstone, v.create_revision, v.payload.as_slice()),
            (7, false, Some(3), &b"y"[..])
        );
        let legacy = decode_version(&[KIND_PUT, b'z']).unwrap();
        assert_eq!((legacy.tombstone, legacy.create_revision), (false, None));
        let (e, ms, k) = decode_log(&encode_log(ChangeOp::Modified, 42, b"k")).unwrap();
        assert_eq!((e, ms, k.as_slice()), (ChangeOp::Modified, 42, &b"k"[..]));
        assert!(decode_version(&[9]).is_err());
        assert!(decode_current(&[1, 2]).is_err());
    }
}
