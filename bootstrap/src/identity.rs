//! `GardenIdentity`: obtains the garden credential at startup (stored kubeconfig, TLS bootstrap or static file,
//! spec §1.2) and owns the in-use credential that rotation later replaces.
//!
//! Crash safety, step by step: the key lives only in memory until the kubeconfig holding it is stored; the CSR
//! is created with a fresh key per attempt, so a restart simply makes a new one (abandoned CSRs are garbage
//! collected by the garden); the kubeconfig Secret is written before the bootstrap Secret is deleted, and an
//! existing kubeconfig is replaced only by one with a certificate that was already issued. At every point the
//! seed holds either a usable kubeconfig or the bootstrap kubeconfig.

use jiff::Timestamp;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::Api;
use kube::api::PostParams;

use crate::certificate::CertificateInfo;
use crate::cleanup::delete_bootstrap_credentials;
use crate::csr::Subject;
use crate::deadline::is_expired;
use crate::error::{Error, credential_refused};
use crate::garden_client::GardenClient;
use crate::kubeconfig::{ParsedKubeconfig, build};
use crate::observer::{BootstrapStep, report};
use crate::options::{BootstrapOptions, BootstrapSource, SecretRef};
use crate::request::request_certificate;
use crate::store::{
    bootstrap_available, delete_bootstrap_secret, kubeconfig_of, read_bootstrap_kubeconfig,
    read_secret, store_kubeconfig,
};

/// The credential in use: its kubeconfig text (as stored), parsed form and leaf certificate.
#[derive(Clone, Debug)]
pub(crate) struct Credential {
    pub(crate) text: String,
    pub(crate) parsed: ParsedKubeconfig,
    pub(crate) certificate: Option<CertificateInfo>,
}

impl Credential {
    pub(crate) fn parse(text: String, origin: &str) -> Result<Self, Error> {
        let parsed = ParsedKubeconfig::parse(&text, origin)?;
        let certificate = parsed.client_certificate(origin)?;
        Ok(Self {
            text,
            parsed,
            certificate,
        })
    }

    fn expiry(&self) -> Option<Timestamp> {
        self.certificate.as_ref().map(|c| c.not_after)
    }
}

/// The seed's identity in the garden: a [`GardenClient`] plus what is needed to keep its certificate valid.
///
/// ```no_run
/// # async fn demo(seed: kube::Client) -> Result<(), seedlet_bootstrap::Error> {
/// use seedlet_bootstrap::{BootstrapOptions, BootstrapSource, GardenIdentity, SecretRef};
/// let mut options = BootstrapOptions::new("my-seed");
/// options.kubeconfig_secret = Some(SecretRef::new("garden", "gardenlet-kubeconfig"));
/// options.bootstrap = Some(BootstrapSource::Secret(SecretRef::new("garden", "gardenlet-kubeconfig-bootstrap")));
/// let identity = GardenIdentity::establish(seed, options).await?;
/// let garden = identity.client();
/// tokio::spawn(identity.run()); // rotation, renew annotation, re-bootstrap, Seed status
/// # let _ = garden; Ok(()) }
/// ```
pub struct GardenIdentity {
    pub(crate) seed: kube::Client,
    pub(crate) options: BootstrapOptions,
    pub(crate) garden: GardenClient,
    /// `None` in static-kubeconfig mode (nothing stored, nothing rotated).
    pub(crate) credential: Option<Credential>,
    /// The kubeconfig this process wrote last, until the run loop has recorded it.
    pub(crate) stored_text: Option<String>,
}

impl GardenIdentity {
    /// Obtains a working garden client: uses the kubeconfig Secret when it holds an unexpired credential the
    /// garden accepts, otherwise bootstraps from the bootstrap kubeconfig (storing the result, then deleting the
    /// bootstrap Secret), otherwise falls back to the static kubeconfig file.
    ///
    /// A `gardener.cloud/operation=renew` annotation present at startup is acted upon by [`Self::run`].
    ///
    /// # Errors
    /// [`Error::NoCredentialSource`], [`Error::CertificateExpired`] / [`Error::CredentialRejected`] without a
    /// bootstrap kubeconfig, [`Error::BootstrapSecretEmpty`], CSR errors (denied, failed), and API errors.
    pub async fn establish(seed: kube::Client, options: BootstrapOptions) -> Result<Self, Error> {
        let Some(secret) = options.kubeconfig_secret.clone() else {
            return Self::from_static_file(seed, options).await;
        };
        let stored = read_secret(&seed, &secret)
            .await?
            .as_ref()
            .and_then(kubeconfig_of);
        let Some(text) = stored else {
            if options.bootstrap.is_some() {
                return Self::bootstrapped(seed, options, &secret).await;
            }
            return Self::from_static_file(seed, options).await;
        };
        match usable_client(text, &format!("secret {secret}")).await {
            Ok((credential, client)) => {
                let garden = GardenClient::new(client, credential.expiry());
                Ok(Self {
                    seed,
                    options,
                    garden,
                    credential: Some(credential),
                    stored_text: None,
                })
            }
            Err(unusable) if bootstrap_available(&seed, options.bootstrap.as_ref()).await => {
                tracing::warn!(error = %unusable, "stored garden credential unusable, bootstrapping again");
                Self::bootstrapped(seed, options, &secret).await
            }
            Err(unusable) => Err(unusable),
        }
    }

    /// The hot-swappable garden client; clone it freely.
    pub fn client(&self) -> GardenClient {
        self.garden.clone()
    }

    async fn bootstrapped(
        seed: kube::Client,
        options: BootstrapOptions,
        secret: &SecretRef,
    ) -> Result<Self, Error> {
        let (credential, client) = bootstrap(&seed, &options, secret).await?;
        let garden = GardenClient::new(client, credential.expiry());
        Ok(Self {
            seed,
            options,
            garden,
            credential: Some(credential),
            stored_text: None,
        })
    }

    async fn from_static_file(
        seed: kube::Client,
        options: BootstrapOptions,
    ) -> Result<Self, Error> {
        let Some(path) = options.static_kubeconfig.clone() else {
            return Err(Error::NoCredentialSource);
        };
        let text = tokio::fs::read_to_string(&path)
            .await
            .map_err(|source| Error::ReadFile {
                path: path.display().to_string(),
                source,
            })?;
        let origin = format!("file {}", path.display());
        let credential = Credential::parse(text, &origin)?;
        let client = credential.parsed.client(&origin).await?;
        let garden = GardenClient::new(client, credential.expiry());
        Ok(Self {
            seed,
            options,
            garden,
            credential: None,
            stored_text: None,
        })
    }
}

/// Runs the TLS bootstrap: CSR with the bootstrap credentials, store the kubeconfig, delete the bootstrap
/// Secret, clean the bootstrap token in the garden. Returns the new credential and a client for it.
pub(crate) async fn bootstrap(
    seed: &kube::Client,
    options: &BootstrapOptions,
    secret: &SecretRef,
) -> Result<(Credential, kube::Client), Error> {
    let source = options
        .bootstrap
        .as_ref()
        .ok_or(Error::NoCredentialSource)?;
    let origin = match source {
        BootstrapSource::Secret(bootstrap) => format!("bootstrap secret {bootstrap}"),
        BootstrapSource::File(path) => format!("bootstrap file {}", path.display()),
    };
    let bootstrap_text = read_bootstrap_kubeconfig(seed, source).await?;
    let bootstrap_kubeconfig = ParsedKubeconfig::parse(&bootstrap_text, &origin)?;
    let bootstrap_client = bootstrap_kubeconfig.client(&origin).await?;
    let subject = Subject::seed(&options.seed_name)?;
    let observer = options.observer.as_ref();
    tracing::info!(seed = %options.seed_name, "requesting garden client certificate with bootstrap credentials");
    let issued = request_certificate(
        &bootstrap_client,
        &subject,
        options.validity,
        options.approval_timeout,
        observer,
    )
    .await?;
    let text = build(
        &bootstrap_kubeconfig.cluster,
        &issued.certificate_pem,
        &issued.key_pem,
    );
    store_kubeconfig(seed, secret, &text).await?;
    report(observer, BootstrapStep::KubeconfigStored)?;
    if let BootstrapSource::Secret(bootstrap) = source {
        delete_bootstrap_secret(seed, bootstrap).await?;
        report(observer, BootstrapStep::BootstrapSecretDeleted)?;
    }
    let credential = Credential::parse(text, &format!("secret {secret}"))?;
    let client = credential
        .parsed
        .client(&format!("secret {secret}"))
        .await?;
    delete_bootstrap_credentials(&client, &issued.csr).await;
    tracing::info!(
        seed = %options.seed_name,
        serial = %issued.info.serial,
        not_after = %issued.info.not_after,
        "garden client certificate stored"
    );
    Ok((credential, client))
}

/// Parses a stored kubeconfig and checks that its certificate has not expired and that the garden accepts it.
/// A garden that cannot be reached does not make the credential unusable (it may be a transient outage).
pub(crate) async fn usable_client(
    text: String,
    origin: &str,
) -> Result<(Credential, kube::Client), Error> {
    let credential = Credential::parse(text, origin)?;
    if let Some(certificate) = &credential.certificate
        && is_expired(certificate.not_after, Timestamp::now())
    {
        return Err(Error::CertificateExpired {
            not_after: certificate.not_after,
        });
    }
    let client = credential.parsed.client(origin).await?;
    if rejected_by_garden(&client).await {
        return Err(Error::CredentialRejected);
    }
    Ok((credential, client))
}

/// Whether the garden refuses the credential (401 or a client-certificate TLS alert) on a
/// SelfSubjectAccessReview, which any authenticated user may create.
pub(crate) async fn rejected_by_garden(client: &kube::Client) -> bool {
    let api: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                group: Some("certificates.k8s.io".into()),
                resource: Some("certificatesigningrequests".into()),
                verb: Some("create".into()),
                ..ResourceAttributes::default()
            }),
            ..SelfSubjectAccessReviewSpec::default()
        },
        ..SelfSubjectAccessReview::default()
    };
    // With TLS 1.3 the server refuses a client certificate after the client's handshake is done,
    // so the refusal can also surface as a reset connection, depending on timing: a transport
    // error is asked again before it counts as "could not verify".
    let mut attempt = 1;
    loop {
        match api.create(&PostParams::default(), &review).await {
            Ok(_) => return false,
            Err(error) if credential_refused(&error) => return true,
            Err(error) if attempt < VERIFY_ATTEMPTS && !matches!(error, kube::Error::Api(_)) => {
                tracing::debug!(error = %seedlet_runtime::error_chain(&error), attempt, "verifying garden credential failed, asking again");
                tokio::time::sleep(VERIFY_RETRY_DELAY).await;
                attempt += 1;
            }
            Err(error) => {
                tracing::warn!(error = %seedlet_runtime::error_chain(&error), "could not verify garden credential, assuming it is valid");
                return false;
            }
        }
    }
}

/// How often [`rejected_by_garden`] asks after transport errors, and the pause between.
const VERIFY_ATTEMPTS: u32 = 3;
const VERIFY_RETRY_DELAY: std::time::Duration = std::time::Duration::from_millis(200);
