//! Stream framers: how the events of a watch stream are delimited
//! (apimachinery's `runtime.Framer`).
//!
//! JSON documents delimit themselves; kube-apiserver ends each with a
//! newline. Protobuf messages are each preceded by their length as a 4-byte
//! big-endian integer. CBOR items delimit themselves (`application/cbor-seq`).

use bytes::{Buf, BufMut, Bytes, BytesMut};

use crate::error::CodecError;

/// How the frames of a stream are delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framer {
    /// One JSON document per frame, followed by a newline.
    Json,
    /// A 4-byte big-endian length, then that many bytes.
    LengthDelimited,
    /// Self-delimiting CBOR data items, back to back.
    Cbor,
}

/// The largest frame a reader accepts (kube's watch decoder limit is the
/// same order: one object of at most a few MiB).
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

impl Framer {
    /// Append `payload` as one frame to `out`.
    pub fn write(self, payload: &[u8], out: &mut BytesMut) {
        match self {
            Framer::Json => {
                out.reserve(payload.len() + 1);
                out.put_slice(payload);
                out.put_u8(b'\n');
            }
            Framer::LengthDelimited => {
                out.reserve(payload.len() + 4);
                // A frame beyond 4 GiB cannot exist (objects are a few MiB).
                out.put_u32(u32::try_from(payload.len()).unwrap_or(u32::MAX));
                out.put_slice(payload);
            }
            Framer::Cbor => out.put_slice(payload),
        }
    }

    /// `payload` as one frame.
    pub fn frame(self, payload: &[u8]) -> Bytes {
        let mut out = BytesMut::new();
        self.write(payload, &mut out);
        out.freeze()
    }

    /// Take the next frame's payload from the front of `buf`; `Ok(None)`
    /// while it is incomplete, and always for CBOR (whose items only a CBOR
    /// parser can delimit).
    pub fn read(self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        match self {
            Framer::LengthDelimited => {
                if buf.len() < 4 {
                    return Ok(None);
                }
                let len = (&buf[..4]).get_u32() as usize;
                if len > MAX_FRAME_BYTES {
                    return Err(CodecError::FrameTooLarge {
                        len,
                        limit: MAX_FRAME_BYTES,
                    });
                }
                if buf.len() < 4 + len {
                    return Ok(None);
                }
                buf.advance(4);
                Ok(Some(buf.split_to(len).freeze()))
            }
            Framer::Json => match buf.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    let line = buf.split_to(at + 1).freeze();
                    Ok(Some(line.slice(..at)))
                }
                None => Ok(None),
            },
            Framer::Cbor => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_frames_end_with_a_newline() {
        assert_eq!(&Framer::Json.frame(b"{}")[..], b"{}\n");
        let mut buf = BytesMut::from(&b"{\"a\":1}\n{\"b\""[..]);
        assert_eq!(
            Framer::Json.read(&mut buf).unwrap().as_deref(),
            Some(&b"{\"a\":1}"[..])
        );
        assert_eq!(Framer::Json.read(&mut buf).unwrap(), None);
        buf.extend_from_slice(b":2}\n");
        assert_eq!(
            Framer::Json.read(&mut buf).unwrap().as_deref(),
            Some(&b"{\"b\":2}"[..])
        );
        assert!(buf.is_empty());
    }

    #[test]
    fn length_delimited_frames_round_trip() {
        let mut buf = BytesMut::new();
        Framer::LengthDelimited.write(b"abc", &mut buf);
        Framer::LengthDelimited.write(b"", &mut buf);
        assert_eq!(&buf[..7], b"\0\0\0\x03abc");
        // Incomplete: nothing is taken.
        let mut part = BytesMut::from(&buf[..5]);
        assert_eq!(Framer::LengthDelimited.read(&mut part).unwrap(), None);
        assert_eq!(part.len(), 5);
        assert_eq!(
            Framer::LengthDelimited.read(&mut buf).unwrap().as_deref(),
            Some(&b"abc"[..])
        );
        assert_eq!(
            Framer::LengthDelimited.read(&mut buf).unwrap().as_deref(),
            Some(&b""[..])
        );
        assert!(buf.is_empty());
        let mut huge = BytesMut::from(&b"\xff\xff\xff\xff"[..]);
        assert!(matches!(
            Framer::LengthDelimited.read(&mut huge),
            Err(CodecError::FrameTooLarge { .. })
        ));
    }

    #[test]
    fn cbor_items_are_back_to_back() {
        assert_eq!(&Framer::Cbor.frame(b"\xa0")[..], b"\xa0");
    }
}
