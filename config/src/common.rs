//! Building blocks both components share: client connections, leader election, servers, logging, thresholds.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize};

use crate::duration::Duration;

/// How to reach a Kubernetes API server (`componentbaseconfig.ClientConnectionConfiguration`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClientConnection {
    /// Path of a kubeconfig file; unset (or empty) means in-cluster configuration.
    #[serde(
        deserialize_with = "empty_path_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub kubeconfig: Option<PathBuf>,
    /// `Accept` header value sent to the server; empty means the client default.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub accept_content_types: String,
    /// Content type of request bodies; empty means the client default.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub content_type: String,
    /// Sustained queries per second towards the server.
    pub qps: f32,
    /// Burst of queries allowed above `qps`.
    pub burst: i32,
}

/// A reference to a Secret (`core/v1.SecretReference`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SecretReference {
    /// Name of the Secret.
    pub name: String,
    /// Namespace of the Secret.
    pub namespace: String,
}

impl fmt::Display for SecretReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Leader election settings (`componentbaseconfig.LeaderElectionConfiguration`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LeaderElection {
    /// Whether to elect a leader before doing any work.
    pub leader_elect: bool,
    /// How long non-leaders wait after the last renewal before taking over.
    pub lease_duration: Duration,
    /// How long the leader keeps retrying to renew before giving up leadership.
    pub renew_deadline: Duration,
    /// How long to wait between attempts to acquire or renew.
    pub retry_period: Duration,
    /// Kind of lock object; only `leases` is supported.
    pub resource_lock: String,
    /// Name of the lock object; empty means the component's default.
    pub resource_name: String,
    /// Namespace of the lock object; empty means the component's default.
    pub resource_namespace: String,
}

/// The HTTP servers of a component.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerConfiguration {
    /// Serves `/healthz` and `/readyz`.
    pub health_probes: Server,
    /// Serves `/metrics`.
    pub metrics: Server,
}

impl ServerConfiguration {
    /// The probe and metrics addresses to bind, in that order.
    ///
    /// # Errors
    ///
    /// The field path (`server.healthProbes` or `server.metrics`) of the address that does not
    /// parse, with the parse error.
    pub fn addresses(
        &self,
    ) -> Result<(SocketAddr, SocketAddr), (&'static str, std::net::AddrParseError)> {
        let health = self
            .health_probes
            .socket_addr()
            .map_err(|source| ("server.healthProbes", source))?;
        let metrics = self
            .metrics
            .socket_addr()
            .map_err(|source| ("server.metrics", source))?;
        Ok((health, metrics))
    }
}

/// Where one HTTP server listens.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Server {
    /// IP address to listen on; empty means all interfaces.
    pub bind_address: String,
    /// Port to listen on; 0 in a file means the component's default port.
    pub port: u16,
    /// seedlet extension: listen on any free port the system picks (the bound address is
    /// logged at start-up). `port` must then be absent or 0, which otherwise means the default.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub free_port: bool,
}

impl Server {
    /// The socket address to bind.
    ///
    /// # Errors
    ///
    /// Returns the parse error when `bind_address` is not an IP address (validation reports this too).
    pub fn socket_addr(&self) -> Result<SocketAddr, std::net::AddrParseError> {
        let ip = if self.bind_address.is_empty() {
            IpAddr::V4(Ipv4Addr::UNSPECIFIED)
        } else {
            self.bind_address.parse()?
        };
        Ok(SocketAddr::new(ip, self.port))
    }
}

/// Log severity threshold; the names Gardener components accept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Everything including debug messages.
    Debug,
    /// Informational messages and above.
    #[default]
    Info,
    /// Errors only.
    Error,
}

impl LogLevel {
    /// The name as written in configuration (`debug`, `info`, `error`).
    pub const fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Error => "error",
        }
    }
}

impl FromStr for LogLevel {
    type Err = UnknownValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "debug" => Ok(LogLevel::Debug),
            "info" => Ok(LogLevel::Info),
            "error" => Ok(LogLevel::Error),
            _ => Err(UnknownValue {
                value: value.to_owned(),
                expected: "debug, info, error",
            }),
        }
    }
}

/// Log output format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// One JSON object per line (the Gardener default).
    #[default]
    Json,
    /// Human-readable lines.
    Text,
}

impl LogFormat {
    /// The name as written in configuration (`json`, `text`).
    pub const fn as_str(self) -> &'static str {
        match self {
            LogFormat::Json => "json",
            LogFormat::Text => "text",
        }
    }
}

impl FromStr for LogFormat {
    type Err = UnknownValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "json" => Ok(LogFormat::Json),
            "text" => Ok(LogFormat::Text),
            _ => Err(UnknownValue {
                value: value.to_owned(),
                expected: "json, text",
            }),
        }
    }
}

/// A value outside a closed set of names (for command-line parsing of [`LogLevel`] and [`LogFormat`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown value {value:?}, expected one of {expected}")]
pub struct UnknownValue {
    /// The rejected value.
    pub value: String,
    /// The accepted values, comma-separated.
    pub expected: &'static str,
}

/// How long a failing condition may stay `Progressing` before it turns `False`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionThreshold {
    /// The condition type, e.g. `SeedSystemComponentsHealthy`.
    #[serde(rename = "type")]
    pub condition_type: String,
    /// How long the condition may stay `Progressing`.
    pub duration: Duration,
}

/// The threshold configured for `condition_type`, if any.
pub fn threshold_for(thresholds: &[ConditionThreshold], condition_type: &str) -> Option<Duration> {
    thresholds
        .iter()
        .find(|threshold| threshold.condition_type == condition_type)
        .map(|threshold| threshold.duration)
}

/// Deserializes an optional path, treating `""` like an absent field, as Go components do.
pub(crate) fn empty_path_as_none<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<PathBuf>, D::Error> {
    let value = Option::<String>::deserialize(deserializer)?;
    Ok(value.filter(|path| !path.is_empty()).map(PathBuf::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_name_the_field_that_does_not_parse() {
        let mut servers = ServerConfiguration {
            health_probes: Server {
                bind_address: "127.0.0.1".into(),
                port: 2728,
                free_port: false,
            },
            metrics: Server {
                bind_address: String::new(),
                port: 2729,
                free_port: false,
            },
        };
        let (health, metrics) = servers.addresses().expect("valid");
        assert_eq!(health.to_string(), "127.0.0.1:2728");
        assert_eq!(metrics.to_string(), "0.0.0.0:2729");
        servers.metrics.bind_address = "not-an-ip".into();
        assert_eq!(
            servers.addresses().map_err(|(field, _)| field),
            Err("server.metrics")
        );
        servers.health_probes.bind_address = "also-not".into();
        assert_eq!(
            servers.addresses().map_err(|(field, _)| field),
            Err("server.healthProbes")
        );
    }

    #[test]
    fn socket_addr_listens_everywhere_when_bind_address_is_empty() {
        let server = Server {
            bind_address: String::new(),
            port: 2728,
            free_port: false,
        };
        assert_eq!(
            server.socket_addr().unwrap(),
            "0.0.0.0:2728".parse().unwrap()
        );
        let server = Server {
            bind_address: "::1".into(),
            port: 1,
            free_port: false,
        };
        assert_eq!(server.socket_addr().unwrap(), "[::1]:1".parse().unwrap());
        let server = Server {
            bind_address: "localhost".into(),
            port: 1,
            free_port: false,
        };
        assert!(server.socket_addr().is_err());
    }

    #[test]
    fn log_names_parse_and_print_the_same() {
        for level in [LogLevel::Debug, LogLevel::Info, LogLevel::Error] {
            assert_eq!(level.as_str().parse::<LogLevel>().unwrap(), level);
        }
        for format in [LogFormat::Json, LogFormat::Text] {
            assert_eq!(format.as_str().parse::<LogFormat>().unwrap(), format);
        }
        assert_eq!(
            "warn".parse::<LogLevel>().unwrap_err().to_string(),
            "unknown value \"warn\", expected one of debug, info, error"
        );
    }

    #[test]
    fn threshold_for_finds_the_matching_type() {
        let thresholds = vec![
            ConditionThreshold {
                condition_type: "A".into(),
                duration: Duration::from_secs(1),
            },
            ConditionThreshold {
                condition_type: "B".into(),
                duration: Duration::from_secs(2),
            },
        ];
        assert_eq!(
            threshold_for(&thresholds, "B"),
            Some(Duration::from_secs(2))
        );
        assert_eq!(threshold_for(&thresholds, "C"), None);
    }

    #[test]
    fn empty_kubeconfig_path_counts_as_unset() {
        let connection: ClientConnection = serde_json::from_str(r#"{"kubeconfig": ""}"#).unwrap();
        assert_eq!(connection.kubeconfig, None);
        let connection: ClientConnection = serde_json::from_str(r#"{"kubeconfig": "/k"}"#).unwrap();
        assert_eq!(connection.kubeconfig, Some(PathBuf::from("/k")));
    }
}
