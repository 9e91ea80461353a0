//! The serving certificate is replaced while the server runs: a TLS client connecting to a real
//! listener sees the certificate of the files at that moment.

use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::{CertificateDer, ServerName};
use seedlet_sandbox::pki::CertificateAuthority;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::*;

fn write_pair(dir: &Path, ca: &CertificateAuthority, common_name: &str) {
    let (chain, key) = ca
        .issue_serving_certificate(common_name, &["127.0.0.1"])
        .expect("serving certificate");
    // Replace both files the way a Secret volume update does: new files, then renamed in place.
    std::fs::write(dir.join("tls.crt.new"), chain).expect("tls.crt");
    std::fs::write(dir.join("tls.key.new"), key).expect("tls.key");
    std::fs::rename(dir.join("tls.crt.new"), dir.join("tls.crt")).expect("rename");
    std::fs::rename(dir.join("tls.key.new"), dir.join("tls.key")).expect("rename");
}

/// Serves TLS handshakes with `certificate` on 127.0.0.1:0 until `stop`.
async fn serve(
    certificate: &Arc<ServingCertificate>,
    stop: CancellationToken,
) -> std::net::SocketAddr {
    let acceptor = tokio_rustls::TlsAcceptor::from(certificate.server_config().expect("config"));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = stop.cancelled() => return,
            };
            if let Ok((tcp, _)) = accepted {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let _ = acceptor.accept(tcp).await;
                });
            }
        }
    });
    address
}

/// The common name of the leaf certificate `address` presents (verified against `ca`).
async fn presented_name(address: std::net::SocketAddr, ca: &CertificateAuthority) -> String {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.ca_der().clone()).expect("root");
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    let server = ServerName::try_from("127.0.0.1").expect("name");
    let stream = connector.connect(server, tcp).await.expect("handshake");
    let leaf: &CertificateDer<'_> = &stream.get_ref().1.peer_certificates().expect("certs")[0];
    let (_, parsed) = x509_parser::parse_x509_certificate(leaf).expect("x509");
    parsed
        .subject()
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .expect("common name")
        .to_owned()
}

#[tokio::test]
async fn a_replaced_pair_is_presented_and_a_broken_one_is_ignored() {
    let ca = CertificateAuthority::generate("webhook-ca").expect("ca");
    let dir = tempfile::tempdir().expect("dir");
    write_pair(dir.path(), &ca, "first");
    let certificate = ServingCertificate::open(dir.path()).expect("certificate");
    let stop = CancellationToken::new();
    let address = serve(&certificate, stop.clone()).await;
    assert_eq!(presented_name(address, &ca).await, "first");
    assert!(
        !certificate.refresh().expect("unchanged files"),
        "nothing to replace"
    );

    // Rotated files: the reload loop picks them up without a restart.
    tokio::spawn(
        certificate
            .clone()
            .keep_current(Duration::from_millis(20), stop.clone()),
    );
    write_pair(dir.path(), &ca, "second");
    let mut presented = String::new();
    for _ in 0..200 {
        presented = presented_name(address, &ca).await;
        if presented == "second" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(presented, "second");

    // A key that does not fit the certificate is refused; the last good pair stays in use.
    let other = CertificateAuthority::generate("other").expect("other ca");
    let (_, foreign_key) = other
        .issue_serving_certificate("third", &["127.0.0.1"])
        .expect("certificate");
    std::fs::write(dir.path().join("tls.key"), foreign_key).expect("write key");
    let error = certificate.refresh().expect_err("mismatched pair");
    assert!(
        error.to_string().contains("certificate and key do not fit"),
        "{error}"
    );
    assert_eq!(presented_name(address, &ca).await, "second");
    stop.cancel();
}
