//! How the agent's garden watches are scoped to its seed, decided once per controller start by
//! asking the garden:
//!
//! - ControllerInstallations by the field selector `spec.seedRef.name=<seed>` (what a garden with
//!   Gardener's seed authorizer demands from a seed), unless the garden cannot select that field
//!   (CRDs without `selectableFields`, Kubernetes < 1.31: 400), then unfiltered and filtered here;
//! - Shoots unfiltered where the garden allows it (RBAC or an authorizer without selector
//!   support, and then independent of the `name.seed.gardener.cloud/<seed>` labels), else by that
//!   label, which gardener-apiserver or `seedlet garden` maintain.
//!
//! A probe the garden does not answer (unreachable, 429, 5xx) is asked again (200 ms doubling to
//! 5 s) until it does: a controller that starts while the garden is down must not settle on an
//! unfiltered watch that the seed authorizer refuses for as long as the process runs (seen on a
//! real garden restarted under a running agent: a 403 WARN from the watcher every few seconds).

use std::future::Future;
use std::time::Duration;

use kube::Api;
use kube::api::ListParams;
use kube::runtime::watcher;
use seedlet_api::core::{ControllerInstallation, Shoot};

/// The label a seed-scoped object of seed `seed` carries (`true`).
pub fn seed_label(seed: &str) -> String {
    seedlet_api::names::labels::seed_name(seed)
}

/// The watch configuration for this seed's ControllerInstallations, and whether the server
/// filters (else the caller filters by `spec.seedRef.name`).
pub async fn installations(garden: &kube::Client, seed: &str) -> watcher::Config {
    let selector = format!("spec.seedRef.name={seed}");
    let api = Api::<ControllerInstallation>::all(garden.clone());
    let params = ListParams::default().fields(&selector).limit(1);
    let probe = answered(|| api.list_metadata(&params)).await;
    match probe {
        Ok(_) => watcher::Config::default().fields(&selector),
        Err(kube::Error::Api(status)) if status.code == 400 => {
            tracing::info!(
                seed,
                "the garden cannot select ControllerInstallations by spec.seedRef.name; watching all of them"
            );
            watcher::Config::default()
        }
        Err(_) => watcher::Config::default(),
    }
}

/// The watch configuration for this seed's Bastions: by the field selector `spec.seedName=<seed>`
/// (which Gardener's seed authorizer demands), unless the garden answers the probe with 400
/// (cannot select that field: unfiltered, the caller filters).
pub async fn bastions(garden: &kube::Client, seed: &str) -> watcher::Config {
    let selector = format!("spec.seedName={seed}");
    let api = Api::<seedlet_api::operations::Bastion>::all(garden.clone());
    let params = ListParams::default().fields(&selector).limit(1);
    let probe = answered(|| api.list_metadata(&params)).await;
    match probe {
        Err(kube::Error::Api(status)) if status.code == 400 => {
            tracing::info!(
                seed,
                "the garden cannot select Bastions by spec.seedName; watching all of them"
            );
            watcher::Config::default()
        }
        // A garden that can select answers with 200 (or, while its authorizer starts, 403/503):
        // only the selected watch can ever be allowed for a seed.
        _ => watcher::Config::default().fields(&selector),
    }
}

/// The watch configuration for Shoots this agent may see.
pub async fn shoots(garden: &kube::Client, seed: &str) -> watcher::Config {
    let api = Api::<Shoot>::all(garden.clone());
    let params = ListParams::default().limit(1);
    let probe = answered(|| api.list_metadata(&params)).await;
    match probe {
        Err(kube::Error::Api(status)) if status.code == 403 => {
            tracing::info!(
                seed,
                "the garden lets this seed list only its own shoots; watching {}=true",
                seed_label(seed)
            );
            watcher::Config::default().labels(&format!("{}=true", seed_label(seed)))
        }
        _ => watcher::Config::default(),
    }
}

/// Whether this agent may list all objects of `K` in the garden (a garden with the seed
/// authorizer refuses unfiltered lists of project-owned kinds such as Projects and
/// NamespacedCloudProfiles; the agent then reads them by name).
pub async fn may_list<K>(garden: &kube::Client) -> bool
where
    K: kube::Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let api = Api::<K>::all(garden.clone());
    let params = ListParams::default().limit(1);
    let probe = answered(|| api.list_metadata(&params)).await;
    !matches!(probe, Err(kube::Error::Api(status)) if status.code == 403)
}

/// First and longest pause between probes the garden did not answer.
const PROBE_RETRY_FIRST: Duration = Duration::from_millis(200);
const PROBE_RETRY_MAX: Duration = Duration::from_secs(5);

/// `ask`'s first answer from the garden: retried while [`unanswered`].
async fn answered<T, Fut>(mut ask: impl FnMut() -> Fut) -> Result<T, kube::Error>
where
    Fut: Future<Output = Result<T, kube::Error>>,
{
    let mut delay = PROBE_RETRY_FIRST;
    loop {
        match ask().await {
            Err(error) if unanswered(&error) => {
                tracing::debug!(error = %seedlet_runtime::error_chain(&error), "garden scope probe unanswered; asking again");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(PROBE_RETRY_MAX);
            }
            answer => return answer,
        }
    }
}

/// Whether `error` says nothing about what the garden allows: no HTTP answer at all, or one
/// of the transient statuses (429, 5xx).
fn unanswered(error: &kube::Error) -> bool {
    match error {
        kube::Error::Api(status) => status.code == 429 || status.code >= 500,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure("x", "Reason")
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn only_an_answer_of_the_garden_decides_a_watch_scope() {
        for (error, unanswered_expected) in [
            (status(403), false),
            (status(400), false),
            (status(404), false),
            (status(429), true),
            (status(500), true),
            (status(503), true),
            (kube::Error::LinesCodecMaxLineLengthExceeded, true),
        ] {
            assert_eq!(unanswered(&error), unanswered_expected, "{error}");
        }
    }

    #[tokio::test]
    async fn an_unanswered_probe_is_asked_again_until_the_garden_answers() {
        let mut asked = 0;
        let answer: Result<(), kube::Error> = answered(|| {
            asked += 1;
            let attempt = asked;
            async move {
                if attempt < 4 {
                    Err(status(503))
                } else {
                    Err(status(403))
                }
            }
        })
        .await;
        assert!(matches!(answer, Err(kube::Error::Api(s)) if s.code == 403));
        assert_eq!(asked, 4);
    }
}
