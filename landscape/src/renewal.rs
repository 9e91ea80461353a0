//! The agent's client certificate as the demo sees it: read from the certificate kubeconfig the
//! agent keeps in the seed (Secret `garden/gardenlet-kubeconfig`), described on resume, and
//! followed while the landscape runs so that a rotation or a `gardener.cloud/operation=renew`
//! shows up as a line of its own.

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use seedlet_api::names::{namespaces, objects};
use seedlet_bootstrap::certificate::CertificateInfo;
use seedlet_bootstrap::kubeconfig::ParsedKubeconfig;
use tokio_util::sync::CancellationToken;

use crate::files::KUBECONFIG_SECRET;

/// The client certificate in a certificate kubeconfig Secret, when it holds one that parses.
pub(crate) fn certificate(secret: &Secret) -> Option<CertificateInfo> {
    let data = secret.data.as_ref()?.get(objects::KUBECONFIG_KEY)?;
    let text = std::str::from_utf8(&data.0).ok()?;
    let origin = format!("Secret garden/{KUBECONFIG_SECRET}");
    ParsedKubeconfig::parse(text, &origin)
        .ok()?
        .client_certificate(&origin)
        .ok()
        .flatten()
}

/// `issued <time>, expires <time>`.
pub(crate) fn describe(certificate: &CertificateInfo) -> String {
    format!(
        "issued {}, expires {}",
        certificate.not_before, certificate.not_after
    )
}

/// The line printed when the certificate changed from `before` to `after`, if it did.
fn renewal_line(before: Option<&CertificateInfo>, after: &CertificateInfo) -> Option<String> {
    match before {
        Some(before) if before.serial != after.serial => Some(format!(
            "agent renewed its client certificate: {}",
            describe(after)
        )),
        _ => None,
    }
}

/// Follows the certificate kubeconfig Secret in the seed until `stop`, printing a line each time
/// the agent replaced the certificate. Watch errors only end the following (best effort).
pub(crate) async fn follow(seed: kube::Client, stop: CancellationToken) {
    let secrets: Api<Secret> = Api::namespaced(seed, namespaces::GARDEN);
    let mut changes = std::pin::pin!(kube::runtime::watcher::watch_object(
        secrets,
        KUBECONFIG_SECRET
    ));
    let mut current: Option<CertificateInfo> = None;
    loop {
        let next = tokio::select! {
            () = stop.cancelled() => return,
            next = changes.next() => next,
        };
        match next {
            Some(Ok(Some(secret))) => {
                if let Some(certificate) = certificate(&secret) {
                    if let Some(line) = renewal_line(current.as_ref(), &certificate) {
                        crate::output::print(&format!("  {line}"));
                    }
                    current = Some(certificate);
                }
            }
            Some(Ok(None)) => {}
            Some(Err(error)) => {
                tracing::debug!(error = %error, "watching the certificate kubeconfig failed");
            }
            None => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use seedlet_bootstrap::csr::Subject;

    use super::*;

    fn info(serial: &str) -> CertificateInfo {
        CertificateInfo {
            not_before: "2026-11-25T10:00:00Z".parse().expect("time"),
            not_after: "2026-11-26T10:00:00Z".parse().expect("time"),
            subject: Subject {
                common_name: "gardener.cloud:system:seed:local".into(),
                organizations: vec!["gardener.cloud:system:seeds".into()],
            },
            serial: serial.into(),
        }
    }

    #[test]
    fn a_renewal_line_appears_only_when_the_serial_changed() {
        assert_eq!(renewal_line(None, &info("01")), None, "first sight");
        assert_eq!(renewal_line(Some(&info("01")), &info("01")), None);
        assert_eq!(
            renewal_line(Some(&info("01")), &info("02")).as_deref(),
            Some(
                "agent renewed its client certificate: issued 2026-11-25T10:00:00Z, \
                 expires 2026-11-26T10:00:00Z"
            )
        );
    }
}
