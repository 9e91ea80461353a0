//! `seedlet bench garden`: a garden with hundreds of seeds, measuring the garden controller.
//!
//! One garden sandbox; the garden controller as its own process (the slim `seedlet-garden`, or
//! `seedlet garden` of the all-in-one binary, so that its RSS and CPU are its own) serving the
//! seed authorizer and SeedRestriction, which the sandbox calls for every seed request; `S` simulated seeds ([`seeds`]) each renewing its Lease every
//! 2 s with its own seed identity; shoots spread over the seeds; `M` ControllerRegistrations
//! with policy Always (→ `S × (M + 1)` ControllerInstallations). Measured: CSR approval,
//! registration created/changed → every seed's installation written, a stopped seed's last
//! renewal → `GardenletReady=Unknown`, and the controller's RSS and CPU. [`run`] returns a
//! [`GardenReport`].

mod landscape;
mod observe;
mod phases;
mod report;
mod seeds;

use std::path::PathBuf;
use std::time::Duration;

pub use report::{GardenCounts, GardenLost, GardenParameters, GardenReport};

use crate::Error;

/// What a garden run creates.
#[derive(Clone, Debug)]
pub struct GardenOptions {
    /// Simulated seeds (`S`).
    pub seeds: usize,
    /// ControllerRegistrations with policy Always (`M`).
    pub registrations: usize,
    /// Shoots, spread round-robin over the seeds.
    pub shoots: usize,
    /// CSRs submitted with a bootstrap token (approval latency).
    pub csrs: usize,
    /// Registration spec changes, one after another.
    pub registration_changes: usize,
    /// Seeds whose heartbeat is stopped at the end (lifecycle latency).
    pub expiring_seeds: usize,
    /// How often each simulated seed renews its Lease.
    pub lease_period: Duration,
    /// The garden controller's `seedLifecycle.monitorPeriod`.
    pub monitor_period: Duration,
    /// The garden controller's binary: the slim `seedlet-garden` (run as `seedlet-garden
    /// --config`), or any other name as the all-in-one `seedlet` (run as `seedlet garden --config`).
    pub garden_binary: PathBuf,
    /// Where configs, kubeconfigs and the controller log go; a temporary directory when `None`.
    pub dir: Option<PathBuf>,
    /// How long each phase may take before the run fails.
    pub phase_timeout: Duration,
    /// How often the controller's RSS and CPU are sampled.
    pub sample_interval: Duration,
}

impl GardenOptions {
    /// The full run: 500 seeds, 60 registrations, 1000 shoots, 50 CSRs, 5 changes, 10 expiring.
    pub fn full(garden_binary: PathBuf) -> Self {
        Self {
            seeds: 500,
            registrations: 60,
            shoots: 1000,
            csrs: 50,
            registration_changes: 5,
            expiring_seeds: 10,
            lease_period: Duration::from_secs(2),
            monitor_period: Duration::from_secs(10),
            garden_binary,
            dir: None,
            phase_timeout: Duration::from_secs(600),
            sample_interval: Duration::from_millis(500),
        }
    }

    /// The CI run: 12 seeds, 4 registrations, 24 shoots, 4 CSRs, 2 changes, 2 expiring.
    pub fn quick(garden_binary: PathBuf) -> Self {
        Self {
            seeds: 12,
            registrations: 4,
            shoots: 24,
            csrs: 4,
            registration_changes: 2,
            expiring_seeds: 2,
            monitor_period: Duration::from_secs(6),
            phase_timeout: Duration::from_secs(90),
            ..Self::full(garden_binary)
        }
    }

    fn validate(&self) -> Result<(), Error> {
        let problem = if self.seeds == 0 {
            Some("--seeds must be at least 1")
        } else if self.expiring_seeds > self.seeds {
            Some("more expiring seeds than seeds")
        } else if self.registration_changes > self.registrations {
            Some("more registration changes than registrations")
        } else if self.monitor_period <= self.lease_period * 2 {
            Some("monitorPeriod must exceed two Lease periods")
        } else {
            None
        };
        match problem {
            Some(what) => Err(Error::Workload {
                what: what.to_owned(),
            }),
            None => Ok(()),
        }
    }
}

/// Runs the garden scenario described by `options` and reports what it measured.
///
/// # Errors
/// Invalid options, or the first phase that failed; everything started is stopped first.
pub async fn run(options: &GardenOptions) -> Result<GardenReport, Error> {
    options.validate()?;
    let load_at_start = crate::landscape::load_average();
    let mut landscape = landscape::GardenLandscape::start(options).await?;
    let outcome = phases::drive(&mut landscape, options).await;
    let report = outcome.map(|measured| measured.into_report(options, load_at_start));
    landscape.stop().await;
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked_before_anything_starts() {
        let good = GardenOptions::quick(PathBuf::from("seedlet"));
        assert!(good.validate().is_ok());
        for bad in [
            GardenOptions {
                seeds: 0,
                ..good.clone()
            },
            GardenOptions {
                expiring_seeds: good.seeds + 1,
                ..good.clone()
            },
            GardenOptions {
                registration_changes: good.registrations + 1,
                ..good.clone()
            },
            GardenOptions {
                monitor_period: good.lease_period,
                ..good.clone()
            },
        ] {
            assert!(matches!(bad.validate(), Err(Error::Workload { .. })));
        }
    }
}
