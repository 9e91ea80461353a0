//! A controller as one type against a sandbox API server: `controller::run` reconciles every
//! object of its triggers, measures each reconcile under the controller's name, retries a failure
//! after the reconciler's delay, retries a lost write race at once whatever that delay says, and
//! charges the reconcile's writes to the controller's budget.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::PostParams;
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_runtime::cache::SharedCaches;
use seedlet_runtime::controller::{self, Reason, Reconciler, Triggers};
use seedlet_runtime::metrics::Metrics;
use seedlet_sandbox::Sandbox;
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
enum Error {
    #[error("the first attempt fails")]
    FirstAttempt,
    #[error("lost a write race")]
    Conflict(#[source] kube::Error),
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::FirstAttempt => "FirstAttempt",
            Error::Conflict(_) => "Conflict",
        }
    }
}

/// Fails the first reconcile of `retried` (retry after 100 ms) and of `raced` (a 409; its delay
/// is an hour, so only the at-once retry can bring it back within the test), then succeeds.
#[derive(Default)]
struct Recorder {
    attempts: Mutex<Vec<(String, &'static str)>>,
}

impl Reconciler for Recorder {
    type Object = ConfigMap;
    type Error = Error;
    const NAME: &'static str = "recorder";

    async fn reconcile(&self, object: Arc<ConfigMap>) -> Result<Action, Error> {
        let name = object.name_any();
        let budget = seedlet_runtime::budget::current_controller();
        let first = {
            let mut attempts = self.attempts.lock().expect("attempts");
            let first = !attempts.iter().any(|(seen, _)| *seen == name);
            attempts.push((name.clone(), budget));
            first
        };
        match name.as_str() {
            "retried" if first => Err(Error::FirstAttempt),
            "raced" if first => Err(Error::Conflict(kube::Error::Api(
                kube::core::Status::failure("the object has been modified", "Conflict")
                    .with_code(409)
                    .boxed(),
            ))),
            _ => Ok(Action::await_change()),
        }
    }

    fn retry_after(&self, error: &Error) -> Duration {
        match error {
            Error::FirstAttempt => Duration::from_millis(100),
            Error::Conflict(_) => Duration::from_secs(3600),
        }
    }
}

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::new()),
        ..ConfigMap::default()
    }
}

#[tokio::test]
async fn run_reconciles_measures_and_retries_as_the_runtime_decides() {
    let sandbox = Sandbox::builder().start().await.expect("sandbox");
    let client = sandbox.client();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for name in ["plain", "retried", "raced"] {
        maps.create(&PostParams::default(), &config_map(name))
            .await
            .expect("create");
    }
    let stop = CancellationToken::new();
    let caches = SharedCaches::new(client.clone(), &stop);
    let informer = caches.all::<ConfigMap>();
    let recorder = Arc::new(Recorder::default());
    let metrics = Arc::new(Metrics::new("test"));
    let running = tokio::spawn(controller::run(
        Triggers::for_stream(informer.applied_objects(), informer.store()),
        recorder.clone(),
        stop.clone(),
        metrics.clone(),
    ));

    let attempts_of = |name: &str| {
        recorder
            .attempts
            .lock()
            .unwrap()
            .iter()
            .filter(|(seen, _)| seen == name)
            .count()
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while ["plain", "retried", "raced"]
        .iter()
        .any(|name| attempts_of(name) < if *name == "plain" { 1 } else { 2 })
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "not every object reconciled (again) within 10 s: {:?}",
            recorder.attempts.lock().expect("attempts")
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the controller stops when its token is cancelled")
        .expect("controller task");

    let attempts = recorder.attempts.lock().expect("attempts").clone();
    assert!(
        attempts.iter().all(|(_, budget)| *budget == "recorder"),
        "writes of a reconcile are charged to the controller: {attempts:?}"
    );
    assert_eq!(attempts_of("plain"), 1, "a success waits for a change");
    let text = metrics.encode(jiff::Timestamp::now());
    let count = |series: &str| -> f64 {
        let line = text
            .lines()
            .find(|line| line.contains(&format!("{series}{{controller=\"recorder\"}}")))
            .unwrap_or_else(|| panic!("no {series} of recorder in:\n{text}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert_eq!(count("reconcile_total"), 5.0, "every reconcile is counted");
    assert_eq!(count("reconcile_errors_total"), 2.0, "and every failure");
}
