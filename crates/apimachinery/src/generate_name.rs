//! `metadata.generateName` → a name, as kube's `SimpleNameGenerator`.

use rand::Rng;

/// kube's alphabet for generated suffixes (no vowels, no confusables).
const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
/// Length of the random suffix.
const SUFFIX_LEN: usize = 5;
/// Longest base kept: 63 - 5.
const MAX_BASE_LEN: usize = 63 - SUFFIX_LEN;

/// `base` (truncated to 58 bytes on a char boundary) + 5 random characters.
pub fn generate_name(base: &str) -> String {
    let mut cut = base.len().min(MAX_BASE_LEN);
    while !base.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut rng = rand::thread_rng();
    let mut name = String::with_capacity(cut + SUFFIX_LEN);
    name.push_str(&base[..cut]);
    for _ in 0..SUFFIX_LEN {
        name.push(char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]));
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffix_uses_kube_alphabet() {
        let n = generate_name("web-");
        assert_eq!(n.len(), 9);
        assert!(n.starts_with("web-"));
        assert!(n[4..].bytes().all(|b| ALPHABET.contains(&b)));
    }

    #[test]
    fn long_base_is_truncated_to_63_total() {
        let n = generate_name(&"a".repeat(100));
        assert_eq!(n.len(), 63);
        assert!(n.starts_with(&"a".repeat(58)));
    }
}
