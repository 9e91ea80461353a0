//! The example Shoot of the demo: CloudProfile `local`, Project `demo` with its namespace
//! `garden-demo` and Shoot `garden-demo/hello` scheduled to the demo Seed, created in the garden;
//! then the waits for what the agent does with them — the Cluster `shoot--demo--hello` embedding
//! the Shoot and its control-plane namespace in the seed — and an Infrastructure `hello` whose
//! `.status.state` the agent copies into the ShootState `garden-demo/hello` in the garden; and the
//! agent's Shoot controller taking the Shoot from `Create` 0 % to `Succeeded` 100 % over its
//! extension objects, which the demo's simulated provider answers.

use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::api::{Patch, PatchParams};
use kube::runtime::wait::await_condition;
use kube::{Api, ResourceExt};
use seedlet_api::core::{CloudProfile, Project, Shoot, ShootState};
use seedlet_api::extensions::{Cluster, Infrastructure};
use seedlet_api::names::{labels, namespaces, shoot_lifecycle, technical_id};
use serde_json::{Value, json};

use crate::Error;

/// Name of the example Project.
pub const PROJECT: &str = "demo";
/// Name of the example Shoot (and of its Infrastructure).
pub const SHOOT: &str = "hello";
/// Name of the CloudProfile the Shoot uses.
pub const CLOUD_PROFILE: &str = "local";
/// Field manager of the objects the demo creates.
const FIELD_MANAGER: &str = "seedlet-sandbox";
/// Machine image of the Shoot's worker pool (makes the garden want `OperatingSystemConfig/local`).
pub const MACHINE_IMAGE: &str = "local";
/// Network type of the Shoot (makes the garden want `Network/calico`).
pub const NETWORK_TYPE: &str = "calico";

/// The project namespace in the garden (`garden-demo`).
pub fn project_namespace() -> String {
    format!("{}{PROJECT}", namespaces::PROJECT_NAMESPACE_PREFIX)
}

/// The Shoot's technical ID: name of its Cluster and control-plane namespace in the seed.
pub fn control_plane_namespace() -> String {
    technical_id::compute(None, PROJECT, SHOOT)
}

/// The CloudProfile `local`: one Kubernetes version, machine image, machine type and region.
pub fn cloud_profile() -> Value {
    json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "CloudProfile",
        "metadata": {"name": CLOUD_PROFILE},
        "spec": {
            "type": "local",
            "kubernetes": {"versions": [{"version": "1.33.0"}]},
            "machineImages": [{"name": MACHINE_IMAGE, "versions": [{"version": "1.0.0"}]}],
            "machineTypes": [{"name": "local", "cpu": "1", "gpu": "0", "memory": "1Gi", "usable": true}],
            "regions": [{"name": "local"}]
        }
    })
}

/// The Project `demo` owning [`project_namespace`] (the garden controller creates the namespace,
/// its RBAC and the phase).
pub fn project() -> Value {
    json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Project",
        "metadata": {"name": PROJECT},
        "spec": {
            "namespace": project_namespace(),
            "owner": {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "demo-owner"},
            "members": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "demo-owner", "role": "admin"}]
        }
    })
}

/// Applies the Project `demo` (server-side apply, so a resumed landscape re-applies it); returns
/// a detail line.
///
/// # Errors
/// [`Error::Prepare`] when the garden refuses it.
pub async fn create_project(garden: &kube::Client) -> Result<String, Error> {
    Api::<Project>::all(garden.clone())
        .patch(
            PROJECT,
            &PatchParams::apply(FIELD_MANAGER),
            &Patch::Apply(&project()),
        )
        .await
        .map_err(|source| Error::Prepare {
            step: format!("apply Project {PROJECT}"),
            source,
        })?;
    Ok(format!(
        "Project {PROJECT} (namespace {})",
        project_namespace()
    ))
}

/// Waits until the garden controller reconciled the Project: phase `Ready`, its namespace
/// created and labelled; returns a detail line.
///
/// # Errors
/// [`Error::Timeout`] with the last phase seen.
pub async fn project_ready(garden: &kube::Client, timeout: Duration) -> Result<String, Error> {
    let projects: Api<Project> = Api::all(garden.clone());
    let phase_of = |project: &Project| {
        project
            .status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_default()
    };
    let waited = tokio::time::timeout(
        timeout,
        await_condition(projects.clone(), PROJECT, |project: Option<&Project>| {
            project.is_some_and(|p| phase_of(p) == "Ready")
        }),
    )
    .await;
    let what = format!("Project {PROJECT} Ready");
    if !matches!(waited, Ok(Ok(Some(_)))) {
        let last = match projects.get_opt(PROJECT).await {
            Ok(Some(project)) => format!("phase {:?}", phase_of(&project)),
            Ok(None) => "no Project".to_owned(),
            Err(error) => format!("cannot read Project: {error}"),
        };
        return Err(Error::timeout(what, timeout, last));
    }
    let namespace = project_namespace();
    let labelled = Api::<Namespace>::all(garden.clone())
        .get_opt(&namespace)
        .await
        .ok()
        .flatten()
        .and_then(|ns| ns.metadata.labels)
        .and_then(|labels| labels.get("project.gardener.cloud/name").cloned());
    match labelled {
        Some(name) => Ok(format!(
            "namespace {namespace} (project.gardener.cloud/name={name}), RBAC, phase Ready"
        )),
        None => Err(Error::timeout(
            what,
            timeout,
            format!("namespace {namespace} missing or unlabelled"),
        )),
    }
}

/// The Shoot `hello` of provider type `local`, scheduled to `seed_name`, with one worker pool.
pub fn shoot(seed_name: &str) -> Value {
    json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Shoot",
        "metadata": {"name": SHOOT, "namespace": project_namespace()},
        "spec": {
            "cloudProfile": {"kind": "CloudProfile", "name": CLOUD_PROFILE},
            "region": "local",
            "seedName": seed_name,
            "provider": {"type": "local", "workers": [{
                "name": "pool",
                "minimum": 1,
                "maximum": 2,
                "machine": {"type": "local", "image": {"name": MACHINE_IMAGE, "version": "1.0.0"}}
            }]},
            "kubernetes": {"version": "1.33.0"},
            "networking": {"type": NETWORK_TYPE, "nodes": "10.10.0.0/16"},
            // The garden's shoot-hibernation controller acts on it (hibernate on weekday
            // evenings, wake up in the morning, Berlin time).
            "hibernation": {"schedules": [
                {"start": "0 20 * * 1-5", "end": "0 8 * * 1-5", "location": "Europe/Berlin"}
            ]},
            "purpose": "evaluation"
        }
    })
}

/// The Infrastructure `hello` in the control-plane namespace, as the shoot's reconcile would
/// create it for the provider extension.
pub fn infrastructure() -> Value {
    let namespace = control_plane_namespace();
    json!({
        "apiVersion": "extensions.gardener.cloud/v1alpha1",
        "kind": "Infrastructure",
        "metadata": {"name": SHOOT, "namespace": namespace},
        "spec": {
            "type": "local",
            "region": "local",
            "secretRef": {"name": "cloudprovider", "namespace": namespace}
        }
    })
}

/// The provider state the demo writes to the Infrastructure's `.status.state`, as an extension
/// would after creating the shoot's network.
pub fn infrastructure_state() -> Value {
    json!({"network": {"vpc": "vpc-demo", "subnets": ["subnet-a", "subnet-b"]}})
}

/// Creates (server-side apply, so a resumed landscape re-applies the same objects) the
/// CloudProfile and the Shoot in the project namespace; returns a detail line.
///
/// # Errors
/// [`Error::Prepare`] naming the object that was refused.
pub async fn create(garden: &kube::Client, seed_name: &str) -> Result<String, Error> {
    let params = PatchParams::apply(FIELD_MANAGER);
    let refused = |what: String| move |source| Error::Prepare { step: what, source };
    Api::<CloudProfile>::all(garden.clone())
        .patch(CLOUD_PROFILE, &params, &Patch::Apply(&cloud_profile()))
        .await
        .map_err(refused(format!("apply CloudProfile {CLOUD_PROFILE}")))?;
    let namespace = project_namespace();
    Api::<Shoot>::namespaced(garden.clone(), &namespace)
        .patch(SHOOT, &params, &Patch::Apply(&shoot(seed_name)))
        .await
        .map_err(refused(format!("apply Shoot {namespace}/{SHOOT}")))?;
    Ok(format!(
        "CloudProfile {CLOUD_PROFILE}, Shoot {namespace}/{SHOOT} on Seed {seed_name}"
    ))
}

/// Waits until the garden controller labelled the Shoot with `shoot.gardener.cloud/status`;
/// returns the label.
///
/// # Errors
/// [`Error::Timeout`] when the label does not appear.
pub async fn status_label(garden: &kube::Client, timeout: Duration) -> Result<String, Error> {
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), &project_namespace());
    let label = |shoot: &Shoot| {
        shoot
            .metadata
            .labels
            .as_ref()
            .and_then(|labels| labels.get(shoot_lifecycle::STATUS_LABEL))
            .cloned()
    };
    let waited = tokio::time::timeout(
        timeout,
        await_condition(shoots, SHOOT, move |shoot: Option<&Shoot>| {
            shoot.and_then(label).is_some()
        }),
    )
    .await;
    match waited {
        Ok(Ok(Some(shoot))) => Ok(format!(
            "{}={}",
            shoot_lifecycle::STATUS_LABEL,
            label(&shoot).unwrap_or_default()
        )),
        _ => Err(Error::timeout(
            format!("label {} on Shoot {SHOOT}", shoot_lifecycle::STATUS_LABEL),
            timeout,
            "not labelled".to_owned(),
        )),
    }
}

/// Waits until the agent wrote the Cluster named after the technical ID, embedding the Shoot;
/// returns what it embeds.
///
/// # Errors
/// [`Error::Timeout`] with whether the Cluster existed.
pub async fn cluster(seed: &kube::Client, timeout: Duration) -> Result<String, Error> {
    let name = control_plane_namespace();
    let clusters: Api<Cluster> = Api::all(seed.clone());
    let waited = tokio::time::timeout(
        timeout,
        await_condition(clusters.clone(), &name, |cluster: Option<&Cluster>| {
            cluster.is_some_and(embeds_the_shoot)
        }),
    )
    .await;
    let what = format!(
        "Cluster {name} embedding Shoot {}/{SHOOT}",
        project_namespace()
    );
    match waited {
        Ok(Ok(Some(cluster))) => Ok(describe_cluster(&cluster)),
        Ok(Ok(None)) => Err(Error::timeout(what, timeout, "Cluster gone".to_owned())),
        Ok(Err(error)) => Err(Error::timeout(
            what,
            timeout,
            format!("watch failed: {error}"),
        )),
        Err(_) => {
            let last = match clusters.get_opt(&name).await {
                Ok(Some(_)) => "Cluster exists but embeds another Shoot".to_owned(),
                Ok(None) => "no Cluster".to_owned(),
                Err(error) => format!("cannot read Cluster: {error}"),
            };
            Err(Error::timeout(what, timeout, last))
        }
    }
}

/// Waits until the control-plane namespace exists in the seed; returns its shoot label.
///
/// # Errors
/// [`Error::Timeout`].
pub async fn control_plane(seed: &kube::Client, timeout: Duration) -> Result<String, Error> {
    let name = control_plane_namespace();
    let waited = tokio::time::timeout(
        timeout,
        await_condition(
            Api::<Namespace>::all(seed.clone()),
            &name,
            |namespace: Option<&Namespace>| namespace.is_some(),
        ),
    )
    .await;
    let what = format!("control-plane namespace {name} in the seed");
    match waited {
        Ok(Ok(namespace)) => {
            let role = namespace
                .and_then(|namespace| namespace.metadata.labels)
                .and_then(|labels| labels.get(labels::ROLE).cloned())
                .unwrap_or_default();
            Ok(format!("{}={role}", labels::ROLE))
        }
        Ok(Err(error)) => Err(Error::timeout(
            what,
            timeout,
            format!("watch failed: {error}"),
        )),
        Err(_) => Err(Error::timeout(what, timeout, "not created".to_owned())),
    }
}

/// Waits until the agent's network policy controller has written gardenlet's six policies into
/// the control-plane namespace; returns how many.
///
/// # Errors
/// [`Error::Timeout`] with the policies found last.
pub async fn network_policies(seed: &kube::Client, timeout: Duration) -> Result<String, Error> {
    use seedlet_agent::controllers::networkpolicy::desired::POLICIES;
    let namespace = control_plane_namespace();
    let api: Api<NetworkPolicy> = Api::namespaced(seed.clone(), &namespace);
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let last = match api.list(&Default::default()).await {
            Ok(list) => {
                let names: Vec<String> = list.items.iter().map(|p| p.name_any()).collect();
                if POLICIES.iter().all(|p| names.iter().any(|n| n == p)) {
                    return Ok(format!("{} policies", POLICIES.len()));
                }
                format!("[{}]", names.join(", "))
            }
            Err(error) => format!("cannot list: {error}"),
        };
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::timeout(
                format!("network policies in {namespace}"),
                timeout,
                last,
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Follows the agent's Shoot controller until the Shoot's `lastOperation` is `Succeeded` at
/// 100 % (the simulated provider answers the extension objects); returns the progress seen,
/// e.g. `Create Processing 0 % → 40 % → Succeeded 100 %`.
///
/// # Errors
/// [`Error::Timeout`] with the last operation seen.
pub async fn reconciled(garden: &kube::Client, timeout: Duration) -> Result<String, Error> {
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), &project_namespace());
    let deadline = tokio::time::Instant::now() + timeout;
    let mut seen: Vec<String> = Vec::new();
    let mut last = String::from("no lastOperation");
    loop {
        if let Ok(Some(shoot)) = shoots.get_opt(SHOOT).await
            && let Some(operation) = shoot.last_operation()
        {
            let step = format!("{:?} {}", operation.state, operation.progress);
            last = format!("{:?} {step} %: {}", operation.type_, operation.description);
            if seen.last() != Some(&step) {
                seen.push(step);
            }
            if operation.succeeded() && operation.progress == 100 {
                return Ok(format!("{:?} {} %", operation.type_, seen.join(" % → ")));
            }
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::timeout(
                format!("Shoot {SHOOT} reconciled"),
                timeout,
                last,
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Creates the Infrastructure in the control-plane namespace and writes
/// [`infrastructure_state`] through its status subresource; returns a detail line.
///
/// # Errors
/// [`Error::Prepare`] naming the write that was refused.
pub async fn write_infrastructure_state(seed: &kube::Client) -> Result<String, Error> {
    let namespace = control_plane_namespace();
    let infrastructures: Api<Infrastructure> = Api::namespaced(seed.clone(), &namespace);
    let params = PatchParams::apply(FIELD_MANAGER);
    infrastructures
        .patch(SHOOT, &params, &Patch::Apply(&infrastructure()))
        .await
        .map_err(|source| Error::Prepare {
            step: format!("apply Infrastructure {namespace}/{SHOOT}"),
            source,
        })?;
    infrastructures
        .patch_status(
            SHOOT,
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": {"state": infrastructure_state()}})),
        )
        .await
        .map_err(|source| Error::Prepare {
            step: format!("write .status.state of Infrastructure {namespace}/{SHOOT}"),
            source,
        })?;
    Ok(format!("Infrastructure/local {namespace}/{SHOOT}"))
}

/// Waits until the ShootState of the Shoot holds the Infrastructure's state; returns how many
/// entries it has.
///
/// # Errors
/// [`Error::Timeout`] with the entries as last seen.
pub async fn shoot_state(garden: &kube::Client, timeout: Duration) -> Result<String, Error> {
    let namespace = project_namespace();
    let shoot_states: Api<ShootState> = Api::namespaced(garden.clone(), &namespace);
    let waited = tokio::time::timeout(
        timeout,
        await_condition(shoot_states.clone(), SHOOT, |state: Option<&ShootState>| {
            state.is_some_and(holds_infrastructure_state)
        }),
    )
    .await;
    let what = format!("ShootState {namespace}/{SHOOT} holding Infrastructure {SHOOT}");
    match waited {
        Ok(Ok(Some(state))) => Ok(entries(entry_count(&state))),
        Ok(Ok(None)) => Err(Error::timeout(what, timeout, "ShootState gone".to_owned())),
        Ok(Err(error)) => Err(Error::timeout(
            what,
            timeout,
            format!("watch failed: {error}"),
        )),
        Err(_) => {
            let last = match shoot_states.get_opt(SHOOT).await {
                Ok(Some(state)) => format!("{}, none with the state", entries(entry_count(&state))),
                Ok(None) => "no ShootState".to_owned(),
                Err(error) => format!("cannot read ShootState: {error}"),
            };
            Err(Error::timeout(what, timeout, last))
        }
    }
}

/// Whether a Cluster embeds the example Shoot.
fn embeds_the_shoot(cluster: &Cluster) -> bool {
    cluster.spec.shoot.pointer("/metadata/name") == Some(&json!(SHOOT))
        && cluster.spec.shoot.pointer("/metadata/namespace") == Some(&json!(project_namespace()))
}

/// `Shoot ns/name, Seed s, CloudProfile c`: what a Cluster embeds.
fn describe_cluster(cluster: &Cluster) -> String {
    let name = |value: Option<&Value>| {
        value
            .and_then(|value| value.pointer("/metadata/name"))
            .and_then(Value::as_str)
            .unwrap_or("-")
            .to_owned()
    };
    format!(
        "embeds Shoot {}/{}, Seed {}, CloudProfile {}",
        project_namespace(),
        name(Some(&cluster.spec.shoot)),
        name(cluster.spec.seed.as_ref()),
        name(Some(&cluster.spec.cloud_profile)),
    )
}

/// Whether the ShootState holds the Infrastructure entry with the state the demo wrote.
fn holds_infrastructure_state(state: &ShootState) -> bool {
    // The demo's write is a merge into the state the simulated provider keeps there (its
    // migration bookkeeping), so the demo's part is what must have arrived.
    let expected = infrastructure_state();
    state.spec.extensions.iter().any(|entry| {
        entry.kind == "Infrastructure"
            && entry.name.as_deref() == Some(SHOOT)
            && entry.state.as_ref().and_then(|s| s.get("network")) == expected.get("network")
    })
}

/// Entries of a ShootState: extension states, Gardener data and copied resources.
pub fn entry_count(state: &ShootState) -> usize {
    state.spec.extensions.len() + state.spec.gardener.len() + state.spec.resources.len()
}

/// `1 entry`, `2 entries`.
pub fn entries(count: usize) -> String {
    match count {
        1 => "1 entry".to_owned(),
        n => format!("{n} entries"),
    }
}

#[cfg(test)]
mod tests {
    use seedlet_api::core::{ControllerRegistration, Seed};
    use seedlet_garden::controllers::controllerregistration::wanted::shoot_kind_types;

    use super::*;

    fn demo_seed() -> Seed {
        serde_json::from_value(json!({
            "apiVersion": "core.gardener.cloud/v1beta1",
            "kind": "Seed",
            "metadata": {"name": crate::SEED_NAME},
            "spec": {
                "provider": {"type": "local", "region": "local"},
                "dns": {"provider": {"type": "local"}},
                "ingress": {"domain": "ingress.local.seed.example.com", "controller": {"kind": "nginx"}},
                "networks": {"nodes": "172.18.0.0/16", "pods": "10.1.0.0/16", "services": "10.2.0.0/16"}
            }
        }))
        .expect("seed")
    }

    #[test]
    fn example_objects_decode_into_the_gardener_types() {
        let shoot: Shoot = serde_json::from_value(shoot(crate::SEED_NAME)).expect("shoot");
        assert_eq!(shoot.spec.seed_name.as_deref(), Some(crate::SEED_NAME));
        assert_eq!(
            shoot.cloud_profile().map(|reference| reference.name),
            Some(CLOUD_PROFILE.to_owned())
        );
        let project: Project = serde_json::from_value(project()).expect("project");
        assert_eq!(
            project.spec.namespace.as_deref(),
            Some(project_namespace().as_str())
        );
        let _: CloudProfile = serde_json::from_value(cloud_profile()).expect("cloud profile");
        let infrastructure: Infrastructure =
            serde_json::from_value(infrastructure()).expect("infrastructure");
        assert_eq!(
            infrastructure.metadata.namespace.as_deref(),
            Some("shoot--demo--hello")
        );
    }

    #[test]
    fn example_registration_covers_everything_the_example_shoot_needs() {
        let shoot: Shoot = serde_json::from_value(shoot(crate::SEED_NAME)).expect("shoot");
        let registration: ControllerRegistration =
            crate::extension::controller_registration().expect("registration");
        let covered: Vec<String> = registration
            .spec
            .resources
            .iter()
            .map(|resource| format!("{}/{}", resource.kind, resource.type_))
            .collect();
        let wanted = shoot_kind_types(&shoot, &demo_seed(), &[registration]);
        assert!(wanted.contains("Network/calico"), "{wanted:?}");
        for kind_type in &wanted {
            assert!(
                covered.contains(kind_type),
                "{kind_type} is wanted for the example shoot but not covered by {covered:?}"
            );
        }
    }

    #[test]
    fn shoot_state_counts_as_holding_the_state_only_with_the_written_value() {
        let mut state: ShootState = serde_json::from_value(json!({
            "apiVersion": "core.gardener.cloud/v1beta1",
            "kind": "ShootState",
            "metadata": {"name": SHOOT, "namespace": project_namespace()},
            "spec": {"extensions": [{"kind": "Infrastructure", "name": SHOOT, "state": {"old": true}}]}
        }))
        .expect("shoot state");
        assert!(!holds_infrastructure_state(&state));
        state.spec.extensions[0].state = Some(infrastructure_state());
        assert!(holds_infrastructure_state(&state));
        let mut merged = infrastructure_state();
        merged["createdBy"] = json!("uid");
        state.spec.extensions[0].state = Some(merged);
        assert!(
            holds_infrastructure_state(&state),
            "merged into the provider's state"
        );
        assert_eq!(entries(entry_count(&state)), "1 entry");
    }

    #[test]
    fn cluster_counts_only_when_it_embeds_the_example_shoot() {
        let mut cluster = Cluster::new(
            &control_plane_namespace(),
            seedlet_api::extensions::ClusterSpec {
                cloud_profile: json!({"metadata": {"name": CLOUD_PROFILE}}),
                seed: Some(json!({"metadata": {"name": crate::SEED_NAME}})),
                shoot: json!({"metadata": {"name": "other", "namespace": project_namespace()}}),
            },
        );
        assert!(!embeds_the_shoot(&cluster));
        cluster.spec.shoot = shoot(crate::SEED_NAME);
        assert!(embeds_the_shoot(&cluster));
        assert_eq!(
            describe_cluster(&cluster),
            "embeds Shoot garden-demo/hello, Seed local, CloudProfile local"
        );
    }
}
