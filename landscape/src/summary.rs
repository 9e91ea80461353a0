//! The status summary printed once the landscape is Ready, and how to look around with kubectl.

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use seedlet_api::core::{ControllerInstallation, Seed, ShootState};
use seedlet_api::extensions::Cluster;
use seedlet_api::names::namespaces;

use crate::files::StateDir;
use crate::shoot;

/// Prints the Seed's conditions, the Lease age and the client certificate expiry, read fresh from
/// the garden, then the example Shoot's Cluster (seed) and ShootState (garden). Read errors are
/// printed in place of the value: the summary never fails the run.
pub async fn print(garden: &kube::Client, seed: &kube::Client, seed_name: &str) {
    let now = jiff::Timestamp::now();
    println!();
    println!("Seed {seed_name}:");
    let seeds: Api<Seed> = Api::all(garden.clone());
    match seeds.get(seed_name).await {
        Ok(seed) => {
            let status = seed.status.unwrap_or_default();
            for condition in &status.conditions {
                println!(
                    "  condition {:<22} {:<8} {:<24} {}",
                    condition.type_, condition.status, condition.reason, condition.message
                );
            }
            match status.client_certificate_expiration_timestamp {
                Some(expiry) => println!(
                    "  client certificate expires {} (in {})",
                    expiry.0,
                    age(now, expiry.0, true)
                ),
                None => println!("  client certificate expiry not reported yet"),
            }
        }
        Err(error) => println!("  cannot read Seed: {error}"),
    }
    print_installations(garden, seed_name).await;
    let leases: Api<Lease> = Api::namespaced(garden.clone(), namespaces::SEED_LEASE);
    match leases.get(seed_name).await {
        Ok(lease) => {
            let renewed = lease.spec.and_then(|spec| spec.renew_time);
            match renewed {
                Some(time) => println!(
                    "  lease {}/{seed_name} renewed {} ago",
                    namespaces::SEED_LEASE,
                    age(now, time.0, false)
                ),
                None => println!(
                    "  lease {}/{seed_name} never renewed",
                    namespaces::SEED_LEASE
                ),
            }
        }
        Err(error) => println!("  cannot read Lease: {error}"),
    }
    print_example_shoot(garden, seed).await;
}

/// Prints whether the example Shoot's Cluster, control-plane namespace and ShootState exist.
async fn print_example_shoot(garden: &kube::Client, seed: &kube::Client) {
    let technical_id = shoot::control_plane_namespace();
    let project_namespace = shoot::project_namespace();
    println!();
    println!("Shoot {project_namespace}/{}:", shoot::SHOOT);
    let cluster = Api::<Cluster>::all(seed.clone())
        .get_opt(&technical_id)
        .await;
    let namespace = Api::<Namespace>::all(seed.clone())
        .get_opt(&technical_id)
        .await;
    let state = Api::<ShootState>::namespaced(garden.clone(), &project_namespace)
        .get_opt(shoot::SHOOT)
        .await;
    let lines = match (cluster, namespace, state) {
        (Ok(cluster), Ok(namespace), Ok(state)) => shoot_lines(
            &technical_id,
            cluster.as_ref(),
            namespace.is_some(),
            state.as_ref(),
        ),
        (Err(error), _, _) => vec![format!("cannot read Cluster {technical_id}: {error}")],
        (_, Err(error), _) => vec![format!("cannot read namespace {technical_id}: {error}")],
        (_, _, Err(error)) => vec![format!("cannot read ShootState: {error}")],
    };
    for line in lines {
        println!("  {line}");
    }
}

/// The summary lines of the example Shoot: its Cluster (what it embeds), its control-plane
/// namespace, and its ShootState (entries and which extension objects they hold).
fn shoot_lines(
    technical_id: &str,
    cluster: Option<&Cluster>,
    namespace_present: bool,
    state: Option<&ShootState>,
) -> Vec<String> {
    let cluster = match cluster {
        Some(cluster) => {
            let shoot = cluster
                .spec
                .shoot
                .pointer("/metadata/name")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("-");
            format!("Cluster {technical_id} (seed) present, embeds Shoot {shoot}")
        }
        None => format!("Cluster {technical_id} (seed) missing"),
    };
    let namespace = if namespace_present {
        format!("control-plane namespace {technical_id} (seed) present")
    } else {
        format!("control-plane namespace {technical_id} (seed) missing")
    };
    let state = match state {
        Some(state) => {
            let name = state.metadata.name.as_deref().unwrap_or_default();
            let held: Vec<String> = state
                .spec
                .extensions
                .iter()
                .map(|entry| {
                    format!(
                        "{}/{}",
                        entry.kind,
                        entry.name.as_deref().unwrap_or_default()
                    )
                })
                .collect();
            let count = shoot::entries(shoot::entry_count(state));
            if held.is_empty() {
                format!("ShootState {name} (garden) present, {count}")
            } else {
                format!(
                    "ShootState {name} (garden) present, {count}: {}",
                    held.join(", ")
                )
            }
        }
        None => "ShootState (garden) missing".to_owned(),
    };
    vec![cluster, namespace, state]
}

/// Prints the Seed's ControllerInstallations with their conditions.
async fn print_installations(garden: &kube::Client, seed_name: &str) {
    let installations: Api<ControllerInstallation> = Api::all(garden.clone());
    match installations.list(&Default::default()).await {
        Ok(list) => {
            for installation in list
                .items
                .iter()
                .filter(|ci| ci.seed_name() == Some(seed_name))
            {
                println!(
                    "  ControllerInstallation {} (registration {}):",
                    installation.metadata.name.as_deref().unwrap_or_default(),
                    installation.spec.registration_ref.name
                );
                for condition in installation.conditions() {
                    println!(
                        "    condition {:<20} {:<8} {:<24} {}",
                        condition.type_, condition.status, condition.reason, condition.message
                    );
                }
            }
        }
        Err(error) => println!("  cannot list ControllerInstallations: {error}"),
    }
}

/// Prints the `export KUBECONFIG=...` lines and a few commands worth trying (including the
/// example extension's `installation` and its namespace, when there is one, and the example
/// Shoot's objects in both clusters).
pub fn print_kubectl_hints(state: &StateDir, installation: Option<&str>) {
    let garden = state.path("garden.kubeconfig");
    let seed = state.path("seed.kubeconfig");
    println!();
    println!("Look around with kubectl:");
    println!("  export KUBECONFIG={}   # the garden", garden.display());
    println!(
        "  kubectl get seeds,csr,controllerregistrations,controllerdeployments,controllerinstallations"
    );
    println!(
        "  kubectl get controllerinstallations -o custom-columns='NAME:.metadata.name,REGISTRATION:.spec.registrationRef.name,CONDITIONS:.status.conditions[*].type,STATUS:.status.conditions[*].status'"
    );
    println!(
        "  kubectl get seed {} -o jsonpath='{{.status.conditions}}'",
        crate::SEED_NAME
    );
    if let Some(installation) = installation {
        println!("  kubectl get controllerinstallation {installation} -o yaml");
    }
    println!("  kubectl -n {} get leases -o wide", namespaces::SEED_LEASE);
    let project_namespace = shoot::project_namespace();
    let technical_id = shoot::control_plane_namespace();
    println!("  kubectl get projects,cloudprofiles");
    println!("  kubectl -n {project_namespace} get shoots,shootstates");
    println!(
        "  kubectl -n {project_namespace} get shootstate {} -o yaml",
        shoot::SHOOT
    );
    println!("  export KUBECONFIG={}     # the seed", seed.display());
    println!("  kubectl -n garden get secrets,leases,managedresources");
    println!("  kubectl get namespaces -l gardener.cloud/role=extension");
    if let Some(installation) = installation {
        println!(
            "  kubectl -n {} get deployments,configmaps,serviceaccounts",
            namespaces::extension_namespace(installation)
        );
    }
    println!("  kubectl get clusters");
    println!("  kubectl get cluster {technical_id} -o jsonpath='{{.spec.shoot.metadata.name}}'");
    println!("  kubectl -n {technical_id} get infrastructures -o yaml");
    println!(
        "Component configurations: {} and {}",
        state.path("agent.yaml").display(),
        state.path("garden-controller.yaml").display()
    );
}

/// Whole seconds between `now` and `time`, in the future (`ahead`) or past.
fn age(now: jiff::Timestamp, time: jiff::Timestamp, ahead: bool) -> String {
    let span = if ahead {
        time.duration_since(now)
    } else {
        now.duration_since(time)
    };
    let seconds = span.as_secs().max(0);
    if seconds >= 3600 {
        format!("{}h{:02}m", seconds / 3600, (seconds % 3600) / 60)
    } else if seconds >= 60 {
        format!("{}m{:02}s", seconds / 60, seconds % 60)
    } else {
        format!("{}.{:01}s", seconds, span.subsec_millis().max(0) / 100)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn shoot_lines_name_what_the_cluster_embeds_and_the_shoot_state_entries() {
        let cluster = Cluster::new(
            "shoot--demo--hello",
            seedlet_api::extensions::ClusterSpec {
                cloud_profile: json!({"metadata": {"name": "local"}}),
                seed: None,
                shoot: json!({"metadata": {"name": "hello"}}),
            },
        );
        let state: ShootState = serde_json::from_value(json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "ShootState",
            "metadata": {"name": "hello", "namespace": "garden-demo"},
            "spec": {"extensions": [
                {"kind": "Infrastructure", "name": "hello", "state": {"a": 1}},
                {"kind": "Worker", "name": "hello", "state": {"b": 2}}
            ]}
        }))
        .expect("shoot state");
        assert_eq!(
            shoot_lines("shoot--demo--hello", Some(&cluster), true, Some(&state)),
            [
                "Cluster shoot--demo--hello (seed) present, embeds Shoot hello",
                "control-plane namespace shoot--demo--hello (seed) present",
                "ShootState hello (garden) present, 2 entries: Infrastructure/hello, Worker/hello",
            ]
        );
    }

    #[test]
    fn shoot_lines_say_missing_when_nothing_was_synced() {
        assert_eq!(
            shoot_lines("shoot--demo--hello", None, false, None),
            [
                "Cluster shoot--demo--hello (seed) missing",
                "control-plane namespace shoot--demo--hello (seed) missing",
                "ShootState (garden) missing",
            ]
        );
    }

    #[test]
    fn ages_print_in_the_largest_sensible_unit() {
        let now: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().expect("time");
        let later: jiff::Timestamp = "2026-01-02T01:30:00Z".parse().expect("time");
        assert_eq!(age(now, later, true), "25h30m");
        let earlier: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().expect("time");
        let shortly: jiff::Timestamp = "2026-01-01T00:01:05Z".parse().expect("time");
        assert_eq!(age(shortly, earlier, false), "1m05s");
    }
}
