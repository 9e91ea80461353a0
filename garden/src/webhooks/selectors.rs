//! Whether the garden's kube-apiserver sends list/watch selectors to authorizers (spec §2.5):
//! from Kubernetes 1.34 always; below, a dry-run SubjectAccessReview with a label selector tells
//! (the field survives only where `AuthorizeWithSelectors` is on). The answer is cached for ten
//! minutes; a failed probe is retried with the next request.
//!
//! The probe's own SubjectAccessReview names a user that is no seed, so kube-apiserver's question
//! about it to this webhook (`--authorization-mode=RBAC,Webhook`) is answered before any probe
//! (see [`super::server`]). One probe runs at a time, bounded by [`PROBE_TIMEOUT`]: requests
//! arriving meanwhile wait for its outcome instead of asking the garden again.

use std::time::{Duration, Instant};

use k8s_openapi::api::authorization::v1::{
    LabelSelectorAttributes, ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Api;
use kube::api::PostParams;

use super::authorizer::Selectors;

/// How long a probe's answer is trusted.
pub const PROBE_TTL: Duration = Duration::from_secs(600);
/// How long one probe may take: well inside kube-apiserver's 10 s webhook timeout, so a garden
/// that does not answer turns into an evaluation error, not a timed-out review.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
const PROBE_SELECTOR: &str = "is-kubernetes-feature-gate-AuthorizeWithSelectors=enabled?";

/// The cached probe.
pub struct SelectorProbe {
    client: kube::Client,
    timeout: Duration,
    /// Held for the whole probe: one in flight at a time.
    state: tokio::sync::Mutex<ProbeState>,
}

#[derive(Debug, Default)]
struct ProbeState {
    /// The last answer, when it was given, and whether it is final (decided by the version).
    answer: Option<(Selectors, Instant, bool)>,
    /// The last failure's message and when it happened.
    failure: Option<(String, Instant)>,
}

impl std::fmt::Debug for SelectorProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelectorProbe").finish_non_exhaustive()
    }
}

impl SelectorProbe {
    /// A probe against the garden `client`; nothing is asked before the first request.
    pub fn new(client: kube::Client) -> Self {
        Self::with_timeout(client, PROBE_TIMEOUT)
    }

    /// A probe whose garden requests together may take at most `timeout`.
    pub fn with_timeout(client: kube::Client, timeout: Duration) -> Self {
        Self {
            client,
            timeout,
            state: tokio::sync::Mutex::new(ProbeState::default()),
        }
    }

    /// The current answer.
    ///
    /// # Errors
    /// The message for the webhook's evaluation error when the garden cannot be asked, does not
    /// answer within the timeout, or a probe that ran while this call waited failed.
    pub async fn selectors(&self) -> Result<Selectors, String> {
        let asked = Instant::now();
        let mut state = self.state.lock().await;
        if let Some((selectors, at, permanent)) = state.answer
            && (permanent || at.elapsed() < PROBE_TTL)
        {
            return Ok(selectors);
        }
        if let Some((message, failed)) = &state.failure
            && *failed >= asked
        {
            // The probe this call waited for failed: take its outcome instead of asking again.
            return Err(message.clone());
        }
        let outcome = match tokio::time::timeout(self.timeout, self.probe()).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!("no answer within {:?}", self.timeout)),
        };
        match outcome {
            Ok((selectors, permanent)) => {
                state.answer = Some((selectors, Instant::now(), permanent));
                state.failure = None;
                Ok(selectors)
            }
            Err(error) => {
                let message =
                    format!("failed checking if authorization with selectors is possible: {error}");
                state.failure = Some((message.clone(), Instant::now()));
                Err(message)
            }
        }
    }

    /// The answer and whether it is final (decided by the version).
    async fn probe(&self) -> Result<(Selectors, bool), String> {
        let info = self
            .client
            .apiserver_version()
            .await
            .map_err(|e| e.to_string())?;
        if version_has_selectors(&info.major, &info.minor)? {
            return Ok((Selectors::Possible, true));
        }
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some("gardener-admission-controller".to_owned()),
                resource_attributes: Some(ResourceAttributes {
                    namespace: Some("default".to_owned()),
                    verb: Some("get".to_owned()),
                    group: Some("core.gardener.cloud".to_owned()),
                    resource: Some("shoots".to_owned()),
                    label_selector: Some(LabelSelectorAttributes {
                        raw_selector: Some(PROBE_SELECTOR.to_owned()),
                        requirements: None,
                    }),
                    ..ResourceAttributes::default()
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        let params = PostParams {
            dry_run: true,
            ..PostParams::default()
        };
        let answer = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&params, &review)
            .await
            .map_err(|e| e.to_string())?;
        let kept = answer
            .spec
            .resource_attributes
            .and_then(|r| r.label_selector)
            .is_some();
        Ok((
            if kept {
                Selectors::Possible
            } else {
                Selectors::NotPossible
            },
            false,
        ))
    }
}

/// Whether a server of this version always sends selectors (1.34 and later).
fn version_has_selectors(major: &str, minor: &str) -> Result<bool, String> {
    let number = |text: &str| -> Result<u32, String> {
        text.trim_end_matches('+')
            .parse()
            .map_err(|_| format!("cannot parse server version {major}.{minor}"))
    };
    let (major, minor) = (number(major)?, number(minor)?);
    Ok(major > 1 || (major == 1 && minor >= 34))
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A client of a "garden" that accepts connections and never answers, and how many
    /// connections it accepted.
    pub(crate) async fn silent_garden() -> (kube::Client, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address = listener.local_addr().expect("address");
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((connection, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                held.push(connection);
            }
        });
        let url = format!("http://{address}").parse().expect("url");
        let client = kube::Client::try_from(kube::Config::new(url)).expect("client");
        (client, accepted)
    }

    #[tokio::test]
    async fn a_probe_fails_within_its_timeout_when_the_garden_does_not_answer() {
        let (client, _) = silent_garden().await;
        let probe = SelectorProbe::with_timeout(client, Duration::from_millis(200));
        let outcome = tokio::time::timeout(Duration::from_secs(5), probe.selectors())
            .await
            .expect("the probe is bounded by its timeout");
        let message = outcome.expect_err("no answer is a failure");
        assert!(
            message.starts_with("failed checking if authorization with selectors is possible: "),
            "{message}"
        );
    }

    #[tokio::test]
    async fn concurrent_requests_share_one_probe_in_flight() {
        let (client, accepted) = silent_garden().await;
        let probe = SelectorProbe::with_timeout(client, Duration::from_millis(300));
        let outcomes = futures::future::join_all((0..5).map(|_| probe.selectors())).await;
        assert!(outcomes.iter().all(Result::is_err), "{outcomes:?}");
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            1,
            "the waiting requests take the failed probe's outcome"
        );
        // The next request after the failure asks again.
        assert!(probe.selectors().await.is_err());
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn versions_from_1_34_send_selectors() {
        assert_eq!(version_has_selectors("1", "34"), Ok(true));
        assert_eq!(version_has_selectors("1", "35+"), Ok(true));
        assert_eq!(version_has_selectors("1", "33"), Ok(false));
        assert!(version_has_selectors("1", "x").is_err());
    }
}
