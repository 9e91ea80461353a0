//! Validation rules shared by both configurations; each rule records a [`Problem`] at a field path.

use std::collections::BTreeSet;
use std::net::IpAddr;

use crate::common::{
    ConditionThreshold, LeaderElection, SecretReference, Server, ServerConfiguration,
};
use crate::duration::Duration;
use crate::error::Problem;

/// Collects every problem of one configuration.
#[derive(Debug, Default)]
pub(crate) struct Checker {
    problems: Vec<Problem>,
}

impl Checker {
    /// Records a problem.
    pub(crate) fn report(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem::new(path, message));
    }

    /// The problems recorded so far.
    pub(crate) fn into_problems(self) -> Vec<Problem> {
        self.problems
    }

    /// A period that must not be zero.
    pub(crate) fn positive_duration(&mut self, path: &str, value: Duration) {
        if value.is_zero() {
            self.report(path, "must be > 0");
        }
    }

    /// A count with a lower bound.
    pub(crate) fn at_least(&mut self, path: &str, value: u32, minimum: u32) {
        if value < minimum {
            self.report(path, format!("must be at least {minimum}"));
        }
    }

    /// Client rate limits.
    pub(crate) fn rate_limits(&mut self, path: &str, qps: f32, burst: i32) {
        if !qps.is_finite() || qps < 0.0 {
            self.report(format!("{path}.qps"), "must be a non-negative number");
        }
        if burst < 0 {
            self.report(format!("{path}.burst"), "must not be negative");
        }
    }

    /// A Secret reference needs both name and namespace.
    pub(crate) fn secret_reference(&mut self, path: &str, reference: &SecretReference) {
        if reference.name.is_empty() {
            self.report(format!("{path}.name"), "required");
        } else {
            self.dns_subdomain(&format!("{path}.name"), &reference.name);
        }
        if reference.namespace.is_empty() {
            self.report(format!("{path}.namespace"), "required");
        } else {
            self.dns_label(&format!("{path}.namespace"), &reference.namespace);
        }
    }

    /// Leader election timing and lock, as component-base validates it.
    pub(crate) fn leader_election(&mut self, path: &str, election: &LeaderElection) {
        if !election.leader_elect {
            return;
        }
        self.positive_duration(&format!("{path}.leaseDuration"), election.lease_duration);
        self.positive_duration(&format!("{path}.renewDeadline"), election.renew_deadline);
        self.positive_duration(&format!("{path}.retryPeriod"), election.retry_period);
        if election.lease_duration <= election.renew_deadline {
            self.report(
                format!("{path}.leaseDuration"),
                "must be greater than renewDeadline",
            );
        }
        if election.renew_deadline <= election.retry_period {
            self.report(
                format!("{path}.renewDeadline"),
                "must be greater than retryPeriod",
            );
        }
        if election.resource_lock != "leases" {
            self.report(
                format!("{path}.resourceLock"),
                format!(
                    "unsupported lock {:?}: only \"leases\" is supported",
                    election.resource_lock
                ),
            );
        }
        self.dns_subdomain(&format!("{path}.resourceName"), &election.resource_name);
        self.dns_label(
            &format!("{path}.resourceNamespace"),
            &election.resource_namespace,
        );
    }

    /// Both servers: valid bind addresses and distinct ports on the same address.
    pub(crate) fn servers(&mut self, path: &str, servers: &ServerConfiguration) {
        self.server(&format!("{path}.healthProbes"), &servers.health_probes);
        self.server(&format!("{path}.metrics"), &servers.metrics);
        let (probes, metrics) = (&servers.health_probes, &servers.metrics);
        if probes.port != 0
            && probes.port == metrics.port
            && probes.bind_address == metrics.bind_address
        {
            self.report(
                format!("{path}.metrics.port"),
                "must differ from healthProbes.port",
            );
        }
    }

    /// One server's address and port choice.
    pub(crate) fn server_at(&mut self, path: &str, server: &Server) {
        self.server(path, server);
    }

    fn server(&mut self, path: &str, server: &Server) {
        if server.free_port && server.port != 0 {
            self.report(
                format!("{path}.freePort"),
                format!(
                    "asks for any free port but port is {}; set one of them",
                    server.port
                ),
            );
        }
        if !server.bind_address.is_empty() && server.bind_address.parse::<IpAddr>().is_err() {
            self.report(
                format!("{path}.bindAddress"),
                format!("{:?} is not an IP address", server.bind_address),
            );
        }
    }

    /// Condition thresholds: a type, a positive duration, no type twice.
    pub(crate) fn condition_thresholds(&mut self, path: &str, thresholds: &[ConditionThreshold]) {
        let mut seen = BTreeSet::new();
        for (index, threshold) in thresholds.iter().enumerate() {
            let item = format!("{path}[{index}]");
            if threshold.condition_type.is_empty() {
                self.report(format!("{item}.type"), "required");
            } else if !seen.insert(threshold.condition_type.as_str()) {
                self.report(
                    format!("{item}.type"),
                    format!("duplicate condition type {:?}", threshold.condition_type),
                );
            }
            self.positive_duration(&format!("{item}.duration"), threshold.duration);
        }
    }

    /// A Kubernetes object name (RFC 1123 subdomain).
    pub(crate) fn dns_subdomain(&mut self, path: &str, name: &str) {
        let valid = !name.is_empty()
            && name.len() <= 253
            && name.split('.').all(|label| is_dns_label(label, 63));
        if !valid {
            self.report(
                path,
                format!("{name:?} must be lower-case alphanumerics, '-' and '.', starting and ending alphanumeric"),
            );
        }
    }

    /// A namespace name (RFC 1123 label).
    pub(crate) fn dns_label(&mut self, path: &str, name: &str) {
        if !is_dns_label(name, 63) {
            self.report(
                path,
                format!("{name:?} must be at most 63 lower-case alphanumerics or '-', starting and ending alphanumeric"),
            );
        }
    }
}

fn is_dns_label(label: &str, max_len: usize) -> bool {
    let alphanumeric = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !label.is_empty()
        && label.len() <= max_len
        && label.chars().all(|c| alphanumeric(c) || c == '-')
        && label.starts_with(alphanumeric)
        && label.ends_with(alphanumeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(check: impl FnOnce(&mut Checker)) -> Vec<String> {
        let mut checker = Checker::default();
        check(&mut checker);
        checker
            .into_problems()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn election() -> LeaderElection {
        LeaderElection {
            resource_name: "lock".into(),
            resource_namespace: "garden".into(),
            ..LeaderElection::default()
        }
    }

    #[test]
    fn leader_election_accepts_the_defaults() {
        assert!(problems(|c| c.leader_election("leaderElection", &election())).is_empty());
    }

    #[test]
    fn leader_election_requires_lease_longer_than_renew_longer_than_retry() {
        let mut value = election();
        value.lease_duration = Duration::from_secs(10);
        value.retry_period = Duration::from_secs(10);
        assert_eq!(
            problems(|c| c.leader_election("le", &value)),
            [
                "le.leaseDuration: must be greater than renewDeadline",
                "le.renewDeadline: must be greater than retryPeriod"
            ]
        );
    }

    #[test]
    fn leader_election_rejects_other_locks_and_bad_names() {
        let mut value = election();
        value.resource_lock = "configmaps".into();
        value.resource_namespace = "Garden".into();
        let found = problems(|c| c.leader_election("le", &value));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("le.resourceLock: unsupported lock \"configmaps\""));
        assert!(found[1].starts_with("le.resourceNamespace: \"Garden\" must be"));
    }

    #[test]
    fn leader_election_is_not_checked_when_disabled() {
        let mut value = election();
        value.leader_elect = false;
        value.lease_duration = Duration::ZERO;
        assert!(problems(|c| c.leader_election("le", &value)).is_empty());
    }

    #[test]
    fn servers_need_ip_bind_addresses_and_distinct_ports() {
        let servers = ServerConfiguration {
            health_probes: Server {
                bind_address: "localhost".into(),
                port: 80,
                free_port: false,
            },
            metrics: Server {
                bind_address: "localhost".into(),
                port: 80,
                free_port: true,
            },
        };
        assert_eq!(
            problems(|c| c.servers("server", &servers)),
            [
                "server.healthProbes.bindAddress: \"localhost\" is not an IP address",
                "server.metrics.freePort: asks for any free port but port is 80; set one of them",
                "server.metrics.bindAddress: \"localhost\" is not an IP address",
                "server.metrics.port: must differ from healthProbes.port",
            ]
        );
    }

    #[test]
    fn condition_thresholds_need_type_positive_duration_and_no_duplicates() {
        let thresholds = vec![
            ConditionThreshold {
                condition_type: "A".into(),
                duration: Duration::ZERO,
            },
            ConditionThreshold {
                condition_type: String::new(),
                duration: Duration::from_secs(1),
            },
            ConditionThreshold {
                condition_type: "A".into(),
                duration: Duration::from_secs(1),
            },
        ];
        assert_eq!(
            problems(|c| c.condition_thresholds("t", &thresholds)),
            [
                "t[0].duration: must be > 0",
                "t[1].type: required",
                "t[2].type: duplicate condition type \"A\""
            ]
        );
    }

    #[test]
    fn secret_reference_needs_name_and_namespace() {
        let reference = SecretReference::default();
        assert_eq!(
            problems(|c| c.secret_reference("s", &reference)),
            ["s.name: required", "s.namespace: required"]
        );
    }

    #[test]
    fn dns_names_follow_rfc_1123() {
        for good in ["a", "seed-1", "a.b-c.d"] {
            assert!(
                problems(|c| c.dns_subdomain("n", good)).is_empty(),
                "{good}"
            );
        }
        for bad in ["", "-a", "a-", "A", "a_b", "a..b"] {
            assert_eq!(problems(|c| c.dns_subdomain("n", bad)).len(), 1, "{bad}");
        }
        assert_eq!(problems(|c| c.dns_label("n", "a.b")).len(), 1);
    }

    #[test]
    fn rate_limits_must_not_be_negative() {
        assert_eq!(
            problems(|c| c.rate_limits("conn", -1.0, -1)),
            [
                "conn.qps: must be a non-negative number",
                "conn.burst: must not be negative"
            ]
        );
    }
}
