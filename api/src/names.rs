//! Well-known Gardener names in one place: API groups, namespaces, annotation and label keys,
//! finalizers, condition types and reasons, field managers, CSR constants and naming helpers.
//!
//! Values are exact upstream strings (gardener/gardener); the specs under `spec/` cite them.

/// API groups and versions.
pub mod groups {
    /// `core.gardener.cloud`: Seeds, Shoots, ControllerRegistrations, ...
    pub const CORE: &str = "core.gardener.cloud";
    /// `core.gardener.cloud/v1beta1`.
    pub const CORE_V1BETA1: &str = "core.gardener.cloud/v1beta1";
    /// `core.gardener.cloud/v1` (only ControllerDeployment).
    pub const CORE_V1: &str = "core.gardener.cloud/v1";
    /// `extensions.gardener.cloud`: Cluster and extension resources in the seed.
    pub const EXTENSIONS: &str = "extensions.gardener.cloud";
    /// `extensions.gardener.cloud/v1alpha1`.
    pub const EXTENSIONS_V1ALPHA1: &str = "extensions.gardener.cloud/v1alpha1";
    /// `resources.gardener.cloud`: ManagedResources.
    pub const RESOURCES: &str = "resources.gardener.cloud";
    /// `resources.gardener.cloud/v1alpha1`.
    pub const RESOURCES_V1ALPHA1: &str = "resources.gardener.cloud/v1alpha1";
}

/// Namespaces and fixed object names.
pub mod namespaces {
    /// The `garden` namespace (garden: project of the operators; seed: gardenlet and extension MRs).
    pub const GARDEN: &str = "garden";
    /// Garden namespace holding one Lease per seed (`gardener-system-seed-lease/<seed>`).
    pub const SEED_LEASE: &str = "gardener-system-seed-lease";
    /// Garden namespace readable by every authenticated user (`kube-root-ca.crt`, `gardener-info`).
    pub const PUBLIC: &str = "gardener-system-public";
    /// `kube-system`: cluster identity ConfigMap, bootstrap token Secrets, self-hosted control plane.
    pub const KUBE_SYSTEM: &str = "kube-system";
    /// Prefix of the per-seed namespace in the garden (`seed-<name>`).
    pub const SEED_NAMESPACE_PREFIX: &str = "seed-";
    /// Prefix of the per-ControllerInstallation namespace in the seed (`extension-<ci>`).
    pub const EXTENSION_NAMESPACE_PREFIX: &str = "extension-";
    /// Prefix of project namespaces in the garden (`garden-<project>`).
    pub const PROJECT_NAMESPACE_PREFIX: &str = "garden-";

    /// The garden namespace of a seed: `seed-<seedName>`.
    pub fn seed_namespace(seed_name: &str) -> String {
        format!("{SEED_NAMESPACE_PREFIX}{seed_name}")
    }

    /// The seed namespace of a ControllerInstallation: `extension-<ciName>`.
    pub fn extension_namespace(controller_installation_name: &str) -> String {
        format!("{EXTENSION_NAMESPACE_PREFIX}{controller_installation_name}")
    }
}

/// Well-known objects read or written by name.
pub mod objects {
    /// ConfigMap (garden, `gardener-system-public`) with the garden CA under [`KUBE_ROOT_CA_KEY`].
    pub const KUBE_ROOT_CA: &str = "kube-root-ca.crt";
    /// Data key of [`KUBE_ROOT_CA`].
    pub const KUBE_ROOT_CA_KEY: &str = "ca.crt";
    /// ConfigMap (garden, `gardener-system-public`) with gardener component versions.
    pub const GARDENER_INFO: &str = "gardener-info";
    /// Key of [`GARDENER_INFO`] holding the API server version YAML.
    pub const GARDENER_INFO_API_SERVER_KEY: &str = "gardenerAPIServer";
    /// ConfigMap (`kube-system`) holding a cluster's identity.
    pub const CLUSTER_IDENTITY: &str = "cluster-identity";
    /// Key of the [`CLUSTER_IDENTITY`] ConfigMap.
    pub const CLUSTER_IDENTITY_KEY: &str = "cluster-identity";
    /// ConfigMap (`kube-system`) with a shoot's network CIDRs (`podNetwork`, `serviceNetwork`, `nodeNetwork`).
    pub const SHOOT_INFO: &str = "shoot-info";
    /// Data key of kubeconfig Secrets.
    pub const KUBECONFIG_KEY: &str = "kubeconfig";
    /// Name of the cluster, user and context in a gardenlet-built kubeconfig.
    pub const KUBECONFIG_CONTEXT: &str = "gardenlet";
    /// Default leader-election lock name of gardenlet.
    pub const LEADER_ELECTION_NAME: &str = "gardenlet-leader-election";
    /// Default name of the generic token kubeconfig Secret read by extensions.
    pub const GENERIC_TOKEN_KUBECONFIG: &str = "generic-token-kubeconfig";
    /// Secret in an extension namespace holding the garden access token.
    pub const GARDEN_ACCESS_EXTENSION: &str = "garden-access-extension";
    /// Prefix of the generic garden kubeconfig Secret (`generic-garden-kubeconfig-<hash8>`).
    pub const GENERIC_GARDEN_KUBECONFIG_PREFIX: &str = "generic-garden-kubeconfig-";
    /// Projected volume name for the garden kubeconfig in extension workloads.
    pub const GARDEN_KUBECONFIG_VOLUME: &str = "garden-kubeconfig";
    /// Mount path of the garden kubeconfig volume in extension workloads.
    pub const GARDEN_KUBECONFIG_MOUNT_PATH: &str =
        "/var/run/secrets/gardener.cloud/garden/generic-kubeconfig";
    /// Environment variable pointing extension workloads to the garden kubeconfig.
    pub const GARDEN_KUBECONFIG_ENV: &str = "GARDEN_KUBECONFIG";
    /// Environment variable carrying the seed name into extension workloads.
    pub const SEED_NAME_ENV: &str = "SEED_NAME";
    /// Prefix of bootstrap-token Secrets in `kube-system` (`bootstrap-token-<tokenID>`).
    pub const BOOTSTRAP_TOKEN_SECRET_PREFIX: &str = "bootstrap-token-";
    /// Prefix of the garden ServiceAccount of an extension (`extension-<ci>` in `seed-<seed>`).
    pub const EXTENSION_SERVICE_ACCOUNT_PREFIX: &str = "extension-";

    /// `bootstrap-token-<tokenID>`.
    pub fn bootstrap_token_secret(token_id: &str) -> String {
        format!("{BOOTSTRAP_TOKEN_SECRET_PREFIX}{token_id}")
    }
}

/// Annotation keys and values.
pub mod annotations {
    /// `gardener.cloud/operation`: asks a controller to perform an operation.
    pub const OPERATION: &str = "gardener.cloud/operation";
    /// Operation value on the kubeconfig Secret: rotate the client certificate.
    pub const OPERATION_RENEW: &str = "renew";
    /// Operation value on a Seed/ManagedSeed: renew the garden kubeconfig.
    pub const OPERATION_RENEW_KUBECONFIG: &str = "renew-kubeconfig";
    /// Operation value: reconcile now.
    pub const OPERATION_RECONCILE: &str = "reconcile";
    /// Operation value: migrate (extension objects, ManagedResources).
    pub const OPERATION_MIGRATE: &str = "migrate";
    /// Operation value: restore after state injection.
    pub const OPERATION_RESTORE: &str = "restore";
    /// Operation value: state injection in progress; controllers skip the object.
    pub const OPERATION_WAIT_FOR_STATE: &str = "wait-for-state";
    /// `gardener.cloud/timestamp` (RFC3339, set together with an operation or a ShootState backup).
    pub const TIMESTAMP: &str = "gardener.cloud/timestamp";
    /// `confirmation.gardener.cloud/deletion`, merge-patched to `"true"` before deleting.
    pub const CONFIRMATION_DELETION: &str = "confirmation.gardener.cloud/deletion";
    /// On a deleting Shoot: delete it without waiting for the provider's cleanup (spec §5.5).
    pub const CONFIRMATION_FORCE_DELETION: &str = "confirmation.gardener.cloud/force-deletion";
    /// Copied from a ControllerRegistration to its installation and extension namespace.
    pub const POD_SECURITY_ENFORCE: &str = "security.gardener.cloud/pod-security-enforce";
    /// On a Cluster: name of the generic token kubeconfig Secret.
    pub const GENERIC_TOKEN_KUBECONFIG_SECRET_NAME: &str =
        "generic-token-kubeconfig.secret.gardener.cloud/name";
    /// On a Shoot: ignore the shoot (truthy value).
    pub const SHOOT_IGNORE: &str = "shoot.gardener.cloud/ignore";
    /// On a Shoot: comma-separated tasks (e.g. `deployInfrastructure`).
    pub const SHOOT_TASKS: &str = "shoot.gardener.cloud/tasks";
    /// On a Shoot: a Go duration replacing the sync period (never below the configured one).
    pub const SHOOT_SYNC_PERIOD: &str = "shoot.gardener.cloud/sync-period";
    /// On a Shoot: skip readiness waits of the next reconcile.
    pub const SHOOT_SKIP_READINESS: &str = "shoot.gardener.cloud/skip-readiness";
    /// On a Seed: `true` stops every Shoot reconcile on it.
    pub const SEED_EMERGENCY_STOP_RECONCILIATIONS: &str =
        "shoot.gardener.cloud/emergency-stop-reconciliations";
    /// seedlet's simulated provider: on an extension object or its Shoot, report this error
    /// code (e.g. `ERR_INFRA_RATE_LIMITS_EXCEEDED`) instead of succeeding.
    pub const SIMULATE_ERROR: &str = "seedlet.gardener.cloud/simulate-error";
    /// seedlet's simulated provider: on an extension object or its Shoot, `<Kind>:<code>` (or
    /// `<code>` for every kind) makes the deletion of such objects report that error code and
    /// keep the object instead of releasing it.
    pub const SIMULATE_DELETE_ERROR: &str = "seedlet.gardener.cloud/simulate-delete-error";
    /// On the control-plane namespace: the shoot's `status.uid`.
    pub const SHOOT_UID: &str = "shoot.gardener.cloud/uid";
    /// HA config: failure tolerance type (`node`, `zone` or empty).
    pub const HA_FAILURE_TOLERANCE_TYPE: &str =
        "high-availability-config.resources.gardener.cloud/failure-tolerance-type";
    /// HA config: comma-separated zones.
    pub const HA_ZONES: &str = "high-availability-config.resources.gardener.cloud/zones";
    /// Secret annotation: default DNS provider type.
    pub const DNS_PROVIDER: &str = "dns.gardener.cloud/provider";
    /// Secret annotation: default DNS domain.
    pub const DNS_DOMAIN: &str = "dns.gardener.cloud/domain";
    /// Secret annotation: default DNS zone.
    pub const DNS_ZONE: &str = "dns.gardener.cloud/zone";
    /// Secret annotation: priority of a default domain (highest first).
    pub const DNS_DOMAIN_DEFAULT_PRIORITY: &str = "dns.gardener.cloud/domain-default-priority";
    /// Marker on a v1 ControllerDeployment converted from a non-helm v1beta1 `type`.
    pub const MIGRATION_CONTROLLER_DEPLOYMENT_TYPE: &str =
        "migration.controllerdeployment.gardener.cloud/type";
    /// Marker on a v1 ControllerDeployment holding the v1beta1 `providerConfig` (JSON).
    pub const MIGRATION_CONTROLLER_DEPLOYMENT_PROVIDER_CONFIG: &str =
        "migration.controllerdeployment.gardener.cloud/providerConfig";
    /// ServiceAccount name requested by a token-requestor Secret.
    pub const SERVICE_ACCOUNT_NAME: &str = "serviceaccount.resources.gardener.cloud/name";
    /// ServiceAccount labels (JSON) requested by a token-requestor Secret.
    pub const SERVICE_ACCOUNT_LABELS: &str = "serviceaccount.resources.gardener.cloud/labels";
    /// Pod template annotation kept across applies.
    pub const KUBECTL_RESTARTED_AT: &str = "kubectl.kubernetes.io/restartedAt";
}

/// Label keys and values.
pub mod labels {
    /// `gardener.cloud/role`.
    pub const ROLE: &str = "gardener.cloud/role";
    /// Role of a Seed object.
    pub const ROLE_SEED: &str = "seed";
    /// Role of a control-plane namespace.
    pub const ROLE_SHOOT: &str = "shoot";
    /// Role of an extension namespace.
    pub const ROLE_EXTENSION: &str = "extension";
    /// Role of default-domain Secrets.
    pub const ROLE_DEFAULT_DOMAIN: &str = "default-domain";
    /// Role of ConfigMaps/Secrets referenced by ControllerDeployment `resources`.
    pub const ROLE_RESOURCE_REFERENCE: &str = "resource-reference";
    /// Role of Helm OCI pull Secrets.
    pub const ROLE_HELM_PULL_SECRET: &str = "helm-pull-secret";
    /// Role of OCI CA bundle Secrets.
    pub const ROLE_OCI_CA_BUNDLE: &str = "oci-ca-bundle";
    /// Role of seed ManagedResources outside shoot namespaces.
    pub const ROLE_SEED_SYSTEM_COMPONENT: &str = "seed-system-component";
    /// Prefix of the per-seed label the API server maintains (`name.seed.gardener.cloud/<seed>=true`).
    pub const SEED_NAME_PREFIX: &str = "name.seed.gardener.cloud/";
    /// Seed provider type label (Seed, control-plane namespace).
    pub const SEED_PROVIDER: &str = "seed.gardener.cloud/provider";
    /// Seed region label.
    pub const SEED_REGION: &str = "seed.gardener.cloud/region";
    /// Marks a seed that is itself a self-hosted shoot.
    pub const SEED_SELF_HOSTED_SHOOT_CLUSTER: &str =
        "seed.gardener.cloud/self-hosted-shoot-cluster";
    /// Marks a self-hosted Shoot.
    pub const SHOOT_SELF_HOSTED: &str = "shoot.gardener.cloud/self-hosted";
    /// Shoot provider type label on the control-plane namespace.
    pub const SHOOT_PROVIDER: &str = "shoot.gardener.cloud/provider";
    /// Networking provider type label on the control-plane namespace.
    pub const NETWORKING_PROVIDER: &str = "networking.shoot.gardener.cloud/provider";
    /// Backup provider label on the control-plane namespace.
    pub const BACKUP_PROVIDER: &str = "backup.gardener.cloud/provider";
    /// Prefix of required-extension labels (`extensions.gardener.cloud/<type>=true`).
    pub const EXTENSION_TYPE_PREFIX: &str = "extensions.gardener.cloud/";
    /// Opt-out label for garden kubeconfig injection on extension workloads.
    pub const INJECT_GARDEN_KUBECONFIG: &str = "extensions.gardener.cloud/inject-garden-kubeconfig";
    /// Pod security admission level.
    pub const POD_SECURITY_ENFORCE: &str = "pod-security.kubernetes.io/enforce";
    /// HA config opt-in label.
    pub const HA_CONSIDER: &str = "high-availability-config.resources.gardener.cloud/consider";
    /// Network policy label allowing access to the (virtual) garden API server.
    pub const ACCESS_TARGET_APISERVER: &str = "networking.gardener.cloud/access-target-apiserver";
    /// On the extension namespace: the ControllerRegistration name.
    pub const CONTROLLER_REGISTRATION_NAME: &str =
        "controllerregistration.core.gardener.cloud/name";
    /// On a ControllerInstallation's ManagedResource: the installation name.
    pub const CONTROLLER_INSTALLATION_NAME: &str = "controllerinstallation-name";
    /// On a ControllerInstallation's ManagedResource: the registration name.
    pub const CONTROLLER_REGISTRATION_NAME_SHORT: &str = "controllerregistration-name";
    /// GCM hash labels on ControllerInstallations.
    pub const SEED_SPEC_HASH: &str = "seed-spec-hash";
    /// GCM hash label: registration spec.
    pub const REGISTRATION_SPEC_HASH: &str = "registration-spec-hash";
    /// GCM hash label: deployment.
    pub const DEPLOYMENT_HASH: &str = "deployment-hash";
    /// Secrets-manager ownership label key.
    pub const MANAGED_BY: &str = "managed-by";
    /// Value of [`MANAGED_BY`] for secrets-manager Secrets.
    pub const MANAGED_BY_SECRETS_MANAGER: &str = "secrets-manager";
    /// Secrets to be persisted in the ShootState (`persist=true`).
    pub const PERSIST: &str = "persist";
    /// Creator of shoot ManagedResources (`origin=gardener`).
    pub const ORIGIN: &str = "origin";
    /// Value of [`ORIGIN`] written by gardenlet.
    pub const ORIGIN_GARDENER: &str = "gardener";
    /// Purpose of token-requestor Secrets.
    pub const RESOURCES_PURPOSE: &str = "resources.gardener.cloud/purpose";
    /// Value of [`RESOURCES_PURPOSE`] for token requestors.
    pub const RESOURCES_PURPOSE_TOKEN_REQUESTOR: &str = "token-requestor";
    /// Class of token-requestor Secrets.
    pub const RESOURCES_CLASS: &str = "resources.gardener.cloud/class";
    /// Value of [`RESOURCES_CLASS`] for garden access.
    pub const RESOURCES_CLASS_GARDEN: &str = "garden";

    /// `name.seed.gardener.cloud/<seed>`.
    pub fn seed_name(seed_name: &str) -> String {
        format!("{SEED_NAME_PREFIX}{seed_name}")
    }

    /// `extensions.gardener.cloud/<type>`.
    pub fn extension_type(extension_type: &str) -> String {
        format!("{EXTENSION_TYPE_PREFIX}{extension_type}")
    }
}

/// Finalizer names.
pub mod finalizers {
    /// On ControllerInstallations (gardenlet).
    pub const CONTROLLER_INSTALLATION: &str = "core.gardener.cloud/controllerinstallation";
    /// On Seeds and ControllerRegistrations (GCM).
    pub const CONTROLLER_REGISTRATION: &str = "core.gardener.cloud/controllerregistration";
    /// On ControllerDeployments (GCM).
    pub const CONTROLLER_DEPLOYMENT: &str = "core.gardener.cloud/controllerdeployment";
    /// On ShootStates during migration (GCM).
    pub const SHOOT_STATE: &str = "core.gardener.cloud/shootstate";
    /// On Shoots (and most gardener-owned objects).
    pub const GARDENER: &str = "gardener";
    /// Legacy finalizer of the shootstate-secret controller on persisted Secrets.
    pub const LEGACY_SECRET_CONTROLLER: &str = "gardenlet.gardener.cloud/secret-controller";
    /// ManagedResource finalizer of the default (or `*`) class.
    pub const RESOURCE_MANAGER: &str = "resources.gardener.cloud/gardener-resource-manager";

    /// The ManagedResource finalizer for a class: the default for `None`, `resources` or `*`,
    /// else `resources.gardener.cloud/gardener-resource-manager-<class>`.
    pub fn resource_manager(class: Option<&str>) -> String {
        match class {
            None | Some("") | Some(super::managed_resources::DEFAULT_CLASS) | Some("*") => {
                RESOURCE_MANAGER.to_owned()
            }
            Some(class) => format!("{RESOURCE_MANAGER}-{class}"),
        }
    }
}

/// ManagedResource classes, annotations and labels (`resources.gardener.cloud`).
pub mod managed_resources {
    /// Default class (an MR without class belongs to it).
    pub const DEFAULT_CLASS: &str = "resources";
    /// Class of seed ManagedResources (extension charts, seed system components).
    pub const CLASS_SEED: &str = "seed";
    /// Class `*` handles all MRs.
    pub const CLASS_ALL: &str = "*";
    /// Ignore an MR or a desired object (truthy value).
    pub const IGNORE: &str = "resources.gardener.cloud/ignore";
    /// Keep an object when it leaves the MR (truthy value).
    pub const KEEP_OBJECT: &str = "resources.gardener.cloud/keep-object";
    /// `Ignore` mode: not applied, not listed.
    pub const MODE: &str = "resources.gardener.cloud/mode";
    /// Value of [`MODE`] that releases an object.
    pub const MODE_IGNORE: &str = "Ignore";
    /// Origin of applied objects (`<ns>/<mr>` or `<clusterID>:<ns>/<mr>`).
    pub const ORIGIN: &str = "resources.gardener.cloud/origin";
    /// "DO NOT EDIT" description on applied objects.
    pub const DESCRIPTION: &str = "resources.gardener.cloud/description";
    /// The description text written to applied objects.
    pub const DESCRIPTION_TEXT: &str = "DO NOT EDIT - This resource is managed by gardener-resource-manager.\nAny modifications are discarded and the resource is returned to the original state.";
    /// Label on applied objects: the managing component.
    pub const MANAGED_BY: &str = "resources.gardener.cloud/managed-by";
    /// Default value of [`MANAGED_BY`].
    pub const MANAGED_BY_GARDENER: &str = "gardener";
    /// Skip health and progressing checks (exact value `true`).
    pub const SKIP_HEALTH_CHECK: &str = "resources.gardener.cloud/skip-health-check";
    /// Keep live replicas of Deployments/StatefulSets.
    pub const PRESERVE_REPLICAS: &str = "resources.gardener.cloud/preserve-replicas";
    /// Keep live container resources.
    pub const PRESERVE_RESOURCES: &str = "resources.gardener.cloud/preserve-resources";
    /// Delete (and re-create) on an `Invalid` update (truthy value).
    pub const DELETE_ON_INVALID_UPDATE: &str = "resources.gardener.cloud/delete-on-invalid-update";
    /// Propagation policy for [`DELETE_ON_INVALID_UPDATE`].
    pub const DELETION_PROPAGATION_ON_INVALID_UPDATE: &str =
        "resources.gardener.cloud/deletion-propagation-on-invalid-update";
    /// Clear finalizers this long (Go duration) after deletion started.
    pub const FINALIZE_DELETION_AFTER: &str = "resources.gardener.cloud/finalize-deletion-after";
    /// Label on manifest Secrets that may be garbage collected once unreferenced.
    pub const GARBAGE_COLLECTABLE_REFERENCE: &str =
        "resources.gardener.cloud/garbage-collectable-reference";
    /// Prefix of reference annotations on an MR (`reference.resources.gardener.cloud/secret-<hash8>`).
    pub const REFERENCE_PREFIX: &str = "reference.resources.gardener.cloud/";
    /// Injected into shoot MRs' objects.
    pub const SHOOT_NO_CLEANUP: &str = "shoot.gardener.cloud/no-cleanup";
    /// Data key of a Brotli-compressed manifest stream.
    pub const DATA_KEY_BROTLI: &str = "data.yaml.br";

    /// `reference.resources.gardener.cloud/secret-<hash8>` for a Secret whose name hashes to `hash8`
    /// (first 8 hex chars of sha256(secret name); computing the hash is the caller's job).
    pub fn secret_reference_annotation(hash8: &str) -> String {
        format!("{REFERENCE_PREFIX}secret-{hash8}")
    }
}

/// ShootState and persisted-state names.
pub mod shoot_state {
    /// `gardener[].type` of a persisted Secret.
    pub const DATA_TYPE_SECRET: &str = "secret";
    /// `gardener[].type` of the machine state.
    pub const DATA_TYPE_MACHINE_STATE: &str = "machine-state";
    /// `gardener[].name` of the machine state.
    pub const MACHINE_STATE_NAME: &str = "machine-state";
}

/// Condition types.
pub mod condition_types {
    /// Seed: gardenlet heartbeat.
    pub const GARDENLET_READY: &str = "GardenletReady";
    /// Seed: all ControllerInstallations ready.
    pub const EXTENSIONS_READY: &str = "ExtensionsReady";
    /// Seed: backup buckets ready.
    pub const BACKUP_BUCKETS_READY: &str = "BackupBucketsReady";
    /// Seed: system components healthy.
    pub const SEED_SYSTEM_COMPONENTS_HEALTHY: &str = "SeedSystemComponentsHealthy";
    /// ControllerInstallation: chart valid.
    pub const VALID: &str = "Valid";
    /// ControllerInstallation: chart installed.
    pub const INSTALLED: &str = "Installed";
    /// ControllerInstallation: controller healthy.
    pub const HEALTHY: &str = "Healthy";
    /// ControllerInstallation: rollout in progress.
    pub const PROGRESSING: &str = "Progressing";
    /// ControllerInstallation: extension objects exist.
    pub const REQUIRED: &str = "Required";
    /// ManagedResource: objects applied.
    pub const RESOURCES_APPLIED: &str = "ResourcesApplied";
    /// ManagedResource: objects healthy.
    pub const RESOURCES_HEALTHY: &str = "ResourcesHealthy";
    /// ManagedResource: objects progressing.
    pub const RESOURCES_PROGRESSING: &str = "ResourcesProgressing";
    /// Shoot: API server available.
    pub const API_SERVER_AVAILABLE: &str = "APIServerAvailable";
    /// Shoot: control plane healthy.
    pub const CONTROL_PLANE_HEALTHY: &str = "ControlPlaneHealthy";
    /// Shoot: observability components healthy.
    pub const OBSERVABILITY_COMPONENTS_HEALTHY: &str = "ObservabilityComponentsHealthy";
    /// Shoot: every node ready (absent for workerless shoots).
    pub const EVERY_NODE_READY: &str = "EveryNodeReady";
    /// Shoot: system components healthy.
    pub const SYSTEM_COMPONENTS_HEALTHY: &str = "SystemComponentsHealthy";
    /// Shoot constraint: hibernation possible.
    pub const HIBERNATION_POSSIBLE: &str = "HibernationPossible";
    /// Shoot constraint: maintenance preconditions satisfied.
    pub const MAINTENANCE_PRECONDITIONS_SATISFIED: &str = "MaintenancePreconditionsSatisfied";
    /// CertificateSigningRequest condition: approved.
    pub const CSR_APPROVED: &str = "Approved";
    /// CertificateSigningRequest condition: denied.
    pub const CSR_DENIED: &str = "Denied";
    /// CertificateSigningRequest condition: failed.
    pub const CSR_FAILED: &str = "Failed";
}

/// Condition reasons and fixed messages.
pub mod reasons;

/// Field managers for server-side apply and managed-fields attribution.
pub mod field_managers {
    /// The seed agent.
    pub const AGENT: &str = "seedlet-agent";
    /// The garden-side controller.
    pub const GARDEN: &str = "seedlet-garden";
    /// The agent's ManagedResource applier (objects applied from MR manifests).
    pub const RESOURCE_MANAGER: &str = "seedlet-resource-manager";
}

/// Client-certificate and CertificateSigningRequest constants.
pub mod csr {
    /// CN prefix of a seed client certificate (`gardener.cloud:system:seed:<seed>`).
    pub const SEED_CN_PREFIX: &str = "gardener.cloud:system:seed:";
    /// The single O entry of a seed client certificate.
    pub const SEED_ORGANIZATION: &str = "gardener.cloud:system:seeds";
    /// CN prefix of a self-hosted-shoot client certificate (`...:shoot:<ns>:<name>`).
    pub const SHOOT_CN_PREFIX: &str = "gardener.cloud:system:shoot:";
    /// CN prefix of a gardenadm shoot client certificate.
    pub const GARDENADM_SHOOT_CN_PREFIX: &str = "gardener.cloud:gardenadm:shoot:";
    /// The single O entry of a shoot client certificate.
    pub const SHOOT_ORGANIZATION: &str = "gardener.cloud:system:shoots";
    /// CSR name prefix for seeds.
    pub const SEED_NAME_PREFIX: &str = "seed-csr-";
    /// CSR name prefix for self-hosted shoots.
    pub const SHOOT_NAME_PREFIX: &str = "shoot-csr-";
    /// Signer of client certificates.
    pub const SIGNER: &str = "kubernetes.io/kube-apiserver-client";
    /// Usages in request order.
    pub const USAGES: [&str; 3] = ["digital signature", "key encipherment", "client auth"];
    /// `certificates.k8s.io` (SubjectAccessReview group).
    pub const GROUP: &str = "certificates.k8s.io";
    /// Resource checked by the SubjectAccessReview.
    pub const RESOURCE: &str = "certificatesigningrequests";
    /// Subresource a seed needs `create` on.
    pub const SUBRESOURCE_SEED_CLIENT: &str = "seedclient";
    /// Subresource a shoot needs `create` on.
    pub const SUBRESOURCE_SHOOT_CLIENT: &str = "shootclient";
    /// Bootstrap-token user prefix (`system:bootstrap:<tokenID>`).
    pub const BOOTSTRAP_USER_PREFIX: &str = "system:bootstrap:";
    /// Bootstrap-token group.
    pub const BOOTSTRAPPERS_GROUP: &str = "system:bootstrappers";
    /// ServiceAccount user prefix.
    pub const SERVICE_ACCOUNT_USER_PREFIX: &str = "system:serviceaccount:";
    /// ClusterRole bound to bootstrappers.
    pub const SEED_BOOTSTRAPPER_CLUSTER_ROLE: &str = "gardener.cloud:system:seed-bootstrapper";

    /// `gardener.cloud:system:seed:<seed>`.
    pub fn seed_common_name(seed_name: &str) -> String {
        format!("{SEED_CN_PREFIX}{seed_name}")
    }

    /// The seed name of a seed client CN, `None` if the CN is not one (or names no seed).
    pub fn seed_name_from_common_name(common_name: &str) -> Option<&str> {
        common_name
            .strip_prefix(SEED_CN_PREFIX)
            .filter(|name| !name.is_empty())
    }

    /// `gardener.cloud:system:seed-bootstrapper:<ns>:<name>`: ClusterRoleBinding of a bootstrap SA.
    pub fn seed_bootstrapper_binding(namespace: &str, name: &str) -> String {
        format!("{SEED_BOOTSTRAPPER_CLUSTER_ROLE}:{namespace}:{name}")
    }
}

/// Shoot technical IDs and control-plane namespaces.
pub mod technical_id {
    /// Constant prefix of technical IDs (`shoot-`).
    pub const PREFIX: &str = "shoot-";

    /// The technical ID of a shoot: the stored `status.technicalID` if non-empty, else
    /// `shoot--<project>--<shoot>`.
    pub fn compute(stored: Option<&str>, project_name: &str, shoot_name: &str) -> String {
        match stored {
            Some(id) if !id.is_empty() => id.to_owned(),
            _ => format!("{PREFIX}-{project_name}--{shoot_name}"),
        }
    }

    /// The short ID: the technical ID with the regex `^shoot-?` stripped, exactly like upstream
    /// (`shoot-dev-foo` → `dev-foo`, `shoot--dev--foo` → `-dev--foo`).
    pub fn short(technical_id: &str) -> &str {
        match technical_id.strip_prefix("shoot") {
            Some(rest) => rest.strip_prefix('-').unwrap_or(rest),
            None => technical_id,
        }
    }

    /// Whether a namespace is a shoot control-plane namespace (both ID shapes start with `shoot-`).
    pub fn is_shoot_namespace(namespace: &str) -> bool {
        namespace.starts_with(PREFIX)
    }

    /// The project name of a project namespace (`garden-dev` → `dev`; `garden` → `garden`).
    pub fn project_of_namespace(namespace: &str) -> &str {
        namespace
            .strip_prefix(super::namespaces::PROJECT_NAMESPACE_PREFIX)
            .filter(|project| !project.is_empty())
            .unwrap_or(namespace)
    }

    /// Name of the extension BackupEntry of a shoot: `<controlPlaneNamespace>--<uid>`.
    pub fn backup_entry_name(control_plane_namespace: &str, shoot_uid: &str) -> String {
        format!("{control_plane_namespace}--{shoot_uid}")
    }

    /// The control-plane namespace of a BackupEntry name: strips an optional `source-` prefix and
    /// the trailing `--<uid>`; `None` if the name has no `--<uid>` suffix.
    pub fn control_plane_namespace_of_backup_entry(name: &str) -> Option<&str> {
        let name = name.strip_prefix("source-").unwrap_or(name);
        let (namespace, uid) = name.rsplit_once("--")?;
        (!namespace.is_empty() && !uid.is_empty()).then_some(namespace)
    }
}

/// Labels, annotations, values, condition types and reasons of the garden's shoot lifecycle
/// helpers (status label, hibernation, maintenance, quota, retry, migration).
pub mod shoot_lifecycle {
    /// Label with the shoot's health summary (`healthy`, `progressing`, `unknown`, `unhealthy`).
    pub const STATUS_LABEL: &str = "shoot.gardener.cloud/status";
    /// Annotation with the time after which a shoot with a Quota lifetime is deleted.
    pub const EXPIRATION_TIMESTAMP: &str = "shoot.gardener.cloud/expiration-timestamp";
    /// Operation annotation value asking for a retry of a failed operation.
    pub const OPERATION_RETRY: &str = "retry";
    /// Operation annotation value asking for maintenance now.
    pub const OPERATION_MAINTAIN: &str = "maintain";
    /// Operation(s) to set at the next maintenance (`;`-separated).
    pub const MAINTENANCE_OPERATION: &str = "maintenance.gardener.cloud/operation";
    /// Set to `true` when the next maintenance should retry a failed operation.
    pub const NEEDS_RETRY_OPERATION: &str =
        "maintenance.shoot.gardener.cloud/needs-retry-operation";
    /// Error code of a failure caused by provider rate limits.
    pub const ERR_INFRA_RATE_LIMITS_EXCEEDED: &str = "ERR_INFRA_RATE_LIMITS_EXCEEDED";
    /// Shoot constraint: the destination seed is ready for a control-plane migration.
    pub const READY_FOR_MIGRATION: &str = "ReadyForMigration";
    /// Annotation asking gardenlet ≤ v1.65's Migration reconciler to force the restore now.
    pub const FORCE_RESTORE: &str = "shoot.gardener.cloud/force-restore";
    /// `ReadyForMigration` reason: the destination seed is being deleted.
    pub const DESTINATION_SEED_IN_DELETION: &str = "DestinationSeedInDeletion";
    /// `ReadyForMigration` reason: the destination seed is not ready.
    pub const DESTINATION_SEED_UNREADY: &str = "DestinationSeedUnready";
    /// `ReadyForMigration` reason: the destination seed is ready.
    pub const DESTINATION_SEED_READY: &str = "DestinationSeedReady";
}

/// Whether an annotation or label value reads as true to Go's `strconv.ParseBool` (`1`, `t`, `T`,
/// `true`, `TRUE`, `True`; anything else, a missing value included, is false) — how Gardener reads
/// its boolean annotations.
pub fn parses_as_true(value: Option<&str>) -> bool {
    matches!(value, Some("1" | "t" | "T" | "true" | "TRUE" | "True"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_go_truth_values_parse_as_true() {
        for (value, expected) in [
            (Some("true"), true),
            (Some("1"), true),
            (Some("t"), true),
            (Some("T"), true),
            (Some("True"), true),
            (Some("TRUE"), true),
            (Some("yes"), false),
            (Some("tRUE"), false),
            (Some(""), false),
            (Some("false"), false),
            (None, false),
        ] {
            assert_eq!(parses_as_true(value), expected, "{value:?}");
        }
    }

    #[test]
    fn seed_namespace_is_prefixed_with_seed() {
        assert_eq!(namespaces::seed_namespace("aws"), "seed-aws");
        assert_eq!(namespaces::extension_namespace("ci-1"), "extension-ci-1");
    }

    #[test]
    fn technical_id_prefers_stored_value_over_computed_one() {
        let cases = [
            (Some("shoot-dev-foo"), "dev", "foo", "shoot-dev-foo"),
            (Some(""), "dev", "bar", "shoot--dev--bar"),
            (None, "dev", "bar", "shoot--dev--bar"),
        ];
        for (stored, project, shoot, expected) in cases {
            assert_eq!(technical_id::compute(stored, project, shoot), expected);
        }
    }

    #[test]
    fn short_id_strips_shoot_prefix_and_one_hyphen() {
        assert_eq!(technical_id::short("shoot-dev-foo"), "dev-foo");
        assert_eq!(technical_id::short("shoot--dev--foo"), "-dev--foo");
        assert_eq!(technical_id::short("kube-system"), "kube-system");
        assert!(technical_id::is_shoot_namespace("shoot--dev--foo"));
        assert!(technical_id::is_shoot_namespace("shoot-dev-foo"));
        assert!(!technical_id::is_shoot_namespace("garden"));
    }

    #[test]
    fn project_of_namespace_strips_garden_prefix() {
        assert_eq!(technical_id::project_of_namespace("garden-dev"), "dev");
        assert_eq!(technical_id::project_of_namespace("garden"), "garden");
    }

    #[test]
    fn backup_entry_name_parses_back_to_namespace() {
        let name = technical_id::backup_entry_name("shoot--dev--foo", "1234-ab");
        assert_eq!(name, "shoot--dev--foo--1234-ab");
        assert_eq!(
            technical_id::control_plane_namespace_of_backup_entry(&name),
            Some("shoot--dev--foo")
        );
        assert_eq!(
            technical_id::control_plane_namespace_of_backup_entry("source-shoot--dev--foo--uid"),
            Some("shoot--dev--foo")
        );
        assert_eq!(
            technical_id::control_plane_namespace_of_backup_entry("nouid"),
            None
        );
    }

    #[test]
    fn resource_manager_finalizer_depends_on_class() {
        assert_eq!(
            finalizers::resource_manager(None),
            "resources.gardener.cloud/gardener-resource-manager"
        );
        assert_eq!(
            finalizers::resource_manager(Some("*")),
            "resources.gardener.cloud/gardener-resource-manager"
        );
        assert_eq!(
            finalizers::resource_manager(Some("seed")),
            "resources.gardener.cloud/gardener-resource-manager-seed"
        );
    }

    #[test]
    fn seed_common_name_round_trips() {
        let cn = csr::seed_common_name("local");
        assert_eq!(cn, "gardener.cloud:system:seed:local");
        assert_eq!(csr::seed_name_from_common_name(&cn), Some("local"));
        assert_eq!(
            csr::seed_name_from_common_name("gardener.cloud:system:seed:"),
            None
        );
        assert_eq!(csr::seed_name_from_common_name("system:admin"), None);
    }
}
