//! What `seedlet bench garden` sees in the garden, timestamped when it arrives: every
//! ControllerInstallation with its registration-spec hash, every Seed turning
//! `GardenletReady=Unknown`, and every CertificateSigningRequest being approved and issued. The
//! watches use the harness's admin client; the time is when the harness's watch delivered it.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use futures::StreamExt;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use kube::Api;
use kube::runtime::{WatchStreamExt, watcher};
use seedlet_api::core::{ControllerInstallation, Seed};
use seedlet_api::names::labels;
use tokio_util::sync::CancellationToken;

/// (registration, seed) of an installation.
pub type InstallationKey = (String, String);

/// The installations seen, by (registration, seed).
#[derive(Clone, Default)]
pub struct Installations {
    inner: Arc<Mutex<HashMap<InstallationKey, Seen>>>,
}

/// One installation: when it was first seen, and when each registration hash was first seen.
#[derive(Clone, Debug)]
pub struct Seen {
    /// First sighting.
    pub first: Instant,
    /// The registration-spec hash label now.
    pub hash: String,
    /// When the current hash was first seen.
    pub hash_since: Instant,
}

impl Installations {
    fn lock(&self) -> MutexGuard<'_, HashMap<InstallationKey, Seen>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn saw(&self, installation: &ControllerInstallation) {
        let Some(seed) = installation.seed_name() else {
            return;
        };
        let key = (
            installation.spec.registration_ref.name.clone(),
            seed.to_owned(),
        );
        let hash = installation
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(labels::REGISTRATION_SPEC_HASH))
            .cloned()
            .unwrap_or_default();
        let now = Instant::now();
        let mut seen = self.lock();
        match seen.get_mut(&key) {
            Some(entry) if entry.hash != hash => {
                entry.hash = hash;
                entry.hash_since = now;
            }
            Some(_) => {}
            None => {
                seen.insert(
                    key,
                    Seen {
                        first: now,
                        hash,
                        hash_since: now,
                    },
                );
            }
        }
    }

    /// How many installations were seen.
    pub fn count(&self) -> usize {
        self.lock().len()
    }

    /// The installations of `registration`, by seed.
    pub fn of_registration(&self, registration: &str) -> BTreeMap<String, Seen> {
        self.lock()
            .iter()
            .filter(|((name, _), _)| name == registration)
            .map(|((_, seed), seen)| (seed.clone(), seen.clone()))
            .collect()
    }
}

/// When seeds were seen with `GardenletReady=Unknown` (first time each).
#[derive(Clone, Default)]
pub struct Unknowns {
    inner: Arc<Mutex<BTreeMap<String, jiff::Timestamp>>>,
}

impl Unknowns {
    fn saw(&self, seed: &Seed) {
        let unknown = seed.status.as_ref().is_some_and(|status| {
            status
                .conditions
                .iter()
                .any(|c| c.type_ == "GardenletReady" && c.status.to_string() == "Unknown")
        });
        if let (true, Some(name)) = (unknown, seed.metadata.name.as_ref()) {
            self.inner
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(name.clone())
                .or_insert_with(jiff::Timestamp::now);
        }
    }

    /// Seed → when it was first seen `Unknown`.
    pub fn snapshot(&self) -> BTreeMap<String, jiff::Timestamp> {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// When a CSR was seen approved and when with a certificate.
pub type RequestTimes = (Option<Instant>, Option<Instant>);

/// When CSRs were seen approved and with a certificate.
#[derive(Clone, Default)]
pub struct Requests {
    inner: Arc<Mutex<BTreeMap<String, RequestTimes>>>,
}

impl Requests {
    fn saw(&self, request: &CertificateSigningRequest) {
        let Some(name) = request.metadata.name.clone() else {
            return;
        };
        let status = request.status.as_ref();
        let approved = status
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Approved"));
        let issued = status.is_some_and(|s| s.certificate.is_some());
        let now = Instant::now();
        let mut seen = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = seen.entry(name).or_default();
        if approved && entry.0.is_none() {
            entry.0 = Some(now);
        }
        if issued && entry.1.is_none() {
            entry.1 = Some(now);
        }
    }

    /// CSR name → (approved, issued).
    pub fn get(&self, name: &str) -> RequestTimes {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .copied()
            .unwrap_or_default()
    }
}

/// All observations of a run.
#[derive(Clone, Default)]
pub struct Observers {
    /// ControllerInstallations.
    pub installations: Installations,
    /// Seeds turned `Unknown`.
    pub unknowns: Unknowns,
    /// CSRs.
    pub requests: Requests,
}

impl Observers {
    /// Starts the watches with `garden` (an admin client) until `stop`.
    pub fn start(&self, garden: &kube::Client, stop: &CancellationToken) {
        let installations = self.installations.clone();
        spawn_watch(
            Api::<ControllerInstallation>::all(garden.clone()),
            stop.clone(),
            move |object| installations.saw(object),
        );
        let unknowns = self.unknowns.clone();
        spawn_watch(
            Api::<Seed>::all(garden.clone()),
            stop.clone(),
            move |object| unknowns.saw(object),
        );
        let requests = self.requests.clone();
        spawn_watch(
            Api::<CertificateSigningRequest>::all(garden.clone()),
            stop.clone(),
            move |object| requests.saw(object),
        );
    }
}

fn spawn_watch<K, F>(api: Api<K>, stop: CancellationToken, mut saw: F)
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + Send + 'static,
    F: FnMut(&K) + Send + 'static,
{
    tokio::spawn(async move {
        let mut events = watcher::watcher(api, watcher::Config::default())
            .default_backoff()
            .boxed();
        loop {
            let event = tokio::select! {
                event = events.next() => event,
                () = stop.cancelled() => return,
            };
            match event {
                Some(Ok(watcher::Event::Apply(object) | watcher::Event::InitApply(object))) => {
                    saw(&object);
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => tracing::debug!(error = %error, "bench watch error"),
                None => return,
            }
        }
    });
}
