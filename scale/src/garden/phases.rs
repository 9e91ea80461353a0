//! The phases of a garden run — CSRs, seeds, shoots, registrations, registration changes, seed
//! expiry — and what they measured.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use seedlet_api::core::ControllerRegistration;
use seedlet_bootstrap::csr::{PreparedRequest, Subject};
use seedlet_landscape::files;
use serde_json::json;

use super::GardenOptions;
use super::landscape::GardenLandscape;
use super::report::{GardenCounts, GardenLost, GardenParameters, GardenReport};
use super::seeds::{Renewals, SimulatedSeed, seed_name};
use crate::process::Sample;
use crate::report::{AgentUsage, Machine};
use crate::stats::{Latency, round2};
use crate::workload;

/// How often conditions are polled.
const POLL: Duration = Duration::from_millis(50);
/// How long the first CSR waits for the seed authorizer's caches.
const AUTHORIZER_SYNC_TIMEOUT: Duration = Duration::from_secs(30);
/// Seeds connected and registered at once.
const REGISTER_CONCURRENCY: usize = 32;

/// What the phases measured, before it becomes a [`GardenReport`].
pub struct Measured {
    csr_approval: Vec<Duration>,
    csr_issued: Vec<Duration>,
    created: Vec<Duration>,
    changed: Vec<Duration>,
    unknown: Vec<Duration>,
    renewals: Renewals,
    heartbeat_s: f64,
    steady_from_s: f64,
    usage: (Vec<Sample>, f64),
    counts: GardenCounts,
    lost: GardenLost,
}

/// Runs the phases on a started garden.
pub async fn drive(
    landscape: &mut GardenLandscape,
    options: &GardenOptions,
) -> Result<Measured, Error> {
    let timeout = options.phase_timeout;
    let admin = landscape.garden.client();
    let mut lost = GardenLost::default();
    let started = landscape
        .controller
        .as_ref()
        .map_or_else(Instant::now, crate::process::MeasuredProcess::started);

    // CSRs with the bootstrap token → approved → issued.
    let names = submit_csrs(landscape, options.csrs).await?;
    let requests = landscape.observers.requests.clone();
    wait(landscape, timeout, || {
        names.iter().all(|(name, _)| requests.get(name).1.is_some())
    })
    .await?;
    let (mut csr_approval, mut csr_issued) = (Vec::new(), Vec::new());
    for (name, created) in &names {
        match requests.get(name) {
            (Some(approved), Some(issued)) => {
                csr_approval.push(approved.saturating_duration_since(*created));
                csr_issued.push(issued.saturating_duration_since(*created));
            }
            _ => lost.csrs += 1,
        }
    }

    // Seeds register, then beat every lease period, spread over the period.
    let renewals = Renewals::default();
    let heartbeat_started = Instant::now();
    let seeds = register_seeds(landscape, options, &renewals).await?;

    // Shoots spread over the seeds.
    let seed_names: Vec<String> = seeds.iter().map(|s| s.name.clone()).collect();
    create_shoots(&admin, options.shoots, &seed_names).await?;

    // Registrations → an installation per seed each (the provider registration too).
    let steady_from_s = started.elapsed().as_secs_f64();
    let created_at = create_registrations(&admin, options.registrations).await?;
    let expected = seeds.len() * (options.registrations + 1);
    let installations = landscape.observers.installations.clone();
    wait(landscape, timeout, || installations.count() >= expected).await?;
    let mut created = Vec::new();
    for (registration, at) in &created_at {
        let seen = installations.of_registration(registration);
        created.extend(
            seen.values()
                .map(|s| s.first.saturating_duration_since(*at)),
        );
    }
    lost.installations = expected.saturating_sub(installations.count());

    // Registration spec changes → every seed's installation gets the new hash.
    let mut changed = Vec::new();
    for change in 0..options.registration_changes {
        let name = workload::registration_name(change);
        let before = installations.of_registration(&name);
        let at = change_registration(&admin, &name, change).await?;
        let updated = |seen: &std::collections::BTreeMap<String, super::observe::Seen>| {
            seen.iter()
                .filter(|(seed, now)| before.get(*seed).is_some_and(|old| old.hash != now.hash))
                .count()
        };
        wait(landscape, timeout, || {
            updated(&installations.of_registration(&name)) >= before.len()
        })
        .await?;
        let seen = installations.of_registration(&name);
        lost.installation_updates += before.len().saturating_sub(updated(&seen));
        changed.extend(
            seen.iter()
                .filter(|(seed, now)| before.get(*seed).is_some_and(|old| old.hash != now.hash))
                .map(|(_, now)| now.hash_since.saturating_duration_since(at)),
        );
    }

    // Heartbeats stop → GardenletReady Unknown after monitorPeriod.
    let expiring: Vec<&SimulatedSeed> = seeds.iter().rev().take(options.expiring_seeds).collect();
    for seed in &expiring {
        seed.stop();
    }
    let expiring_names: BTreeSet<String> = expiring.iter().map(|s| s.name.clone()).collect();
    let unknowns = landscape.observers.unknowns.clone();
    let lifecycle_timeout = options.monitor_period * 3 + Duration::from_secs(30);
    wait(landscape, lifecycle_timeout, || {
        let seen = unknowns.snapshot();
        expiring_names.iter().all(|name| seen.contains_key(name))
    })
    .await?;
    let seen = unknowns.snapshot();
    let mut unknown = Vec::new();
    for name in &expiring_names {
        match (seen.get(name), renewals.last_renewed(name)) {
            (Some(at), Some(renewed)) => {
                unknown.push(at.duration_since(renewed).unsigned_abs());
            }
            _ => lost.unknown_transitions += 1,
        }
    }
    lost.false_unknowns = seen
        .keys()
        .filter(|name| !expiring_names.contains(*name))
        .count();
    let (failures, last_error) = renewals.failures();
    lost.lease_renewal_failures = failures;
    lost.last_renewal_error = last_error;
    let heartbeat_s = heartbeat_started.elapsed().as_secs_f64();

    let process = landscape.controller.as_ref();
    let samples = process
        .map(crate::process::MeasuredProcess::samples)
        .unwrap_or_default();
    let peak = process
        .and_then(crate::process::MeasuredProcess::peak_rss_mib)
        .unwrap_or_default();
    let counts = GardenCounts {
        installations_expected: expected,
        installations_seen: installations.count(),
        garden_requests: landscape.garden.request_counts().values().sum(),
        ..GardenCounts::default()
    };
    Ok(Measured {
        csr_approval,
        csr_issued,
        created,
        changed,
        unknown,
        renewals,
        heartbeat_s,
        steady_from_s,
        usage: (samples, peak),
        counts,
        lost,
    })
}

use crate::Error;

impl Measured {
    /// The report of the run.
    pub fn into_report(self, options: &GardenOptions, load_at_start: f64) -> GardenReport {
        let (samples, peak) = self.usage;
        let renewal_latencies = self.renewals.latencies();
        let counts = GardenCounts {
            lease_renewals: renewal_latencies.len(),
            lease_renewals_per_second: round2(
                renewal_latencies.len() as f64 / self.heartbeat_s.max(f64::EPSILON),
            ),
            ..self.counts
        };
        GardenReport {
            machine: Machine {
                cpus: std::thread::available_parallelism().map_or(1, usize::from),
                load_at_start,
                version: env!("CARGO_PKG_VERSION").to_owned(),
            },
            parameters: GardenParameters {
                garden_binary: options.garden_binary.display().to_string(),
                seeds: options.seeds,
                registrations: options.registrations,
                shoots: options.shoots,
                csrs: options.csrs,
                registration_changes: options.registration_changes,
                expiring_seeds: options.expiring_seeds,
                lease_period_s: options.lease_period.as_secs_f64(),
                monitor_period_s: options.monitor_period.as_secs_f64(),
            },
            garden_controller: AgentUsage::from_samples(samples, peak, self.steady_from_s),
            csr_approval: Latency::from_samples(&self.csr_approval),
            csr_issued: Latency::from_samples(&self.csr_issued),
            registration_to_installations: Latency::from_samples(&self.created),
            registration_change_to_installations: Latency::from_samples(&self.changed),
            lease_renewal_to_unknown: Latency::from_samples(&self.unknown),
            lease_renewal_request: Latency::from_samples(&renewal_latencies),
            counts,
            lost: self.lost,
            goals: Vec::new(),
        }
        .with_goals()
    }
}

/// Polls `check` until it holds or `timeout` passes (then the run goes on and counts what is
/// missing); fails only when the garden controller died.
async fn wait<F: FnMut() -> bool>(
    landscape: &mut GardenLandscape,
    timeout: Duration,
    mut check: F,
) -> Result<bool, Error> {
    let started = Instant::now();
    loop {
        if check() {
            return Ok(true);
        }
        landscape.ensure_running()?;
        if started.elapsed() > timeout {
            tracing::warn!(?timeout, "a garden bench phase timed out");
            return Ok(false);
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Creates `count` seed client CSRs with the bootstrap token, as agents bootstrapping do.
async fn submit_csrs(
    landscape: &GardenLandscape,
    count: usize,
) -> Result<Vec<(String, Instant)>, Error> {
    let text = files::bootstrap_kubeconfig(
        &landscape.garden.endpoint(),
        &landscape.garden.ca_cert_pem(),
        &landscape.token.bearer(),
    );
    let kubeconfig: kube::config::Kubeconfig = serde_yaml::from_str(&text).map_err(Error::Yaml)?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .map_err(|error| Error::Workload {
            what: format!("bootstrap kubeconfig: {error}"),
        })?;
    let client = kube::Client::try_from(config).map_err(|source| Error::Kube {
        what: "build the bootstrap client".to_owned(),
        source,
    })?;
    let api: Api<CertificateSigningRequest> = Api::all(client);
    let mut names = Vec::with_capacity(count);
    for index in 0..count {
        let subject = Subject::seed(&seed_name(index)).map_err(|error| Error::Workload {
            what: format!("CSR subject: {error}"),
        })?;
        let request = PreparedRequest::generate(&subject).map_err(|error| Error::Workload {
            what: format!("CSR: {error}"),
        })?;
        // The first request waits for the seed authorizer's caches (it refuses until synced).
        let first_try = Instant::now();
        let created = loop {
            let created = Instant::now();
            match api
                .create(&PostParams::default(), &request.object(None))
                .await
            {
                Ok(_) => break created,
                Err(kube::Error::Api(status))
                    if index == 0
                        && status.code == 403
                        && status.message.contains("503")
                        && first_try.elapsed() < AUTHORIZER_SYNC_TIMEOUT =>
                {
                    tokio::time::sleep(POLL).await;
                }
                Err(source) => {
                    return Err(Error::Kube {
                        what: format!("create CSR {}", request.name),
                        source,
                    });
                }
            }
        };
        names.push((request.name, created));
    }
    Ok(names)
}

/// Connects and registers the seeds; each starts beating right after its registration, seed
/// `i` of `n` offset by `i/n` of the period so that the renewals spread evenly.
async fn register_seeds(
    landscape: &GardenLandscape,
    options: &GardenOptions,
    renewals: &Renewals,
) -> Result<Vec<SimulatedSeed>, Error> {
    use futures::{StreamExt, TryStreamExt};
    let garden = &landscape.garden;
    let stop = &landscape.stop;
    let count = options.seeds;
    let period = options.lease_period;
    futures::stream::iter(0..count)
        .map(|index| async move {
            let seed = SimulatedSeed::connect(garden, seed_name(index), stop).await?;
            seed.register(renewals).await?;
            let offset = period.mul_f64(index as f64 / count.max(1) as f64);
            seed.heartbeat(period, offset, renewals.clone());
            Ok::<_, Error>(seed)
        })
        .buffered(REGISTER_CONCURRENCY)
        .try_collect()
        .await
}

/// The cloud profile, the projects and `count` shoots, shoot `i` on seed `i mod seeds`.
async fn create_shoots(garden: &kube::Client, count: usize, seeds: &[String]) -> Result<(), Error> {
    let shoots: Vec<workload::ShootName> = (0..count).map(workload::ShootName::new).collect();
    crate::landscape::create_projects(garden, &shoots).await?;
    workload::create_all(
        garden,
        shoots
            .iter()
            .enumerate()
            .map(|(index, shoot)| workload::shoot(shoot, &seeds[index % seeds.len()]))
            .collect(),
    )
    .await
}

/// Creates the deployments, then the provider registration and `count` registrations (policy
/// Always) one by one; returns when each registration was created.
async fn create_registrations(
    garden: &kube::Client,
    count: usize,
) -> Result<Vec<(String, Instant)>, Error> {
    let (deployments, registrations): (Vec<_>, Vec<_>) =
        std::iter::once(workload::provider_registration())
            .chain((0..count).map(workload::registration))
            .unzip();
    workload::create_all(garden, deployments).await?;
    let mut created = Vec::with_capacity(registrations.len());
    for registration in registrations {
        let name = registration["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let at = Instant::now();
        workload::create_all(garden, vec![registration]).await?;
        created.push((name, at));
    }
    Ok(created)
}

/// Changes registration `name`'s spec (its resource's reconcile timeout), which changes its
/// spec hash on every seed's installation; returns when the change was sent.
async fn change_registration(
    garden: &kube::Client,
    name: &str,
    change: usize,
) -> Result<Instant, Error> {
    let api: Api<ControllerRegistration> = Api::all(garden.clone());
    let patch = json!({"spec": {"resources": [
        {"kind": "Extension", "type": name, "reconcileTimeout": format!("{}s", 100 + change)}
    ]}});
    let at = Instant::now();
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|source| Error::Kube {
            what: format!("change ControllerRegistration {name}"),
            source,
        })?;
    Ok(at)
}
