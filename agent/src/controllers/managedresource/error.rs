//! The errors of a ManagedResource reconcile, each with the condition reason it is reported under.

use seedlet_api::names::reasons;

/// Errors of one ManagedResource reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The ManagedResource has no namespace.
    #[error("managed resource {name} has no namespace")]
    MissingNamespace {
        /// Name.
        name: String,
    },
    /// Adding or removing the finalizer failed.
    #[error("updating finalizer of managed resource {key}")]
    Finalizer {
        /// `namespace/name`.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// A referenced Secret could not be read.
    #[error("reading secret {secret} of managed resource {key}")]
    ReadSecret {
        /// `namespace/name` of the MR.
        key: String,
        /// Secret name.
        secret: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Resolving a kind through discovery failed.
    #[error("discovering kind {kind} for managed resource {key}")]
    Discovery {
        /// `namespace/name` of the MR.
        key: String,
        /// `apiVersion, Kind=...`.
        kind: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Applying an object failed.
    #[error("applying {object} of managed resource {key}")]
    Apply {
        /// `namespace/name` of the MR.
        key: String,
        /// `Kind namespace/name`.
        object: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The seed does not serve an object's kind: its CRD is not installed (a chart may ship a
    /// VerticalPodAutoscaler, a ServiceMonitor, … for a seed that lacks them). Retried, so a CRD
    /// installed later is picked up.
    #[error(
        "applying {object} of managed resource {key}: the CRD for {kind} is not installed in the seed"
    )]
    KindNotServed {
        /// `namespace/name` of the MR.
        key: String,
        /// `Kind namespace/name`.
        object: String,
        /// `group/Kind`.
        kind: String,
    },
    /// An object rejected an update as invalid and was deleted to be re-created on the next pass.
    #[error(
        "deleted {object} of managed resource {key} after an invalid update, re-creating on next pass"
    )]
    RecreateAfterInvalidUpdate {
        /// `namespace/name` of the MR.
        key: String,
        /// `Kind namespace/name`.
        object: String,
    },
    /// An object's deletion annotations are invalid.
    #[error("invalid annotation on {object} of managed resource {key}: {message}")]
    InvalidAnnotation {
        /// `namespace/name` of the MR.
        key: String,
        /// `Kind namespace/name`.
        object: String,
        /// What is wrong.
        message: String,
    },
    /// Pruning objects failed.
    #[error("deleting objects of managed resource {key}: {failures}")]
    Prune {
        /// `namespace/name` of the MR.
        key: String,
        /// One entry per failed object.
        failures: String,
    },
    /// Releasing a `mode=Ignore` object failed.
    #[error("releasing {object} of managed resource {key}")]
    Release {
        /// `namespace/name` of the MR.
        key: String,
        /// `Kind namespace/name`.
        object: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing the status failed.
    #[error("writing status of managed resource {key}")]
    WriteStatus {
        /// `namespace/name` of the MR.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl seedlet_runtime::controller::Reason for Error {
    fn reason(&self) -> &'static str {
        Error::reason(self)
    }
}

impl Error {
    /// The condition reason for this failure.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::ReadSecret { .. } => reasons::CANNOT_READ_SECRET,
            Error::Prune { .. } => reasons::DELETION_FAILED,
            Error::Release { .. } => reasons::RELEASE_OF_ORPHANED_RESOURCES_FAILED,
            _ => reasons::APPLY_FAILED,
        }
    }
}
