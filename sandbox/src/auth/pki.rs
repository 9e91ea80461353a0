//! The sandbox's certificate authority: CA generation and persistence, the TLS serving
//! configuration, and client certificates (issued directly or signed from a CSR).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rcgen::{
    BasicConstraints, CertificateParams, CertificateSigningRequestParams, DistinguishedName,
    DnType, DnValue, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType,
    SerialNumber,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::ClientCertVerifier;

#[cfg(doc)]
use super::client_cert::ClientCertificate;
use super::client_cert::RequestClientCert;
use rustls::{RootCertStore, ServerConfig};
use x509_parser::time::ASN1Time;

/// Validity of a freshly generated CA certificate (ten years, like kubeadm's CA).
const CA_VALIDITY: Duration = Duration::from_secs(10 * 365 * 24 * 3600);
/// Validity of the serving certificate; it is regenerated on every `server_config` call.
const SERVING_VALIDITY: Duration = Duration::from_secs(365 * 24 * 3600);
/// Certificates are backdated like kube-controller-manager's signer does, to tolerate clock skew.
const BACKDATE: Duration = Duration::from_secs(5 * 60);
/// Names the serving certificate is valid for.
const SERVING_NAMES: [&str; 6] = [
    "127.0.0.1",
    "::1",
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
];

/// Errors of the certificate authority.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PkiError {
    /// Generating a private key failed.
    #[error("generate private key")]
    GenerateKey {
        /// The underlying error.
        #[source]
        source: rcgen::Error,
    },
    /// Building or signing a certificate failed.
    #[error("sign certificate for {subject:?}")]
    SignCertificate {
        /// Common name of the certificate being signed.
        subject: String,
        /// The underlying error.
        #[source]
        source: rcgen::Error,
    },
    /// A CA file could not be read.
    #[error("read {path}")]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A CA file could not be written.
    #[error("write {path}")]
    WriteFile {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A stored CA certificate or key could not be parsed.
    #[error("parse certificate authority from {path}")]
    ParseCa {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: rcgen::Error,
    },
    /// Only one of `ca.crt` and `ca.key` exists.
    #[error(
        "incomplete certificate authority in {dir}: ca.crt and ca.key must both exist or both be absent"
    )]
    IncompleteCa {
        /// The directory.
        dir: PathBuf,
    },
    /// A certificate signing request could not be parsed or its signature is invalid.
    #[error("parse certificate signing request")]
    ParseCsr {
        /// The underlying error.
        #[source]
        source: rcgen::Error,
    },
    /// The subject repeats an attribute type (e.g. two organizations), which the encoder cannot express.
    #[error(
        "subject repeats attribute {attribute}: only one value per attribute type is supported"
    )]
    RepeatedSubjectAttribute {
        /// The repeated attribute (e.g. `O`).
        attribute: &'static str,
    },
    /// The requested validity does not fit into a certificate.
    #[error("validity of {seconds}s is out of range")]
    InvalidValidity {
        /// Requested validity in seconds.
        seconds: u64,
    },
    /// The client certificate verifier could not be built.
    #[error("build client certificate verifier")]
    ClientVerifier {
        /// The underlying error.
        #[source]
        source: rustls::server::VerifierBuilderError,
    },
    /// The rustls server configuration could not be built.
    #[error("build tls server configuration")]
    ServerConfig {
        /// The underlying error.
        #[source]
        source: rustls::Error,
    },
}

/// A certificate authority that signs the serving certificate and client certificates.
pub struct CertificateAuthority {
    issuer: Issuer<'static, KeyPair>,
    cert_pem: String,
    cert_der: CertificateDer<'static>,
}

impl std::fmt::Debug for CertificateAuthority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is deliberately not printed.
        f.debug_struct("CertificateAuthority")
            .finish_non_exhaustive()
    }
}

impl CertificateAuthority {
    /// Generates a new self-signed CA (ECDSA P-256, ten years) with the given common name.
    ///
    /// # Errors
    /// Fails when key generation or signing fails.
    pub fn generate(common_name: &str) -> Result<Self, PkiError> {
        let key = KeyPair::generate().map_err(|source| PkiError::GenerateKey { source })?;
        let mut params = CertificateParams::default();
        params.distinguished_name = DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
        ];
        params.serial_number = Some(random_serial());
        set_validity(&mut params, Duration::ZERO, CA_VALIDITY)?;
        let cert = params
            .self_signed(&key)
            .map_err(|source| PkiError::SignCertificate {
                subject: common_name.to_owned(),
                source,
            })?;
        Ok(Self {
            cert_pem: cert.pem(),
            cert_der: cert.der().clone(),
            issuer: Issuer::new(params, key),
        })
    }

    /// Loads `dir/ca.crt` and `dir/ca.key`, or generates a CA and writes them (the key with mode 0600)
    /// when neither exists.
    ///
    /// # Errors
    /// Fails when only one of the files exists, a file cannot be read, parsed or written.
    pub fn load_or_generate(dir: &Path) -> Result<Self, PkiError> {
        let cert_path = dir.join("ca.crt");
        let key_path = dir.join("ca.key");
        match (cert_path.exists(), key_path.exists()) {
            (true, true) => Self::load(&cert_path, &key_path),
            (false, false) => {
                let ca = Self::generate("seedlet-sandbox-ca")?;
                fs::create_dir_all(dir).map_err(|source| PkiError::WriteFile {
                    path: dir.to_owned(),
                    source,
                })?;
                write_private_file(&key_path, ca.issuer.key().serialize_pem().as_bytes())?;
                fs::write(&cert_path, ca.cert_pem.as_bytes()).map_err(|source| {
                    PkiError::WriteFile {
                        path: cert_path.clone(),
                        source,
                    }
                })?;
                Ok(ca)
            }
            _ => Err(PkiError::IncompleteCa {
                dir: dir.to_owned(),
            }),
        }
    }

    fn load(cert_path: &Path, key_path: &Path) -> Result<Self, PkiError> {
        let read = |path: &Path| {
            fs::read_to_string(path).map_err(|source| PkiError::ReadFile {
                path: path.to_owned(),
                source,
            })
        };
        let cert_pem = read(cert_path)?;
        let key_pem = read(key_path)?;
        let key = KeyPair::from_pem(&key_pem).map_err(|source| PkiError::ParseCa {
            path: key_path.to_owned(),
            source,
        })?;
        let parse_error = |source| PkiError::ParseCa {
            path: cert_path.to_owned(),
            source,
        };
        let cert_der = CertificateDer::from_pem_slice(cert_pem.as_bytes())
            .map_err(|_| parse_error(rcgen::Error::CouldNotParseCertificate))?;
        let issuer = Issuer::from_ca_cert_der(&cert_der, key).map_err(parse_error)?;
        Ok(Self {
            issuer,
            cert_pem,
            cert_der,
        })
    }

    /// The CA certificate in PEM form.
    pub fn ca_pem(&self) -> &str {
        &self.cert_pem
    }

    /// The CA certificate in DER form.
    pub fn ca_der(&self) -> &CertificateDer<'static> {
        &self.cert_der
    }

    /// A serving certificate and key for `names` (IP addresses or DNS names), signed by the CA:
    /// for webhook servers kube-apiserver calls with this CA as `certificate-authority-data`.
    /// Returns the PEM chain (leaf, then the CA) and the PKCS#8 key PEM.
    ///
    /// # Errors
    /// When a name is invalid or signing fails.
    pub fn issue_serving_certificate(
        &self,
        common_name: &str,
        names: &[&str],
    ) -> Result<(String, String), PkiError> {
        let (cert, key) = self.serving_certificate(common_name, names)?;
        Ok((
            format!("{}{}", cert.pem(), self.ca_pem()),
            key.serialize_pem(),
        ))
    }

    fn serving_certificate(
        &self,
        common_name: &str,
        names: &[&str],
    ) -> Result<(rcgen::Certificate, KeyPair), PkiError> {
        let key = KeyPair::generate().map_err(|source| PkiError::GenerateKey { source })?;
        let mut params = CertificateParams::default();
        params.distinguished_name = DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.subject_alt_names = names
            .iter()
            .map(|name| match name.parse() {
                Ok(ip) => Ok(SanType::IpAddress(ip)),
                Err(_) => (*name).try_into().map(SanType::DnsName),
            })
            .collect::<Result<_, _>>()
            .map_err(|source| PkiError::SignCertificate {
                subject: common_name.to_owned(),
                source,
            })?;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        params.serial_number = Some(random_serial());
        set_validity(&mut params, BACKDATE, SERVING_VALIDITY)?;
        let cert =
            params
                .signed_by(&key, &self.issuer)
                .map_err(|source| PkiError::SignCertificate {
                    subject: common_name.to_owned(),
                    source,
                })?;
        Ok((cert, key))
    }

    /// The verifier that trusts client certificates this CA signed (what kube-apiserver's
    /// `--client-ca-file` is for); [`ClientCertificate::judge`] asks it for each connection.
    ///
    /// # Errors
    /// Fails when rustls refuses the CA certificate as a trust anchor.
    pub fn client_trust(&self) -> Result<Arc<dyn ClientCertVerifier>, PkiError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = RootCertStore::empty();
        roots
            .add(self.cert_der.clone())
            .map_err(|source| PkiError::ServerConfig { source })?;
        WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .allow_unauthenticated()
            .build()
            .map_err(|source| PkiError::ClientVerifier { source })
    }

    /// rustls server config: serving cert for 127.0.0.1/localhost/::1 signed by the CA, ALPN h2 +
    /// http/1.1; a client certificate is requested, and judged per connection against
    /// [`Self::client_trust`] by the server, not refused in the handshake (see [`RequestClientCert`]).
    ///
    /// # Errors
    /// Fails when the serving certificate cannot be signed or rustls rejects the configuration.
    pub fn server_config(&self) -> Result<Arc<ServerConfig>, PkiError> {
        let (cert, key) = self.serving_certificate("kube-apiserver", &SERVING_NAMES)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = Arc::new(RequestClientCert::new(self.client_trust()?));
        let key_der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|source| PkiError::ServerConfig { source })?
            .with_client_cert_verifier(verifier)
            .with_single_cert(vec![cert.der().clone(), self.cert_der.clone()], key_der)
            .map_err(|source| PkiError::ServerConfig { source })?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }

    /// A fresh ECDSA P-256 key + client certificate (CN=user, O=groups). Returns (cert_pem, key_pem).
    ///
    /// # Errors
    /// Fails when more than one group is given (the encoder supports one organization per subject),
    /// the validity is out of range or signing fails.
    pub fn issue_client_certificate(
        &self,
        user: &str,
        groups: &[String],
        validity: Duration,
    ) -> Result<(String, String), PkiError> {
        if groups.len() > 1 {
            return Err(PkiError::RepeatedSubjectAttribute { attribute: "O" });
        }
        let key = KeyPair::generate().map_err(|source| PkiError::GenerateKey { source })?;
        let mut subject = DistinguishedName::new();
        for group in groups {
            subject.push(DnType::OrganizationName, group.as_str());
        }
        subject.push(DnType::CommonName, user);
        let params = client_params(subject, validity)?;
        let cert =
            params
                .signed_by(&key, &self.issuer)
                .map_err(|source| PkiError::SignCertificate {
                    subject: user.to_owned(),
                    source,
                })?;
        Ok((cert.pem(), key.serialize_pem()))
    }

    /// Signs a PEM CERTIFICATE REQUEST as a client certificate valid for `validity`. Returns cert PEM.
    ///
    /// Only the subject and public key of the request are used: usages are those of a
    /// `kubernetes.io/kube-apiserver-client` certificate, whatever extensions the request asks for.
    ///
    /// # Errors
    /// Fails when the request cannot be parsed, its signature is invalid, or signing fails.
    pub fn sign_client_csr(&self, csr_pem: &str, validity: Duration) -> Result<String, PkiError> {
        let request = CertificateSigningRequestParams::from_pem(csr_pem)
            .map_err(|source| PkiError::ParseCsr { source })?;
        let subject = go_ordered_subject(&request.params.distinguished_name);
        let common_name = match subject.get(&DnType::CommonName) {
            Some(DnValue::Utf8String(name)) => name.clone(),
            Some(DnValue::PrintableString(name)) => name.as_str().to_owned(),
            _ => String::new(),
        };
        let params = client_params(subject, validity)?;
        let signed = CertificateSigningRequestParams {
            params,
            public_key: request.public_key,
        };
        let cert = signed
            .signed_by(&self.issuer)
            .map_err(|source| PkiError::SignCertificate {
                subject: common_name,
                source,
            })?;
        Ok(cert.pem())
    }
}

/// Parameters of a client certificate like the kube-apiserver-client signer issues them.
fn client_params(
    subject: DistinguishedName,
    validity: Duration,
) -> Result<CertificateParams, PkiError> {
    let mut params = CertificateParams::default();
    params.distinguished_name = subject;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    params.use_authority_key_identifier_extension = true;
    params.serial_number = Some(random_serial());
    // Like the Kubernetes signer: backdate by five minutes, but at most half the lifetime.
    set_validity(&mut params, BACKDATE.min(validity / 2), validity)?;
    Ok(params)
}

/// Reorders subject attributes the way Go's `pkix.Name` encodes them (C, ST, L, O, OU, CN, others),
/// which is how kube-controller-manager re-encodes a CSR subject.
fn go_ordered_subject(requested: &DistinguishedName) -> DistinguishedName {
    const ORDER: [DnType; 6] = [
        DnType::CountryName,
        DnType::StateOrProvinceName,
        DnType::LocalityName,
        DnType::OrganizationName,
        DnType::OrganizationalUnitName,
        DnType::CommonName,
    ];
    let mut subject = DistinguishedName::new();
    for ty in &ORDER {
        if let Some(value) = requested.get(ty) {
            subject.push(ty.clone(), value.clone());
        }
    }
    for (ty, value) in requested.iter() {
        if !ORDER.contains(ty) {
            subject.push(ty.clone(), value.clone());
        }
    }
    subject
}

/// Sets `not_before = now - backdate` and `not_after = now + validity`.
fn set_validity(
    params: &mut CertificateParams,
    backdate: Duration,
    validity: Duration,
) -> Result<(), PkiError> {
    let out_of_range = || PkiError::InvalidValidity {
        seconds: validity.as_secs(),
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let now = i64::try_from(now).map_err(|_| out_of_range())?;
    let backdate = i64::try_from(backdate.as_secs()).map_err(|_| out_of_range())?;
    let validity_secs = i64::try_from(validity.as_secs()).map_err(|_| out_of_range())?;
    let not_after = now.checked_add(validity_secs).ok_or_else(out_of_range)?;
    params.not_before = ASN1Time::from_timestamp(now - backdate)
        .map_err(|_| out_of_range())?
        .to_datetime();
    params.not_after = ASN1Time::from_timestamp(not_after)
        .map_err(|_| out_of_range())?
        .to_datetime();
    Ok(())
}

/// A random positive 16-byte serial number.
fn random_serial() -> SerialNumber {
    let mut bytes: [u8; 16] = rand::random();
    bytes[0] &= 0x7f;
    SerialNumber::from_slice(&bytes)
}

/// Writes a file readable only by its owner (mode 0600 on Unix).
fn write_private_file(path: &Path, contents: &[u8]) -> Result<(), PkiError> {
    let error = |source| PkiError::WriteFile {
        path: path.to_owned(),
        source,
    };
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(error)?;
    file.write_all(contents).map_err(error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use x509_parser::prelude::{FromDer, X509Certificate};

    fn parse_pem(pem_text: &str) -> Vec<u8> {
        CertificateDer::from_pem_slice(pem_text.as_bytes())
            .unwrap()
            .to_vec()
    }

    #[test]
    fn client_certificate_carries_user_and_group_and_client_auth() {
        let ca = CertificateAuthority::generate("test-ca").unwrap();
        let (cert_pem, key_pem) = ca
            .issue_client_certificate(
                "admin",
                &["system:masters".to_owned()],
                Duration::from_secs(3600),
            )
            .unwrap();
        assert!(key_pem.contains("PRIVATE KEY"));
        let der = parse_pem(&cert_pem);
        let (_, cert) = X509Certificate::from_der(&der).unwrap();
        assert_eq!(cert.subject().to_string(), "O=system:masters, CN=admin");
        let eku = cert.extended_key_usage().unwrap().unwrap().value;
        assert!(eku.client_auth && !eku.server_auth);
        let (_, ca_cert) = X509Certificate::from_der(ca.ca_der()).unwrap();
        cert.verify_signature(Some(ca_cert.public_key())).unwrap();
    }

    #[test]
    fn client_certificate_is_refused_when_two_groups_are_requested() {
        let ca = CertificateAuthority::generate("test-ca").unwrap();
        let err = ca
            .issue_client_certificate("u", &["a".into(), "b".into()], Duration::from_secs(600))
            .unwrap_err();
        assert!(matches!(err, PkiError::RepeatedSubjectAttribute { .. }));
    }

    #[test]
    fn csr_is_signed_with_its_subject_and_requested_validity() {
        let ca = CertificateAuthority::generate("test-ca").unwrap();
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::default();
        params.distinguished_name = DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, "gardener.cloud:system:seed:s");
        params
            .distinguished_name
            .push(DnType::OrganizationName, "gardener.cloud:system:seeds");
        let csr_pem = params.serialize_request(&key).unwrap().pem().unwrap();
        let cert_pem = ca
            .sign_client_csr(&csr_pem, Duration::from_secs(3600))
            .unwrap();
        let der = parse_pem(&cert_pem);
        let (_, cert) = X509Certificate::from_der(&der).unwrap();
        assert_eq!(
            cert.subject().to_string(),
            "O=gardener.cloud:system:seeds, CN=gardener.cloud:system:seed:s"
        );
        let lifetime =
            cert.validity().not_after.timestamp() - cert.validity().not_before.timestamp();
        assert_eq!(lifetime, 3600 + 300);
        assert_eq!(
            cert.public_key().subject_public_key.data.as_ref(),
            key.public_key_raw()
        );
    }

    #[test]
    fn csr_signing_fails_when_request_is_garbage() {
        let ca = CertificateAuthority::generate("test-ca").unwrap();
        let err = ca
            .sign_client_csr("not a csr", Duration::from_secs(600))
            .unwrap_err();
        assert!(matches!(err, PkiError::ParseCsr { .. }));
    }

    #[test]
    fn ca_is_persisted_with_private_key_mode_and_reloaded() {
        let dir = std::env::temp_dir().join(format!("seedlet-pki-test-{}", rand::random::<u64>()));
        let first = CertificateAuthority::load_or_generate(&dir).unwrap();
        let second = CertificateAuthority::load_or_generate(&dir).unwrap();
        assert_eq!(first.ca_pem(), second.ca_pem());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(dir.join("ca.key"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // A certificate issued by the reloaded CA verifies against the original CA certificate.
        let (cert_pem, _) = second
            .issue_client_certificate("u", &[], Duration::from_secs(600))
            .unwrap();
        let der = parse_pem(&cert_pem);
        let (_, cert) = X509Certificate::from_der(&der).unwrap();
        let (_, ca_cert) = X509Certificate::from_der(first.ca_der()).unwrap();
        cert.verify_signature(Some(ca_cert.public_key())).unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn ca_loading_fails_when_key_is_missing() {
        let dir = std::env::temp_dir().join(format!("seedlet-pki-test-{}", rand::random::<u64>()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("ca.crt"), "x").unwrap();
        let err = CertificateAuthority::load_or_generate(&dir).unwrap_err();
        assert!(matches!(err, PkiError::IncompleteCa { .. }));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn server_config_offers_h2_and_http1() {
        let ca = CertificateAuthority::generate("test-ca").unwrap();
        let config = ca.server_config().unwrap();
        assert_eq!(
            config.alpn_protocols,
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        );
    }
}
