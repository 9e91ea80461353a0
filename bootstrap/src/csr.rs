//! Key pair, PKCS#10 request and `CertificateSigningRequest` object for a garden client certificate (spec §1.3).

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use rcgen::{
    CertificateParams, DistinguishedName, DnType, KeyPair, PKCS_ECDSA_P256_SHA256, PublicKeyData,
};
use sha2::{Digest, Sha512_256};

use crate::error::Error;
use crate::names::{
    CLIENT_USAGES, KUBE_APISERVER_CLIENT_SIGNER, SEED_COMMON_NAME_PREFIX, SEED_CSR_NAME_PREFIX,
    SEED_ORGANIZATION,
};

/// Subject of a requested client certificate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subject {
    /// The common name, i.e. the user name the garden will see.
    pub common_name: String,
    /// The organizations, i.e. the groups the garden will see, in order.
    pub organizations: Vec<String>,
}

impl Subject {
    /// The subject of seed `seed_name`: CN `gardener.cloud:system:seed:<seed_name>`, O `[gardener.cloud:system:seeds]`.
    ///
    /// # Errors
    /// [`Error::EmptySeedName`] when `seed_name` is empty.
    pub fn seed(seed_name: &str) -> Result<Self, Error> {
        if seed_name.is_empty() {
            return Err(Error::EmptySeedName);
        }
        Ok(Self {
            common_name: format!("{SEED_COMMON_NAME_PREFIX}{seed_name}"),
            organizations: vec![SEED_ORGANIZATION.to_owned()],
        })
    }
}

/// A private key in PEM form; its `Debug` output never shows the key.
#[derive(Clone, PartialEq, Eq)]
pub struct PrivateKeyPem(String);

impl PrivateKeyPem {
    /// The PEM text (`EC PRIVATE KEY`).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for PrivateKeyPem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PrivateKeyPem(<redacted>)")
    }
}

/// A fresh key with its signed PKCS#10 request and the deterministic CSR object name.
#[derive(Clone, Debug)]
pub struct PreparedRequest {
    /// Object name: `seed-csr-` + 43 characters of digest.
    pub name: String,
    /// The subject requested.
    pub subject: Subject,
    /// The private key, SEC1 (`EC PRIVATE KEY`) PEM.
    pub key_pem: PrivateKeyPem,
    /// The PKCS#10 request, PEM `CERTIFICATE REQUEST`.
    pub request_pem: String,
}

impl PreparedRequest {
    /// Generates a fresh ECDSA P-256 key and a request for `subject` signed with it.
    ///
    /// # Errors
    /// [`Error::GenerateKey`] or [`Error::SignRequest`] when the crypto backend fails, [`Error::EmptyCommonName`]
    /// when the subject has no common name.
    pub fn generate(subject: &Subject) -> Result<Self, Error> {
        if subject.common_name.is_empty() {
            return Err(Error::EmptyCommonName);
        }
        let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)
            .map_err(|source| Error::GenerateKey { source })?;
        let mut params = CertificateParams::default();
        let mut distinguished_name = DistinguishedName::new();
        distinguished_name.push(DnType::CommonName, subject.common_name.as_str());
        for organization in &subject.organizations {
            distinguished_name.push(DnType::OrganizationName, organization.as_str());
        }
        params.distinguished_name = distinguished_name;
        let request = params
            .serialize_request(&key)
            .map_err(|source| Error::SignRequest { source })?;
        let request_pem = request
            .pem()
            .map_err(|source| Error::SignRequest { source })?;
        let name = csr_name(
            SEED_CSR_NAME_PREFIX,
            &key.subject_public_key_info(),
            subject,
            &CLIENT_USAGES,
        );
        let key_pem = PrivateKeyPem(sec1_pem(&key)?);
        Ok(Self {
            name,
            subject: subject.clone(),
            key_pem,
            request_pem,
        })
    }

    /// The `CertificateSigningRequest` to create: no labels or annotations, signer
    /// `kubernetes.io/kube-apiserver-client`, the three client usages, and `expirationSeconds` = whole seconds of
    /// `validity` when set.
    pub fn object(&self, validity: Option<Duration>) -> CertificateSigningRequest {
        CertificateSigningRequest {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                ..ObjectMeta::default()
            },
            spec: CertificateSigningRequestSpec {
                request: ByteString(self.request_pem.clone().into_bytes()),
                signer_name: KUBE_APISERVER_CLIENT_SIGNER.to_owned(),
                usages: Some(
                    CLIENT_USAGES
                        .iter()
                        .map(|usage| (*usage).to_owned())
                        .collect(),
                ),
                expiration_seconds: validity
                    .map(|v| i32::try_from(v.as_secs()).unwrap_or(i32::MAX)),
                ..CertificateSigningRequestSpec::default()
            },
            status: None,
        }
    }
}

/// Deterministic CSR name: `prefix` + base64url-without-padding of SHA-512/256 over the items
/// `spki_der`, common name, each organization, each usage — each item written as `b64u(item) + "|"`.
pub fn csr_name(prefix: &str, spki_der: &[u8], subject: &Subject, usages: &[&str]) -> String {
    let mut hash = Sha512_256::new();
    let mut write = |item: &[u8]| {
        hash.update(URL_SAFE_NO_PAD.encode(item).as_bytes());
        hash.update(b"|");
    };
    write(spki_der);
    write(subject.common_name.as_bytes());
    for organization in &subject.organizations {
        write(organization.as_bytes());
    }
    for usage in usages {
        write(usage.as_bytes());
    }
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(hash.finalize()))
}

/// DER prefix of a SEC1 `ECPrivateKey` for P-256: SEQUENCE (119 bytes), version 1, OCTET STRING (32 bytes).
const SEC1_P256_HEAD: [u8; 7] = [0x30, 0x77, 0x02, 0x01, 0x01, 0x04, 0x20];
/// `[0] OID prime256v1` followed by the head of `[1] BIT STRING` (66 bytes, no unused bits).
const SEC1_P256_MIDDLE: [u8; 17] = [
    0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0xa1, 0x44, 0x03, 0x42,
    0x00,
];

/// Re-encodes rcgen's PKCS#8 P-256 key as SEC1 (`EC PRIVATE KEY`), the form the spec prescribes, including the
/// curve parameters so that OpenSSL-based tools read it too.
fn sec1_pem(key: &KeyPair) -> Result<String, Error> {
    let scalar = pkcs8_ec_scalar(key.serialized_der()).ok_or(Error::EncodeKey)?;
    let public = key.public_key_raw();
    if scalar.len() != 32 || public.len() != 65 {
        return Err(Error::EncodeKey);
    }
    let mut der = Vec::with_capacity(121);
    der.extend_from_slice(&SEC1_P256_HEAD);
    der.extend_from_slice(scalar);
    der.extend_from_slice(&SEC1_P256_MIDDLE);
    der.extend_from_slice(public);
    Ok(pem_encode("EC PRIVATE KEY", &der))
}

/// The private scalar inside a PKCS#8 `PrivateKeyInfo` wrapping a SEC1 `ECPrivateKey`.
fn pkcs8_ec_scalar(pkcs8: &[u8]) -> Option<&[u8]> {
    use x509_parser::der_parser::der::parse_der;
    let (_, info) = parse_der(pkcs8).ok()?;
    let wrapped = info.as_sequence().ok()?.get(2)?.as_slice().ok()?;
    let (_, ec_private_key) = parse_der(wrapped).ok()?;
    ec_private_key.as_sequence().ok()?.get(1)?.as_slice().ok()
}

/// PEM armour with 64-character lines.
pub(crate) fn pem_encode(label: &str, der: &[u8]) -> String {
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in body.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(chunk));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

#[cfg(test)]
mod tests {
    use x509_parser::prelude::{FromDer, X509CertificationRequest};

    use super::*;

    #[test]
    fn seed_subject_has_gardener_common_name_and_one_organization() {
        let subject = Subject::seed("aws-eu1").unwrap();
        assert_eq!(subject.common_name, "gardener.cloud:system:seed:aws-eu1");
        assert_eq!(
            subject.organizations,
            vec!["gardener.cloud:system:seeds".to_owned()]
        );
    }

    #[test]
    fn seed_subject_is_rejected_when_seed_name_is_empty() {
        assert!(matches!(Subject::seed(""), Err(Error::EmptySeedName)));
    }

    #[test]
    fn csr_name_matches_reference_digest() {
        // Reference computed with Go's crypto/sha512.New512_256 and base64.RawURLEncoding over the same items.
        let subject = Subject {
            common_name: "cn".to_owned(),
            organizations: vec!["o".to_owned()],
        };
        let name = csr_name("seed-csr-", b"key", &subject, &["client auth"]);
        let mut hash = Sha512_256::new();
        hash.update(b"a2V5|Y24|bw|Y2xpZW50IGF1dGg|");
        assert_eq!(
            name,
            format!("seed-csr-{}", URL_SAFE_NO_PAD.encode(hash.finalize()))
        );
    }

    #[test]
    fn csr_name_has_prefix_and_43_digest_characters() {
        let subject = Subject::seed("s").unwrap();
        let name = csr_name(SEED_CSR_NAME_PREFIX, b"spki", &subject, &CLIENT_USAGES);
        let digest = name.strip_prefix("seed-csr-").unwrap();
        assert_eq!(digest.len(), 43);
        assert!(
            digest
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
    }

    #[test]
    fn csr_name_changes_when_any_item_changes() {
        let subject = Subject::seed("s").unwrap();
        let base = csr_name("p-", b"spki", &subject, &CLIENT_USAGES);
        assert_ne!(base, csr_name("p-", b"other", &subject, &CLIENT_USAGES));
        assert_ne!(
            base,
            csr_name("p-", b"spki", &Subject::seed("t").unwrap(), &CLIENT_USAGES)
        );
        assert_ne!(base, csr_name("p-", b"spki", &subject, &["client auth"]));
    }

    #[test]
    fn generated_request_carries_subject_and_no_alternative_names() {
        let prepared = PreparedRequest::generate(&Subject::seed("s1").unwrap()).unwrap();
        let pem = x509_parser::pem::parse_x509_pem(prepared.request_pem.as_bytes())
            .unwrap()
            .1;
        assert_eq!(pem.label, "CERTIFICATE REQUEST");
        let (_, csr) = X509CertificationRequest::from_der(&pem.contents).unwrap();
        let subject = &csr.certification_request_info.subject;
        let cn: Vec<_> = subject
            .iter_common_name()
            .map(|a| a.as_str().unwrap().to_owned())
            .collect();
        let o: Vec<_> = subject
            .iter_organization()
            .map(|a| a.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(cn, vec!["gardener.cloud:system:seed:s1"]);
        assert_eq!(o, vec!["gardener.cloud:system:seeds"]);
        assert!(
            csr.requested_extensions()
                .is_none_or(|mut exts| exts.next().is_none())
        );
    }

    #[test]
    fn generated_key_is_sec1_pem_with_curve_parameters() {
        let prepared = PreparedRequest::generate(&Subject::seed("s1").unwrap()).unwrap();
        let pem = x509_parser::pem::parse_x509_pem(prepared.key_pem.expose().as_bytes())
            .unwrap()
            .1;
        assert_eq!(pem.label, "EC PRIVATE KEY");
        assert_eq!(pem.contents.len(), 121);
        assert_eq!(&pem.contents[..7], &SEC1_P256_HEAD);
        assert_eq!(&pem.contents[39..56], &SEC1_P256_MIDDLE);
    }

    #[tokio::test]
    async fn sec1_key_with_matching_certificate_builds_a_kube_client() {
        let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
        let certificate = CertificateParams::new(Vec::<String>::new())
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let key_pem = PrivateKeyPem(sec1_pem(&key).unwrap());
        let cluster = crate::kubeconfig::GardenCluster {
            server: "https://127.0.0.1:1".into(),
            insecure_skip_tls_verify: true,
            certificate_authority: crate::kubeconfig::CertificateAuthority::None,
        };
        let text = crate::kubeconfig::build(&cluster, certificate.pem().as_bytes(), &key_pem);
        let parsed = crate::kubeconfig::ParsedKubeconfig::parse(&text, "test").unwrap();
        let client = parsed.client("test").await;
        assert!(
            client.is_ok(),
            "rustls must load the sec1 key: {:?}",
            client.err()
        );
    }

    #[tokio::test]
    async fn mismatched_key_is_rejected_when_building_a_kube_client() {
        let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
        let certificate = CertificateParams::new(Vec::<String>::new())
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let mut der = x509_parser::pem::parse_x509_pem(sec1_pem(&key).unwrap().as_bytes())
            .unwrap()
            .1
            .contents;
        der[10] ^= 0xff; // corrupt the private scalar: no longer the certificate's key
        let key_pem = PrivateKeyPem(pem_encode("EC PRIVATE KEY", &der));
        let cluster = crate::kubeconfig::GardenCluster {
            server: "https://127.0.0.1:1".into(),
            insecure_skip_tls_verify: true,
            certificate_authority: crate::kubeconfig::CertificateAuthority::None,
        };
        let text = crate::kubeconfig::build(&cluster, certificate.pem().as_bytes(), &key_pem);
        let parsed = crate::kubeconfig::ParsedKubeconfig::parse(&text, "test").unwrap();
        assert!(parsed.client("test").await.is_err());
    }

    #[test]
    fn generated_names_differ_per_attempt() {
        let subject = Subject::seed("s1").unwrap();
        let a = PreparedRequest::generate(&subject).unwrap();
        let b = PreparedRequest::generate(&subject).unwrap();
        assert_ne!(a.name, b.name);
    }

    #[test]
    fn object_has_signer_usages_and_expiration_seconds_from_validity() {
        let prepared = PreparedRequest::generate(&Subject::seed("s1").unwrap()).unwrap();
        let object = prepared.object(Some(Duration::from_secs(3600)));
        assert_eq!(
            object.metadata.name.as_deref(),
            Some(prepared.name.as_str())
        );
        assert!(object.metadata.labels.is_none() && object.metadata.annotations.is_none());
        assert!(object.metadata.generate_name.is_none());
        assert_eq!(
            object.spec.signer_name,
            "kubernetes.io/kube-apiserver-client"
        );
        assert_eq!(
            object.spec.usages.as_deref(),
            Some(
                &[
                    "digital signature".to_owned(),
                    "key encipherment".to_owned(),
                    "client auth".to_owned()
                ][..]
            )
        );
        assert_eq!(object.spec.expiration_seconds, Some(3600));
        assert_eq!(prepared.object(None).spec.expiration_seconds, None);
    }

    #[test]
    fn key_debug_output_is_redacted() {
        let prepared = PreparedRequest::generate(&Subject::seed("s1").unwrap()).unwrap();
        assert!(!format!("{prepared:?}").contains("PRIVATE KEY"));
    }
}
