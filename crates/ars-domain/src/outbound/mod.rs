//! The outbound policy: which addresses a request the server makes for a URL a non-admin
//! supplied may reach.
//!
//! ARS fetches URLs its users give it (today: the Streamable HTTP endpoints of MCP servers).
//! A URL from a plain user must not make the server a way into its own network — the
//! loopback interface (ARS itself, its database, a metrics listener), the private networks
//! around it, the cloud metadata service at `169.254.169.254` — the holes the sandbox closes
//! for agents' commands. So every such request goes through one policy:
//!
//! - the host is read as the HTTP client reads it ([`Target::of_url`]: WHATWG URL parsing, so
//!   `2130706433`, `0x7f.1` and `127.1` are `127.0.0.1` here as they are on the wire);
//! - a name is resolved and *every* address it resolves to is judged; the connection then
//!   goes to the addresses judged (`ars-mcp`'s `outbound` hands the HTTP client only those),
//!   so a name cannot resolve to one address for the check and another for the connection;
//! - an address is refused when it is not globally reachable ([`ranges`]: loopback,
//!   unspecified, link-local, private, unique-local, shared, multicast, broadcast,
//!   documentation, benchmarking, reserved), IPv6 forms that carry such an IPv4 address
//!   included — unless an admin allowed it in `[network] allow`, as `host:port` or as a
//!   network ([`OutboundPolicy::new`]).
//!
//! Admins' own URLs (configured model providers, admin-owned MCP servers) are not subject to
//! it: who decides that is the caller of this module. This module does no I/O.

pub mod ranges;

use std::fmt;
use std::net::{IpAddr, SocketAddr};

pub use ranges::{AddressRule, Cidr, Classified, Embedding, classify};

/// One exception an admin configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllowEntry {
    /// One port of one address, e.g. `127.0.0.1:3001` or `[::1]:3001`.
    Socket(SocketAddr),
    /// Every port of a network, e.g. `10.0.0.0/8`; a bare address is a network of one.
    Network(Cidr),
}

impl AllowEntry {
    /// Reads `127.0.0.1:3001`, `[::1]:3001`, `10.0.0.0/8`, `fd00::/8` or a bare address.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if let Ok(socket) = text.parse::<SocketAddr>() {
            return Ok(Self::Socket(socket));
        }
        if text.contains('/') || text.parse::<IpAddr>().is_ok() {
            return text.parse::<Cidr>().map(Self::Network);
        }
        Err(format!(
            "`{text}` is neither an address with a port (127.0.0.1:3001, [::1]:3001) nor a \
             network (10.0.0.0/8, fd00::/8): host names are not accepted, since what they \
             resolve to can change"
        ))
    }

    fn admits(&self, address: SocketAddr) -> bool {
        match self {
            Self::Socket(socket) => {
                socket.port() == address.port()
                    && (socket.ip() == address.ip()
                        || socket.ip().to_canonical() == address.ip().to_canonical())
            }
            Self::Network(net) => {
                net.contains(address.ip()) || net.contains(address.ip().to_canonical())
            }
        }
    }
}

impl fmt::Display for AllowEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Socket(socket) => write!(f, "{socket}"),
            Self::Network(net) => write!(f, "{net}"),
        }
    }
}

/// The rules for URLs non-admins supply, with the admin's exceptions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutboundPolicy {
    allow: Vec<AllowEntry>,
}

impl OutboundPolicy {
    /// The policy with these exceptions (`[network] allow`); the first that does not read is
    /// named in the error.
    pub fn new<S: AsRef<str>>(allow: &[S]) -> Result<Self, String> {
        let allow = allow
            .iter()
            .map(|entry| AllowEntry::parse(entry.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(Self { allow })
    }

    pub fn allowed(&self) -> &[AllowEntry] {
        &self.allow
    }

    /// Whether a connection to `address` is allowed; `Err` says which rule refuses it.
    pub fn check(&self, address: SocketAddr) -> Result<(), Refused> {
        if self.allow.iter().any(|entry| entry.admits(address)) {
            return Ok(());
        }
        match classify(address.ip()) {
            None => Ok(()),
            Some(classified) => Err(Refused {
                address: address.ip(),
                classified,
                name: None,
            }),
        }
    }
}

/// An address the policy refuses, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The address as it would have been connected to.
    pub address: IpAddr,
    pub classified: Classified,
    /// The host name that resolved to it, when the URL named one.
    pub name: Option<String>,
}

impl Refused {
    /// The same refusal, reached by resolving `name`.
    pub fn via_name(mut self, name: &str) -> Self {
        self.name = Some(name.to_owned());
        self
    }

    pub fn rule(&self) -> AddressRule {
        self.classified.rule
    }
}

impl std::error::Error for Refused {}

impl fmt::Display for Refused {
    /// E.g. "the address 127.0.0.1 is a loopback address (127.0.0.0/8), which …". For a name
    /// the address it resolved to is left out: it may be an internal one the caller has no
    /// business learning.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Classified {
            rule,
            block,
            embedded,
        } = self.classified;
        let block = block.map(|b| format!(" ({b})")).unwrap_or_default();
        match (&self.name, embedded) {
            (Some(name), _) => write!(f, "`{name}` resolves to {}{block}", rule.describe())?,
            (None, Some((how, v4))) => write!(
                f,
                "the address {} is {} of {v4}, {}{block}",
                self.address,
                how.describe(),
                rule.describe()
            )?,
            (None, None) => write!(
                f,
                "the address {} is {}{block}",
                self.address,
                rule.describe()
            )?,
        }
        f.write_str(
            ", which a URL given by a non-admin may not reach; an admin can allow it with \
             [network] allow",
        )
    }
}

/// A URL's host as the HTTP client will read it, and its port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub host: Host,
    pub port: u16,
}

/// An IP address (however it was written) or a name to resolve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Host {
    Ip(IpAddr),
    /// Lower case, as the URL parser leaves it.
    Name(String),
}

impl Target {
    /// The host and port of an `http`/`https` URL, parsed as reqwest parses it (the `url`
    /// crate, WHATWG rules): numeric IPv4 forms become the address they denote.
    pub fn of_url(url: &str) -> Result<Self, String> {
        let parsed = url::Url::parse(url).map_err(|e| format!("is not a URL ({e})"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err("must start with http:// or https://".into());
        }
        let port = parsed
            .port_or_known_default()
            .ok_or_else(|| "has no port".to_string())?;
        let host = match parsed.host() {
            Some(url::Host::Ipv4(v4)) => Host::Ip(IpAddr::V4(v4)),
            Some(url::Host::Ipv6(v6)) => Host::Ip(IpAddr::V6(v6)),
            Some(url::Host::Domain(name)) => Host::Name(name.to_owned()),
            None => return Err("must name a host".into()),
        };
        Ok(Self { host, port })
    }
}

#[cfg(test)]
mod tests;
