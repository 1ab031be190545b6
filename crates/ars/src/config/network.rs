//! `[network]`: where requests the server makes for URLs that non-admins give may go.
//!
//! Such URLs (today: non-admins' Streamable HTTP MCP servers) may reach only globally
//! reachable addresses ([`ars_domain::outbound`]); `allow` lists the admin's exceptions, e.g.
//! an MCP server on this host (`127.0.0.1:3001`) or a company network (`10.0.0.0/8`).

use serde::{Deserialize, Deserializer, Serialize};

use ars_domain::OutboundPolicy;

/// `[network]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NetworkSettings {
    /// Exceptions to the outbound policy: an address and port (`127.0.0.1:3001`,
    /// `[::1]:3001`) or a network (`10.0.0.0/8`, `fd00::/8`). `ARS_NETWORK__ALLOW` takes a
    /// list (`["127.0.0.1:3001", "10.0.0.0/8"]`) or the entries separated by commas.
    #[serde(deserialize_with = "one_or_many")]
    pub allow: Vec<String>,
}

impl NetworkSettings {
    /// The policy these settings make; an entry that does not read is named.
    pub fn policy(&self) -> anyhow::Result<OutboundPolicy> {
        OutboundPolicy::new(&self.allow)
            .map_err(|e| anyhow::anyhow!("invalid configuration: network.allow: {e}"))
    }

    /// The policy with the system's resolver, as connections apply it.
    pub fn outbound(&self) -> anyhow::Result<ars_mcp::Outbound> {
        Ok(ars_mcp::Outbound::new(
            self.policy()?,
            std::sync::Arc::new(ars_mcp::outbound::SystemResolver),
        ))
    }
}

/// A list, or one string of comma-separated entries (what an environment variable holds).
fn one_or_many<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::Many(list) => list,
        OneOrMany::One(text) => text
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(str::to_owned)
            .collect(),
    })
}

#[cfg(test)]
// `figment::Jail` fixes the closure's error type; its size is not ours to choose.
#[allow(clippy::result_large_err)]
mod tests {
    use std::net::SocketAddr;

    use crate::config::Config;

    fn allowed(config: &Config, address: &str) -> bool {
        let address: SocketAddr = address.parse().unwrap_or_else(|_| panic!("{address}"));
        config
            .network
            .policy()
            .is_ok_and(|policy| policy.check(address).is_ok())
    }

    #[test]
    fn exceptions_come_from_the_file_or_the_environment() {
        figment::Jail::expect_with(|jail| {
            let config = Config::load(None).map_err(|e| e.to_string())?;
            assert!(config.network.allow.is_empty());
            assert!(!allowed(&config, "127.0.0.1:3001"));

            jail.create_file(
                "ars.toml",
                "[network]\nallow = [\"127.0.0.1:3001\", \"10.0.0.0/8\"]\n",
            )?;
            let config = Config::load(None).map_err(|e| e.to_string())?;
            assert!(allowed(&config, "127.0.0.1:3001"));
            assert!(!allowed(&config, "127.0.0.1:3002"));
            assert!(allowed(&config, "10.20.30.40:5432"));

            jail.set_env("ARS_NETWORK__ALLOW", "[::1]:4000, 192.168.0.0/16");
            let config = Config::load(None).map_err(|e| e.to_string())?;
            assert_eq!(config.network.allow, ["[::1]:4000", "192.168.0.0/16"]);
            assert!(allowed(&config, "[::1]:4000"));
            assert!(
                !allowed(&config, "127.0.0.1:3001"),
                "the environment replaces the file"
            );

            jail.set_env("ARS_NETWORK__ALLOW", r#"["127.0.0.1:3001","fd00::/8"]"#);
            let config = Config::load(None).map_err(|e| e.to_string())?;
            assert_eq!(config.network.allow, ["127.0.0.1:3001", "fd00::/8"]);
            Ok(())
        });
    }

    #[test]
    fn an_exception_that_does_not_read_stops_the_start() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("ars.toml", "[network]\nallow = [\"localhost:3001\"]\n")?;
            let error = Config::load(None).err().map(|e| e.to_string());
            assert!(
                error
                    .as_deref()
                    .is_some_and(|e| e.contains("network.allow") && e.contains("localhost:3001")),
                "{error:?}"
            );
            jail.create_file("ars.toml", "[network]\nallow = [\"10.1.0.0/8\"]\n")?;
            let error = Config::load(None).err().map(|e| e.to_string());
            assert!(
                error.as_deref().is_some_and(|e| e.contains("10.0.0.0/8")),
                "{error:?}"
            );
            Ok(())
        });
    }
}
