//! Client certificates the way kube-apiserver takes them: the TLS handshake only *requests* a
//! certificate (Go's `tls.RequestClientCert`) and checks that the client holds its key; whether
//! the client CA signed it is decided by the x509 authenticator for each request. A certificate
//! from another CA therefore completes the handshake and gets `401 Unauthorized`, instead of a
//! TLS alert that a client sees as a reset connection (with TLS 1.3 the server judges the
//! client's certificate after the client has finished its side of the handshake).

use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};

/// The client certificate a connection presented, judged against the client CA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientCertificate {
    /// Signed by the client CA and valid when the connection was accepted: the leaf's DER.
    Verified(Vec<u8>),
    /// Presented but not trusted (another CA, expired, wrong key usage): why.
    Unverified {
        /// What the verifier said, for the server's debug log (never sent to the client).
        reason: String,
    },
}

impl ClientCertificate {
    /// Judges a presented chain (leaf first) with `verifier` at `now`.
    pub fn judge(
        verifier: &dyn ClientCertVerifier,
        chain: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Option<Self> {
        let (leaf, intermediates) = chain.split_first()?;
        Some(
            match verifier.verify_client_cert(leaf, intermediates, now) {
                Ok(_) => Self::Verified(leaf.to_vec()),
                Err(error) => Self::Unverified {
                    reason: error.to_string(),
                },
            },
        )
    }
}

/// A server-side verifier that asks for a client certificate, accepts any chain in the handshake
/// (the proof of key possession is still checked) and leaves the trust decision to
/// [`ClientCertificate::judge`] with the wrapped verifier.
#[derive(Debug)]
pub struct RequestClientCert {
    trust: Arc<dyn ClientCertVerifier>,
}

impl RequestClientCert {
    /// Wraps the verifier that holds the client CA (its hints are offered in the handshake).
    pub fn new(trust: Arc<dyn ClientCertVerifier>) -> Self {
        Self { trust }
    }
}

impl ClientCertVerifier for RequestClientCert {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.trust.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.trust.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.trust.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.trust.supported_verify_schemes()
    }
}
