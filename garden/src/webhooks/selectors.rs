//! Whether the garden's kube-apiserver sends list/watch selectors to authorizers (spec §2.5):
//! from Kubernetes 1.34 always; below, a dry-run SubjectAccessReview with a label selector tells
//! (the field survives only where `AuthorizeWithSelectors` is on). The answer is cached for ten
//! minutes; a failed probe is retried with the next request.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_openapi::api::authorization::v1::{
    LabelSelectorAttributes, ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Api;
use kube::api::PostParams;

use super::authorizer::Selectors;

/// How long a probe's answer is trusted.
pub const PROBE_TTL: Duration = Duration::from_secs(600);
const PROBE_SELECTOR: &str = "is-kubernetes-feature-gate-AuthorizeWithSelectors=enabled?";

/// The cached probe.
pub struct SelectorProbe {
    client: kube::Client,
    cached: Mutex<Option<(Selectors, Instant, bool)>>,
}

impl std::fmt::Debug for SelectorProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelectorProbe").finish_non_exhaustive()
    }
}

impl SelectorProbe {
    /// A probe against the garden `client`; nothing is asked before the first request.
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            cached: Mutex::new(None),
        }
    }

    /// The current answer.
    ///
    /// # Errors
    /// The message for the webhook's evaluation error when the garden cannot be asked.
    pub async fn selectors(&self) -> Result<Selectors, String> {
        if let Some((selectors, at, permanent)) = *self
            .cached
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            && (permanent || at.elapsed() < PROBE_TTL)
        {
            return Ok(selectors);
        }
        let (selectors, permanent) = self.probe().await.map_err(|e| {
            format!("failed checking if authorization with selectors is possible: {e}")
        })?;
        *self
            .cached
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some((selectors, Instant::now(), permanent));
        Ok(selectors)
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
mod tests {
    use super::*;

    #[test]
    fn versions_from_1_34_send_selectors() {
        assert_eq!(version_has_selectors("1", "34"), Ok(true));
        assert_eq!(version_has_selectors("1", "35+"), Ok(true));
        assert_eq!(version_has_selectors("1", "33"), Ok(false));
        assert!(version_has_selectors("1", "x").is_err());
    }
}
