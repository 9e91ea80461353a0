//! The error type of the garden identity: each variant names the failing step and carries its context.

use crate::observer::BootstrapStep;

/// Everything that can go wrong while obtaining, storing, rotating or using the garden client certificate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The seed name is empty, so no certificate subject can be formed.
    #[error("seed name is empty, cannot form the certificate common name")]
    EmptySeedName,
    /// A certificate request without common name was asked for.
    #[error("certificate subject has an empty common name")]
    EmptyCommonName,
    /// Neither a kubeconfig Secret with content, a bootstrap kubeconfig nor a static kubeconfig is configured.
    #[error(
        "no garden credentials: configure a kubeconfig, or a kubeconfig secret with a bootstrap kubeconfig"
    )]
    NoCredentialSource,
    /// Generating the private key failed.
    #[error("generate ecdsa p-256 key")]
    GenerateKey {
        /// The crypto backend's error.
        #[source]
        source: rcgen::Error,
    },
    /// Encoding the private key as SEC1 failed (unexpected PKCS#8 layout).
    #[error("encode private key as sec1")]
    EncodeKey,
    /// Signing the PKCS#10 request failed.
    #[error("sign certificate request")]
    SignRequest {
        /// The crypto backend's error.
        #[source]
        source: rcgen::Error,
    },
    /// A certificate could not be parsed.
    #[error("parse client certificate: {reason}")]
    ParseCertificate {
        /// What was wrong.
        reason: String,
    },
    /// A kubeconfig could not be parsed or lacks its current context, cluster or server.
    #[error("parse kubeconfig from {origin}: {reason}")]
    ParseKubeconfig {
        /// Where the kubeconfig came from (Secret key or file).
        origin: String,
        /// What was wrong.
        reason: String,
    },
    /// kube rejected a kubeconfig when turning it into a client configuration.
    #[error("load kubeconfig from {origin}")]
    LoadKubeconfig {
        /// Where the kubeconfig came from.
        origin: String,
        /// kube's error.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// Building a kube client from a loaded configuration failed.
    #[error("build client from {origin}")]
    BuildClient {
        /// Where the kubeconfig came from.
        origin: String,
        /// kube's error.
        #[source]
        source: Box<kube::Error>,
    },
    /// Reading a file failed.
    #[error("read {path}")]
    ReadFile {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The bootstrap Secret has no `kubeconfig` data.
    #[error("bootstrap secret {secret} does not contain a kubeconfig, cannot bootstrap")]
    BootstrapSecretEmpty {
        /// `namespace/name` of the bootstrap Secret.
        secret: String,
    },
    /// The bootstrap Secret does not exist in the seed cluster.
    #[error("bootstrap secret {secret} not found in the seed cluster, cannot bootstrap")]
    BootstrapSecretMissing {
        /// `namespace/name` of the bootstrap Secret.
        secret: String,
    },
    /// Reading a Secret in the seed cluster failed.
    #[error("read secret {secret} in the seed cluster")]
    ReadSecret {
        /// `namespace/name`.
        secret: String,
        /// The API error.
        #[source]
        source: Box<kube::Error>,
    },
    /// Writing the kubeconfig Secret in the seed cluster failed.
    #[error("store kubeconfig in secret {secret} in the seed cluster")]
    StoreSecret {
        /// `namespace/name`.
        secret: String,
        /// The API error.
        #[source]
        source: Box<kube::Error>,
    },
    /// Deleting the bootstrap Secret failed.
    #[error("delete bootstrap secret {secret} in the seed cluster")]
    DeleteBootstrapSecret {
        /// `namespace/name`.
        secret: String,
        /// The API error.
        #[source]
        source: Box<kube::Error>,
    },
    /// Creating the CertificateSigningRequest in the garden failed.
    #[error("create certificatesigningrequest {name} in the garden")]
    CreateCsr {
        /// CSR name.
        name: String,
        /// The API error.
        #[source]
        source: Box<kube::Error>,
    },
    /// Reading or watching the CertificateSigningRequest failed.
    #[error("watch certificatesigningrequest {name} in the garden")]
    WatchCsr {
        /// CSR name.
        name: String,
        /// The API error.
        #[source]
        source: Box<kube::Error>,
    },
    /// The CertificateSigningRequest was replaced by another object of the same name, or deleted.
    #[error(
        "certificatesigningrequest {name} changed uids or was deleted while waiting for its certificate"
    )]
    CsrReplaced {
        /// CSR name.
        name: String,
    },
    /// The garden denied the CertificateSigningRequest.
    #[error("certificatesigningrequest {name} was denied: {reason}: {message}")]
    CsrDenied {
        /// CSR name.
        name: String,
        /// Condition reason.
        reason: String,
        /// Condition message.
        message: String,
    },
    /// The signer failed to issue the certificate.
    #[error("certificatesigningrequest {name} failed: {reason}: {message}")]
    CsrFailed {
        /// CSR name.
        name: String,
        /// Condition reason.
        reason: String,
        /// Condition message.
        message: String,
    },
    /// The issued certificate does not belong to the key or subject that was requested.
    #[error("certificate issued for {name} does not match the request: {reason}")]
    CertificateMismatch {
        /// CSR name.
        name: String,
        /// What did not match.
        reason: String,
    },
    /// The stored certificate has expired and there is no bootstrap kubeconfig to get a new one.
    #[error(
        "garden client certificate expired at {not_after} and no bootstrap kubeconfig is available"
    )]
    CertificateExpired {
        /// End of validity of the stored certificate.
        not_after: jiff::Timestamp,
    },
    /// The kubeconfig Secret lost its kubeconfig and there is no bootstrap kubeconfig to get a new one.
    #[error(
        "kubeconfig secret {secret} has no kubeconfig and no bootstrap kubeconfig is available, continuing with the credential in memory"
    )]
    KubeconfigSecretLost {
        /// `namespace/name` of the kubeconfig Secret.
        secret: String,
    },
    /// The garden rejected the credentials (401) and there is no bootstrap kubeconfig to get new ones.
    #[error(
        "garden rejected the client certificate (401) and no bootstrap kubeconfig is available"
    )]
    CredentialRejected,
    /// An observer aborted the bootstrap after a step (used for progress hooks and fault injection).
    #[error("bootstrap aborted by observer after step {step:?}")]
    Aborted {
        /// The step after which the observer stopped the flow.
        step: BootstrapStep,
    },
}

impl Error {
    /// Whether the garden refused the credential itself (see [`credential_refused`]).
    pub fn is_unauthorized(&self) -> bool {
        match self {
            Self::CreateCsr { source, .. } | Self::WatchCsr { source, .. } => {
                credential_refused(source)
            }
            _ => false,
        }
    }
}

/// TLS alerts a server sends when it refuses the client certificate during the handshake.
const CLIENT_CERTIFICATE_ALERTS: [&str; 6] = [
    "BadCertificate",
    "UnknownCA",
    "CertificateExpired",
    "CertificateRevoked",
    "CertificateUnknown",
    "CertificateRequired",
];

/// Whether the garden refused the credential: kube-apiserver answers 401; API servers that verify client
/// certificates in the TLS handshake answer with a fatal alert about the certificate instead. Alerts about
/// the *server's* certificate are raised locally and never match.
pub fn credential_refused(error: &kube::Error) -> bool {
    if matches!(error, kube::Error::Api(status) if status.code == 401) {
        return true;
    }
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = current {
        let text = cause.to_string();
        if text.contains("received fatal alert")
            && CLIENT_CERTIFICATE_ALERTS
                .iter()
                .any(|alert| text.contains(alert))
        {
            return true;
        }
        current = cause.source();
    }
    false
}

/// Whether a kube error is a 404.
pub(crate) fn is_not_found(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 404)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Alert(&'static str);

    impl std::fmt::Display for Alert {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "received fatal alert: {}", self.0)
        }
    }

    impl std::error::Error for Alert {}

    fn status(code: u16) -> kube::Error {
        kube::Error::Api(Box::new(kube::core::Status {
            code,
            ..kube::core::Status::default()
        }))
    }

    #[test]
    fn credential_is_refused_on_401_only_among_api_errors() {
        assert!(credential_refused(&status(401)));
        assert!(!credential_refused(&status(403)));
        assert!(!credential_refused(&status(500)));
    }

    #[test]
    fn credential_is_refused_on_client_certificate_alerts() {
        let refused = kube::Error::Service(Box::new(Alert("UnknownCA")));
        assert!(credential_refused(&refused));
        let other = kube::Error::Service(Box::new(Alert("HandshakeFailure")));
        assert!(!credential_refused(&other));
    }
}
