//! Network ranges (CIDR) for `[mesh] networks`.

use std::net::IpAddr;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Whether bits past the prefix are set (`10.20.0.5/16`): the range is still the
    /// prefix's, which the writer may not have meant.
    pub fn has_host_bits(&self) -> bool {
        let (bits, width) = match self.network {
            IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
            IpAddr::V6(v6) => (u128::from(v6), 128),
        };
        masked(bits, self.prefix, width) != bits << (128 - u32::from(width))
    }

    /// The range as it is read: `10.20.0.5/16` is `10.20.0.0/16`.
    pub fn network(&self) -> Cidr {
        let network = match self.network {
            IpAddr::V4(v4) => IpAddr::V4(
                (u32::from(v4)
                    & u32::MAX
                        .checked_shl(32 - u32::from(self.prefix))
                        .unwrap_or(0))
                .into(),
            ),
            IpAddr::V6(v6) => IpAddr::V6(
                (u128::from(v6)
                    & u128::MAX
                        .checked_shl(128 - u32::from(self.prefix))
                        .unwrap_or(0))
                .into(),
            ),
        };
        Cidr {
            network,
            prefix: self.prefix,
        }
    }

    pub fn contains(&self, addr: IpAddr) -> bool {
        match (self.network, addr) {
            (IpAddr::V4(net), IpAddr::V4(a)) => {
                masked(u32::from(net).into(), self.prefix, 32)
                    == masked(u32::from(a).into(), self.prefix, 32)
            }
            (IpAddr::V6(net), IpAddr::V6(a)) => {
                masked(u128::from(net), self.prefix, 128) == masked(u128::from(a), self.prefix, 128)
            }
            // An IPv4-mapped IPv6 address (::ffff:10.20.0.11) reaches the same host.
            (IpAddr::V4(_), IpAddr::V6(a)) => a
                .to_ipv4_mapped()
                .is_some_and(|v4| self.contains(v4.into())),
            _ => false,
        }
    }
}

fn masked(bits: u128, prefix: u8, width: u8) -> u128 {
    if prefix == 0 {
        return 0;
    }
    let keep = u128::MAX << (128 - u32::from(prefix));
    (bits << (128 - u32::from(width))) & keep
}

/// `10.20.0.0/16`: what `from_str` reads back (the catalog cache stores networks so).
impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// A catalog's `networks` entry that is not `ADDRESS/PREFIX` with a prefix the address has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotACidr(pub String);

impl std::fmt::Display for NotACidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` is not a network in CIDR form (e.g. 10.20.0.0/16)",
            self.0
        )
    }
}

impl std::error::Error for NotACidr {}

impl FromStr for Cidr {
    type Err = NotACidr;

    fn from_str(text: &str) -> Result<Self, NotACidr> {
        let bad = || NotACidr(text.to_string());
        let (addr, prefix) = text.split_once('/').ok_or_else(bad)?;
        let network: IpAddr = addr.parse().map_err(|_| bad())?;
        let prefix: u8 = prefix.parse().map_err(|_| bad())?;
        let width = if network.is_ipv4() { 32 } else { 128 };
        if prefix > width {
            return Err(bad());
        }
        Ok(Cidr { network, prefix })
    }
}

/// An IPv4 address in any form `inet_aton` accepts, as ssh, curl and the resolver do:
/// one to four parts, each decimal, octal (`0` prefix) or hex (`0x`), the last filling the
/// remaining bytes (`10.20.11` is 10.20.0.11, `2887516426` a whole address).
pub fn parse_ipv4_loose(text: &str) -> Option<std::net::Ipv4Addr> {
    let parts: Vec<&str> = text.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut values = Vec::with_capacity(parts.len());
    for part in &parts {
        let (digits, radix) =
            if let Some(hex) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
                (hex, 16)
            } else if part.len() > 1 && part.starts_with('0') {
                (&part[1..], 8)
            } else {
                (*part, 10)
            };
        if digits.is_empty() && radix != 16 {
            return None;
        }
        values.push(if digits.is_empty() {
            0
        } else {
            u64::from_str_radix(digits, radix).ok()?
        });
    }
    let (last, leading) = values.split_last()?;
    if leading.iter().any(|&v| v > 255) || *last >= 1u64 << (8 * (4 - leading.len())) {
        return None;
    }
    let mut bits: u64 = 0;
    for (i, &v) in leading.iter().enumerate() {
        bits |= v << (24 - 8 * i);
    }
    bits |= last;
    u32::try_from(bits).ok().map(std::net::Ipv4Addr::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_by_prefix() {
        let net: Cidr = "10.20.0.0/16".parse().unwrap();
        assert!(net.contains("10.20.255.1".parse().unwrap()));
        assert!(!net.contains("10.21.0.1".parse().unwrap()));
        assert!(net.contains("::ffff:10.20.0.11".parse().unwrap()));
        let v6: Cidr = "fd00:20::/64".parse().unwrap();
        assert!(v6.contains("fd00:20::13".parse().unwrap()));
        assert!(!v6.contains("fd00:21::13".parse().unwrap()));
        let all: Cidr = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains("8.8.8.8".parse().unwrap()));
    }

    #[test]
    fn every_form_the_resolver_reads() {
        for (text, want) in [
            ("172.28.1.10", "172.28.1.10"),
            ("2887516426", "172.28.1.10"),
            ("0xac1c010a", "172.28.1.10"),
            ("172.28.266", "172.28.1.10"),
            ("0254.034.01.012", "172.28.1.10"),
            ("172.7181770", "172.109.149.202"),
        ] {
            assert_eq!(
                parse_ipv4_loose(text).map(|a| a.to_string()).as_deref(),
                Some(want),
                "{text}"
            );
        }
        for text in [
            "atlas",
            "1.2.3.4.5",
            "256.1.1.1",
            "1.2.3.256",
            "08.1.1.1",
            "",
            "1..2",
            "4294967296",
        ] {
            assert_eq!(parse_ipv4_loose(text), None, "{text}");
        }
    }

    #[test]
    fn rejects_bad_forms() {
        for bad in [
            "10.20.0.0",
            "10.20.0.0/33",
            "x/8",
            "fd00::/129",
            "10.20.0.0/-1",
        ] {
            assert!(bad.parse::<Cidr>().is_err(), "{bad}");
        }
    }
}
