//! Condition reasons and fixed condition messages (exact upstream strings).

/// Reason of a freshly initialised condition.
pub const CONDITION_INITIALIZED: &str = "ConditionInitialized";
/// Message of a freshly initialised condition.
pub const CONDITION_INITIALIZED_MESSAGE: &str =
    "The condition has been initialized but its semantic check has not been performed yet.";
/// Reason of an Unknown condition whose check failed to run.
pub const CONDITION_CHECK_ERROR: &str = "ConditionCheckError";
/// Status unknown (stale heartbeat).
pub const STATUS_UNKNOWN: &str = "StatusUnknown";

// --- Seed heartbeat and lifecycle ---
/// GardenletReady True.
pub const GARDENLET_READY: &str = "GardenletReady";
/// GardenletReady True message.
pub const GARDENLET_READY_MESSAGE: &str = "Gardenlet is posting ready status.";
/// GardenletReady Unknown message (stale lease).
pub const GARDENLET_STOPPED_POSTING_MESSAGE: &str = "Gardenlet stopped posting status updates.";
/// Shoot conditions Unknown message when the seed stopped heart-beating.
pub const GARDENLET_STOPPED_HEARTBEATS_MESSAGE: &str = "Gardenlet stopped sending heartbeats.";
/// Warning event reason when rotation failed.
pub const CERTIFICATE_ROTATION_FAILED: &str = "GardenletCertificateRotationFailed";

// --- CSR approval ---
/// Approved CSR reason.
pub const CSR_AUTO_APPROVED: &str = "AutoApproved";
/// Approved CSR message.
pub const CSR_AUTO_APPROVED_MESSAGE: &str =
    "Auto approving gardenlet client certificate after SubjectAccessReview.";
/// Denied CSR reason.
pub const CSR_REQUEST_DENIED: &str = "RequestDenied";

// --- Seed ExtensionsReady ---
/// Some ControllerInstallation not valid.
pub const NOT_ALL_EXTENSIONS_VALID: &str = "NotAllExtensionsValid";
/// Some ControllerInstallation not installed.
pub const NOT_ALL_EXTENSIONS_INSTALLED: &str = "NotAllExtensionsInstalled";
/// Some ControllerInstallation not healthy.
pub const NOT_ALL_EXTENSIONS_HEALTHY: &str = "NotAllExtensionsHealthy";
/// Some ControllerInstallation progressing.
pub const SOME_EXTENSIONS_PROGRESSING: &str = "SomeExtensionsProgressing";
/// All ready.
pub const ALL_EXTENSIONS_READY: &str = "AllExtensionsReady";
/// All ready message.
pub const ALL_EXTENSIONS_READY_MESSAGE: &str =
    "All extensions installed into the seed cluster are ready and healthy.";

// --- ControllerInstallation Valid ---
/// Valid True.
pub const REGISTRATION_VALID: &str = "RegistrationValid";
/// Valid False: registration missing.
pub const REGISTRATION_NOT_FOUND: &str = "RegistrationNotFound";
/// Valid Unknown: registration read failed.
pub const REGISTRATION_READ_ERROR: &str = "RegistrationReadError";
/// Valid False: seed missing.
pub const SEED_NOT_FOUND: &str = "SeedNotFound";
/// Valid/Installed/Healthy/Progressing Unknown: seed-side read failed.
pub const SEED_READ_ERROR: &str = "SeedReadError";
/// Valid False: values undecodable.
pub const CHART_INFORMATION_INVALID: &str = "ChartInformationInvalid";
/// Valid False: value templates failed.
pub const RENDERING_HELM_VALUES_FAILED: &str = "RenderingHelmValuesFailed";
/// Valid False: OCI pull failed.
pub const OCI_CHART_CANNOT_BE_PULLED: &str = "OCIChartCannotBePulled";
/// Valid False: chart rendering failed.
pub const CHART_CANNOT_BE_RENDERED: &str = "ChartCannotBeRendered";

// --- ControllerInstallation Installed / Healthy / Progressing / Required ---
/// Installed False: waiting for the MR.
pub const INSTALLATION_PENDING: &str = "InstallationPending";
/// Installed False: MR write failed.
pub const INSTALLATION_FAILED: &str = "InstallationFailed";
/// Installed True.
pub const INSTALLATION_SUCCESSFUL: &str = "InstallationSuccessful";
/// Installed False: deletion in progress.
pub const DELETION_PENDING: &str = "DeletionPending";
/// Installed False: deletion failed.
pub const DELETION_FAILED: &str = "DeletionFailed";
/// Installed False: deletion done.
pub const DELETION_SUCCESSFUL: &str = "DeletionSuccessful";
/// Healthy True.
pub const CONTROLLER_HEALTHY: &str = "ControllerHealthy";
/// Healthy False.
pub const CONTROLLER_NOT_HEALTHY: &str = "ControllerNotHealthy";
/// Progressing False.
pub const CONTROLLER_ROLLED_OUT: &str = "ControllerRolledOut";
/// Progressing True.
pub const CONTROLLER_NOT_ROLLED_OUT: &str = "ControllerNotRolledOut";
/// Required True.
pub const EXTENSION_OBJECTS_EXIST: &str = "ExtensionObjectsExist";
/// Required False.
pub const NO_EXTENSION_OBJECTS: &str = "NoExtensionObjects";
/// Required False message.
pub const NO_EXTENSION_OBJECTS_MESSAGE: &str = "no extension objects exist in the seed having the kind/type combinations the controller is responsible for";
/// Valid True message.
pub const REGISTRATION_VALID_MESSAGE: &str = "chart could be rendered successfully.";
/// Installed True message.
pub const INSTALLATION_SUCCESSFUL_MESSAGE: &str =
    "The controller was successfully installed in the seed cluster.";
/// Installed False message after a completed deletion.
pub const DELETION_SUCCESSFUL_MESSAGE: &str = "Deletion of old resources succeeded.";
/// Healthy True message.
pub const CONTROLLER_HEALTHY_MESSAGE: &str =
    "The controller running in the seed cluster is healthy.";
/// Progressing False message.
pub const CONTROLLER_ROLLED_OUT_MESSAGE: &str = "The controller has been rolled out successfully.";

// --- ManagedResource ---
/// Applied/Healthy True, Progressing False for ignored MRs.
pub const MANAGED_RESOURCE_IGNORED: &str = "ManagedResourceIgnored";
/// Message for ignored MRs.
pub const MANAGED_RESOURCE_IGNORED_MESSAGE: &str = "ManagedResource is marked to be ignored.";
/// Applied False: Secret unreadable.
pub const CANNOT_READ_SECRET: &str = "CannotReadSecret";
/// Healthy/Progressing Unknown after a change.
pub const CHECKS_PENDING: &str = "ChecksPending";
/// Applied Progressing.
pub const APPLY_PROGRESSING: &str = "ApplyProgressing";
/// Applied False: apply failed.
pub const APPLY_FAILED: &str = "ApplyFailed";
/// Applied True.
pub const APPLY_SUCCEEDED: &str = "ApplySucceeded";
/// Applied True message.
pub const APPLY_SUCCEEDED_MESSAGE: &str = "All resources are applied.";
/// Applied False: manifests undecodable.
pub const DECODING_FAILED: &str = "DecodingFailed";
/// Applied False: releasing orphans failed.
pub const RELEASE_OF_ORPHANED_RESOURCES_FAILED: &str = "ReleaseOfOrphanedResourcesFailed";
/// Deletion message for Healthy/Progressing.
pub const DELETION_PENDING_MESSAGE: &str = "The resources are currently being deleted.";
/// Healthy: the health check itself failed.
pub const HEALTH_CHECK_ERROR: &str = "HealthCheckError";
/// Healthy True.
pub const RESOURCES_HEALTHY: &str = "ResourcesHealthy";
/// Healthy True message.
pub const RESOURCES_HEALTHY_MESSAGE: &str = "All resources are healthy.";
/// Progressing False.
pub const RESOURCES_ROLLED_OUT: &str = "ResourcesRolledOut";
/// Progressing False message.
pub const RESOURCES_ROLLED_OUT_MESSAGE: &str = "All resources have been fully rolled out.";

/// `<Kind>Missing` (Healthy False).
pub fn kind_missing(kind: &str) -> String {
    format!("{kind}Missing")
}

/// `<Kind>Unhealthy` (Healthy False).
pub fn kind_unhealthy(kind: &str) -> String {
    format!("{kind}Unhealthy")
}

/// `<Kind>Progressing` (Progressing True).
pub fn kind_progressing(kind: &str) -> String {
    format!("{kind}Progressing")
}
