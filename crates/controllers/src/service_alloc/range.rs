//! The pure arithmetic of the two ranges: the IPv4 service CIDR (kube's
//! IPAddress-based `ipallocator`) and the node-port range (kube's
//! `portallocator`). No I/O; the store side is in the parent module.

use std::net::Ipv4Addr;

use rand::Rng;

/// Why an IP or a port could not be allocated, worded as kube's
/// allocators' errors (`ErrAllocated`, `ErrNotInRange`, `ErrFull`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    #[error("provided IP is already allocated")]
    IpAllocated,
    #[error("provided IP is not in the valid range. The range of valid IPs is {0}")]
    IpNotInRange(String),
    #[error("provided port is already allocated")]
    PortAllocated,
    #[error("provided port is not in the valid range. The range of valid ports is {0}")]
    PortNotInRange(String),
    #[error("range is full")]
    Full,
    #[error("invalid CIDR {0:?}")]
    BadCidr(String),
}

/// An IPv4 service CIDR, e.g. `10.96.0.0/12`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Range {
    network: u32,
    bits: u8,
}

impl Ipv4Range {
    /// A range from its network address and prefix length (`bits <= 32`,
    /// host bits clear).
    pub(crate) const fn from_parts(network: u32, bits: u8) -> Self {
        Ipv4Range { network, bits }
    }

    /// Parse `a.b.c.d/n`; the address is masked to its network.
    pub fn parse(cidr: &str) -> Result<Self, AllocError> {
        let bad = || AllocError::BadCidr(cidr.to_string());
        let (addr, bits) = cidr.split_once('/').ok_or_else(bad)?;
        let addr: Ipv4Addr = addr.parse().map_err(|_| bad())?;
        let bits: u8 = bits.parse().map_err(|_| bad())?;
        if bits > 32 {
            return Err(bad());
        }
        let mask = if bits == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(bits))
        };
        Ok(Ipv4Range {
            network: u32::from(addr) & mask,
            bits,
        })
    }

    /// Every address of the CIDR, network and broadcast included.
    fn cidr_size(&self) -> u64 {
        1u64 << (32 - u32::from(self.bits))
    }

    /// The network address (what kube's dry-run allocation answers).
    pub fn network(&self) -> Ipv4Addr {
        Ipv4Addr::from(self.network)
    }

    /// The allocatable addresses: all but the network and broadcast ones.
    fn hosts(&self) -> u64 {
        self.cidr_size().saturating_sub(2)
    }

    /// The first allocatable address (the network's `.1`).
    fn first(&self) -> u64 {
        u64::from(self.network) + 1
    }

    /// Whether `ip` is an allocatable address of the range.
    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        let ip = u64::from(u32::from(ip));
        self.hosts() > 0 && ip >= self.first() && ip < self.first() + self.hosts()
    }

    /// KEP-3070's lower band, kept for static allocation:
    /// `min(max(16, size/16), 256)` addresses, none for ranges of 16 or
    /// fewer (kube's `calculateRangeOffset`).
    pub fn range_offset(&self) -> u64 {
        let size = self.cidr_size();
        if size <= 16 {
            0
        } else {
            (size / 16).clamp(16, 256)
        }
    }

    /// The addresses dynamic allocation tries, in kube's order: the upper
    /// band from a random start (wrapping), then the lower band likewise.
    pub fn candidates(&self) -> impl Iterator<Item = Ipv4Addr> {
        let mut rng = rand::thread_rng();
        let offset = self.range_offset().min(self.hosts());
        let upper = self.hosts() - offset;
        let upper_start = if upper == 0 {
            0
        } else {
            rng.gen_range(0..upper)
        };
        let lower_start = if offset == 0 || upper == 0 {
            0
        } else {
            rng.gen_range(0..offset)
        };
        let first = self.first();
        // kube gives up at once when the upper band is empty.
        let lower = if upper == 0 { 0 } else { offset };
        let to_ip = |n: u64| Ipv4Addr::from(u32::try_from(n).unwrap_or(u32::MAX));
        (0..upper)
            .map(move |i| to_ip(first + offset + (upper_start + i) % upper))
            .chain((0..lower).map(move |i| to_ip(first + (lower_start + i) % lower)))
    }
}

impl std::fmt::Display for Ipv4Range {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", Ipv4Addr::from(self.network), self.bits)
    }
}

/// The node-port range, both ends included (`30000-32767`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRange {
    pub base: u16,
    pub last: u16,
}

impl PortRange {
    pub fn contains(&self, port: i64) -> bool {
        port >= i64::from(self.base) && port <= i64::from(self.last)
    }

    /// How many ports the range holds.
    pub fn size(&self) -> usize {
        usize::from(self.last.saturating_sub(self.base)) + 1
    }

    /// A random free port, scanning from a random offset (kube's
    /// `AllocateNext` over its bitmap), or [`AllocError::Full`].
    pub fn pick(&self, taken: &dyn Fn(u16) -> bool) -> Result<u16, AllocError> {
        let size = self.size();
        let start = rand::thread_rng().gen_range(0..size);
        (0..size)
            .map(|i| self.base + u16::try_from((start + i) % size).unwrap_or(0))
            .find(|p| !taken(*p))
            .ok_or(AllocError::Full)
    }
}

impl std::fmt::Display for PortRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.base, self.last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_masks() {
        let r = Ipv4Range::parse("10.96.0.5/12").unwrap();
        assert_eq!(r.to_string(), "10.96.0.0/12");
        assert_eq!(r.network(), Ipv4Addr::new(10, 96, 0, 0));
        assert!(Ipv4Range::parse("10.96.0.0").is_err());
        assert!(Ipv4Range::parse("10.96.0.0/33").is_err());
        assert!(Ipv4Range::parse("x/12").is_err());
    }

    #[test]
    fn contains_excludes_network_and_broadcast() {
        let r = Ipv4Range::parse("10.96.0.0/12").unwrap();
        assert!(!r.contains(Ipv4Addr::new(10, 96, 0, 0)));
        assert!(r.contains(Ipv4Addr::new(10, 96, 0, 1)));
        assert!(r.contains(Ipv4Addr::new(10, 111, 255, 254)));
        assert!(!r.contains(Ipv4Addr::new(10, 111, 255, 255)));
        assert!(!r.contains(Ipv4Addr::new(10, 112, 0, 1)));
    }

    #[test]
    fn range_offset_is_kubes() {
        let off = |c: &str| Ipv4Range::parse(c).unwrap().range_offset();
        assert_eq!(off("10.96.0.0/12"), 256);
        assert_eq!(off("10.0.0.0/24"), 16);
        assert_eq!(off("10.0.0.0/20"), 256);
        assert_eq!(off("10.0.0.0/28"), 0);
    }

    #[test]
    fn candidates_prefer_the_upper_band_then_cover_everything() {
        let r = Ipv4Range::parse("10.0.0.0/24").unwrap();
        let all: Vec<Ipv4Addr> = r.candidates().collect();
        assert_eq!(all.len(), 254);
        // The first 238 are the upper band (.17 - .254), then .1 - .16.
        assert!(all[..238].iter().all(|ip| ip.octets()[3] >= 17));
        assert!(all[238..]
            .iter()
            .all(|ip| (1..=16).contains(&ip.octets()[3])));
        let mut sorted = all.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 254);
        assert!(all.iter().all(|ip| r.contains(*ip)));
    }

    #[test]
    fn big_range_first_candidate_is_above_the_lower_band() {
        let r = Ipv4Range::parse("10.96.0.0/12").unwrap();
        for _ in 0..50 {
            let ip = r.candidates().next().unwrap();
            assert!(u32::from(ip) > u32::from(Ipv4Addr::new(10, 96, 1, 0)));
            assert!(r.contains(ip));
        }
    }

    #[test]
    fn tiny_ranges() {
        assert_eq!(
            Ipv4Range::parse("10.0.0.0/32")
                .unwrap()
                .candidates()
                .count(),
            0
        );
        let r = Ipv4Range::parse("10.0.0.0/30").unwrap();
        let mut got: Vec<_> = r.candidates().collect();
        got.sort();
        assert_eq!(
            got,
            vec![Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2)]
        );
    }

    #[test]
    fn ports_pick_a_free_one_or_report_full() {
        let r = PortRange {
            base: 30000,
            last: 30002,
        };
        assert_eq!(r.size(), 3);
        assert!(r.contains(30002) && !r.contains(29999) && !r.contains(30003));
        assert_eq!(r.pick(&|p| p != 30001), Ok(30001));
        assert_eq!(r.pick(&|_| true), Err(AllocError::Full));
        assert_eq!(r.to_string(), "30000-30002");
    }

    #[test]
    fn error_wording_is_kubes() {
        assert_eq!(
            AllocError::IpNotInRange("10.96.0.0/12".into()).to_string(),
            "provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/12"
        );
        assert_eq!(
            AllocError::PortNotInRange("30000-32767".into()).to_string(),
            "provided port is not in the valid range. The range of valid ports is 30000-32767"
        );
    }
}
