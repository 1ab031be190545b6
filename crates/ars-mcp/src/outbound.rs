//! Where the outbound policy ([`ars_domain::outbound`]) meets the network: the one place a
//! connection to a URL a non-admin supplied is allowed or refused.
//!
//! A connection under the policy ([`Reach::Checked`]) gets an HTTP client of its own whose
//! DNS resolver resolves the URL's host, judges every address it resolves to, and hands the
//! client only addresses it judged — so the client connects to exactly what was checked, and
//! a name whose answer changes (DNS rebinding) is judged again on every connection, which for
//! Streamable HTTP is every request (the client keeps no idle connections). An IP address in
//! the URL, which the client never resolves, is judged before the client is built and again
//! before each request; a request to any other origin than the URL's is refused; redirects
//! are not followed, and no proxy is used (a proxy would resolve the name itself).
//!
//! [`Outbound::check_url`] makes the same judgement when a URL is saved, so a refused one is
//! answered at once instead of at its first use.

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;

use ars_domain::outbound::{Host, OutboundPolicy, Refused, Target};

/// How long a save waits for a name to resolve before it lets the URL through (the
/// connection judges it again anyway).
const SAVE_LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

/// Resolves host names to addresses. The system's resolver in production; tests map names of
/// their own (`rebind.test`) to addresses they choose, and change them.
pub trait Resolver: Send + Sync {
    /// Every address `name` resolves to.
    fn lookup(&self, name: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>>;
}

/// The system's resolver (`getaddrinfo`, on a blocking thread).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn lookup(&self, name: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        let name = name.to_owned();
        Box::pin(async move {
            let addresses = tokio::net::lookup_host((name.as_str(), 0)).await?;
            Ok(addresses.map(|address| address.ip()).collect())
        })
    }
}

/// Names with the addresses a test gave them (changeable at any time); other names go to the
/// system's resolver.
#[derive(Default)]
pub struct MappedResolver {
    names: Mutex<HashMap<String, Vec<IpAddr>>>,
}

impl MappedResolver {
    /// `name` (lower case) resolves to `addresses` from now on.
    pub fn set(&self, name: &str, addresses: &[IpAddr]) {
        self.names
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_ascii_lowercase(), addresses.to_vec());
    }
}

impl Resolver for MappedResolver {
    fn lookup(&self, name: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        let mapped = self
            .names
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&name.to_ascii_lowercase())
            .cloned();
        match mapped {
            Some(addresses) => Box::pin(std::future::ready(Ok(addresses))),
            None => SystemResolver.lookup(name),
        }
    }
}

/// The policy and the resolver it judges names with. A cheap `Clone`.
#[derive(Clone)]
pub struct Outbound {
    policy: Arc<OutboundPolicy>,
    resolver: Arc<dyn Resolver>,
}

impl fmt::Debug for Outbound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outbound")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Default for Outbound {
    /// No exceptions, the system's resolver.
    fn default() -> Self {
        Self::new(OutboundPolicy::default(), Arc::new(SystemResolver))
    }
}

/// Why a URL may not be reached.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Blocked {
    /// An address it names or resolves to is refused.
    #[error("{0}")]
    Refused(Refused),
    /// It cannot be read as an `http(s)` URL with a host.
    #[error("the URL {0}")]
    Unreadable(String),
    /// A request of a connection went to another origin than the one it was opened for.
    #[error("a request went to {0}, not to the server's own URL; it was not sent")]
    OtherOrigin(String),
}

impl Outbound {
    pub fn new(policy: OutboundPolicy, resolver: Arc<dyn Resolver>) -> Self {
        Self {
            policy: Arc::new(policy),
            resolver,
        }
    }

    pub fn policy(&self) -> &OutboundPolicy {
        &self.policy
    }

    /// Judges `url` as a connection would: its address, or every address its name resolves
    /// to now. A name that does not resolve (yet) passes: the connection judges it again.
    pub async fn check_url(&self, url: &str) -> Result<(), Blocked> {
        let target = Target::of_url(url).map_err(Blocked::Unreadable)?;
        let name = match &target.host {
            Host::Ip(ip) => return self.check(*ip, target.port, None),
            Host::Name(name) => name,
        };
        match tokio::time::timeout(SAVE_LOOKUP_TIMEOUT, self.resolver.lookup(name)).await {
            Ok(Ok(addresses)) => {
                for ip in addresses {
                    self.check(ip, target.port, Some(name))?;
                }
                Ok(())
            }
            Ok(Err(e)) => {
                tracing::debug!(host = %name, error = %e, "the host does not resolve (yet); judged when connecting");
                Ok(())
            }
            Err(_) => {
                tracing::debug!(host = %name, "the host did not resolve in time; judged when connecting");
                Ok(())
            }
        }
    }

    fn check(&self, ip: IpAddr, port: u16, name: Option<&str>) -> Result<(), Blocked> {
        self.policy
            .check(SocketAddr::new(ip, port))
            .map_err(|refused| match name {
                Some(name) => Blocked::Refused(refused.via_name(name)),
                None => Blocked::Refused(refused),
            })
    }

    /// What a connection to `url` resolves names with: the policy applied to every answer,
    /// for the URL's port. `Err` when the URL is refused before any lookup (an address).
    pub(crate) fn guard(&self, url: &str) -> Result<Guard, Blocked> {
        let target = Target::of_url(url).map_err(Blocked::Unreadable)?;
        if let Host::Ip(ip) = target.host {
            self.check(ip, target.port, None)?;
        }
        Ok(Guard {
            outbound: self.clone(),
            target,
        })
    }
}

/// One connection's view of the policy: the origin it was opened for.
#[derive(Clone)]
pub(crate) struct Guard {
    outbound: Outbound,
    target: Target,
}

impl Guard {
    /// Whether a request to `uri` may be sent: the connection's own origin, its address (if
    /// it is one) allowed.
    pub(crate) fn admit(&self, uri: &str) -> Result<(), Blocked> {
        let target = Target::of_url(uri).map_err(Blocked::Unreadable)?;
        if target != self.target {
            return Err(Blocked::OtherOrigin(uri.to_owned()));
        }
        match target.host {
            Host::Ip(ip) => self.outbound.check(ip, target.port, None),
            Host::Name(_) => Ok(()),
        }
    }
}

impl reqwest013::dns::Resolve for Guard {
    /// Resolves `name` and answers only addresses the policy allows for the connection's
    /// port; one refused address refuses the name (a name that mixes public and internal
    /// answers is not one to trust).
    fn resolve(&self, name: reqwest013::dns::Name) -> reqwest013::dns::Resolving {
        let guard = self.clone();
        let name = name.as_str().to_owned();
        Box::pin(async move {
            let port = guard.target.port;
            let addresses = match name.parse::<IpAddr>() {
                Ok(ip) => vec![ip],
                Err(_) => guard.outbound.resolver.lookup(&name).await?,
            };
            for ip in &addresses {
                guard.outbound.check(*ip, port, Some(&name))?;
            }
            let checked: reqwest013::dns::Addrs = Box::new(
                addresses
                    .into_iter()
                    .map(move |ip| SocketAddr::new(ip, port)),
            );
            Ok(checked)
        })
    }
}

/// Where a connection may go.
#[derive(Clone, Debug)]
pub enum Reach {
    /// Anywhere: a server an admin configured, or the operator's own command line.
    Anywhere,
    /// Only where the outbound policy allows: a server a non-admin could have pointed
    /// anywhere.
    Checked(Outbound),
}

/// Whether a connection's errors may quote what the server answered (an error page's text, a
/// JSON-RPC error's message), or only say what kind of failure it was and its HTTP status.
/// Withheld for a non-admin on a server under the policy: the answer of something on an
/// allowed internal address is not theirs to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerText {
    Shown,
    Withheld,
}
