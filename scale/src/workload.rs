//! The objects of a busy seed: projects with shoots in the garden, ControllerRegistrations with
//! charts, and extension objects in the shoots' control-plane namespaces. Builders are pure
//! functions; `create_*` write them.

use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams};
use seedlet_api::extensions::ExtensionKind;
use serde_json::{Value, json};

use crate::Error;

/// Field manager of the harness's writes.
pub const FIELD_MANAGER: &str = "seedlet-scale";
/// The CloudProfile every shoot uses: the demo's (one Kubernetes version, machine image and
/// type, region `local`).
pub use seedlet_landscape::shoot::{CLOUD_PROFILE, cloud_profile};
/// Shoots per project.
const SHOOTS_PER_PROJECT: usize = 25;
/// Concurrent writes while creating objects.
const CREATE_CONCURRENCY: usize = 16;
/// The chart every registration deploys (a ConfigMap and a Deployment).
const CHART: &[u8] = include_bytes!("../fixtures/ext-small.tgz");

/// The extension kinds placed in every shoot namespace, in order; `K` objects are spread over
/// the shoots round-robin in this order.
pub const EXTENSION_KINDS: [ExtensionKind; 8] = [
    ExtensionKind::Infrastructure,
    ExtensionKind::Worker,
    ExtensionKind::ControlPlane,
    ExtensionKind::Network,
    ExtensionKind::OperatingSystemConfig,
    ExtensionKind::ContainerRuntime,
    ExtensionKind::DnsRecord,
    ExtensionKind::Extension,
];

/// One shoot of the workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShootName {
    /// Project name (`p03`).
    pub project: String,
    /// Shoot name (`s0042`), unique over all projects.
    pub name: String,
}

impl ShootName {
    /// The shoot for index `index`.
    pub fn new(index: usize) -> Self {
        Self {
            project: format!("p{:02}", index / SHOOTS_PER_PROJECT),
            name: format!("s{index:04}"),
        }
    }

    /// The project namespace in the garden (`garden-<project>`).
    pub fn namespace(&self) -> String {
        format!("garden-{}", self.project)
    }

    /// The technical ID: control-plane namespace and Cluster name in the seed.
    pub fn technical_id(&self) -> String {
        format!("shoot--{}--{}", self.project, self.name)
    }
}

/// One extension object of the workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtensionObject {
    /// Its kind (one of [`EXTENSION_KINDS`]).
    pub kind: &'static str,
    /// Its name.
    pub name: String,
    /// Its namespace (the shoot's technical ID).
    pub namespace: String,
}

impl ExtensionObject {
    /// `Kind/name`, unique over the workload (names embed the shoot name).
    pub fn key(&self) -> String {
        format!("{}/{}", self.kind, self.name)
    }
}

/// The `count` extension objects spread round-robin over `shoots`.
pub fn extension_objects(shoots: &[ShootName], count: usize) -> Vec<ExtensionObject> {
    if shoots.is_empty() {
        return Vec::new();
    }
    (0..count)
        .map(|index| {
            let shoot = &shoots[index % shoots.len()];
            let round = index / shoots.len();
            let kind = EXTENSION_KINDS[round % EXTENSION_KINDS.len()].as_str();
            // A second pass over the kinds (more than 8 objects per shoot) needs new names.
            let suffix = match round / EXTENSION_KINDS.len() {
                0 => String::new(),
                n => format!("-{n}"),
            };
            ExtensionObject {
                kind,
                name: format!("{}-{}{suffix}", shoot.name, kind.to_lowercase()),
                namespace: shoot.technical_id(),
            }
        })
        .collect()
}

/// The API resource of an extension kind.
pub fn extension_resource(kind: &str) -> ApiResource {
    ApiResource::from_gvk(&GroupVersionKind::gvk(
        "extensions.gardener.cloud",
        "v1alpha1",
        kind,
    ))
}

/// A minimal valid spec of an extension kind (the required fields of gardener's CRDs).
pub fn extension_spec(kind: &str, namespace: &str) -> Value {
    let secret_ref = json!({"name": "cloudprovider", "namespace": namespace});
    match kind {
        "Infrastructure" | "ControlPlane" => {
            json!({"type": "local", "region": "local", "secretRef": secret_ref})
        }
        "Worker" => {
            json!({"type": "local", "region": "local", "secretRef": secret_ref, "pools": []})
        }
        "Network" => {
            json!({"type": "calico", "podCIDR": "10.3.0.0/16", "serviceCIDR": "10.4.0.0/16"})
        }
        "OperatingSystemConfig" => json!({"type": "ubuntu", "purpose": "reconcile"}),
        "ContainerRuntime" => json!({
            "type": "gvisor",
            "binaryPath": "/usr/bin",
            "workerPool": {"name": "pool", "selector": {}}
        }),
        "DNSRecord" => json!({
            "type": "local",
            "name": "api.example.com",
            "recordType": "A",
            "values": ["192.0.2.1"],
            "secretRef": secret_ref
        }),
        _ => json!({"type": "shoot-dns-service"}),
    }
}

/// The `.status.state` written for change number `mark`: a few hundred bytes, like a small
/// provider state.
pub fn extension_state(mark: u64) -> Value {
    json!({"mark": mark, "network": {"vpc": "vpc-0123456789abcdef", "subnets": ["subnet-a", "subnet-b", "subnet-c"]}, "padding": "x".repeat(256)})
}

/// The change number in an extension state written by [`extension_state`].
pub fn mark_of(state: &Value) -> Option<u64> {
    state.get("mark").and_then(Value::as_u64)
}

/// The Shoot object for `shoot`, scheduled to `seed`.
pub fn shoot(shoot: &ShootName, seed: &str) -> Value {
    json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Shoot",
        "metadata": {"name": shoot.name, "namespace": shoot.namespace()},
        "spec": {
            "cloudProfileName": CLOUD_PROFILE,
            "region": "local",
            "seedName": seed,
            "provider": {"type": "local", "workers": [{
                "name": "pool",
                "minimum": 1,
                "maximum": 2,
                "machine": {"type": "local", "image": {"name": "local", "version": "1.0.0"}}
            }]},
            "kubernetes": {"version": "1.33.0"},
            "networking": {"type": "calico", "nodes": "10.10.0.0/16"},
            "purpose": "evaluation"
        }
    })
}

/// The Project owning namespace `garden-<name>`.
pub fn project(name: &str) -> Value {
    json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Project",
        "metadata": {"name": name},
        "spec": {"namespace": format!("garden-{name}")}
    })
}

/// ControllerDeployment + ControllerRegistration `ext-<index>` (policy Always, its own
/// Extension type so that every registration is a separate installation).
pub fn registration(index: usize) -> (Value, Value) {
    use base64::Engine as _;
    let name = registration_name(index);
    let deployment = json!({
        "apiVersion": "core.gardener.cloud/v1",
        "kind": "ControllerDeployment",
        "metadata": {"name": name},
        "helm": {
            "rawChart": base64::engine::general_purpose::STANDARD.encode(CHART),
            "values": {"greeting": format!("hello from {name}"), "replicaCount": 1}
        }
    });
    let registration = json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "ControllerRegistration",
        "metadata": {"name": name},
        "spec": {
            "resources": [{"kind": "Extension", "type": name}],
            "deployment": {"policy": "Always", "deploymentRefs": [{"name": name}]}
        }
    });
    (deployment, registration)
}

/// Name of the registration of the seed's and shoots' own provider types.
pub const PROVIDER_REGISTRATION: &str = "provider-local";

/// ControllerDeployment + ControllerRegistration `provider-local` for the kinds/types the seed
/// and the shoots require (policy OnDemand): without it the garden refuses to schedule anything
/// for the seed, as gardener-controller-manager does.
pub fn provider_registration() -> (Value, Value) {
    let (mut deployment, mut registration) = registration(0);
    deployment["metadata"]["name"] = json!(PROVIDER_REGISTRATION);
    deployment["helm"]["values"]["greeting"] = json!("provider-local");
    registration["metadata"]["name"] = json!(PROVIDER_REGISTRATION);
    registration["spec"] = json!({
        "resources": [
            {"kind": "ControlPlane", "type": "local"},
            {"kind": "Infrastructure", "type": "local"},
            {"kind": "Worker", "type": "local"},
            {"kind": "DNSRecord", "type": "local"},
            {"kind": "Network", "type": "calico"},
            {"kind": "OperatingSystemConfig", "type": "ubuntu"},
            {"kind": "OperatingSystemConfig", "type": "local"},
            {"kind": "ContainerRuntime", "type": "gvisor"},
            {"kind": "Extension", "type": "shoot-dns-service"},
            // The seed's `spec.backup` (provider local) asks for both.
            {"kind": "BackupBucket", "type": "local"},
            {"kind": "BackupEntry", "type": "local"}
        ],
        "deployment": {"policy": "OnDemand", "deploymentRefs": [{"name": PROVIDER_REGISTRATION}]}
    });
    (deployment, registration)
}

/// Name of registration number `index`.
pub fn registration_name(index: usize) -> String {
    format!("ext-{index:03}")
}

/// Creates `objects` (cluster-scoped or in their `metadata.namespace`) with bounded concurrency;
/// objects that exist already are left alone.
pub async fn create_all(client: &kube::Client, objects: Vec<Value>) -> Result<(), Error> {
    stream::iter(objects.into_iter().map(Ok))
        .try_for_each_concurrent(CREATE_CONCURRENCY, |object| create(client, object))
        .await
}

async fn create(client: &kube::Client, object: Value) -> Result<(), Error> {
    let dynamic: DynamicObject = serde_json::from_value(object).map_err(Error::Json)?;
    let types = dynamic.types.clone().unwrap_or_default();
    let gvk = GroupVersionKind::try_from(&types).map_err(|_| Error::Workload {
        what: format!(
            "object without apiVersion/kind: {:?}",
            dynamic.metadata.name
        ),
    })?;
    let resource = ApiResource::from_gvk(&gvk);
    let api: Api<DynamicObject> = match &dynamic.metadata.namespace {
        Some(namespace) => Api::namespaced_with(client.clone(), namespace, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    match api.create(&PostParams::default(), &dynamic).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(source) => Err(Error::Kube {
            what: format!(
                "create {} {}",
                gvk.kind,
                dynamic.metadata.name.unwrap_or_default()
            ),
            source,
        }),
    }
}

/// Creates the namespaces `names` if they are missing.
pub async fn ensure_namespaces(client: &kube::Client, names: &[String]) -> Result<(), Error> {
    let objects = names
        .iter()
        .map(|name| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))
        .collect();
    create_all(client, objects).await
}

/// Whether namespace `name` exists.
pub async fn namespace_exists(client: &kube::Client, name: &str) -> Result<bool, Error> {
    let api: Api<Namespace> = Api::all(client.clone());
    api.get_opt(name)
        .await
        .map(|namespace| namespace.is_some())
        .map_err(|source| Error::Kube {
            what: format!("get Namespace {name}"),
            source,
        })
}

/// Writes `.status.state` of `object` (JSON merge patch on the status subresource).
pub async fn write_state(
    client: &kube::Client,
    object: &ExtensionObject,
    mark: u64,
) -> Result<(), Error> {
    let api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        &object.namespace,
        &extension_resource(object.kind),
    );
    let patch = json!({"status": {"state": extension_state(mark)}});
    api.patch_status(
        &object.name,
        &PatchParams::apply(FIELD_MANAGER),
        &Patch::Merge(&patch),
    )
    .await
    .map(drop)
    .map_err(|source| Error::Kube {
        what: format!("patch status of {} {}", object.kind, object.name),
        source,
    })
}

/// Runs `work` for every item with bounded concurrency, failing on the first error.
pub async fn for_each_concurrent<T, F, Fut>(items: Vec<T>, work: F) -> Result<(), Error>
where
    F: Fn(T) -> Fut,
    Fut: Future<Output = Result<(), Error>>,
{
    stream::iter(items)
        .map(work)
        .buffer_unordered(CREATE_CONCURRENCY)
        .try_collect::<Vec<()>>()
        .await
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shoots_are_grouped_into_projects_with_technical_ids() {
        let first = ShootName::new(0);
        let later = ShootName::new(57);
        assert_eq!(first.namespace(), "garden-p00");
        assert_eq!(first.technical_id(), "shoot--p00--s0000");
        assert_eq!(later.project, "p02");
        assert_eq!(later.technical_id(), "shoot--p02--s0057");
    }

    #[test]
    fn extension_objects_spread_round_robin_with_unique_keys() {
        let shoots: Vec<ShootName> = (0..3).map(ShootName::new).collect();
        let objects = extension_objects(&shoots, 30);
        assert_eq!(objects.len(), 30);
        assert_eq!(objects[0].kind, "Infrastructure");
        assert_eq!(objects[3].kind, "Worker");
        assert_eq!(objects[3].namespace, "shoot--p00--s0000");
        // 10 objects per shoot: the ninth and tenth wrap around to new names.
        assert_eq!(objects[24].name, "s0000-infrastructure-1");
        let keys: std::collections::BTreeSet<String> =
            objects.iter().map(ExtensionObject::key).collect();
        assert_eq!(keys.len(), 30, "keys are unique");
        assert!(extension_objects(&[], 5).is_empty());
    }

    #[test]
    fn the_provider_registration_covers_the_seed_provider_type() {
        let (deployment, registration) = provider_registration();
        assert_eq!(deployment["metadata"]["name"], PROVIDER_REGISTRATION);
        assert_eq!(
            registration["spec"]["deployment"]["deploymentRefs"][0]["name"],
            PROVIDER_REGISTRATION
        );
        let resources = registration["spec"]["resources"].as_array().expect("list");
        for kind in ["ControlPlane", "Infrastructure", "Worker"] {
            assert!(resources.contains(&json!({"kind": kind, "type": "local"})));
        }
    }

    #[test]
    fn state_marks_round_trip() {
        assert_eq!(mark_of(&extension_state(41)), Some(41));
        assert_eq!(mark_of(&json!({"other": 1})), None);
    }

    #[test]
    fn every_kind_has_the_required_fields_of_its_crd() {
        for kind in EXTENSION_KINDS.map(ExtensionKind::as_str) {
            let spec = extension_spec(kind, "shoot--p--s");
            assert!(spec.get("type").is_some(), "{kind} has a type");
        }
        assert!(extension_spec("Worker", "n").get("pools").is_some());
        assert!(extension_spec("DNSRecord", "n").get("recordType").is_some());
    }
}
