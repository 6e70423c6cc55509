//! The Protobuf wire format: varints, tags, length-delimited fields, and
//! gogo's wording for malformed input.

use std::fmt;

/// Wire type of varints.
pub(crate) const VARINT: u8 = 0;
/// Wire type of 64-bit fixed values.
pub(crate) const FIXED64: u8 = 1;
/// Wire type of length-delimited values.
pub(crate) const LEN: u8 = 2;
/// Wire type of 32-bit fixed values.
pub(crate) const FIXED32: u8 = 5;

/// Malformed Protobuf input, worded as gogo-generated `Unmarshal` words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError(pub String);

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl WireError {
    pub(crate) fn eof() -> WireError {
        WireError("unexpected EOF".into())
    }
    pub(crate) fn overflow() -> WireError {
        WireError("proto: integer overflow".into())
    }
    pub(crate) fn negative_length() -> WireError {
        WireError("proto: negative length found during unmarshaling".into())
    }
}

/// One field value as read off the wire.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Raw<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32,
    Len(&'a [u8]),
}

impl Raw<'_> {
    pub fn wire_type(&self) -> u8 {
        match self {
            Raw::Varint(_) => VARINT,
            Raw::Fixed64(_) => FIXED64,
            Raw::Fixed32 => FIXED32,
            Raw::Len(_) => LEN,
        }
    }
}

/// A cursor over a message's bytes.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    pub fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Where the cursor is.
    pub fn pos(&self) -> usize {
        self.pos
    }

    pub fn varint(&mut self) -> Result<u64, WireError> {
        let mut v: u64 = 0;
        let mut shift = 0u32;
        loop {
            if shift >= 64 {
                return Err(WireError::overflow());
            }
            let b = *self.buf.get(self.pos).ok_or_else(WireError::eof)?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
            shift += 7;
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let end = self.pos.checked_add(n).ok_or_else(WireError::eof)?;
        let s = self.buf.get(self.pos..end).ok_or_else(WireError::eof)?;
        self.pos = end;
        Ok(s)
    }

    /// The next field: its number and value. `message` names the message
    /// in errors.
    pub fn field(&mut self, message: &str) -> Result<(u32, Raw<'a>), WireError> {
        let key = self.varint()?;
        let wire = (key & 7) as u8;
        let number = key >> 3;
        if wire == 4 {
            return Err(WireError(format!(
                "proto: {message}: wiretype end group for non-group"
            )));
        }
        if number == 0 || number > u64::from(u32::MAX >> 3) {
            return Err(WireError(format!(
                "proto: {message}: illegal tag {number} (wire type {wire})"
            )));
        }
        let raw = match wire {
            VARINT => Raw::Varint(self.varint()?),
            FIXED64 => {
                let b = self.take(8)?;
                Raw::Fixed64(u64::from_le_bytes(
                    b.try_into().map_err(|_| WireError::eof())?,
                ))
            }
            LEN => {
                let n = self.varint()?;
                if n > i64::MAX as u64 {
                    return Err(WireError::negative_length());
                }
                let n = usize::try_from(n).map_err(|_| WireError::eof())?;
                Raw::Len(self.take(n)?)
            }
            FIXED32 => {
                self.take(4)?;
                Raw::Fixed32
            }
            3 => {
                // A group: skipped as gogo's skipGenerated does.
                self.skip_group(number, message)?;
                return self.field(message);
            }
            w => return Err(WireError(format!("proto: illegal wireType {w}"))),
        };
        Ok((number as u32, raw))
    }

    fn skip_group(&mut self, number: u64, message: &str) -> Result<(), WireError> {
        let mut depth = 1u32;
        while depth > 0 {
            let key = self.varint()?;
            match (key & 7) as u8 {
                VARINT => {
                    self.varint()?;
                }
                FIXED64 => {
                    self.take(8)?;
                }
                LEN => {
                    let n = self.varint()?;
                    let n = usize::try_from(n).map_err(|_| WireError::negative_length())?;
                    self.take(n)?;
                }
                3 => depth += 1,
                4 => depth -= 1,
                FIXED32 => {
                    self.take(4)?;
                }
                w => return Err(WireError(format!("proto: illegal wireType {w}"))),
            }
        }
        let _ = (number, message);
        if self.done() {
            // A message cannot end on a group's end alone: nothing follows.
            return Err(WireError::eof());
        }
        Ok(())
    }
}

/// Append a varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The size of a varint.
pub(crate) fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Append a field key.
pub(crate) fn put_key(out: &mut Vec<u8>, number: u32, wire: u8) {
    put_varint(out, (u64::from(number) << 3) | u64::from(wire));
}

/// Append a length-delimited field.
pub(crate) fn put_len(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    put_key(out, number, LEN);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(b.len(), varint_len(v), "{v}");
            assert_eq!(Reader::new(&b).varint().unwrap(), v);
        }
        // -1 as an int32 is ten bytes, as gogo writes it.
        let mut b = Vec::new();
        put_varint(&mut b, -1i64 as u64);
        assert_eq!(b.len(), 10);
        assert_eq!(
            Reader::new(&[0xff; 11]).varint().unwrap_err(),
            WireError::overflow()
        );
        assert_eq!(Reader::new(&[0x80]).varint().unwrap_err(), WireError::eof());
    }

    #[test]
    fn fields_and_errors() {
        let mut b = Vec::new();
        put_len(&mut b, 1, b"abc");
        put_key(&mut b, 2, VARINT);
        put_varint(&mut b, 7);
        let mut r = Reader::new(&b);
        assert!(matches!(r.field("M").unwrap(), (1, Raw::Len(b"abc"))));
        assert!(matches!(r.field("M").unwrap(), (2, Raw::Varint(7))));
        assert!(r.done());
        assert_eq!(
            Reader::new(&[0x00]).field("Pod").unwrap_err().0,
            "proto: Pod: illegal tag 0 (wire type 0)"
        );
        assert_eq!(
            Reader::new(&[0x0c]).field("Pod").unwrap_err().0,
            "proto: Pod: wiretype end group for non-group"
        );
        assert_eq!(
            Reader::new(&[0x0a, 0x05, b'a']).field("Pod").unwrap_err(),
            WireError::eof()
        );
    }
}
