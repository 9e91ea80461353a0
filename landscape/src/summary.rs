//! The status summary printed once the landscape is Ready, and how to look around with kubectl.

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::Api;
use seedlet_api::core::{ControllerInstallation, Seed, Shoot, ShootState};
use seedlet_api::extensions::Cluster;
use seedlet_api::names::namespaces;

use crate::files::StateDir;
use crate::shoot;

/// Prints the Seed's conditions, the Lease age and the client certificate expiry, read fresh from
/// the garden, then the example Shoot's Cluster (seed) and ShootState (garden), the network
/// policies per seed namespace, and the backups. Read errors are
/// printed in place of the value: the summary never fails the run.
pub async fn print(garden: &kube::Client, seed: &kube::Client, seed_name: &str) {
    let now = jiff::Timestamp::now();
    out("");
    out(&format!("Seed {seed_name}:"));
    let seeds: Api<Seed> = Api::all(garden.clone());
    match seeds.get(seed_name).await {
        Ok(seed) => {
            let status = seed.status.unwrap_or_default();
            for line in condition_lines(&status.conditions, "  ") {
                out(&line);
            }
            match status.client_certificate_expiration_timestamp {
                Some(expiry) => out(&format!(
                    "  client certificate expires {} (in {})",
                    expiry.0,
                    age(now, expiry.0, true)
                )),
                None => out("  client certificate expiry not reported yet"),
            }
        }
        Err(error) => out(&format!("  cannot read Seed: {error}")),
    }
    print_installations(garden, seed_name).await;
    let leases: Api<Lease> = Api::namespaced(garden.clone(), namespaces::SEED_LEASE);
    match leases.get(seed_name).await {
        Ok(lease) => {
            let renewed = lease.spec.and_then(|spec| spec.renew_time);
            match renewed {
                Some(time) => out(&format!(
                    "  lease {}/{seed_name} renewed {} ago",
                    namespaces::SEED_LEASE,
                    age(now, time.0, false)
                )),
                None => out(&format!(
                    "  lease {}/{seed_name} never renewed",
                    namespaces::SEED_LEASE
                )),
            }
        }
        Err(error) => out(&format!("  cannot read Lease: {error}")),
    }
    print_example_shoot(garden, seed).await;
    out("");
    let policies = Api::<NetworkPolicy>::all(seed.clone())
        .list(&Default::default())
        .await;
    match policies {
        Ok(list) => out(&policy_line(
            list.items
                .iter()
                .filter_map(|policy| policy.metadata.namespace.as_deref()),
        )),
        Err(error) => out(&format!("cannot list network policies: {error}")),
    }
    out("");
    out("Backups:");
    for line in crate::backup::summary(garden, seed_name).await {
        out(&format!("  {line}"));
    }
}

/// `Network policies (seed): <namespace> <count>, …` in namespace order.
fn policy_line<'a>(namespaces: impl Iterator<Item = &'a str>) -> String {
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for namespace in namespaces {
        *counts.entry(namespace).or_default() += 1;
    }
    let listed: Vec<String> = counts
        .iter()
        .map(|(namespace, count)| format!("{namespace} {count}"))
        .collect();
    if listed.is_empty() {
        "Network policies (seed): none".to_owned()
    } else {
        format!("Network policies (seed): {}", listed.join(", "))
    }
}

/// One line, wrapped to the terminal; a closed stdout is ignored.
fn out(line: &str) {
    crate::output::print(line);
}

/// Conditions sorted by type, one `condition <type> <status> <reason>` line each with the message
/// below it (the printer wraps it), so that every run lists them in the same order.
fn condition_lines(conditions: &[seedlet_api::Condition], indent: &str) -> Vec<String> {
    let mut sorted: Vec<_> = conditions.iter().collect();
    sorted.sort_by(|a, b| a.type_.cmp(&b.type_));
    let mut lines = Vec::new();
    for condition in sorted {
        lines.push(format!(
            "{indent}condition {:<22} {:<7} {}",
            condition.type_,
            condition.status.to_string(),
            condition.reason
        ));
        let message = condition
            .message
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if !message.is_empty() {
            lines.push(format!("{indent}    {message}"));
        }
    }
    lines
}

/// Prints whether the example Shoot's Cluster, control-plane namespace and ShootState exist.
async fn print_example_shoot(garden: &kube::Client, seed: &kube::Client) {
    let technical_id = shoot::control_plane_namespace();
    let project_namespace = shoot::project_namespace();
    out("");
    out(&format!("Shoot {project_namespace}/{}:", shoot::SHOOT));
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
        out(&format!("  {line}"));
    }
    let lines = match Api::<Shoot>::namespaced(garden.clone(), &project_namespace)
        .get_opt(shoot::SHOOT)
        .await
    {
        Ok(Some(shoot)) => lifecycle_lines(&shoot, jiff::Timestamp::now()),
        Ok(None) => vec!["Shoot (garden) missing".to_owned()],
        Err(error) => vec![format!("cannot read Shoot: {error}")],
    };
    for line in lines {
        out(&format!("  {line}"));
    }
}

/// What the garden controller keeps on the example Shoot: its status label, and its hibernation
/// schedule with the next activation after `now` (as the shoot-hibernation controller computes
/// it).
fn lifecycle_lines(shoot: &Shoot, now: jiff::Timestamp) -> Vec<String> {
    use seedlet_api::names::shoot_lifecycle::STATUS_LABEL;
    use seedlet_garden::controllers::shoot_hibernation::schedule::{self, Action};
    let label = match shoot
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(STATUS_LABEL))
    {
        Some(value) => format!("status label {STATUS_LABEL}={value}"),
        None => format!("status label {STATUS_LABEL} missing"),
    };
    let hibernation = shoot.spec.hibernation.as_ref();
    let state = if hibernation.and_then(|h| h.enabled).unwrap_or(false) {
        "hibernated"
    } else {
        "awake"
    };
    let schedules = hibernation
        .map(|h| h.schedules.as_slice())
        .unwrap_or_default();
    if schedules.is_empty() {
        return vec![label, format!("hibernation: no schedule, {state}")];
    }
    let described: Vec<String> = schedules
        .iter()
        .map(|s| {
            format!(
                "{} to {} ({})",
                s.start.as_deref().unwrap_or("-"),
                s.end.as_deref().unwrap_or("-"),
                s.location.as_deref().unwrap_or("UTC")
            )
        })
        .collect();
    let next = match schedule::parse(schedules) {
        Ok(parsed) => match parsed
            .iter()
            .filter_map(|p| p.next(now).map(|at| (at, p.action)))
            .min_by_key(|(at, _)| *at)
        {
            Some((at, action)) => {
                let verb = if action == Action::Hibernate {
                    "hibernate"
                } else {
                    "wake up"
                };
                format!("next: {verb} at {}", at.strftime("%Y-%m-%d %H:%M UTC"))
            }
            None => "next: no activation ahead".to_owned(),
        },
        Err(error) => format!("schedule unusable: {error}"),
    };
    vec![
        label,
        format!("hibernation: {}, {state}", described.join("; ")),
        next,
    ]
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
                out(&format!(
                    "  ControllerInstallation {} (registration {}):",
                    installation.metadata.name.as_deref().unwrap_or_default(),
                    installation.spec.registration_ref.name
                ));
                for line in condition_lines(installation.conditions(), "    ") {
                    out(&line);
                }
            }
        }
        Err(error) => out(&format!("  cannot list ControllerInstallations: {error}")),
    }
}

/// Prints where the kubeconfig is and a few commands worth trying (including the example
/// extension's `installation` and its namespace, when there is one, and the example Shoot's
/// objects in both clusters), then what the sandboxes do not do.
pub fn print_kubectl_hints(state: &StateDir, installation: Option<&str>) {
    for line in kubectl_hints(state, installation) {
        out(&line);
    }
}

/// The lines of [`print_kubectl_hints`]; commands stay within 80 columns so that they can be
/// copied whole.
fn kubectl_hints(state: &StateDir, installation: Option<&str>) -> Vec<String> {
    let project_namespace = shoot::project_namespace();
    let technical_id = shoot::control_plane_namespace();
    let garden = "kubectl --context garden";
    let seed = "kubectl --context seed";
    let mut lines = vec![
        String::new(),
        "Look around with kubectl (contexts garden and seed):".to_owned(),
        format!(
            "  export KUBECONFIG={}",
            state.path(crate::files::KUBECONFIG).display()
        ),
        format!("  {garden} get seeds,csr,controllerinstallations"),
        format!("  {garden} get seed {} -o yaml", crate::SEED_NAME),
    ];
    if let Some(installation) = installation {
        lines.push(format!(
            "  {garden} get controllerinstallation {installation} -o yaml"
        ));
    }
    lines.extend([
        format!("  {garden} -n {} get leases", namespaces::SEED_LEASE),
        format!("  {garden} get projects,cloudprofiles"),
        format!("  {garden} -n {project_namespace} get shoots,shootstates"),
        format!("  {seed} -n garden get secrets,leases,managedresources"),
        format!("  {seed} get namespaces -l gardener.cloud/role=extension"),
    ]);
    if let Some(installation) = installation {
        lines.push(format!(
            "  {seed} -n {} get deployments,configmaps",
            namespaces::extension_namespace(installation)
        ));
    }
    lines.extend([
        format!("  {garden} get backupbuckets,backupentries -A"),
        format!("  {seed} get backupbuckets,backupentries"),
        format!("  {seed} get cluster {technical_id}"),
        format!("  {seed} -n {technical_id} get infrastructures -o yaml"),
        String::new(),
        "The sandboxes store objects but run no pods (Deployments only report ready)".to_owned(),
        "and have no scheduler: a new Shoot needs spec.seedName. kubectl get (with".to_owned(),
        "printer columns), get -w, apply, create, edit, explain, delete, api-resources".to_owned(),
        "and auth can-i work, also with --dry-run=server; logs, exec and port-forward".to_owned(),
        "do not.".to_owned(),
        format!(
            "Logs: {}, {}, {}",
            state.path("agent.log").display(),
            state.path("garden.log").display(),
            state.path("sandbox.log").display()
        ),
        format!(
            "Configurations: {}, {}",
            state.path("agent.yaml").display(),
            state.path("garden-controller.yaml").display()
        ),
    ]);
    lines
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
    fn lifecycle_lines_show_the_status_label_and_the_next_hibernation_activation() {
        let shoot: Shoot = serde_json::from_value(json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": "hello", "namespace": "garden-demo",
                         "labels": {"shoot.gardener.cloud/status": "healthy"}},
            "spec": {"region": "local", "provider": {"type": "local"}, "hibernation": {"schedules": [
                {"start": "0 20 * * 1-5", "end": "0 8 * * 1-5", "location": "Europe/Berlin"}
            ]}}
        }))
        .expect("shoot");
        // Thursday 2026-11-26 10:00 UTC = 11:00 in Berlin: next is 20:00 Berlin = 19:00 UTC.
        let now: jiff::Timestamp = "2026-11-26T10:00:00Z".parse().expect("time");
        assert_eq!(
            lifecycle_lines(&shoot, now),
            [
                "status label shoot.gardener.cloud/status=healthy",
                "hibernation: 0 20 * * 1-5 to 0 8 * * 1-5 (Europe/Berlin), awake",
                "next: hibernate at 2026-11-26 19:00 UTC",
            ]
        );
        // Friday 22:00 UTC: the next activation is Monday's wake-up, 08:00 Berlin = 07:00 UTC.
        let friday_night: jiff::Timestamp = "2026-11-27T22:00:00Z".parse().expect("time");
        assert_eq!(
            lifecycle_lines(&shoot, friday_night)[2],
            "next: wake up at 2026-11-30 07:00 UTC"
        );
        let bare: Shoot = serde_json::from_value(json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": "bare"}, "spec": {"region": "local", "provider": {"type": "local"}}
        }))
        .expect("shoot");
        assert_eq!(
            lifecycle_lines(&bare, now),
            [
                "status label shoot.gardener.cloud/status missing",
                "hibernation: no schedule, awake",
            ]
        );
    }

    #[test]
    fn policy_line_counts_per_namespace_in_order() {
        assert_eq!(
            policy_line(["shoot--a", "garden", "shoot--a", "garden", "garden"].into_iter()),
            "Network policies (seed): garden 3, shoot--a 2"
        );
        assert_eq!(
            policy_line(std::iter::empty()),
            "Network policies (seed): none"
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

    fn condition(type_: &str, status: &str, reason: &str, message: &str) -> seedlet_api::Condition {
        serde_json::from_value(json!({
            "type": type_, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": "2026-01-01T00:00:00Z", "lastUpdateTime": "2026-01-01T00:00:00Z"
        }))
        .expect("condition")
    }

    #[test]
    fn condition_lines_are_sorted_by_type_with_the_message_below() {
        let conditions = [
            condition(
                "GardenletReady",
                "True",
                "GardenletReady",
                "Gardenlet is posting\nready status.",
            ),
            condition("ExtensionsReady", "True", "AllExtensionsReady", ""),
        ];
        assert_eq!(
            condition_lines(&conditions, "  "),
            [
                "  condition ExtensionsReady        True    AllExtensionsReady",
                "  condition GardenletReady         True    GardenletReady",
                "      Gardenlet is posting ready status.",
            ]
        );
    }

    #[test]
    fn kubectl_hints_fit_80_columns_once_wrapped_and_commands_are_never_wrapped() {
        let dir = std::env::temp_dir().join(format!("seedlet-hints-{}", std::process::id()));
        let state = StateDir::prepare(Some(dir.clone())).expect("state dir");
        let hints = kubectl_hints(&state, Some("example-abcde"));
        for line in &hints {
            let wrapped = crate::output::wrap(line, 80);
            if line.trim_start().starts_with("kubectl") {
                assert_eq!(wrapped.len(), 1, "a command is wrapped: {line}");
            }
            for part in wrapped {
                assert!(part.chars().count() <= 80, "{part}");
            }
        }
        assert!(
            hints
                .iter()
                .any(|line| line.contains("kubectl --context seed get cluster"))
        );
        assert!(hints.iter().any(|line| line.contains("no scheduler")));
        drop(state);
        std::fs::remove_dir_all(dir).expect("cleanup");
    }
}
