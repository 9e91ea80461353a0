//! Which edges each watched kind contributes (spec §3.1), as pure functions from the object (JSON,
//! as the informers deliver it) to a graph [`Update`]. Kinds without an informer exist only as
//! the ends of these edges.

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{Kind, Update, Vertex};

const GARDEN: &str = "garden";

fn text<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn name(object: &Value) -> &str {
    text(object, "/metadata/name").unwrap_or_default()
}

fn namespace(object: &Value) -> &str {
    text(object, "/metadata/namespace").unwrap_or_default()
}

fn items<'a>(value: &'a Value, pointer: &str) -> impl Iterator<Item = &'a Value> {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The vertex of a credentials reference (`v1` Secret or `security.gardener.cloud/v1alpha1`
/// WorkloadIdentity); other kinds are skipped (Gardener would add a nil vertex).
fn credentials(reference: &Value, default_namespace: &str) -> Option<Vertex> {
    let kind = match (text(reference, "/apiVersion")?, text(reference, "/kind")?) {
        ("v1", "Secret") => Kind::Secret,
        ("security.gardener.cloud/v1alpha1", "WorkloadIdentity") => Kind::WorkloadIdentity,
        _ => return None,
    };
    let namespace = text(reference, "/namespace").unwrap_or(default_namespace);
    Some(Vertex::new(kind, namespace, text(reference, "/name")?))
}

/// The Secret of a `secretRef` (`{namespace, name}`): the field Gardener's graph read before
/// `credentialsRef` existed (Seed `spec.backup` and `spec.dns.provider`, BackupBucket `spec`, the
/// seed templates of ManagedSeeds and Gardenlets). gardener-apiserver copies it into
/// `credentialsRef`; a CRD-served garden does not, so both are read.
fn secret_reference(reference: &Value, default_namespace: &str) -> Option<Vertex> {
    let namespace = text(reference, "/namespace").unwrap_or(default_namespace);
    Some(Vertex::new(
        Kind::Secret,
        namespace,
        text(reference, "/name")?,
    ))
}

/// The vertices of a backup's credentials: `credentialsRef` and the older `secretRef` beside it.
fn backup_credentials(backup: &Value, default_namespace: &str) -> impl Iterator<Item = Vertex> {
    credentials(&backup["credentialsRef"], default_namespace)
        .into_iter()
        .chain(secret_reference(&backup["secretRef"], default_namespace))
}

/// `kube-system/bootstrap-token-<id>` of a managed seed or gardenlet `<namespace>/<name>`: the id
/// is the first 6 hex digits of SHA-256(`<namespace>--<name>`).
pub fn bootstrap_token_secret(namespace: &str, name: &str) -> String {
    let digest = Sha256::digest(format!("{namespace}--{name}").as_bytes());
    let hex: String = digest.iter().take(3).map(|b| format!("{b:02x}")).collect();
    format!("bootstrap-token-{hex}")
}

/// A Seed: its namespace, cluster identity and lease; its backup and DNS credentials (also the
/// older `secretRef`s of backup and DNS provider) and `spec.resources` in `garden`.
pub fn seed(object: &Value) -> Update {
    let seed_name = name(object);
    let vertex = Vertex::cluster(Kind::Seed, seed_name);
    let mut edges = vec![
        Vertex::cluster(Kind::Namespace, &format!("seed-{seed_name}")),
        Vertex::new(Kind::ConfigMap, "kube-system", "cluster-identity"),
        Vertex::new(Kind::Lease, "gardener-system-seed-lease", seed_name),
    ];
    let spec = &object["spec"];
    edges.extend(backup_credentials(&spec["backup"], GARDEN));
    edges.extend(backup_credentials(&spec["dns"]["provider"], GARDEN));
    edges.extend(credentials(
        &spec["dns"]["internal"]["credentialsRef"],
        GARDEN,
    ));
    edges.extend(
        items(spec, "/dns/defaults").filter_map(|d| credentials(&d["credentialsRef"], GARDEN)),
    );
    edges.extend(
        items(spec, "/resources").filter_map(|r| resource_reference(&r["resourceRef"], GARDEN)),
    );
    Update {
        edges: edges
            .into_iter()
            .map(|from| (from, vertex.clone()))
            .collect(),
        vertex: Some(vertex),
        incoming: &[
            Kind::Namespace,
            Kind::ConfigMap,
            Kind::Lease,
            Kind::Secret,
            Kind::WorkloadIdentity,
        ],
        outgoing: &[],
    }
}

/// `spec.resources[].resourceRef`: a v1 Secret or ConfigMap, or a WorkloadIdentity.
fn resource_reference(reference: &Value, namespace: &str) -> Option<Vertex> {
    let kind = match (text(reference, "/apiVersion")?, text(reference, "/kind")?) {
        ("v1", "Secret") => Kind::Secret,
        ("v1", "ConfigMap") => Kind::ConfigMap,
        ("security.gardener.cloud/v1alpha1", "WorkloadIdentity") => Kind::WorkloadIdentity,
        _ => return None,
    };
    Some(Vertex::new(kind, namespace, text(reference, "/name")?))
}

/// A Shoot: to its seeds (spec and status), and everything in its namespace it uses.
pub fn shoot(object: &Value, project_of_namespace: Option<&str>) -> Update {
    let ns = namespace(object);
    let shoot_name = name(object);
    let vertex = Vertex::new(Kind::Shoot, ns, shoot_name);
    let spec = &object["spec"];
    let mut edges: Vec<(Vertex, Vertex)> =
        [text(spec, "/seedName"), text(object, "/status/seedName")]
            .into_iter()
            .flatten()
            .map(|seed| (vertex.clone(), Vertex::cluster(Kind::Seed, seed)))
            .collect();
    let mut from = vec![Vertex::cluster(Kind::Namespace, ns)];
    if let Some(binding) = text(spec, "/secretBindingName") {
        from.push(Vertex::new(Kind::SecretBinding, ns, binding));
    }
    if let Some(binding) = text(spec, "/credentialsBindingName") {
        from.push(Vertex::new(Kind::CredentialsBinding, ns, binding));
    }
    match (
        text(spec, "/cloudProfile/kind"),
        text(spec, "/cloudProfile/name"),
    ) {
        (Some("NamespacedCloudProfile"), Some(profile)) => {
            from.push(Vertex::new(Kind::NamespacedCloudProfile, ns, profile));
        }
        (_, Some(profile)) => from.push(Vertex::cluster(Kind::CloudProfile, profile)),
        (_, None) => from.extend(
            text(spec, "/cloudProfileName").map(|p| Vertex::cluster(Kind::CloudProfile, p)),
        ),
    }
    if let Some(class) = text(spec, "/exposureClassName") {
        from.push(Vertex::cluster(Kind::ExposureClass, class));
    }
    let api_server = &spec["kubernetes"]["kubeAPIServer"];
    for pointer in [
        "/auditConfig/auditPolicy/configMapRef/name",
        "/structuredAuthentication/configMapName",
        "/structuredAuthorization/configMapName",
    ] {
        from.extend(text(api_server, pointer).map(|c| Vertex::new(Kind::ConfigMap, ns, c)));
    }
    from.extend(
        items(api_server, "/structuredAuthorization/kubeconfigs")
            .filter_map(|k| text(k, "/secretName"))
            .map(|s| Vertex::new(Kind::Secret, ns, s)),
    );
    from.extend(
        items(spec, "/dns/providers").filter_map(|p| credentials(&p["credentialsRef"], ns)),
    );
    from.extend(
        items(spec, "/resources").filter_map(|r| resource_reference(&r["resourceRef"], ns)),
    );
    for suffix in ["ca-cluster", "ssh-keypair", "ssh-keypair.old", "monitoring"] {
        from.push(Vertex::new(
            Kind::Secret,
            ns,
            &format!("{shoot_name}.{suffix}"),
        ));
    }
    from.push(Vertex::new(
        Kind::InternalSecret,
        ns,
        &format!("{shoot_name}.ca-client"),
    ));
    for suffix in ["ca-cluster", "ca-kubelet"] {
        from.push(Vertex::new(
            Kind::ConfigMap,
            ns,
            &format!("{shoot_name}.{suffix}"),
        ));
    }
    from.push(Vertex::new(Kind::ShootState, ns, shoot_name));
    let managed_issuer = text(
        object,
        "/metadata/annotations/authentication.gardener.cloud~1issuer",
    ) == Some("managed");
    if let (true, Some(project), Some(uid)) = (
        managed_issuer,
        project_of_namespace,
        text(object, "/metadata/uid"),
    ) {
        from.push(Vertex::new(
            Kind::Secret,
            "gardener-system-shoot-issuer",
            &format!("{project}--{uid}"),
        ));
    }
    edges.extend(from.into_iter().map(|f| (f, vertex.clone())));
    Update {
        vertex: Some(vertex),
        incoming: &[
            Kind::Namespace,
            Kind::SecretBinding,
            Kind::CredentialsBinding,
            Kind::CloudProfile,
            Kind::NamespacedCloudProfile,
            Kind::ExposureClass,
            Kind::ConfigMap,
            Kind::Secret,
            Kind::WorkloadIdentity,
            Kind::InternalSecret,
            Kind::ShootState,
        ],
        outgoing: &[Kind::Seed],
        edges,
    }
}

/// A core BackupBucket: its credentials (`spec.credentialsRef` or the deprecated `spec.secretRef`)
/// and generated secret, its seed and shoot.
pub fn backup_bucket(object: &Value) -> Update {
    let vertex = Vertex::cluster(Kind::BackupBucket, name(object));
    let mut edges = Vec::new();
    edges.extend(backup_credentials(&object["spec"], "").map(|c| (c, vertex.clone())));
    if let (Some(ns), Some(secret)) = (
        text(object, "/status/generatedSecretRef/namespace"),
        text(object, "/status/generatedSecretRef/name"),
    ) {
        edges.push((Vertex::new(Kind::Secret, ns, secret), vertex.clone()));
    }
    if let Some(seed) = text(object, "/spec/seedName") {
        edges.push((vertex.clone(), Vertex::cluster(Kind::Seed, seed)));
    }
    if let (Some(ns), Some(shoot)) = (
        text(object, "/spec/shootRef/namespace"),
        text(object, "/spec/shootRef/name"),
    ) {
        edges.push((vertex.clone(), Vertex::new(Kind::Shoot, ns, shoot)));
    }
    Update {
        vertex: Some(vertex),
        incoming: &[Kind::Secret, Kind::WorkloadIdentity],
        outgoing: &[Kind::Seed, Kind::Shoot],
        edges,
    }
}

/// A BackupEntry: its bucket, its seeds and its owning Shoot.
pub fn backup_entry(object: &Value) -> Update {
    let ns = namespace(object);
    let vertex = Vertex::new(Kind::BackupEntry, ns, name(object));
    let mut edges = Vec::new();
    if let Some(bucket) = text(object, "/spec/bucketName") {
        edges.push((Vertex::cluster(Kind::BackupBucket, bucket), vertex.clone()));
    }
    for seed in [
        text(object, "/spec/seedName"),
        text(object, "/status/seedName"),
    ]
    .into_iter()
    .flatten()
    {
        edges.push((vertex.clone(), Vertex::cluster(Kind::Seed, seed)));
    }
    if let Some(owner) = items(object, "/metadata/ownerReferences")
        .find(|o| o["kind"] == "Shoot")
        .and_then(|o| text(o, "/name"))
    {
        edges.push((vertex.clone(), Vertex::new(Kind::Shoot, ns, owner)));
    }
    Update {
        vertex: Some(vertex),
        incoming: &[Kind::BackupBucket],
        outgoing: &[Kind::Seed, Kind::Shoot],
        edges,
    }
}

/// A Bastion: to its seed.
pub fn bastion(object: &Value) -> Update {
    let vertex = Vertex::new(Kind::Bastion, namespace(object), name(object));
    let edges = text(object, "/spec/seedName")
        .map(|seed| (vertex.clone(), Vertex::cluster(Kind::Seed, seed)))
        .into_iter()
        .collect();
    Update {
        vertex: Some(vertex),
        incoming: &[],
        outgoing: &[Kind::Seed],
        edges,
    }
}

/// A seed-client CSR (decided by the caller from the request): to the seed of its common name.
pub fn certificate_signing_request(object: &Value, seed_of_request: Option<&str>) -> Update {
    let vertex = Vertex::cluster(Kind::CertificateSigningRequest, name(object));
    let edges = seed_of_request
        .map(|seed| (vertex.clone(), Vertex::cluster(Kind::Seed, seed)))
        .into_iter()
        .collect();
    Update {
        vertex: Some(vertex),
        incoming: &[],
        outgoing: &[Kind::Seed],
        edges,
    }
}

/// A ControllerInstallation: registration → CI → seed (and shoot); deployment → CI.
pub fn controller_installation(object: &Value) -> Update {
    let vertex = Vertex::cluster(Kind::ControllerInstallation, name(object));
    let spec = &object["spec"];
    let mut edges = Vec::new();
    if let Some(registration) = text(spec, "/registrationRef/name") {
        edges.push((
            Vertex::cluster(Kind::ControllerRegistration, registration),
            vertex.clone(),
        ));
    }
    if let Some(deployment) = text(spec, "/deploymentRef/name") {
        edges.push((
            Vertex::cluster(Kind::ControllerDeployment, deployment),
            vertex.clone(),
        ));
    }
    if let Some(seed) = text(spec, "/seedRef/name") {
        edges.push((vertex.clone(), Vertex::cluster(Kind::Seed, seed)));
    }
    if let (Some(ns), Some(shoot)) = (
        text(spec, "/shootRef/namespace"),
        text(spec, "/shootRef/name"),
    ) {
        edges.push((vertex.clone(), Vertex::new(Kind::Shoot, ns, shoot)));
    }
    Update {
        vertex: Some(vertex),
        incoming: &[Kind::ControllerRegistration, Kind::ControllerDeployment],
        outgoing: &[Kind::Seed, Kind::Shoot],
        edges,
    }
}

/// A `core.gardener.cloud/v1` ControllerDeployment: only an OCI chart's pull and CA secrets and
/// resources (Gardener leaves raw charts' resources out of the graph).
pub fn controller_deployment(object: &Value) -> Update {
    let vertex = Vertex::cluster(Kind::ControllerDeployment, name(object));
    let oci = &object["helm"]["ociRepository"];
    let mut edges = Vec::new();
    if oci.is_object() {
        for pointer in ["/pullSecretRef/name", "/caBundleSecretRef/name"] {
            edges.extend(
                text(oci, pointer).map(|s| (Vertex::new(Kind::Secret, GARDEN, s), vertex.clone())),
            );
        }
        edges.extend(
            items(object, "/resources")
                .filter_map(|r| resource_reference(&r["resourceRef"], GARDEN))
                .map(|from| (from, vertex.clone())),
        );
    }
    Update {
        vertex: Some(vertex),
        incoming: &[Kind::Secret, Kind::ConfigMap],
        outgoing: &[],
        edges,
    }
}

/// A CredentialsBinding: its Secret, WorkloadIdentity or InternalSecret.
pub fn credentials_binding(object: &Value) -> Update {
    let ns = namespace(object);
    let vertex = Vertex::new(Kind::CredentialsBinding, ns, name(object));
    let reference = &object["credentialsRef"];
    let from = if text(reference, "/apiVersion") == Some("core.gardener.cloud/v1beta1")
        && text(reference, "/kind") == Some("InternalSecret")
    {
        text(reference, "/name").map(|n| {
            Vertex::new(
                Kind::InternalSecret,
                text(reference, "/namespace").unwrap_or(ns),
                n,
            )
        })
    } else {
        credentials(reference, ns)
    };
    Update {
        edges: from.map(|f| (f, vertex.clone())).into_iter().collect(),
        vertex: Some(vertex),
        incoming: &[Kind::Secret, Kind::WorkloadIdentity, Kind::InternalSecret],
        outgoing: &[],
    }
}

/// A SecretBinding: its Secret.
pub fn secret_binding(object: &Value) -> Update {
    let ns = namespace(object);
    let vertex = Vertex::new(Kind::SecretBinding, ns, name(object));
    let from = text(object, "/secretRef/name").map(|s| {
        Vertex::new(
            Kind::Secret,
            text(object, "/secretRef/namespace").unwrap_or(ns),
            s,
        )
    });
    Update {
        edges: from.map(|f| (f, vertex.clone())).into_iter().collect(),
        vertex: Some(vertex),
        incoming: &[Kind::Secret],
        outgoing: &[],
    }
}

/// A Project: to its namespace.
pub fn project(object: &Value) -> Update {
    let vertex = Vertex::cluster(Kind::Project, name(object));
    let edges = text(object, "/spec/namespace")
        .map(|ns| (vertex.clone(), Vertex::cluster(Kind::Namespace, ns)))
        .into_iter()
        .collect();
    Update {
        vertex: Some(vertex),
        incoming: &[],
        outgoing: &[Kind::Namespace],
        edges,
    }
}

/// Whether a managed seed's gardenlet may (re-)bootstrap: its Seed does not exist, its client
/// certificate expired, or the renew-kubeconfig operation is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bootstrap {
    /// The Seed of that name exists.
    pub seed_exists: bool,
    /// Its `status.clientCertificateExpirationTimestamp` is in the past.
    pub certificate_expired: bool,
}

impl Bootstrap {
    /// The state of an existing Seed (its JSON) at `now`.
    pub fn of(seed: &Value, now: jiff::Timestamp) -> Self {
        Self {
            seed_exists: true,
            certificate_expired: certificate_expiry(seed).is_some_and(|at| at < now),
        }
    }

    /// Whether an existing Seed may bootstrap again: its client certificate expired, or `owner`
    /// (its ManagedSeed or Gardenlet) asks for `gardener.cloud/operation=renew-kubeconfig`.
    pub fn renewable(self, owner: &Value) -> bool {
        self.certificate_expired
            || text(owner, "/metadata/annotations/gardener.cloud~1operation")
                == Some("renew-kubeconfig")
    }
}

/// `status.clientCertificateExpirationTimestamp` of a Seed.
pub fn certificate_expiry(seed: &Value) -> Option<jiff::Timestamp> {
    text(seed, "/status/clientCertificateExpirationTimestamp").and_then(|t| t.parse().ok())
}

/// A ManagedSeed: `Seed:<ms>` → MS → its Shoot, MS → `Seed:<ms>`, the template's backup
/// credentials, and the bootstrap token, ServiceAccount and binding while it may bootstrap.
pub fn managed_seed(object: &Value, bootstrap: Bootstrap) -> Update {
    let ns = namespace(object);
    let ms_name = name(object);
    let vertex = Vertex::new(Kind::ManagedSeed, ns, ms_name);
    let seed = Vertex::cluster(Kind::Seed, ms_name);
    let mut edges = vec![(seed.clone(), vertex.clone()), (vertex.clone(), seed)];
    if let Some(shoot) = text(object, "/spec/shoot/name") {
        edges.push((vertex.clone(), Vertex::new(Kind::Shoot, ns, shoot)));
    }
    let template = &object["spec"]["gardenlet"]["config"]["seedConfig"];
    edges.extend(
        backup_credentials(&template["spec"]["backup"], GARDEN).map(|c| (c, vertex.clone())),
    );
    if !bootstrap.seed_exists || bootstrap.renewable(object) {
        match text(object, "/spec/gardenlet/bootstrap") {
            Some("BootstrapToken") => edges.push((
                Vertex::new(
                    Kind::Secret,
                    "kube-system",
                    &bootstrap_token_secret(ns, ms_name),
                ),
                vertex.clone(),
            )),
            Some("ServiceAccount") => {
                let account = format!("gardenlet-bootstrap-{ms_name}");
                edges.push((
                    Vertex::new(Kind::ServiceAccount, ns, &account),
                    vertex.clone(),
                ));
                edges.push((
                    Vertex::cluster(
                        Kind::ClusterRoleBinding,
                        &format!("gardener.cloud:system:seed-bootstrapper:{ns}:{account}"),
                    ),
                    vertex.clone(),
                ));
            }
            _ => {}
        }
    }
    Update {
        vertex: Some(vertex),
        incoming: &[
            Kind::Seed,
            Kind::Secret,
            Kind::WorkloadIdentity,
            Kind::ServiceAccount,
            Kind::ClusterRoleBinding,
        ],
        outgoing: &[Kind::Seed, Kind::Shoot],
        edges,
    }
}

/// A Gardenlet (`seedmanagement.gardener.cloud`): to its Seed; its template's backup credentials,
/// OCI secrets, and the bootstrap token while its existing Seed's certificate expired or renewal is
/// asked for. Self-hosted-shoot gardenlets are skipped.
pub fn gardenlet(object: &Value, bootstrap: Bootstrap) -> Option<Update> {
    let ns = namespace(object);
    let gardenlet_name = name(object);
    if gardenlet_name.starts_with("self-hosted-shoot-") {
        return None;
    }
    let vertex = Vertex::new(Kind::Gardenlet, ns, gardenlet_name);
    let mut edges = vec![(vertex.clone(), Vertex::cluster(Kind::Seed, gardenlet_name))];
    let template = &object["spec"]["config"]["seedConfig"];
    edges.extend(
        backup_credentials(&template["spec"]["backup"], GARDEN).map(|c| (c, vertex.clone())),
    );
    let oci = &object["spec"]["deployment"]["helm"]["ociRepository"];
    for pointer in ["/caBundleSecretRef/name", "/pullSecretRef/name"] {
        edges
            .extend(text(oci, pointer).map(|s| (Vertex::new(Kind::Secret, ns, s), vertex.clone())));
    }
    if bootstrap.seed_exists && bootstrap.renewable(object) {
        edges.push((
            Vertex::new(
                Kind::Secret,
                "kube-system",
                &bootstrap_token_secret(ns, gardenlet_name),
            ),
            vertex.clone(),
        ));
    }
    Some(Update {
        vertex: Some(vertex),
        incoming: &[Kind::Secret, Kind::WorkloadIdentity],
        outgoing: &[Kind::Seed],
        edges,
    })
}

/// A ServiceAccount named `gardenlet-bootstrap-*` or `extension-shoot--*`: its token secrets.
pub fn service_account(object: &Value) -> Option<Update> {
    let account = name(object);
    if !account.starts_with("gardenlet-bootstrap-") && !account.starts_with("extension-shoot--") {
        return None;
    }
    let ns = namespace(object);
    let vertex = Vertex::new(Kind::ServiceAccount, ns, account);
    let edges = items(object, "/secrets")
        .filter_map(|s| text(s, "/name"))
        .map(|s| (Vertex::new(Kind::Secret, ns, s), vertex.clone()))
        .collect();
    Some(Update {
        vertex: Some(vertex),
        incoming: &[Kind::Secret],
        outgoing: &[],
        edges,
    })
}

#[cfg(test)]
#[path = "edges_tests.rs"]
mod tests;
