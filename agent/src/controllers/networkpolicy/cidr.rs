//! CIDR parsing and the containment rule of the network policies' `except` lists. Pure.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An IP network (`10.0.0.0/8`, `fd00::/8`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    /// Address as written (not masked).
    pub addr: IpAddr,
    /// Prefix length.
    pub prefix: u8,
}

impl Cidr {
    /// Parses `a.b.c.d/n` or `x::y/n`.
    ///
    /// # Errors
    /// A message naming the text.
    pub fn parse(text: &str) -> Result<Cidr, String> {
        let invalid = || format!("invalid CIDR {text:?}");
        let (addr, prefix) = text.trim().split_once('/').ok_or_else(invalid)?;
        let addr: IpAddr = addr.parse().map_err(|_| invalid())?;
        let prefix: u8 = prefix.parse().map_err(|_| invalid())?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        if prefix > max {
            return Err(invalid());
        }
        Ok(Cidr { addr, prefix })
    }

    /// Whether this is an IPv4 network.
    pub fn is_ipv4(&self) -> bool {
        self.addr.is_ipv4()
    }

    /// Whether `other`'s address lies in this network and its prefix is strictly longer.
    pub fn contains_strictly(&self, other: &Cidr) -> bool {
        if self.prefix >= other.prefix {
            return false;
        }
        match (self.addr, other.addr) {
            (IpAddr::V4(a), IpAddr::V4(b)) => {
                mask4(u32::from(a), self.prefix) == mask4(u32::from(b), self.prefix)
            }
            (IpAddr::V6(a), IpAddr::V6(b)) => {
                mask6(u128::from(a), self.prefix) == mask6(u128::from(b), self.prefix)
            }
            _ => false,
        }
    }

    /// The network address plus `offset` as a host route (`/32` or `/128`).
    pub fn host(&self, offset: u32) -> Cidr {
        match self.addr {
            IpAddr::V4(a) => Cidr {
                addr: IpAddr::V4(Ipv4Addr::from(
                    mask4(u32::from(a), self.prefix).wrapping_add(offset),
                )),
                prefix: 32,
            },
            IpAddr::V6(a) => Cidr {
                addr: IpAddr::V6(Ipv6Addr::from(
                    mask6(u128::from(a), self.prefix).wrapping_add(u128::from(offset)),
                )),
                prefix: 128,
            },
        }
    }

    /// A host route for an address.
    pub fn of_address(addr: IpAddr) -> Cidr {
        Cidr {
            addr,
            prefix: if addr.is_ipv4() { 32 } else { 128 },
        }
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

fn mask4(value: u32, prefix: u8) -> u32 {
    if prefix == 0 {
        0
    } else {
        value & (u32::MAX << (32 - u32::from(prefix)))
    }
}

fn mask6(value: u128, prefix: u8) -> u128 {
    if prefix == 0 {
        0
    } else {
        value & (u128::MAX << (128 - u32::from(prefix)))
    }
}

/// The entries of `candidates` that `block` strictly contains, as text, in order, without
/// duplicates.
pub fn except_for(block: &Cidr, candidates: &[Cidr]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for candidate in candidates {
        let text = candidate.to_string();
        if block.contains_strictly(candidate) && !out.contains(&text) {
            out.push(text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(text: &str) -> Cidr {
        Cidr::parse(text).unwrap()
    }

    #[test]
    fn containment_needs_a_strictly_shorter_prefix() {
        // Edge case 4: only the /16 is an exception of 10.0.0.0/8.
        let blocked = [c("10.250.0.0/16"), c("0.0.0.0/0")];
        assert_eq!(except_for(&c("10.0.0.0/8"), &blocked), ["10.250.0.0/16"]);
        assert!(!c("10.0.0.0/8").contains_strictly(&c("10.0.0.0/8")));
        assert!(!c("10.0.0.0/8").contains_strictly(&c("11.0.0.0/16")));
        assert!(c("fc00::/7").contains_strictly(&c("fd00::/8")));
        assert!(!c("0.0.0.0/0").contains_strictly(&c("fd00::/8")));
    }

    #[test]
    fn host_addresses_and_parsing() {
        // Edge case 6: the DNS peer of services 10.96.0.0/12.
        assert_eq!(c("10.96.0.0/12").host(10).to_string(), "10.96.0.10/32");
        assert_eq!(
            c("fd00:10:2::/108").host(10).to_string(),
            "fd00:10:2::a/128"
        );
        assert!(Cidr::parse("10.0.0.0").is_err());
        assert!(Cidr::parse("10.0.0.0/33").is_err());
        assert_eq!(
            Cidr::of_address("10.0.0.1".parse().unwrap()).to_string(),
            "10.0.0.1/32"
        );
    }
}
