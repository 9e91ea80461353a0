//! `webhooks`: the HTTPS server of `seedlet garden` that kube-apiserver calls for the seed
//! authorizer (`/webhooks/auth/seed`) and the SeedRestriction admission webhook
//! (`/webhooks/admission/seedrestriction`). Absent means off (the garden then needs the
//! `insecureSeedsClusterRole` danger switch of the chart for seeds to work). The fields follow
//! gardener-admission-controller's `server.webhooks`.

use serde::{Deserialize, Serialize};

use crate::common::Server;
use crate::validate::Checker;

/// gardener-admission-controller's webhook port.
pub const DEFAULT_WEBHOOK_PORT: u16 = 2721;

/// The `webhooks` block of the garden controller.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GardenWebhooks {
    /// Where the HTTPS server listens (port 0 means 2721 unless `freePort`).
    pub server: Server,
    /// The serving certificate.
    pub tls: WebhookTls,
    /// Serve `GET /debug/resource-dependency-graph` (unauthenticated, off by default), as
    /// gardener-admission-controller's `server.enableDebugHandlers`.
    pub enable_debug_handlers: bool,
}

/// The webhook server's certificate.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WebhookTls {
    /// Directory holding `tls.crt` (the chain, leaf first) and `tls.key` (PEM), as a
    /// `kubernetes.io/tls` Secret mounts them.
    pub server_cert_dir: String,
}

impl GardenWebhooks {
    /// Fills the default port.
    pub(crate) fn apply_defaults(&mut self) {
        if self.server.port == 0 && !self.server.free_port {
            self.server.port = DEFAULT_WEBHOOK_PORT;
        }
    }

    /// Reports what is wrong under `path`.
    pub(crate) fn validate(&self, path: &str, checker: &mut Checker) {
        checker.server_at(&format!("{path}.server"), &self.server);
        if self.tls.server_cert_dir.is_empty() {
            checker.report(format!("{path}.tls.serverCertDir"), "required");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::GardenControllerConfiguration;

    fn load(yaml: &str) -> Result<GardenControllerConfiguration, String> {
        match crate::parse(yaml, "garden.yaml").map_err(|e| e.to_string())? {
            crate::AnyConfig::GardenController(config) => Ok(*config),
            crate::AnyConfig::Gardenlet(_) => Err("not a garden configuration".into()),
        }
    }

    #[test]
    fn webhooks_default_to_gardeners_port_and_need_a_certificate() {
        let head =
            "apiVersion: seedlet.gardener.cloud/v1alpha1\nkind: GardenControllerConfiguration\n";
        let config = load(&format!(
            "{head}webhooks:\n  tls:\n    serverCertDir: /etc/tls\n"
        ))
        .expect("valid");
        let webhooks = config.webhooks.expect("on");
        assert_eq!(webhooks.server.port, super::DEFAULT_WEBHOOK_PORT);
        let error = load(&format!(
            "{head}webhooks:\n  server:\n    bindAddress: nope\n"
        ))
        .unwrap_err();
        assert!(error.contains("webhooks.server.bindAddress"), "{error}");
        assert!(
            error.contains("webhooks.tls.serverCertDir: required"),
            "{error}"
        );
        let error = load(&format!("{head}webhooks:\n  tls:\n    certDir: x\n")).unwrap_err();
        assert!(
            error.contains("webhooks.tls.certDir: unknown field"),
            "{error}"
        );
        assert!(load(head).expect("valid").webhooks.is_none());
    }
}
