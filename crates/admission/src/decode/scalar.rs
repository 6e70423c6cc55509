//! Checks of scalar encodings that Kubernetes types parse while decoding:
//! resource quantities and base64 `[]byte` strings.

use std::sync::OnceLock;

use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use regex::Regex;

use super::error::DecodeError;

/// Suffixes `resource.ParseQuantity` understands (besides `e<n>`/`E<n>`).
const SUFFIXES: &[&str] = &[
    "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
];

/// Validate a quantity string as `resource.ParseQuantity` does (format and
/// suffix; the numeric range is not checked).
pub(crate) fn check_quantity(s: &str) -> Result<(), DecodeError> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let re = RE
        .get_or_init(|| Regex::new(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$").ok())
        .as_ref();
    let s = s.trim();
    let Some(caps) = re.and_then(|re| re.captures(s)) else {
        return Err(DecodeError::QuantityFormat);
    };
    let number = caps.get(1).map_or("", |m| m.as_str());
    let digits = number.trim_start_matches(['+', '-']);
    if digits.matches('.').count() > 1 || !digits.chars().any(|c| c.is_ascii_digit()) {
        return Err(DecodeError::QuantityFormat);
    }
    let suffix = caps.get(2).map_or("", |m| m.as_str());
    if SUFFIXES.contains(&suffix) || is_exponent(suffix) {
        Ok(())
    } else {
        Err(DecodeError::QuantitySuffix)
    }
}

fn is_exponent(s: &str) -> bool {
    let Some(rest) = s.strip_prefix(['e', 'E']) else {
        return false;
    };
    let rest = rest.strip_prefix(['+', '-']).unwrap_or(rest);
    !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit())
}

/// Validate a `[]byte` field: Go's `base64.StdEncoding` (padding required,
/// trailing bits tolerated, CR/LF ignored). Offsets of errors past a CR/LF
/// can differ from Go's.
pub(crate) fn check_base64(s: &str) -> Result<(), DecodeError> {
    const ENGINE: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
    );
    let cleaned: String = s.chars().filter(|c| *c != '\r' && *c != '\n').collect();
    match ENGINE.decode(cleaned.as_bytes()) {
        Ok(_) => Ok(()),
        Err(base64::DecodeError::InvalidByte(off, _))
        | Err(base64::DecodeError::InvalidLastSymbol(off, _)) => Err(DecodeError::Base64(off)),
        Err(base64::DecodeError::InvalidLength(len)) => {
            // Go reports the start of the incomplete final quantum.
            Err(DecodeError::Base64(len - len % 4))
        }
        Err(base64::DecodeError::InvalidPadding) => Err(DecodeError::Base64(
            cleaned.find('=').unwrap_or(cleaned.len()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities() {
        for ok in ["1", "100m", "1.5Gi", "2e3", "-1", "+0.5", "1E-3", "0"] {
            assert_eq!(check_quantity(ok), Ok(()), "{ok}");
        }
        assert_eq!(check_quantity("abc"), Err(DecodeError::QuantityFormat));
        assert_eq!(check_quantity(""), Err(DecodeError::QuantityFormat));
        assert_eq!(check_quantity("1.2.3"), Err(DecodeError::QuantityFormat));
        assert_eq!(check_quantity("1Ki2"), Err(DecodeError::QuantitySuffix));
        assert_eq!(check_quantity("1kk"), Err(DecodeError::QuantitySuffix));
    }

    #[test]
    fn base64_strings() {
        assert_eq!(check_base64("aGVsbG8="), Ok(()));
        assert_eq!(check_base64(""), Ok(()));
        assert_eq!(check_base64("aGV$bG8="), Err(DecodeError::Base64(3)));
        assert_eq!(check_base64("hello"), Err(DecodeError::Base64(4)));
    }
}
