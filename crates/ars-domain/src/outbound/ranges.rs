//! Which IP addresses are not the public internet: the blocks of the IANA special-purpose
//! address registries that are not globally reachable, and the IPv6 forms that carry an IPv4
//! address inside them (IPv4-mapped, IPv4-compatible, NAT64, 6to4), which reach that IPv4
//! address and are judged as it is.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// Why an address is not for a non-admin's URL: the kind of block it is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressRule {
    /// `0.0.0.0/8`, `::`: "this host", which connects to the server itself.
    Unspecified,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918: `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`.
    Private,
    /// `100.64.0.0/10` (RFC 6598), carrier-grade NAT.
    SharedAddressSpace,
    /// `169.254.0.0/16` (cloud metadata services live here), `fe80::/10`.
    LinkLocal,
    /// `fc00::/7`, IPv6's private networks.
    UniqueLocal,
    /// `fec0::/10`, deprecated but still routed by some networks.
    SiteLocal,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// `192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// `198.18.0.0/15`, `2001:2::/48`.
    Benchmarking,
    /// Everything else that is not globally reachable: `240.0.0.0/4`, `192.0.0.0/24`,
    /// `100::/64`, `64:ff9b:1::/48`, Teredo `2001::/32`, and IPv6 outside `2000::/3`.
    Reserved,
}

impl AddressRule {
    /// A stable word for programs, e.g. `loopback`.
    pub fn code(self) -> &'static str {
        match self {
            Self::Unspecified => "unspecified",
            Self::Loopback => "loopback",
            Self::Private => "private",
            Self::SharedAddressSpace => "shared_address_space",
            Self::LinkLocal => "link_local",
            Self::UniqueLocal => "unique_local",
            Self::SiteLocal => "site_local",
            Self::Multicast => "multicast",
            Self::Broadcast => "broadcast",
            Self::Documentation => "documentation",
            Self::Benchmarking => "benchmarking",
            Self::Reserved => "reserved",
        }
    }

    /// The rule in words, as the end of "… is ___".
    pub fn describe(self) -> &'static str {
        match self {
            Self::Unspecified => "an unspecified address (\"this host\")",
            Self::Loopback => "a loopback address",
            Self::Private => "a private address (RFC 1918)",
            Self::SharedAddressSpace => "a shared address (carrier-grade NAT, RFC 6598)",
            Self::LinkLocal => "a link-local address",
            Self::UniqueLocal => "a unique-local address",
            Self::SiteLocal => "a site-local address",
            Self::Multicast => "a multicast address",
            Self::Broadcast => "the broadcast address",
            Self::Documentation => "a documentation address",
            Self::Benchmarking => "a benchmarking address",
            Self::Reserved => "a reserved address",
        }
    }
}

/// An IP network: an address and a prefix length, host bits zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// A network; `None` when the prefix is too long for the family or host bits are set.
    pub fn new(network: IpAddr, prefix: u8) -> Option<Self> {
        let cidr = Self { network, prefix };
        let max = match network {
            IpAddr::V4(_) => 32,
            IpAddr::V6(_) => 128,
        };
        (prefix <= max && masked(network, prefix) == network).then_some(cidr)
    }

    const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u8) -> Self {
        Self {
            network: IpAddr::V4(Ipv4Addr::new(a, b, c, d)),
            prefix,
        }
    }

    const fn v6(segments: [u16; 8], prefix: u8) -> Self {
        let [a, b, c, d, e, f, g, h] = segments;
        Self {
            network: IpAddr::V6(Ipv6Addr::new(a, b, c, d, e, f, g, h)),
            prefix,
        }
    }

    /// Whether `ip` is in the network (never across families).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.network, ip) {
            (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_)) => {
                masked(ip, self.prefix) == self.network
            }
            _ => false,
        }
    }
}

/// `ip` with every bit past `prefix` cleared.
fn masked(ip: IpAddr, prefix: u8) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4);
            let mask = u32::MAX
                .checked_shl(32 - u32::from(prefix.min(32)))
                .unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(bits & mask))
        }
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let mask = u128::MAX
                .checked_shl(128 - u32::from(prefix.min(128)))
                .unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(bits & mask))
        }
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

impl FromStr for Cidr {
    type Err = String;

    /// `10.0.0.0/8`, `fc00::/7`; a bare address is a network of one.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let network: IpAddr = address
            .parse()
            .map_err(|_| format!("`{address}` is not an IP address"))?;
        let max = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(prefix) => prefix
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("`{prefix}` is not a prefix length of 0-{max}"))?,
        };
        Self::new(network, prefix).ok_or_else(|| {
            format!(
                "`{text}` has host bits set: write {}/{prefix}",
                masked(network, prefix)
            )
        })
    }
}

/// The IPv4 blocks that are not globally reachable, most specific first where they nest.
const V4: [(Cidr, AddressRule); 16] = [
    (Cidr::v4(255, 255, 255, 255, 32), AddressRule::Broadcast),
    (Cidr::v4(0, 0, 0, 0, 8), AddressRule::Unspecified),
    (Cidr::v4(10, 0, 0, 0, 8), AddressRule::Private),
    (Cidr::v4(100, 64, 0, 0, 10), AddressRule::SharedAddressSpace),
    (Cidr::v4(127, 0, 0, 0, 8), AddressRule::Loopback),
    (Cidr::v4(169, 254, 0, 0, 16), AddressRule::LinkLocal),
    (Cidr::v4(172, 16, 0, 0, 12), AddressRule::Private),
    (Cidr::v4(192, 0, 0, 0, 24), AddressRule::Reserved),
    (Cidr::v4(192, 0, 2, 0, 24), AddressRule::Documentation),
    (Cidr::v4(192, 168, 0, 0, 16), AddressRule::Private),
    (Cidr::v4(198, 18, 0, 0, 15), AddressRule::Benchmarking),
    (Cidr::v4(198, 51, 100, 0, 24), AddressRule::Documentation),
    (Cidr::v4(203, 0, 113, 0, 24), AddressRule::Documentation),
    (Cidr::v4(224, 0, 0, 0, 4), AddressRule::Multicast),
    (Cidr::v4(240, 0, 0, 0, 4), AddressRule::Reserved),
    // 6to4 relays' anycast block: deprecated, and a way to reach whatever relay is nearest.
    (Cidr::v4(192, 88, 99, 0, 24), AddressRule::Reserved),
];

/// The IPv6 blocks that are not globally reachable (besides those that embed IPv4).
const V6: [(Cidr, AddressRule); 12] = [
    (
        Cidr::v6([0, 0, 0, 0, 0, 0, 0, 0], 128),
        AddressRule::Unspecified,
    ),
    (
        Cidr::v6([0, 0, 0, 0, 0, 0, 0, 1], 128),
        AddressRule::Loopback,
    ),
    (
        Cidr::v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48),
        AddressRule::Reserved,
    ),
    (
        Cidr::v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64),
        AddressRule::Reserved,
    ),
    (
        Cidr::v6([0x2001, 2, 0, 0, 0, 0, 0, 0], 48),
        AddressRule::Benchmarking,
    ),
    (
        Cidr::v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32),
        AddressRule::Reserved,
    ),
    (
        Cidr::v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32),
        AddressRule::Documentation,
    ),
    (
        Cidr::v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20),
        AddressRule::Documentation,
    ),
    (
        Cidr::v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7),
        AddressRule::UniqueLocal,
    ),
    (
        Cidr::v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10),
        AddressRule::LinkLocal,
    ),
    (
        Cidr::v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10),
        AddressRule::SiteLocal,
    ),
    (
        Cidr::v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8),
        AddressRule::Multicast,
    ),
];

/// IPv6's global unicast range; anything outside it that no rule above names is unassigned.
const GLOBAL_UNICAST: Cidr = Cidr::v6([0x2000, 0, 0, 0, 0, 0, 0, 0], 3);

/// How an IPv6 address carries an IPv4 one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Embedding {
    /// `::ffff:a.b.c.d`: the IPv4 address itself, on a dual-stack socket.
    Mapped,
    /// `::a.b.c.d` (deprecated).
    Compatible,
    /// `64:ff9b::a.b.c.d`, translated to IPv4 by a NAT64 gateway.
    Nat64,
    /// `2002:aabb:ccdd::/48`, tunnelled to IPv4 by a 6to4 relay.
    SixToFour,
}

impl Embedding {
    /// "an IPv4-mapped form", as the middle of "… is ___ of 127.0.0.1".
    pub fn describe(self) -> &'static str {
        match self {
            Self::Mapped => "an IPv4-mapped form",
            Self::Compatible => "an IPv4-compatible form",
            Self::Nat64 => "a NAT64 form",
            Self::SixToFour => "a 6to4 form",
        }
    }
}

/// Why an address is refused: the rule, the block it is in, and the IPv4 address an IPv6 one
/// carries when that is what the rule applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Classified {
    pub rule: AddressRule,
    /// The registry block, e.g. `127.0.0.0/8`; `None` for IPv6 outside `2000::/3`.
    pub block: Option<Cidr>,
    pub embedded: Option<(Embedding, Ipv4Addr)>,
}

/// The IPv4 address `ip` carries, and how, if it carries one.
pub fn embedded_v4(ip: Ipv6Addr) -> Option<(Embedding, Ipv4Addr)> {
    let bits = u128::from(ip);
    let low = Ipv4Addr::from(u32::try_from(bits & 0xffff_ffff).unwrap_or(0));
    let [a, b, c, d, e, f, ..] = ip.segments();
    if (a, b, c, d, e, f) == (0, 0, 0, 0, 0, 0xffff) {
        return Some((Embedding::Mapped, low));
    }
    // `::` and `::1` are IPv6's own unspecified and loopback addresses (the table names them).
    if (a, b, c, d, e, f) == (0, 0, 0, 0, 0, 0) && bits > 1 {
        return Some((Embedding::Compatible, low));
    }
    if (a, b, c, d, e, f) == (0x64, 0xff9b, 0, 0, 0, 0) {
        return Some((Embedding::Nat64, low));
    }
    if a == 0x2002 {
        let v4 = (u32::from(b) << 16) | u32::from(c);
        return Some((Embedding::SixToFour, Ipv4Addr::from(v4)));
    }
    None
}

fn classify_v4(ip: Ipv4Addr) -> Option<(AddressRule, Cidr)> {
    V4.iter()
        .find(|(block, _)| block.contains(IpAddr::V4(ip)))
        .map(|(block, rule)| (*rule, *block))
}

/// Why `ip` is refused, or `None` when it is a globally reachable address.
pub fn classify(ip: IpAddr) -> Option<Classified> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4).map(|(rule, block)| Classified {
            rule,
            block: Some(block),
            embedded: None,
        }),
        IpAddr::V6(v6) => {
            let own = |ip: IpAddr| V6.iter().find(|(block, _)| block.contains(ip));
            // `::` and `::1` before the IPv4-compatible block they sit in.
            if let Some((block, rule)) = own(ip).filter(|(block, _)| block.prefix == 128) {
                return Some(Classified {
                    rule: *rule,
                    block: Some(*block),
                    embedded: None,
                });
            }
            if let Some((how, v4)) = embedded_v4(v6) {
                return classify_v4(v4).map(|(rule, block)| Classified {
                    rule,
                    block: Some(block),
                    embedded: Some((how, v4)),
                });
            }
            if let Some((block, rule)) = own(ip) {
                return Some(Classified {
                    rule: *rule,
                    block: Some(*block),
                    embedded: None,
                });
            }
            (!GLOBAL_UNICAST.contains(ip)).then_some(Classified {
                rule: AddressRule::Reserved,
                block: None,
                embedded: None,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> Option<AddressRule> {
        classify(text.parse().unwrap()).map(|c| c.rule)
    }

    #[test]
    fn every_refused_ipv4_block_is_refused_at_both_ends() {
        use AddressRule::*;
        let cases = [
            ("0.0.0.0", Unspecified),
            ("0.255.255.255", Unspecified),
            ("10.0.0.0", Private),
            ("10.255.255.255", Private),
            ("100.64.0.0", SharedAddressSpace),
            ("100.127.255.255", SharedAddressSpace),
            ("127.0.0.1", Loopback),
            ("127.255.255.254", Loopback),
            ("169.254.169.254", LinkLocal),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.0.0.8", Reserved),
            ("192.0.2.1", Documentation),
            ("192.88.99.1", Reserved),
            ("192.168.1.1", Private),
            ("198.18.0.1", Benchmarking),
            ("198.19.255.255", Benchmarking),
            ("198.51.100.7", Documentation),
            ("203.0.113.9", Documentation),
            ("224.0.0.1", Multicast),
            ("239.255.255.250", Multicast),
            ("240.0.0.1", Reserved),
            ("255.255.255.254", Reserved),
            ("255.255.255.255", Broadcast),
        ];
        for (address, expected) in cases {
            assert_eq!(rule(address), Some(expected), "{address}");
        }
    }

    #[test]
    fn public_ipv4_next_to_the_blocks_is_allowed() {
        for address in [
            "1.1.1.1",
            "8.8.8.8",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "126.255.255.255",
            "128.0.0.0",
            "169.253.255.255",
            "172.15.255.255",
            "172.32.0.0",
            "192.167.255.255",
            "192.169.0.0",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
        ] {
            assert_eq!(rule(address), None, "{address}");
        }
    }

    #[test]
    fn every_refused_ipv6_block_is_refused() {
        use AddressRule::*;
        let cases = [
            ("::", Unspecified),
            ("::1", Loopback),
            ("64:ff9b:1::1", Reserved),
            ("100::1", Reserved),
            ("2001::1", Reserved),
            ("2001:2::1", Benchmarking),
            ("2001:db8::1", Documentation),
            ("3fff::1", Documentation),
            ("fc00::1", UniqueLocal),
            ("fd12:3456::1", UniqueLocal),
            ("fe80::1", LinkLocal),
            ("febf::1", LinkLocal),
            ("fec0::1", SiteLocal),
            ("ff02::1", Multicast),
            // Unassigned space outside 2000::/3.
            ("4000::1", Reserved),
            ("1::1", Reserved),
        ];
        for (address, expected) in cases {
            assert_eq!(rule(address), Some(expected), "{address}");
        }
        assert_eq!(classify("4000::1".parse().unwrap()).unwrap().block, None);
        for address in [
            "2606:4700:4700::1111",
            "2a00:1450:4001::200e",
            "2001:4860::8888",
        ] {
            assert_eq!(rule(address), None, "{address}");
        }
    }

    #[test]
    fn ipv6_forms_of_refused_ipv4_are_refused_as_the_ipv4_address() {
        use AddressRule::*;
        let cases = [
            ("::ffff:127.0.0.1", Embedding::Mapped, "127.0.0.1", Loopback),
            ("::ffff:7f00:1", Embedding::Mapped, "127.0.0.1", Loopback),
            ("::ffff:10.1.2.3", Embedding::Mapped, "10.1.2.3", Private),
            ("::ffff:0.0.0.0", Embedding::Mapped, "0.0.0.0", Unspecified),
            (
                "::ffff:169.254.169.254",
                Embedding::Mapped,
                "169.254.169.254",
                LinkLocal,
            ),
            ("::127.0.0.1", Embedding::Compatible, "127.0.0.1", Loopback),
            (
                "::192.168.0.1",
                Embedding::Compatible,
                "192.168.0.1",
                Private,
            ),
            (
                "64:ff9b::127.0.0.1",
                Embedding::Nat64,
                "127.0.0.1",
                Loopback,
            ),
            ("64:ff9b::a00:1", Embedding::Nat64, "10.0.0.1", Private),
            ("2002:7f00:1::", Embedding::SixToFour, "127.0.0.1", Loopback),
            (
                "2002:a9fe:a9fe::1",
                Embedding::SixToFour,
                "169.254.169.254",
                LinkLocal,
            ),
            (
                "2002:6440:1::",
                Embedding::SixToFour,
                "100.64.0.1",
                SharedAddressSpace,
            ),
        ];
        for (address, how, v4, expected) in cases {
            let classified = classify(address.parse().unwrap()).expect(address);
            assert_eq!(classified.rule, expected, "{address}");
            assert_eq!(
                classified.embedded,
                Some((how, v4.parse().unwrap())),
                "{address}"
            );
        }
        // The same forms of public IPv4 addresses are as public as they are.
        for address in [
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "::8.8.8.8",
        ] {
            assert_eq!(rule(address), None, "{address}");
        }
    }

    #[test]
    fn networks_parse_match_and_refuse_host_bits() {
        let net: Cidr = "10.0.0.0/8".parse().unwrap();
        assert!(net.contains("10.200.1.1".parse().unwrap()));
        assert!(!net.contains("11.0.0.1".parse().unwrap()));
        assert!(
            !net.contains("::ffff:10.0.0.1".parse().unwrap()),
            "never across families"
        );
        assert_eq!(net.to_string(), "10.0.0.0/8");
        let one: Cidr = "127.0.0.1".parse().unwrap();
        assert_eq!(one.to_string(), "127.0.0.1/32");
        assert!(one.contains("127.0.0.1".parse().unwrap()));
        assert!(!one.contains("127.0.0.2".parse().unwrap()));
        let v6: Cidr = "fd00::/8".parse().unwrap();
        assert!(v6.contains("fd12::1".parse().unwrap()));
        let all: Cidr = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains("8.8.8.8".parse().unwrap()));
        let err = "10.1.2.3/8".parse::<Cidr>().unwrap_err();
        assert!(err.contains("write 10.0.0.0/8"), "{err}");
        assert!("10.0.0.0/33".parse::<Cidr>().is_err());
        assert!("fd00::/129".parse::<Cidr>().is_err());
        assert!("localhost/8".parse::<Cidr>().is_err());
    }
}
