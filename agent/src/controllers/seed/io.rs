//! The error type and the status write the Seed controller's reconcile and delete flows share.

use super::SeedStatus;
use kube::Api;
use kube::api::{Patch, PatchParams};
use seedlet_api::core::Seed;
use seedlet_api::names::{namespaces, objects};
use serde_json::Value;

/// Errors of one Seed status reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or creating the cluster identity ConfigMap in the seed failed.
    #[error(
        "determining seed cluster identity ({}/{})",
        namespaces::KUBE_SYSTEM,
        objects::CLUSTER_IDENTITY
    )]
    ClusterIdentity(#[source] kube::Error),
    /// Reading the seed API server version failed.
    #[error("reading seed kubernetes version")]
    KubernetesVersion(#[source] kube::Error),
    /// The seed's namespace in the garden is missing or unreadable.
    #[error("failed to get seed namespace in garden cluster")]
    SeedNamespace(#[source] kube::Error),
    /// The seed cluster is too old.
    #[error("{0}")]
    Version(String),
    /// Adding or removing the Seed's finalizer failed.
    #[error("{step} finalizer of seed {seed}")]
    Finalizer {
        /// What was done.
        step: &'static str,
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Labelling a namespace of the seed cluster failed.
    #[error("labelling seed namespace {namespace}")]
    Namespace {
        /// Namespace.
        namespace: &'static str,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing or deleting the Seed's BackupBucket failed.
    #[error("{step} BackupBucket {bucket} of the seed")]
    BackupBucket {
        /// What was done.
        step: &'static str,
        /// Bucket name (the Seed UID).
        bucket: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Listing the objects that still reference a deleting Seed failed.
    #[error("listing {kind} that reference seed {seed}")]
    References {
        /// Kind listed.
        kind: &'static str,
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The Seed belongs to an agent in another seed cluster: this agent leaves it alone.
    #[error("seed {seed} is claimed by another agent: {clash}")]
    AnotherAgent {
        /// Seed name.
        seed: String,
        /// Both agents and their seed clusters.
        clash: super::another_agent::Clash,
    },
    /// Writing the Seed status failed.
    #[error("patching status of seed {seed}")]
    PatchSeed {
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl seedlet_runtime::controller::Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::ClusterIdentity(_) => "ClusterIdentityError",
            Error::KubernetesVersion(_) => "SeedVersionError",
            Error::SeedNamespace(_) => "SeedNamespaceError",
            Error::Version(_) => "K8SVersionTooOld",
            Error::Finalizer { .. } => "FinalizerError",
            Error::Namespace { .. } => "NamespaceError",
            Error::BackupBucket { .. } => "BackupBucketError",
            Error::References { .. } => "ReferencesError",
            Error::AnotherAgent { .. } => super::another_agent::REASON,
            Error::PatchSeed { .. } => "SeedPatchError",
        }
    }
}

/// Merge-patches `patch` (`{"status": …}`) into `seed`'s `/status` (the client charges it to the write budget).
pub(super) async fn write_status(
    ctx: &SeedStatus,
    seed: &Seed,
    patch: &Value,
) -> Result<(), Error> {
    let name = seed.metadata.name.as_deref().unwrap_or_default();
    let api = Api::<Seed>::all(ctx.garden.clone());
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .map(|_| ())
        .map_err(|source| Error::PatchSeed {
            seed: name.to_owned(),
            source,
        })
}
