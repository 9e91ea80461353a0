//! The result of a scale run: a JSON document for machines and a short summary for people,
//! with every goal of the project checked against what was measured.

use std::fmt::Write as _;

use serde::Serialize;

use crate::process::Sample;
use crate::stats::Latency;

/// Everything a scale run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The machine the run used.
    pub machine: Machine,
    /// What was created and for how long it churned.
    pub parameters: Parameters,
    /// Time from agent start to its certificate kubeconfig being stored (bootstrap via CSR).
    pub bootstrap_ms: f64,
    /// Time from agent start to the Seed's GardenletReady condition being True.
    pub ready_ms: f64,
    /// The agent process.
    pub agent: AgentUsage,
    /// ControllerInstallation first seen in the garden → its ManagedResource first seen in the seed.
    pub installation_to_managed_resource: Latency,
    /// The first states of all extension objects, written as one burst → reflected in the
    /// ShootStates (the initial sync).
    pub initial_states_to_shoot_state: Latency,
    /// During the churn: extension `.status.state` written in the seed → the ShootState in the
    /// garden reflects it.
    pub extension_state_to_shoot_state: Latency,
    /// Shoot label changed in the garden → the Cluster's embedded shoot reflects it.
    pub shoot_change_to_cluster: Latency,
    /// Distance of each Lease renewal interval from the configured period.
    pub lease_drift: Latency,
    /// Writes and requests.
    pub traffic: Traffic,
    /// Changes that never arrived.
    pub lost: Lost,
    /// The project's goals, each checked.
    pub goals: Vec<Goal>,
}

/// The machine a run used.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// Logical CPUs.
    pub cpus: usize,
    /// The 1-minute load average when the run started.
    pub load_at_start: f64,
    /// `seedlet` version.
    pub version: String,
}

/// What a run created.
#[derive(Clone, Debug, Serialize)]
pub struct Parameters {
    /// The agent binary that ran (`--agent-binary`).
    pub agent_binary: String,
    /// Shoots (with Cluster sync).
    pub shoots: usize,
    /// ControllerRegistrations with charts (policy Always).
    pub registrations: usize,
    /// Extension objects with a changing `.status.state`.
    pub extension_objects: usize,
    /// Seconds of continuous churn after warm-up.
    pub churn_seconds: f64,
    /// Extension state changes per second during churn.
    pub state_changes_per_second: u32,
}

/// Memory and CPU of the agent process.
#[derive(Clone, Debug, Serialize)]
pub struct AgentUsage {
    /// Peak resident set size (`VmHWM`).
    pub rss_peak_mib: f64,
    /// Median resident set size after warm-up.
    pub rss_steady_mib: f64,
    /// Median RSS of the last quarter of the churn minus that of the first quarter; near zero
    /// when memory does not grow.
    pub rss_growth_mib: f64,
    /// Median anonymous RSS (heap, stacks) after warm-up.
    pub rss_anon_steady_mib: f64,
    /// Median file-backed RSS (the binary's pages in use) after warm-up.
    pub rss_file_steady_mib: f64,
    /// CPU seconds (user + system) for the whole run.
    pub cpu_seconds: f64,
    /// RSS and CPU over time.
    pub samples: Vec<Sample>,
}

impl AgentUsage {
    /// The usage of a process sampled as `samples` with peak RSS `rss_peak_mib`; steady values
    /// from the samples taken at or after `steady_from_s`.
    pub fn from_samples(samples: Vec<Sample>, rss_peak_mib: f64, steady_from_s: f64) -> Self {
        let (rss_steady_mib, rss_growth_mib) = steady_rss(&samples, steady_from_s);
        let steady_median =
            |part: fn(&Sample) -> f64| median(&steady_values(&samples, steady_from_s, part));
        Self {
            rss_peak_mib,
            rss_steady_mib,
            rss_growth_mib,
            rss_anon_steady_mib: steady_median(|sample| sample.rss_anon_mib),
            rss_file_steady_mib: steady_median(|sample| sample.rss_file_mib),
            cpu_seconds: samples.last().map(|s| s.cpu_s).unwrap_or_default(),
            samples,
        }
    }

    /// Peak and steady RSS, the steady split into heap and binary, for the summaries.
    pub fn rss_summary(&self) -> String {
        format!(
            "RSS peak {:.1} MiB, steady {:.1} MiB (heap {:.1}, binary {:.1})",
            self.rss_peak_mib,
            self.rss_steady_mib,
            self.rss_anon_steady_mib,
            self.rss_file_steady_mib
        )
    }
}

/// Writes and API requests.
#[derive(Clone, Debug, Serialize)]
pub struct Traffic {
    /// Extension state changes the harness wrote.
    pub state_changes_written: u64,
    /// ShootState versions the harness saw (each one agent write).
    pub shoot_state_writes: u64,
    /// Requests the agent sent to the garden.
    pub garden_requests: u64,
    /// Requests the agent sent to the seed.
    pub seed_requests: u64,
    /// Garden requests per second over the whole run.
    pub garden_requests_per_second: f64,
    /// Seed requests per second over the whole run.
    pub seed_requests_per_second: f64,
}

/// Changes that did not arrive before the run ended.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Lost {
    /// Extension objects whose last state is not in the ShootState.
    pub extension_states: usize,
    /// Clusters that do not show their shoot's last change.
    pub clusters: usize,
    /// ControllerInstallations without a ManagedResource.
    pub managed_resources: usize,
    /// Some of the keys, for debugging.
    pub examples: Vec<String>,
}

impl Lost {
    /// Whether nothing was lost.
    pub fn is_empty(&self) -> bool {
        self.extension_states == 0 && self.clusters == 0 && self.managed_resources == 0
    }
}

/// One goal and whether the run met it.
#[derive(Clone, Debug, Serialize)]
pub struct Goal {
    /// What is measured.
    pub name: String,
    /// The goal, human readable.
    pub goal: String,
    /// The measured value, human readable.
    pub measured: String,
    /// Whether the goal was met.
    pub met: bool,
}

impl Report {
    /// Checks the project's goals against the measurements.
    pub fn with_goals(mut self) -> Self {
        let rss_goal_mib = agent_rss_goal_mib(self.parameters.shoots);
        let mut goals = vec![
            goal(
                "agent RSS (peak)",
                &format!("≤ {rss_goal_mib:.0} MiB"),
                format!("{:.1} MiB", self.agent.rss_peak_mib),
                self.agent.rss_peak_mib <= rss_goal_mib,
            ),
            goal(
                "ControllerInstallation → ManagedResource p99",
                "< 250 ms",
                format!("{:.1} ms", self.installation_to_managed_resource.p99_ms),
                self.installation_to_managed_resource.samples > 0
                    && self.installation_to_managed_resource.p99_ms < 250.0,
            ),
            goal(
                "lease drift p99",
                "< 50 ms",
                format!("{:.1} ms", self.lease_drift.p99_ms),
                self.lease_drift.samples > 0 && self.lease_drift.p99_ms < 50.0,
            ),
            goal(
                "bootstrap",
                "< 1 s",
                format!("{:.0} ms", self.bootstrap_ms),
                self.bootstrap_ms < 1000.0,
            ),
            goal(
                "lost updates",
                "0",
                format!(
                    "{} states, {} clusters, {} managed resources",
                    self.lost.extension_states, self.lost.clusters, self.lost.managed_resources
                ),
                self.lost.is_empty(),
            ),
        ];
        if self.parameters.extension_objects > 0 {
            goals.push(goal(
                "extension state → ShootState p99",
                "< 1 s",
                format!("{:.1} ms", self.extension_state_to_shoot_state.p99_ms),
                self.extension_state_to_shoot_state.samples > 0
                    && self.extension_state_to_shoot_state.p99_ms < 1000.0,
            ));
        }
        self.goals = goals;
        self
    }

    /// A few lines for people.
    pub fn summary(&self) -> String {
        let mut text = String::new();
        let p = &self.parameters;
        let _ = writeln!(
            text,
            "scale run: {} shoots, {} registrations, {} extension objects, {:.0} s churn at {} changes/s ({} CPUs, load {:.2} at start)",
            p.shoots,
            p.registrations,
            p.extension_objects,
            p.churn_seconds,
            p.state_changes_per_second,
            self.machine.cpus,
            self.machine.load_at_start
        );
        let _ = writeln!(
            text,
            "  bootstrap {:.0} ms, Ready {:.0} ms",
            self.bootstrap_ms, self.ready_ms
        );
        let a = &self.agent;
        let _ = writeln!(
            text,
            "  agent ({}): {}, growth {:+.1} MiB, CPU {:.1} s",
            p.agent_binary,
            a.rss_summary(),
            a.rss_growth_mib,
            a.cpu_seconds
        );
        write_latencies(
            &mut text,
            &[
                (
                    "ControllerInstallation → ManagedResource",
                    &self.installation_to_managed_resource,
                ),
                (
                    "first states (one burst) → ShootState",
                    &self.initial_states_to_shoot_state,
                ),
                (
                    "extension state → ShootState (churn)",
                    &self.extension_state_to_shoot_state,
                ),
                ("shoot change → Cluster", &self.shoot_change_to_cluster),
                ("lease drift", &self.lease_drift),
            ],
        );
        let t = &self.traffic;
        let _ = writeln!(
            text,
            "  writes: {} state changes → {} ShootState writes; agent requests: garden {:.1}/s, seed {:.1}/s",
            t.state_changes_written,
            t.shoot_state_writes,
            t.garden_requests_per_second,
            t.seed_requests_per_second
        );
        write_goals(&mut text, &self.goals);
        text
    }
}

/// One line per latency: `name: p50, p99, max (samples)`.
pub(crate) fn write_latencies(text: &mut String, latencies: &[(&str, &Latency)]) {
    for (name, latency) in latencies {
        let _ = writeln!(
            text,
            "  {name}: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} samples)",
            latency.p50_ms, latency.p99_ms, latency.max_ms, latency.samples
        );
    }
}

/// One line per goal: `[met|MISSED] name: measured (goal …)`.
pub(crate) fn write_goals(text: &mut String, goals: &[Goal]) {
    for goal in goals {
        let _ = writeln!(
            text,
            "  [{}] {}: {} (goal {})",
            if goal.met { "met" } else { "MISSED" },
            goal.name,
            goal.measured,
            goal.goal
        );
    }
}

/// The agent's RSS goal for a seed with `shoots` shoots: 16 MiB up to the default run's 250
/// shoots, 64 MiB up to ten times that (the slim agent's two goals).
fn agent_rss_goal_mib(shoots: usize) -> f64 {
    if shoots <= 250 { 16.0 } else { 64.0 }
}

pub(crate) fn goal(name: &str, target: &str, measured: String, met: bool) -> Goal {
    Goal {
        name: name.to_owned(),
        goal: target.to_owned(),
        measured,
        met,
    }
}

/// Median RSS of the samples taken at or after `from_s`, and the growth between the first and
/// the last quarter of them.
pub fn steady_rss(samples: &[Sample], from_s: f64) -> (f64, f64) {
    let after = steady_values(samples, from_s, |sample| sample.rss_mib);
    if after.is_empty() {
        return (0.0, 0.0);
    }
    let quarter = (after.len() / 4).max(1);
    let first = median(&after[..quarter]);
    let last = median(&after[after.len() - quarter..]);
    (
        crate::stats::round2(median(&after)),
        crate::stats::round2(last - first),
    )
}

/// `part` of the samples taken at or after `from_s`, in time order.
fn steady_values(samples: &[Sample], from_s: f64, part: fn(&Sample) -> f64) -> Vec<f64> {
    samples
        .iter()
        .filter(|sample| sample.at_s >= from_s)
        .map(part)
        .collect()
}

/// The median (upper of the two middle values) of `values`; 0 for none.
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at_s: f64, rss_mib: f64) -> Sample {
        Sample {
            at_s,
            rss_mib,
            rss_anon_mib: rss_mib,
            rss_file_mib: 0.0,
            cpu_s: 0.0,
        }
    }

    #[test]
    fn steady_rss_ignores_warm_up_and_reports_growth() {
        let samples: Vec<Sample> = (0..20)
            .map(|i| sample(f64::from(i), if i < 5 { 5.0 } else { 20.0 + f64::from(i) }))
            .collect();
        let (steady, growth) = steady_rss(&samples, 5.0);
        assert_eq!(steady, 32.0);
        assert!(growth > 10.0, "memory grew by {growth}");
        let flat: Vec<Sample> = (0..20).map(|i| sample(f64::from(i), 30.0)).collect();
        assert_eq!(steady_rss(&flat, 0.0), (30.0, 0.0));
        assert_eq!(steady_rss(&[], 0.0), (0.0, 0.0));
    }
}
