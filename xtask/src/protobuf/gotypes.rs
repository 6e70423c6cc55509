//! The one fact upstream's `generated.proto` does not carry: which Go
//! fields are pointers (written by gogo only when set) and which are values
//! (written even when zero), and which carry `omitempty`. They are read
//! from the runtime type descriptors of a Go binary built from
//! `k8s.io/api` (kubectl): every named struct type of a `k8s.io/...`
//! package with its fields' names, tags and kinds.
//!
//! Layout read (Go ≥ 1.21, linux/amd64, non-PIE): `abi.Type` is 48 bytes
//! (kind at +23, tflag at +20, name offset at +40); a `StructType` adds
//! its package path name (+48) and its fields slice (+56); the uncommon
//! part (+80) holds the package path offset; a `StructField` is
//! `{name *byte, typ *Type, offset uintptr}`; a name is a flags byte
//! (bit 1: has tag, bit 3: embedded), a varint length, the bytes, and the
//! tag the same way; a `PtrType` has its element at +48. Name offsets are
//! relative to the start of `.rodata` (`runtime.types`).

use std::collections::BTreeMap;

/// A Go field kind that matters here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoKind {
    Pointer,
    Struct,
    Slice,
    Map,
    /// A string, bool, number or other value.
    Value,
}

/// One field of a Go struct.
#[derive(Debug, Clone)]
pub struct GoField {
    pub go_name: String,
    /// The `json` tag name ("" when inline).
    pub json: String,
    pub omitempty: bool,
    pub inline: bool,
    /// The protobuf tag's field number.
    pub number: Option<u32>,
    pub kind: GoKind,
}

/// Struct types by `package/path.Name`.
pub type GoTypes = BTreeMap<String, Vec<GoField>>;

struct Elf<'a> {
    data: &'a [u8],
    /// (vaddr, file offset, size) of each loaded segment.
    segs: Vec<(u64, u64, u64)>,
    rodata: (u64, u64, u64),
}

impl<'a> Elf<'a> {
    fn parse(data: &'a [u8]) -> Result<Elf<'a>, String> {
        if data.get(..4) != Some(b"\x7fELF") || data.get(4) != Some(&2) {
            return Err("not a 64-bit ELF file".into());
        }
        let u16_at = |o: usize| data.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
        let phoff = read_u64(data, 0x20).ok_or("truncated ELF header")?;
        let shoff = read_u64(data, 0x28).ok_or("truncated ELF header")?;
        let phentsize = u16_at(0x36).ok_or("truncated")? as u64;
        let phnum = u16_at(0x38).ok_or("truncated")? as u64;
        let shentsize = u16_at(0x3a).ok_or("truncated")? as u64;
        let shnum = u16_at(0x3c).ok_or("truncated")? as u64;
        let shstrndx = u16_at(0x3e).ok_or("truncated")? as u64;
        let mut segs = Vec::new();
        for i in 0..phnum {
            let o = (phoff + i * phentsize) as usize;
            let p_type = read_u32(data, o).ok_or("truncated program header")?;
            if p_type == 1 {
                let off = read_u64(data, o + 8).ok_or("truncated")?;
                let va = read_u64(data, o + 16).ok_or("truncated")?;
                let filesz = read_u64(data, o + 32).ok_or("truncated")?;
                segs.push((va, off, filesz));
            }
        }
        let sh = |i: u64| -> Option<(u32, u64, u64, u64)> {
            let o = (shoff + i * shentsize) as usize;
            Some((
                read_u32(data, o)?,
                read_u64(data, o + 16)?,
                read_u64(data, o + 24)?,
                read_u64(data, o + 32)?,
            ))
        };
        let strtab = sh(shstrndx).ok_or("no section names")?.2 as usize;
        let mut rodata = None;
        for i in 0..shnum {
            let (name, va, off, size) = sh(i).ok_or("truncated section header")?;
            let n = cstr(data, strtab + name as usize);
            if n == ".rodata" {
                rodata = Some((va, off, size));
            }
        }
        Ok(Elf {
            data,
            segs,
            rodata: rodata.ok_or("no .rodata section (not a Go binary?)")?,
        })
    }

    fn off(&self, va: u64) -> Option<usize> {
        self.segs
            .iter()
            .find(|(v, _, sz)| *v <= va && va < v + sz)
            .map(|(v, off, _)| (off + va - v) as usize)
    }

    fn u64_at_va(&self, va: u64) -> Option<u64> {
        read_u64(self.data, self.off(va)?)
    }

    /// A Go name at `va`: (flags, name, tag).
    fn name(&self, va: u64) -> Option<(u8, String, String)> {
        let o = self.off(va)?;
        let flags = *self.data.get(o)?;
        let (n, mut p) = varint(self.data, o + 1)?;
        let name = String::from_utf8_lossy(self.data.get(p..p + n)?).into_owned();
        p += n;
        let mut tag = String::new();
        if flags & 2 != 0 {
            let (tn, q) = varint(self.data, p)?;
            tag = String::from_utf8_lossy(self.data.get(q..q + tn)?).into_owned();
        }
        Some((flags, name, tag))
    }

    fn kind_at(&self, va: u64) -> Option<u8> {
        Some(self.data.get(self.off(va)? + 23)? & 0x1f)
    }
}

fn read_u64(d: &[u8], o: usize) -> Option<u64> {
    d.get(o..o + 8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
}

fn read_u32(d: &[u8], o: usize) -> Option<u32> {
    d.get(o..o + 4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap_or([0; 4])))
}

fn read_i32(d: &[u8], o: usize) -> Option<i32> {
    read_u32(d, o).map(|u| u as i32)
}

fn cstr(d: &[u8], o: usize) -> String {
    let end = d[o.min(d.len())..]
        .iter()
        .position(|&b| b == 0)
        .map_or(d.len(), |p| o + p);
    String::from_utf8_lossy(&d[o.min(d.len())..end]).into_owned()
}

fn varint(d: &[u8], mut o: usize) -> Option<(usize, usize)> {
    let mut r = 0usize;
    let mut s = 0;
    loop {
        let b = *d.get(o)?;
        o += 1;
        r |= ((b & 0x7f) as usize) << s;
        s += 7;
        if b < 0x80 {
            return Some((r, o));
        }
        if s > 35 {
            return None;
        }
    }
}

const KIND_MAP: u8 = 21;
const KIND_PTR: u8 = 22;
const KIND_SLICE: u8 = 23;
const KIND_STRUCT: u8 = 25;

/// Every named struct type of a `k8s.io/` package in the binary.
pub fn read_binary(data: &[u8]) -> Result<GoTypes, String> {
    let elf = Elf::parse(data)?;
    let (ro_va, ro_off, ro_size) = elf.rodata;
    let in_ro = |va: u64| ro_va <= va && va < ro_va + ro_size;
    let mut out = GoTypes::new();
    let mut i = 0u64;
    while i + 88 <= ro_size {
        let o = (ro_off + i) as usize;
        i += 8;
        if data[o + 23] & 0x1f != KIND_STRUCT || data[o + 20] & 1 == 0 {
            continue;
        }
        let (Some(fptr), Some(flen), Some(fcap)) = (
            read_u64(data, o + 56),
            read_u64(data, o + 64),
            read_u64(data, o + 72),
        ) else {
            continue;
        };
        if flen != fcap || flen == 0 || flen >= 300 || !in_ro(fptr) {
            continue;
        }
        let (Some(str_off), Some(pkg_off)) = (read_i32(data, o + 40), read_i32(data, o + 80))
        else {
            continue;
        };
        if pkg_off <= 0 || str_off <= 0 {
            continue;
        }
        let (Some((_, name, _)), Some((_, pkg, _))) = (
            elf.name(ro_va + str_off as u64),
            elf.name(ro_va + pkg_off as u64),
        ) else {
            continue;
        };
        if !pkg.starts_with("k8s.io/") {
            continue;
        }
        // `*v1.Pod` when the extra-star flag is set.
        let name = if data[o + 20] & 2 != 0 {
            name.trim_start_matches('*').to_string()
        } else {
            name
        };
        let short = name.rsplit('.').next().unwrap_or(&name).to_string();
        let mut fields = Vec::new();
        let mut ok = true;
        for j in 0..flen {
            let fva = fptr + 24 * j;
            let (Some(nptr), Some(typ)) = (elf.u64_at_va(fva), elf.u64_at_va(fva + 8)) else {
                ok = false;
                break;
            };
            let (Some((flags, go_name, tag)), Some(kind)) = (elf.name(nptr), elf.kind_at(typ))
            else {
                ok = false;
                break;
            };
            fields.push(field(flags, go_name, &tag, kind));
        }
        if ok {
            out.insert(format!("{pkg}.{short}"), fields);
        }
    }
    if out.is_empty() {
        return Err("no k8s.io struct types found (not a Go binary built from k8s.io/api?)".into());
    }
    Ok(out)
}

fn tag_value<'t>(tag: &'t str, key: &str) -> Option<&'t str> {
    let at = tag.find(&format!("{key}:\""))?;
    let rest = &tag[at + key.len() + 2..];
    rest.split('"').next()
}

fn field(flags: u8, go_name: String, tag: &str, kind: u8) -> GoField {
    let json = tag_value(tag, "json").unwrap_or("");
    let mut parts = json.split(',');
    let json_name = parts.next().unwrap_or("").to_string();
    let opts: Vec<&str> = parts.collect();
    let number = tag_value(tag, "protobuf")
        .and_then(|p| p.split(',').nth(1))
        .and_then(|n| n.parse().ok());
    GoField {
        go_name,
        inline: opts.contains(&"inline") || (flags & 8 != 0 && json.is_empty()),
        omitempty: opts.contains(&"omitempty"),
        json: json_name,
        number,
        kind: match kind {
            KIND_PTR => GoKind::Pointer,
            KIND_STRUCT => GoKind::Struct,
            KIND_SLICE => GoKind::Slice,
            KIND_MAP => GoKind::Map,
            _ => GoKind::Value,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags() {
        let f = field(
            2,
            "WorkingDir".into(),
            r#"json:"workingDir,omitempty" protobuf:"bytes,5,opt,name=workingDir""#,
            24,
        );
        assert_eq!(
            (f.json.as_str(), f.omitempty, f.number, f.inline, f.kind),
            ("workingDir", true, Some(5), false, GoKind::Value)
        );
        let f = field(
            10,
            "ProbeHandler".into(),
            r#"json:",inline" protobuf:"bytes,1,opt,name=handler""#,
            25,
        );
        assert!(f.inline);
        assert_eq!(f.number, Some(1));
        assert!(read_binary(b"not elf").is_err());
    }
}
