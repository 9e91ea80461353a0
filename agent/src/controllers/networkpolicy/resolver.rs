//! The hostname resolver of `allow-to-runtime-apiserver` (spec §4.2): when the seed API server is
//! reached by a host name (the seed kubeconfig's server, else `KUBERNETES_SERVICE_HOST`), its
//! addresses are looked up every 30 s and added to the policy as one more rule (port from the URL,
//! else 443; TCP). A change of the addresses re-reconciles every namespace. An IP address needs no
//! resolver (the endpoints of `default/kubernetes` cover it).

use std::net::IpAddr;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// How often the host is looked up.
pub const INTERVAL: Duration = Duration::from_secs(30);

/// What to resolve: host name and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Host name (never an IP address).
    pub host: String,
    /// Port of the API server.
    pub port: u16,
}

/// The resolver's target: the seed server URL's host if it is a name (port from the URL, else
/// 443), else `KUBERNETES_SERVICE_HOST` if that is a name (port `KUBERNETES_SERVICE_PORT`, else
/// 443), else none.
pub fn target(
    seed_server: Option<&str>,
    service_host: Option<&str>,
    service_port: Option<&str>,
) -> Option<Target> {
    if let Some(uri) = seed_server.and_then(|server| server.parse::<http::Uri>().ok())
        && let Some(host) = uri.host().filter(|host| is_name(host))
    {
        return Some(Target {
            host: host.to_owned(),
            port: uri.port_u16().unwrap_or(443),
        });
    }
    let host = service_host.filter(|host| !host.is_empty() && is_name(host))?;
    Some(Target {
        host: host.to_owned(),
        port: service_port.and_then(|p| p.parse().ok()).unwrap_or(443),
    })
}

/// Whether `host` is a name rather than an IP address (IPv6 literals come in brackets).
fn is_name(host: &str) -> bool {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .is_err()
}

/// Looks `target` up now and every [`INTERVAL`] until `stop`; publishes the distinct addresses,
/// sorted, whenever they change (a failed lookup keeps the last answer).
pub async fn run(target: Target, addresses: watch::Sender<Vec<IpAddr>>, stop: CancellationToken) {
    loop {
        match tokio::net::lookup_host((target.host.as_str(), target.port)).await {
            Ok(found) => {
                let mut ips: Vec<IpAddr> = found.map(|address| address.ip()).collect();
                ips.sort();
                ips.dedup();
                addresses.send_if_modified(|current| {
                    let changed = *current != ips;
                    if changed {
                        tracing::debug!(host = %target.host, addresses = ?ips, "seed API server host resolved");
                        current.clone_from(&ips);
                    }
                    changed
                });
            }
            Err(error) => {
                tracing::warn!(host = %target.host, error = %error, "cannot resolve the seed API server host");
            }
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(INTERVAL) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_is_the_first_host_name_with_its_port() {
        let t = |host: &str, port| {
            Some(Target {
                host: host.to_owned(),
                port,
            })
        };
        let cases = [
            (
                Some("https://api.seed.example:6443"),
                None,
                None,
                t("api.seed.example", 6443),
            ),
            (
                Some("https://api.seed.example"),
                None,
                None,
                t("api.seed.example", 443),
            ),
            (
                Some("https://10.0.0.1:6443"),
                Some("kubernetes.default"),
                Some("8443"),
                t("kubernetes.default", 8443),
            ),
            (
                Some("https://[fd00::1]:6443"),
                Some("kubernetes.default"),
                None,
                t("kubernetes.default", 443),
            ),
            (
                Some("https://10.0.0.1"),
                Some("10.96.0.1"),
                Some("443"),
                None,
            ),
            (None, None, None, None),
            (None, Some(""), None, None),
        ];
        for (server, host, port, expected) in cases {
            assert_eq!(target(server, host, port), expected, "{server:?} {host:?}");
        }
    }
}
