//! kube-aware API version ordering
//! (`k8s.io/apimachinery/pkg/version.CompareKubeAwareVersionStrings`):
//! GA before beta before alpha, higher major first, then higher minor;
//! versions that are not of the `v<N>[(alpha|beta)<M>]` form come last, in
//! lexical order.

use std::cmp::Ordering;

/// A version's parts: major, stability rank (GA 2, beta 1, alpha 0), minor.
fn parse(v: &str) -> Option<(u64, u8, u64)> {
    let rest = v.strip_prefix('v')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let major = rest[..digits].parse().ok()?;
    let tail = &rest[digits..];
    if tail.is_empty() {
        return Some((major, 2, 0));
    }
    let (rank, minor) = if let Some(m) = tail.strip_prefix("beta") {
        (1, m)
    } else if let Some(m) = tail.strip_prefix("alpha") {
        (0, m)
    } else {
        return None;
    };
    if minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((major, rank, minor.parse().ok()?))
}

/// `Ordering::Less` when `a` comes before `b` in kube's priority order
/// (the preferred version sorts first).
pub fn compare_kube_aware(a: &str, b: &str) -> Ordering {
    match (parse(a), parse(b)) {
        (Some((ma, ra, na)), Some((mb, rb, nb))) => rb.cmp(&ra).then(mb.cmp(&ma)).then(nb.cmp(&na)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::compare_kube_aware;

    #[test]
    fn sorts_as_kube_documents() {
        // kube's documented example order.
        let mut v = vec![
            "foo1",
            "v1alpha1",
            "v11alpha2",
            "foo10",
            "v12alpha1",
            "v10beta3",
            "v3beta1",
            "v2",
            "v1",
            "v11beta2",
            "v10",
            "foo1",
        ];
        v.sort_by(|a, b| compare_kube_aware(a, b));
        assert_eq!(
            v,
            [
                "v10",
                "v2",
                "v1",
                "v11beta2",
                "v10beta3",
                "v3beta1",
                "v12alpha1",
                "v11alpha2",
                "v1alpha1",
                "foo1",
                "foo1",
                "foo10"
            ]
        );
    }
}
