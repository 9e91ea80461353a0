//! Facts about an issued client certificate, read with x509-parser: validity window, subject, serial.

use jiff::Timestamp;
use x509_parser::prelude::{FromDer, X509Certificate};

use crate::csr::Subject;
use crate::error::Error;

/// What the identity logic needs to know about the leaf certificate of a kubeconfig.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertificateInfo {
    /// Start of validity.
    pub not_before: Timestamp,
    /// End of validity.
    pub not_after: Timestamp,
    /// Subject common name and organizations.
    pub subject: Subject,
    /// Serial number, lower-case hex.
    pub serial: String,
}

impl CertificateInfo {
    /// Reads the first certificate of a PEM bundle (the leaf).
    ///
    /// # Errors
    /// [`Error::ParseCertificate`] when there is no PEM certificate or it does not parse.
    pub fn from_pem(pem: &[u8]) -> Result<Self, Error> {
        let invalid = |reason: String| Error::ParseCertificate { reason };
        let (_, block) =
            x509_parser::pem::parse_x509_pem(pem).map_err(|e| invalid(format!("pem: {e}")))?;
        if block.label != "CERTIFICATE" {
            return Err(invalid(format!("unexpected pem block {:?}", block.label)));
        }
        let (_, certificate) =
            X509Certificate::from_der(&block.contents).map_err(|e| invalid(format!("der: {e}")))?;
        let validity = certificate.validity();
        let timestamp = |time: x509_parser::time::ASN1Time| {
            Timestamp::from_second(time.timestamp()).map_err(|e| invalid(format!("validity: {e}")))
        };
        let subject = certificate.subject();
        let strings = |values: Vec<Result<&str, _>>| -> Result<Vec<String>, Error> {
            values
                .into_iter()
                .map(|value| {
                    value
                        .map(str::to_owned)
                        .map_err(|e| invalid(format!("subject: {e}")))
                })
                .collect()
        };
        let common_names = strings(subject.iter_common_name().map(|a| a.as_str()).collect())?;
        let organizations = strings(subject.iter_organization().map(|a| a.as_str()).collect())?;
        Ok(Self {
            not_before: timestamp(validity.not_before)?,
            not_after: timestamp(validity.not_after)?,
            subject: Subject {
                common_name: common_names.into_iter().next().unwrap_or_default(),
                organizations,
            },
            serial: certificate.raw_serial_as_string().replace(':', ""),
        })
    }
}

#[cfg(test)]
mod tests {
    use rcgen::{CertificateParams, DnType, KeyPair};

    use super::*;

    #[test]
    fn certificate_info_reads_validity_subject_and_serial() {
        let mut params = CertificateParams::default();
        params
            .distinguished_name
            .push(DnType::CommonName, "gardener.cloud:system:seed:s");
        params
            .distinguished_name
            .push(DnType::OrganizationName, "gardener.cloud:system:seeds");
        params.not_before = rcgen::date_time_ymd(2030, 1, 2);
        params.not_after = rcgen::date_time_ymd(2030, 1, 3);
        params.serial_number = Some(rcgen::SerialNumber::from_slice(&[0x0a, 0xbc]));
        let key = KeyPair::generate().unwrap();
        let pem = params.self_signed(&key).unwrap().pem();
        let info = CertificateInfo::from_pem(pem.as_bytes()).unwrap();
        assert_eq!(info.not_before, "2030-01-02T00:00:00Z".parse().unwrap());
        assert_eq!(info.not_after, "2030-01-03T00:00:00Z".parse().unwrap());
        assert_eq!(info.subject, Subject::seed("s").unwrap());
        assert_eq!(info.serial, "0abc");
    }

    #[test]
    fn certificate_info_fails_when_pem_is_not_a_certificate() {
        let key = KeyPair::generate().unwrap();
        assert!(matches!(
            CertificateInfo::from_pem(key.serialize_pem().as_bytes()),
            Err(Error::ParseCertificate { .. })
        ));
        assert!(matches!(
            CertificateInfo::from_pem(b"garbage"),
            Err(Error::ParseCertificate { .. })
        ));
    }
}
