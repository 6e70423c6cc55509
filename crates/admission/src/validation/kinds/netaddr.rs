//! kube's strict IP and CIDR checks (apimachinery `util/validation/ip.go`:
//! `IsValidIP`, `IsValidCIDR`) over Go's "sloppy" parsing
//! (`k8s.io/utils/net.ParseIPSloppy`: IPv4 octets may have leading zeros,
//! read as decimal). Written here because std's parsers are strict where
//! kube is sloppy, and kube reports each strictness rule separately.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// kube's message for a value that is not an IP at all.
pub(crate) const NOT_AN_IP: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
/// kube's message for a value that is not a CIDR at all.
pub(crate) const NOT_A_CIDR: &str =
    "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

/// An address as Go's sloppy parser reads it, with whether its text had
/// an IPv4 octet with a leading zero.
struct Sloppy {
    addr: IpAddr,
    leading_zero: bool,
}

/// Go's pre-1.17 `net.ParseIP`: dotted IPv4 (decimal octets, leading
/// zeros allowed) or IPv6 (no zone).
fn parse_ip_sloppy(s: &str) -> Option<Sloppy> {
    if s.contains(':') {
        return s.parse::<Ipv6Addr>().ok().map(|a| Sloppy {
            addr: IpAddr::V6(a),
            leading_zero: false,
        });
    }
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut octets = [0u8; 4];
    let mut leading_zero = false;
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: u32 = p.trim_start_matches('0').parse().unwrap_or(0);
        if p.len() > 8 || n > 255 {
            return None;
        }
        leading_zero |= p.len() > 1 && p.starts_with('0');
        octets[i] = n as u8;
    }
    Some(Sloppy {
        addr: IpAddr::V4(Ipv4Addr::from(octets)),
        leading_zero,
    })
}

fn is_4in6(a: &IpAddr) -> bool {
    matches!(a, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some())
}

/// `IsValidIP`: the messages for `s` (at most one).
pub(crate) fn ip_errors(s: &str) -> Vec<String> {
    let Some(ip) = parse_ip_sloppy(s) else {
        return vec![NOT_AN_IP.into()];
    };
    if ip.leading_zero {
        return vec!["must not have leading 0s".into()];
    }
    if is_4in6(&ip.addr) {
        return vec!["must not be an IPv4-mapped IPv6 address".into()];
    }
    let canonical = ip.addr.to_string();
    if canonical != s {
        return vec![format!("must be in canonical form ({canonical:?})")];
    }
    Vec::new()
}

/// A CIDR as Go's sloppy `ParseCIDR` reads it: the address as written,
/// the prefix length (and whether it had a leading zero).
fn parse_cidr_sloppy(s: &str) -> Option<(Sloppy, u32, bool)> {
    let (ip, len) = s.split_once('/')?;
    let ip = parse_ip_sloppy(ip)?;
    if len.is_empty() || !len.bytes().all(|b| b.is_ascii_digit()) || len.len() > 3 {
        return None;
    }
    let n: u32 = len.parse().ok()?;
    let max = if ip.addr.is_ipv4() { 32 } else { 128 };
    if n > max {
        return None;
    }
    Some((ip, n, len.len() > 1 && len.starts_with('0')))
}

/// The network address of `addr/len`.
fn masked(addr: IpAddr, len: u32) -> IpAddr {
    match addr {
        IpAddr::V4(a) => {
            let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
            IpAddr::V4(Ipv4Addr::from(u32::from(a) & mask))
        }
        IpAddr::V6(a) => {
            let mask = if len == 0 {
                0
            } else {
                u128::MAX << (128 - len)
            };
            IpAddr::V6(Ipv6Addr::from(u128::from(a) & mask))
        }
    }
}

/// `IsValidCIDR`: the messages for `s` (at most one).
pub(crate) fn cidr_errors(s: &str) -> Vec<String> {
    let Some((ip, len, len_zero)) = parse_cidr_sloppy(s) else {
        return vec![NOT_A_CIDR.into()];
    };
    if ip.leading_zero || len_zero {
        return vec!["must not have leading 0s in IP or prefix length".into()];
    }
    if is_4in6(&ip.addr) {
        return vec!["must not have an IPv4-mapped IPv6 address".into()];
    }
    let net = masked(ip.addr, len);
    if net != ip.addr {
        return vec!["must not have bits set beyond the prefix length".into()];
    }
    let canonical = format!("{net}/{len}");
    if canonical != s {
        return vec![format!("must be in canonical form ({canonical:?})")];
    }
    Vec::new()
}

/// The IP family of a CIDR (4 or 6; an IPv4-mapped address is 4, as Go's
/// `To4`), or `None` when it does not parse.
pub(crate) fn cidr_family(s: &str) -> Option<u8> {
    let (ip, _, _) = parse_cidr_sloppy(s)?;
    Some(match ip.addr {
        IpAddr::V4(_) => 4,
        IpAddr::V6(a) if a.to_ipv4_mapped().is_some() => 4,
        IpAddr::V6(_) => 6,
    })
}

/// An address as `ParseIPSloppy` reads it (IPv4 octets may have leading
/// zeros), or `None`.
pub(crate) fn parse_ip(s: &str) -> Option<IpAddr> {
    parse_ip_sloppy(s).map(|ip| ip.addr)
}

/// The IPv4 address Go's `To4` gives for `ip` (an IPv4-mapped IPv6
/// address is IPv4), if any.
fn to4(ip: &IpAddr) -> Option<Ipv4Addr> {
    match ip {
        IpAddr::V4(a) => Some(*a),
        IpAddr::V6(a) => a.to_ipv4_mapped(),
    }
}

/// `k8s.io/utils/net.IsIPv4String`: parses sloppily and is IPv4 (or
/// IPv4-mapped).
pub(crate) fn is_ipv4_string(s: &str) -> bool {
    parse_ip(s).is_some_and(|ip| to4(&ip).is_some())
}

/// `k8s.io/utils/net.IsIPv6String`: parses sloppily and is not IPv4.
pub(crate) fn is_ipv6_string(s: &str) -> bool {
    parse_ip(s).is_some_and(|ip| to4(&ip).is_none())
}

/// `IsValidIPForLegacyField` as kube 1.34 runs it (`StrictIPCIDRValidation`
/// is alpha and off, so only unparseable values fail); a value of
/// `valid_old` (the stored object's) is always accepted.
pub(crate) fn legacy_ip_errors(s: &str, valid_old: &[&str]) -> Vec<String> {
    if valid_old.contains(&s) || parse_ip_sloppy(s).is_some() {
        Vec::new()
    } else {
        vec![NOT_AN_IP.into()]
    }
}

/// `IsValidCIDRForLegacyField` as kube 1.34 runs it (sloppy: leading zeros
/// and bits beyond the prefix allowed); `valid_old` values always pass.
pub(crate) fn legacy_cidr_errors(s: &str, valid_old: &[&str]) -> Vec<String> {
    if valid_old.contains(&s) || parse_cidr_sloppy(s).is_some() {
        Vec::new()
    } else {
        vec![NOT_A_CIDR.into()]
    }
}

/// kube's `ValidateEndpointIP` (1.33+; `ValidateNonSpecialIP` before): the
/// addresses Endpoints, EndpointSlices and Service `externalIPs` may not
/// hold, as Go's `net.IP` classifies them.
pub(crate) fn endpoint_ip_errors(s: &str) -> Vec<String> {
    let Some(ip) = parse_ip(s) else {
        return vec!["must be a valid IP address".into()];
    };
    let mut errs = Vec::new();
    let (unspecified, loopback, link_local, ll_multicast) = match (to4(&ip), ip) {
        (Some(v4), _) => {
            let o = v4.octets();
            (
                v4.is_unspecified(),
                o[0] == 127,
                o[0] == 169 && o[1] == 254,
                o[0] == 224 && o[1] == 0 && o[2] == 0,
            )
        }
        (None, IpAddr::V6(v6)) => {
            let o = v6.octets();
            (
                v6.is_unspecified(),
                v6.is_loopback(),
                o[0] == 0xfe && o[1] & 0xc0 == 0x80,
                o[0] == 0xff && o[1] & 0x0f == 0x02,
            )
        }
        (None, IpAddr::V4(_)) => (false, false, false, false),
    };
    if unspecified {
        errs.push(format!("may not be unspecified ({s})"));
    }
    if loopback {
        errs.push("may not be in the loopback range (127.0.0.0/8, ::1/128)".into());
    }
    if link_local {
        errs.push("may not be in the link-local range (169.254.0.0/16, fe80::/10)".into());
    }
    if ll_multicast {
        errs.push("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)".into());
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ips_as_kube_reports_them() {
        assert!(ip_errors("10.1.2.3").is_empty());
        assert!(ip_errors("2001:db8::1").is_empty());
        assert_eq!(ip_errors("10.01.2.3"), ["must not have leading 0s"]);
        assert_eq!(
            ip_errors("::ffff:10.0.0.1"),
            ["must not be an IPv4-mapped IPv6 address"]
        );
        assert_eq!(
            ip_errors("2001:DB8:0:0:0::1"),
            ["must be in canonical form (\"2001:db8::1\")"]
        );
        for bad in [
            "foo",
            "10.0.0.1/32",
            "fe80::1%eth0",
            "1.2.3",
            "256.1.1.1",
            "",
        ] {
            assert_eq!(ip_errors(bad), [NOT_AN_IP], "{bad}");
        }
    }

    #[test]
    fn cidrs_as_kube_reports_them() {
        assert!(cidr_errors("10.0.0.0/24").is_empty());
        assert!(cidr_errors("2001:db8::/64").is_empty());
        assert_eq!(
            cidr_errors("10.0.0.1/24"),
            ["must not have bits set beyond the prefix length"]
        );
        assert_eq!(
            cidr_errors("10.0.0.0/024"),
            ["must not have leading 0s in IP or prefix length"]
        );
        assert_eq!(
            cidr_errors("2001:DB8::/64"),
            ["must be in canonical form (\"2001:db8::/64\")"]
        );
        assert_eq!(cidr_errors("10.0.0.0/33"), [NOT_A_CIDR]);
        assert_eq!(cidr_family("::ffff:10.0.0.0/104"), Some(4));
        assert_eq!(cidr_family("fd00::/64"), Some(6));
    }

    #[test]
    fn legacy_and_endpoint_ips() {
        assert!(legacy_ip_errors("010.1.2.3", &[]).is_empty());
        assert!(legacy_ip_errors("::ffff:1.2.3.4", &[]).is_empty());
        assert_eq!(legacy_ip_errors("1.2.3", &[]), [NOT_AN_IP]);
        assert!(legacy_ip_errors("1.2.3", &["1.2.3"]).is_empty());
        assert!(legacy_cidr_errors("10.0.0.1/024", &[]).is_empty());
        assert_eq!(legacy_cidr_errors("10.0.0.0", &[]), [NOT_A_CIDR]);
        assert!(is_ipv4_string("::ffff:1.2.3.4") && !is_ipv6_string("::ffff:1.2.3.4"));
        assert!(is_ipv6_string("fd00::1") && !is_ipv4_string("fd00::1"));
        assert!(endpoint_ip_errors("10.1.2.3").is_empty());
        assert!(endpoint_ip_errors("2001:db8::1").is_empty());
        assert_eq!(
            endpoint_ip_errors("0.0.0.0"),
            ["may not be unspecified (0.0.0.0)"]
        );
        assert_eq!(endpoint_ip_errors("::"), ["may not be unspecified (::)"]);
        assert_eq!(
            endpoint_ip_errors("::ffff:127.0.0.1"),
            ["may not be in the loopback range (127.0.0.0/8, ::1/128)"]
        );
        assert_eq!(
            endpoint_ip_errors("fe80::1"),
            ["may not be in the link-local range (169.254.0.0/16, fe80::/10)"]
        );
        assert_eq!(
            endpoint_ip_errors("ff12::1"),
            ["may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"]
        );
        assert!(endpoint_ip_errors("224.0.1.1").is_empty());
        assert_eq!(endpoint_ip_errors("x"), ["must be a valid IP address"]);
    }
}
