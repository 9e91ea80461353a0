//! The identity's run loop: watches the kubeconfig Secret and keeps the certificate valid — rotation at the
//! jittered deadline (spec §2), the `gardener.cloud/operation=renew` annotation, adopting a kubeconfig written by
//! someone else, and re-bootstrapping when the certificate expired, was rejected or the Secret was lost.
//! Every new credential is stored first and then swapped into the [`GardenClient`] in place (no restart).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::runtime::{WatchStreamExt as _, watcher};
use seedlet_runtime::repeated::{Failure, RepeatedFailures};
use tokio::sync::watch;

use crate::csr::Subject;
use crate::deadline::{rotation_deadline, until};
use crate::error::Error;
use crate::identity::{Credential, GardenIdentity, bootstrap};
use crate::kubeconfig::build;
use crate::observer::{BootstrapStep, report};
use crate::options::SecretRef;
use crate::request::request_certificate;
use crate::seed_status::keep_seed_status_current;
use crate::store::{bootstrap_available, kubeconfig_of, renew_requested, store_kubeconfig};

/// Longest sleep without re-evaluating (safety net for missed events).
const MAX_WAIT: Duration = Duration::from_secs(3600);

/// Longest pause between failed attempts: the pause starts at `retry_interval` and doubles with
/// every failure in a row (a dead garden is asked every five minutes, not every ten seconds).
pub const MAX_RETRY_PAUSE: Duration = Duration::from_secs(300);

/// The pause after the `failures`-th failure in a row (1 = the first), starting at `interval`.
pub fn retry_pause(interval: Duration, failures: u32) -> Duration {
    seedlet_runtime::retry::doubled(interval, failures, MAX_RETRY_PAUSE.max(interval))
}
/// How many replaced kubeconfigs are remembered so that stale watch events never bring one back.
const RETIRED_MEMORY: usize = 4;

/// The kubeconfig Secret as last observed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SecretView {
    /// Not observed yet.
    Unknown,
    /// The Secret does not exist.
    Missing,
    /// The Secret exists.
    Present {
        /// Its non-empty `data.kubeconfig`.
        kubeconfig: Option<String>,
        /// Whether it carries `gardener.cloud/operation=renew`.
        renew: bool,
    },
}

impl SecretView {
    fn of(secret: &Secret) -> Self {
        Self::Present {
            kubeconfig: kubeconfig_of(secret),
            renew: renew_requested(secret),
        }
    }
}

/// Why a new certificate is requested with the current one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// The Secret carries `gardener.cloud/operation=renew`.
    Renew,
    /// The jittered rotation deadline has passed.
    Deadline,
}

/// Why the current credential cannot be used to get the next one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    /// The Secret is gone or has no kubeconfig.
    SecretLost,
    /// The Secret's kubeconfig does not parse.
    SecretInvalid,
    /// The certificate has expired.
    Expired,
    /// The garden answered 401.
    Rejected,
}

/// The next step of the run loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Nothing to do for this long (or until the Secret changes).
    Wait(Duration),
    /// Request a new certificate with the current one.
    Rotate(Trigger),
    /// The Secret holds a kubeconfig that is not the one in use: switch to it.
    Adopt(String),
    /// Bootstrap again if a bootstrap kubeconfig is available.
    Recover(Loss),
}

/// Decides the next step from the observed Secret, the credential in use (`in_use` text and certificate
/// `not_after`), kubeconfigs this process replaced (`retired`), the rotation `deadline` and `now`. Pure.
pub fn decide(
    view: &SecretView,
    in_use: &str,
    retired: &[String],
    not_after: Option<Timestamp>,
    deadline: Option<Timestamp>,
    now: Timestamp,
) -> Decision {
    match view {
        SecretView::Unknown => return Decision::Wait(MAX_WAIT),
        SecretView::Missing
        | SecretView::Present {
            kubeconfig: None, ..
        } => return Decision::Recover(Loss::SecretLost),
        // A kubeconfig this process replaced: a stale event; wait for the watch to catch up.
        SecretView::Present {
            kubeconfig: Some(text),
            ..
        } if retired.iter().any(|old| old == text) => {
            return Decision::Wait(MAX_WAIT);
        }
        SecretView::Present {
            kubeconfig: Some(text),
            ..
        } if text != in_use => return Decision::Adopt(text.clone()),
        SecretView::Present { renew: true, .. } => return Decision::Rotate(Trigger::Renew),
        SecretView::Present { .. } => {}
    }
    if not_after.is_some_and(|not_after| now >= not_after) {
        return Decision::Recover(Loss::Expired);
    }
    match deadline {
        Some(deadline) if now >= deadline => Decision::Rotate(Trigger::Deadline),
        Some(deadline) => Decision::Wait(until(deadline, now).min(MAX_WAIT)),
        None => Decision::Wait(MAX_WAIT),
    }
}

impl GardenIdentity {
    /// Keeps the garden credential valid until the future is dropped: watches the kubeconfig Secret, rotates at
    /// the deadline or on `gardener.cloud/operation=renew` (removing the annotation with the store), adopts
    /// kubeconfigs written by others, re-bootstraps on expiry/401/loss when a bootstrap kubeconfig exists, and
    /// keeps `Seed.status.clientCertificateExpirationTimestamp` current. Failed attempts are logged once per distinct failure and retried
    /// after a pause that starts at `retry_interval` and doubles up to [`MAX_RETRY_PAUSE`]; the working credential is never dropped before its replacement is stored.
    ///
    /// In static-kubeconfig mode only the Seed status is maintained. Returns only if the Secret watch ends.
    pub async fn run(mut self) {
        let status = keep_seed_status_current(
            self.garden.clone(),
            self.options.seed_name.clone(),
            self.options.retry_interval,
        );
        let (Some(secret), Some(credential)) = (
            self.options.kubeconfig_secret.clone(),
            self.credential.clone(),
        ) else {
            status.await;
            return;
        };
        let view = Arc::new(watch::channel(SecretView::Unknown).0);
        let observe = observe_secret(self.seed.clone(), secret.clone(), Arc::clone(&view));
        tokio::select! {
            () = status => {}
            () = observe => {}
            () = self.manage(secret, credential, &view) => {}
        }
    }

    async fn manage(
        &mut self,
        secret: SecretRef,
        mut credential: Credential,
        view: &watch::Sender<SecretView>,
    ) {
        let mut changes = view.subscribe();
        if changes
            .wait_for(|v| *v != SecretView::Unknown)
            .await
            .is_err()
        {
            return;
        }
        let mut retired: VecDeque<String> = VecDeque::new();
        let mut deadline: Option<(Timestamp, Timestamp)> = None;
        let mut failures = RepeatedFailures::new();
        loop {
            let certificate = credential.certificate.clone();
            let rotate_at = certificate.as_ref().map(|c| match deadline {
                Some((not_after, at)) if not_after == c.not_after => at,
                _ => {
                    let at = rotation_deadline(c.not_before, c.not_after, self.options.jitter, rand::random());
                    tracing::info!(not_after = %c.not_after, rotation_deadline = %at, "scheduled garden certificate rotation");
                    deadline = Some((c.not_after, at));
                    at
                }
            });
            let observed = changes.borrow_and_update().clone();
            let decision = decide(
                &observed,
                &credential.text,
                retired.make_contiguous(),
                certificate.as_ref().map(|c| c.not_after),
                rotate_at,
                Timestamp::now(),
            );
            let outcome = match decision {
                Decision::Wait(duration) => {
                    tokio::select! {
                        () = tokio::time::sleep(duration) => {}
                        changed = changes.changed() => if changed.is_err() { return },
                    }
                    continue;
                }
                Decision::Adopt(text) => match self.adopt(text, &secret).await {
                    Err(Error::ParseKubeconfig { .. } | Error::ParseCertificate { .. }) => {
                        self.recover(Loss::SecretInvalid, &secret, &credential)
                            .await
                    }
                    other => other,
                },
                Decision::Rotate(trigger) => match self.rotate(trigger, &secret, &credential).await
                {
                    Err(error) if error.is_unauthorized() => {
                        self.recover(Loss::Rejected, &secret, &credential).await
                    }
                    other => other,
                },
                Decision::Recover(loss) => self.recover(loss, &secret, &credential).await,
            };
            match outcome {
                Ok(next) => {
                    if let Some(count) = failures.succeeded() {
                        tracing::info!(
                            failures = count,
                            "garden credential maintenance succeeded again"
                        );
                    }
                    if next.text != credential.text {
                        retired.push_back(std::mem::replace(&mut credential, next).text);
                        if retired.len() > RETIRED_MEMORY {
                            retired.pop_front();
                        }
                    }
                }
                Err(error) => {
                    let chain = seedlet_runtime::error_chain(&error).to_string();
                    let news = failures.failed(&chain);
                    let pause = retry_pause(self.options.retry_interval, failures.count());
                    match news {
                        Failure::New => {
                            tracing::warn!(error = %chain, retry_in = ?pause, "garden credential maintenance failed")
                        }
                        Failure::Repeated => {
                            tracing::debug!(error = %chain, retry_in = ?pause, failures = failures.count(), "garden credential maintenance failed again")
                        }
                    }
                    deadline = None;
                    tokio::time::sleep(pause).await;
                }
            }
            // Our own write is what the Secret holds now; record it so stale events cannot undo it.
            if let Some(stored) = self.stored_text.take() {
                view.send_replace(SecretView::Present {
                    kubeconfig: Some(stored),
                    renew: false,
                });
                changes.mark_unchanged();
            }
        }
    }

    /// Switches to a kubeconfig found in the Secret.
    async fn adopt(&mut self, text: String, secret: &SecretRef) -> Result<Credential, Error> {
        let origin = format!("secret {secret}");
        let credential = Credential::parse(text, &origin)?;
        let client = credential.parsed.client(&origin).await?;
        tracing::info!(not_after = ?credential.certificate.as_ref().map(|c| c.not_after), "adopting garden kubeconfig written by someone else");
        self.swap(credential.clone(), client);
        Ok(credential)
    }

    /// Requests a new certificate with the current one, stores it (clearing a renew annotation) and swaps.
    async fn rotate(
        &mut self,
        trigger: Trigger,
        secret: &SecretRef,
        current: &Credential,
    ) -> Result<Credential, Error> {
        tracing::info!(trigger = ?trigger, "rotating garden client certificate");
        let subject = match &current.certificate {
            Some(certificate) => certificate.subject.clone(),
            None => Subject::seed(&self.options.seed_name)?,
        };
        let observer = self.options.observer.clone();
        let issued = request_certificate(
            &self.garden.client(),
            &subject,
            self.options.validity,
            self.options.approval_timeout,
            observer.as_ref(),
        )
        .await?;
        let text = build(
            &current.parsed.cluster,
            &issued.certificate_pem,
            &issued.key_pem,
        );
        store_kubeconfig(&self.seed, secret, &text).await?;
        self.stored_text = Some(text.clone());
        report(observer.as_ref(), BootstrapStep::KubeconfigStored)?;
        let origin = format!("secret {secret}");
        let credential = Credential::parse(text, &origin)?;
        let client = credential.parsed.client(&origin).await?;
        tracing::info!(serial = %issued.info.serial, not_after = %issued.info.not_after, "garden client certificate rotated");
        self.swap(credential.clone(), client);
        Ok(credential)
    }

    /// Bootstraps again when a bootstrap kubeconfig is available; otherwise keeps the current credential
    /// (restoring it into the Secret when the Secret held garbage) and reports why nothing could be done.
    async fn recover(
        &mut self,
        loss: Loss,
        secret: &SecretRef,
        current: &Credential,
    ) -> Result<Credential, Error> {
        if bootstrap_available(&self.seed, self.options.bootstrap.as_ref()).await {
            tracing::warn!(loss = ?loss, "garden credential lost its validity, bootstrapping again");
            let (credential, client) = bootstrap(&self.seed, &self.options, secret).await?;
            self.stored_text = Some(credential.text.clone());
            self.swap(credential.clone(), client);
            return Ok(credential);
        }
        match loss {
            Loss::Expired => Err(Error::CertificateExpired {
                not_after: current
                    .certificate
                    .as_ref()
                    .map_or_else(Timestamp::now, |c| c.not_after),
            }),
            Loss::Rejected => Err(Error::CredentialRejected),
            Loss::SecretLost => Err(Error::KubeconfigSecretLost {
                secret: secret.to_string(),
            }),
            Loss::SecretInvalid => {
                tracing::warn!(secret = %secret, "kubeconfig secret holds an invalid kubeconfig, restoring the one in use");
                store_kubeconfig(&self.seed, secret, &current.text).await?;
                self.stored_text = Some(current.text.clone());
                Ok(current.clone())
            }
        }
    }

    fn swap(&mut self, credential: Credential, client: kube::Client) {
        self.garden
            .swap(client, credential.certificate.as_ref().map(|c| c.not_after));
        self.credential = Some(credential);
    }
}

/// Mirrors the kubeconfig Secret into `view` with a watch on its name.
async fn observe_secret(
    seed: kube::Client,
    secret: SecretRef,
    view: Arc<watch::Sender<SecretView>>,
) {
    let api: Api<Secret> = Api::namespaced(seed, &secret.namespace);
    let config = watcher::Config::default().fields(&format!("metadata.name={}", secret.name));
    let mut events = watcher(api, config).default_backoff().boxed();
    let mut seen_during_init = false;
    let publish = |next: SecretView| {
        view.send_if_modified(|current| {
            let changed = *current != next;
            *current = next;
            changed
        });
    };
    while let Some(event) = events.next().await {
        match event {
            Ok(watcher::Event::Init) => seen_during_init = false,
            Ok(watcher::Event::InitApply(object)) => {
                seen_during_init = true;
                publish(SecretView::of(&object));
            }
            Ok(watcher::Event::InitDone) if !seen_during_init => publish(SecretView::Missing),
            Ok(watcher::Event::InitDone) => {}
            Ok(watcher::Event::Apply(object)) => publish(SecretView::of(&object)),
            Ok(watcher::Event::Delete(_)) => publish(SecretView::Missing),
            Err(error) => {
                tracing::warn!(secret = %secret, error = %seedlet_runtime::error_chain(&error), "kubeconfig secret watch failed")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_attempts_pause_longer_and_longer_up_to_five_minutes() {
        let interval = Duration::from_secs(10);
        let pauses: Vec<u64> = (1..=7)
            .map(|n| retry_pause(interval, n).as_secs())
            .collect();
        assert_eq!(pauses, [10, 20, 40, 80, 160, 300, 300]);
        assert_eq!(
            retry_pause(Duration::from_secs(600), 1),
            Duration::from_secs(600),
            "an interval above the cap is kept"
        );
    }

    fn t(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).unwrap()
    }

    fn present(text: &str, renew: bool) -> SecretView {
        SecretView::Present {
            kubeconfig: Some(text.into()),
            renew,
        }
    }

    #[test]
    fn decision_waits_until_deadline_when_nothing_happens() {
        let decision = decide(
            &present("a", false),
            "a",
            &[],
            Some(t(100)),
            Some(t(80)),
            t(20),
        );
        assert_eq!(decision, Decision::Wait(Duration::from_secs(60)));
    }

    #[test]
    fn decision_rotates_when_deadline_passed() {
        let decision = decide(
            &present("a", false),
            "a",
            &[],
            Some(t(100)),
            Some(t(80)),
            t(80),
        );
        assert_eq!(decision, Decision::Rotate(Trigger::Deadline));
    }

    #[test]
    fn decision_rotates_at_once_when_renew_is_requested() {
        let decision = decide(
            &present("a", true),
            "a",
            &[],
            Some(t(100)),
            Some(t(80)),
            t(1),
        );
        assert_eq!(decision, Decision::Rotate(Trigger::Renew));
    }

    #[test]
    fn decision_adopts_kubeconfig_written_by_someone_else() {
        let decision = decide(
            &present("b", true),
            "a",
            &[],
            Some(t(100)),
            Some(t(80)),
            t(1),
        );
        assert_eq!(decision, Decision::Adopt("b".into()));
    }

    #[test]
    fn decision_ignores_stale_events_showing_a_replaced_kubeconfig() {
        let decision = decide(
            &present("old", true),
            "new",
            &["old".into()],
            Some(t(100)),
            Some(t(80)),
            t(1),
        );
        assert_eq!(decision, Decision::Wait(MAX_WAIT));
    }

    #[test]
    fn decision_recovers_when_secret_is_missing_or_empty() {
        assert_eq!(
            decide(&SecretView::Missing, "a", &[], None, None, t(0)),
            Decision::Recover(Loss::SecretLost)
        );
        let empty = SecretView::Present {
            kubeconfig: None,
            renew: true,
        };
        assert_eq!(
            decide(&empty, "a", &[], None, None, t(0)),
            Decision::Recover(Loss::SecretLost)
        );
    }

    #[test]
    fn decision_recovers_when_certificate_expired() {
        let decision = decide(
            &present("a", false),
            "a",
            &[],
            Some(t(100)),
            Some(t(80)),
            t(100),
        );
        assert_eq!(decision, Decision::Recover(Loss::Expired));
    }

    #[test]
    fn decision_waits_at_most_an_hour_and_forever_without_certificate() {
        let decision = decide(
            &present("a", false),
            "a",
            &[],
            Some(t(100_000)),
            Some(t(90_000)),
            t(0),
        );
        assert_eq!(decision, Decision::Wait(MAX_WAIT));
        assert_eq!(
            decide(&present("a", false), "a", &[], None, None, t(0)),
            Decision::Wait(MAX_WAIT)
        );
        assert_eq!(
            decide(&SecretView::Unknown, "a", &[], None, None, t(0)),
            Decision::Wait(MAX_WAIT)
        );
    }
}
