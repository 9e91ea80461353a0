//! The result of a garden run: a JSON document for machines and a short summary for people,
//! with the garden goals of issue 22 checked against what was measured.

use std::fmt::Write as _;

use serde::Serialize;

use crate::report::{AgentUsage, Goal, Machine};
use crate::stats::Latency;

/// Everything a garden run measured.
#[derive(Clone, Debug, Serialize)]
pub struct GardenReport {
    /// The machine the run used.
    pub machine: Machine,
    /// What was created.
    pub parameters: GardenParameters,
    /// The garden controller process (`seedlet garden`).
    pub garden_controller: AgentUsage,
    /// CSR created with a bootstrap token → approved (seen by a watch).
    pub csr_approval: Latency,
    /// CSR created → certificate issued.
    pub csr_issued: Latency,
    /// ControllerRegistration created → its ControllerInstallation on each seed first seen.
    pub registration_to_installations: Latency,
    /// ControllerRegistration spec changed → each seed's installation carries the new
    /// registration-spec hash (the scheduling goal).
    pub registration_change_to_installations: Latency,
    /// Last Lease renewal of a stopped seed → its `GardenletReady=Unknown` seen; the goal is
    /// `monitorPeriod` + 1 s.
    pub lease_renewal_to_unknown: Latency,
    /// Request latency of the simulated seeds' Lease renewals (through the seed authorizer).
    pub lease_renewal_request: Latency,
    /// Counts.
    pub counts: GardenCounts,
    /// What never arrived or went wrong.
    pub lost: GardenLost,
    /// The goals, each checked.
    pub goals: Vec<Goal>,
}

/// What a garden run created.
#[derive(Clone, Debug, Serialize)]
pub struct GardenParameters {
    /// The garden controller binary that ran (`--garden-binary`).
    pub garden_binary: String,
    /// Simulated seeds.
    pub seeds: usize,
    /// ControllerRegistrations with policy Always (plus one OnDemand provider registration).
    pub registrations: usize,
    /// Shoots spread over the seeds.
    pub shoots: usize,
    /// CSRs submitted with a bootstrap token.
    pub csrs: usize,
    /// Registration spec changes.
    pub registration_changes: usize,
    /// Seeds whose heartbeat is stopped.
    pub expiring_seeds: usize,
    /// The simulated seeds' Lease period, seconds.
    pub lease_period_s: f64,
    /// The garden controller's `monitorPeriod`, seconds.
    pub monitor_period_s: f64,
}

/// Counts of a garden run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GardenCounts {
    /// ControllerInstallations expected (seeds × (registrations + 1)).
    pub installations_expected: usize,
    /// ControllerInstallations seen.
    pub installations_seen: usize,
    /// Lease renewals written.
    pub lease_renewals: usize,
    /// Lease renewals per second during the run.
    pub lease_renewals_per_second: f64,
    /// Requests the garden sandbox served, all users.
    pub garden_requests: u64,
}

/// What did not arrive or went wrong.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GardenLost {
    /// Installations never written.
    pub installations: usize,
    /// Installations that never got a changed registration's new hash.
    pub installation_updates: usize,
    /// CSRs never approved or never issued.
    pub csrs: usize,
    /// Stopped seeds never seen `Unknown`.
    pub unknown_transitions: usize,
    /// Seeds seen `Unknown` although their heartbeat ran.
    pub false_unknowns: usize,
    /// Failed Lease renewals.
    pub lease_renewal_failures: u64,
    /// The last renewal error, for debugging.
    pub last_renewal_error: Option<String>,
}

impl GardenLost {
    /// Whether nothing was lost.
    pub fn is_empty(&self) -> bool {
        self.installations == 0
            && self.installation_updates == 0
            && self.csrs == 0
            && self.unknown_transitions == 0
            && self.false_unknowns == 0
            && self.lease_renewal_failures == 0
    }
}

impl GardenReport {
    /// Checks the garden goals against the measurements.
    pub fn with_goals(mut self) -> Self {
        let lifecycle_ms = (self.parameters.monitor_period_s + 1.0) * 1e3;
        let change = &self.registration_change_to_installations;
        let unknown = &self.lease_renewal_to_unknown;
        let rss = self.garden_controller.rss_peak_mib;
        let lost = &self.lost;
        self.goals = vec![
            crate::report::goal(
                "registration change → all ControllerInstallations p99",
                "< 1 s",
                format!("{:.1} ms ({} samples)", change.p99_ms, change.samples),
                change.samples > 0 && change.p99_ms < 1000.0,
            ),
            crate::report::goal(
                "lease renewal → GardenletReady Unknown (max)",
                &format!("≤ monitorPeriod + 1 s = {lifecycle_ms:.0} ms"),
                format!("{:.0} ms ({} samples)", unknown.max_ms, unknown.samples),
                unknown.samples > 0 && unknown.max_ms <= lifecycle_ms,
            ),
            crate::report::goal(
                "garden controller RSS (peak)",
                "≤ 128 MiB",
                format!("{rss:.1} MiB"),
                rss > 0.0 && rss <= 128.0,
            ),
            crate::report::goal(
                "lost",
                "0",
                format!(
                    "{} installations, {} updates, {} CSRs, {} transitions, {} false Unknown, {} renewals",
                    lost.installations,
                    lost.installation_updates,
                    lost.csrs,
                    lost.unknown_transitions,
                    lost.false_unknowns,
                    lost.lease_renewal_failures
                ),
                lost.is_empty(),
            ),
        ];
        self
    }

    /// A few lines for people.
    pub fn summary(&self) -> String {
        let mut text = String::new();
        let p = &self.parameters;
        let _ = writeln!(
            text,
            "garden run: {} seeds (Lease every {:.0} s), {} registrations, {} shoots, {} CSRs ({} CPUs, load {:.2} at start)",
            p.seeds,
            p.lease_period_s,
            p.registrations,
            p.shoots,
            p.csrs,
            self.machine.cpus,
            self.machine.load_at_start
        );
        let g = &self.garden_controller;
        let _ = writeln!(
            text,
            "  garden controller ({}): {}, CPU {:.1} s",
            p.garden_binary,
            g.rss_summary(),
            g.cpu_seconds
        );
        crate::report::write_latencies(
            &mut text,
            &[
                ("CSR → approved", &self.csr_approval),
                ("CSR → certificate", &self.csr_issued),
                (
                    "registration created → installations",
                    &self.registration_to_installations,
                ),
                (
                    "registration changed → installations",
                    &self.registration_change_to_installations,
                ),
                ("last renewal → Unknown", &self.lease_renewal_to_unknown),
                ("Lease renewal request", &self.lease_renewal_request),
            ],
        );
        let c = &self.counts;
        let _ = writeln!(
            text,
            "  installations {}/{}, {} renewals ({:.1}/s), {} garden requests",
            c.installations_seen,
            c.installations_expected,
            c.lease_renewals,
            c.lease_renewals_per_second,
            c.garden_requests
        );
        crate::report::write_goals(&mut text, &self.goals);
        text
    }
}
