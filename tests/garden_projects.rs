//! End-to-end tests of the garden's project controllers (spec garden-controllers §3): namespace
//! creation and adoption, RBAC, the default ResourceQuota, phases, deletion only once no Shoot
//! is left, and the stale timestamps and activity with an injected clock. Runs the real garden
//! controller against a garden sandbox.

use seedlet_testkit as common;

use std::sync::Arc;
use std::time::Duration;

use common::{wait_for, wait_until};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Event, Namespace, ResourceQuota};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, RoleBinding};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::{Project, Shoot};
use seedlet_runtime::clock::FakeClock;
use seedlet_sandbox::Sandbox;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const TIMEOUT: Duration = Duration::from_secs(20);

const CONFIG: &str = r#"
apiVersion: seedlet.gardener.cloud/v1alpha1
kind: GardenControllerConfiguration
controllers:
  project:
    staleSyncPeriod: 300ms
    quotas:
    - config:
        apiVersion: v1
        kind: ResourceQuota
        metadata:
          labels:
            quota: default
        spec:
          hard:
            count/shoots.core.gardener.cloud: "100"
            count/secrets: "400"
      projectSelector: {}
"#;

struct Garden {
    sandbox: Sandbox,
    client: kube::Client,
    shutdown: CancellationToken,
}

async fn garden(clock: Option<Arc<FakeClock>>) -> Garden {
    let sandbox = seedlet_testkit::start_sandbox("garden").await;
    let client = sandbox.client();
    common::prepare_garden(&client).await;
    let shutdown = CancellationToken::new();
    common::start_garden_from(
        client.clone(),
        common::garden_config(CONFIG),
        shutdown.clone(),
        |g| match clock {
            Some(clock) => g.with_clock(clock),
            None => g,
        },
    )
    .await;
    Garden {
        sandbox,
        client,
        shutdown,
    }
}

impl Garden {
    async fn stop(self) {
        self.shutdown.cancel();
        self.sandbox.shutdown().await;
    }
}

async fn create<K>(api: &Api<K>, value: Value) -> K
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + serde::Serialize,
{
    let object: K = serde_json::from_value(value).expect("object");
    api.create(&PostParams::default(), &object)
        .await
        .expect("create")
}

fn user(name: &str) -> Value {
    json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name})
}

fn member(name: &str, roles: &[&str]) -> Value {
    let mut member = user(name);
    member["role"] = json!(roles[0]);
    member["roles"] = json!(roles[1..]);
    member
}

async fn phase(projects: &Api<Project>, name: &str, phase: &str) -> Project {
    wait_for(&format!("{name} phase {phase}"), TIMEOUT, || async {
        projects
            .get_opt(name)
            .await
            .expect("project")
            .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some(phase))
    })
    .await
}

async fn event(client: &kube::Client, name: &str, reason: &str) -> (String, String) {
    let events: Api<Event> = Api::all(client.clone());
    wait_for(&format!("event {reason} on {name}"), TIMEOUT, || async {
        events
            .list(&Default::default())
            .await
            .expect("events")
            .items
            .into_iter()
            .find(|e| {
                e.involved_object.name.as_deref() == Some(name)
                    && e.reason.as_deref() == Some(reason)
            })
            .map(|e| (e.type_.unwrap_or_default(), e.message.unwrap_or_default()))
    })
    .await
}

fn subjects(subjects: &Option<Vec<k8s_openapi::api::rbac::v1::Subject>>) -> Vec<String> {
    subjects.iter().flatten().map(|s| s.name.clone()).collect()
}

#[tokio::test]
async fn project_gets_namespace_rbac_quota_and_phase_and_goes_after_its_last_shoot() {
    let garden = garden(None).await;
    let client = garden.client.clone();
    let projects: Api<Project> = Api::all(client.clone());
    create(&projects, json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
        "metadata": {"name": "dev"},
        "spec": {
            "owner": user("alice"),
            "members": [member("bob", &["admin", "extension:foo"]), member("carol", &["viewer"])]
        }
    }))
    .await;
    let project = phase(&projects, "dev", "Ready").await;
    let uid = project.uid().expect("uid");
    let ns = project
        .spec
        .namespace
        .clone()
        .expect("namespace written back");
    assert!(
        ns.starts_with("garden-dev-") && ns.len() == "garden-dev-".len() + 5,
        "{ns}"
    );
    assert!(project.finalizers().contains(&"gardener".to_owned()));
    assert_eq!(
        project.status.as_ref().and_then(|s| s.observed_generation),
        project.metadata.generation
    );

    let namespace = Api::<Namespace>::all(client.clone())
        .get(&ns)
        .await
        .expect("namespace");
    assert_eq!(namespace.labels()["gardener.cloud/role"], "project");
    assert_eq!(namespace.labels()["project.gardener.cloud/name"], "dev");
    assert_eq!(
        namespace.annotations()["namespace.gardener.cloud/project"],
        uid
    );
    assert_eq!(
        namespace.annotations()["namespace.gardener.cloud/created-by-project-controller"],
        "true"
    );
    let owner = &namespace.owner_references()[0];
    assert_eq!(
        (
            owner.uid.as_str(),
            owner.controller,
            owner.block_owner_deletion
        ),
        (uid.as_str(), Some(true), Some(true))
    );
    let (type_, message) = event(&client, "dev", "NamespaceReconcileSuccessful").await;
    assert_eq!(type_, "Normal");
    assert_eq!(
        message,
        format!("Successfully reconciled namespace {ns:?} for project")
    );

    // RBAC.
    let crbs: Api<ClusterRoleBinding> = Api::all(client.clone());
    let crb = |name: String| {
        let crbs = crbs.clone();
        async move { crbs.get(&name).await.expect("crb") }
    };
    assert_eq!(
        subjects(
            &crb("gardener.cloud:system:project:dev".into())
                .await
                .subjects
        ),
        ["alice"]
    );
    assert_eq!(
        subjects(
            &crb("gardener.cloud:system:project-member:dev".into())
                .await
                .subjects
        ),
        ["bob"]
    );
    assert_eq!(
        subjects(
            &crb("gardener.cloud:system:project-viewer:dev".into())
                .await
                .subjects
        ),
        ["carol"]
    );
    let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), &ns);
    let sam = bindings
        .get("gardener.cloud:system:project-serviceaccountmanager")
        .await
        .expect("rb");
    assert_eq!(subjects(&sam.subjects), ["alice"]);
    let extension = "gardener.cloud:extension:project:dev:foo";
    let roles: Api<ClusterRole> = Api::all(client.clone());
    assert!(
        roles
            .get(extension)
            .await
            .expect("role")
            .aggregation_rule
            .is_some()
    );
    assert_eq!(
        subjects(&bindings.get(extension).await.expect("rb").subjects),
        ["bob"]
    );

    // Default ResourceQuota from the configuration.
    let quota = Api::<ResourceQuota>::namespaced(client.clone(), &ns)
        .get("gardener")
        .await
        .expect("quota");
    assert_eq!(quota.labels()["quota"], "default");
    assert_eq!(
        serde_json::to_value(quota.spec.and_then(|s| s.hard)).expect("json"),
        json!({"count/shoots.core.gardener.cloud": "100", "count/secrets": "400"})
    );

    // Dropping the extension role deletes its objects.
    let patch =
        json!({"spec": {"members": [member("bob", &["admin"]), member("carol", &["viewer"])]}});
    projects
        .patch("dev", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch");
    wait_until("extension role gone", TIMEOUT, || async {
        roles.get_opt(extension).await.expect("get").is_none()
            && bindings.get_opt(extension).await.expect("get").is_none()
    })
    .await;

    // Deletion waits for the shoot, without requeueing; the shoot's deletion releases it.
    let shoots: Api<Shoot> = Api::namespaced(client.clone(), &ns);
    create(
        &shoots,
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": "s", "namespace": ns},
            "spec": {"provider": {"type": "local"}, "region": "local"}
        }),
    )
    .await;
    projects
        .delete("dev", &DeleteParams::default())
        .await
        .expect("delete");
    phase(&projects, "dev", "Terminating").await;
    let (type_, message) = event(&client, "dev", "NamespaceNotEmpty").await;
    assert_eq!(type_, "Warning");
    assert_eq!(
        message,
        format!("Cannot release namespace {ns:?} because it still contains Shoots")
    );
    assert!(
        Api::<Namespace>::all(client.clone())
            .get_opt(&ns)
            .await
            .expect("ns")
            .is_some()
    );
    shoots
        .delete("s", &DeleteParams::default())
        .await
        .expect("delete shoot");
    wait_until("project gone", TIMEOUT, || async {
        projects.get_opt("dev").await.expect("get").is_none()
    })
    .await;
    garden.stop().await;
}

#[tokio::test]
async fn adopted_namespace_needs_the_labels_and_survives_the_project() {
    let garden = garden(None).await;
    let client = garden.client.clone();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    create(
        &namespaces,
        json!({"metadata": {"name": "garden-adopt", "labels": {"keep": "me"}}}),
    )
    .await;
    let projects: Api<Project> = Api::all(client.clone());
    create(
        &projects,
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
            "metadata": {"name": "adopt"}, "spec": {"namespace": "garden-adopt"}
        }),
    )
    .await;
    phase(&projects, "adopt", "Failed").await;
    let (type_, message) = event(&client, "adopt", "NamespaceReconcileFailed").await;
    assert_eq!(type_, "Warning");
    assert_eq!(
        message,
        r#"namespace cannot be used as it needs the project labels map[string]string{"gardener.cloud/role":"project", "project.gardener.cloud/name":"adopt"}"#
    );

    let patch = json!({"metadata": {"labels": {"gardener.cloud/role": "project", "project.gardener.cloud/name": "adopt"}}});
    namespaces
        .patch(
            "garden-adopt",
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .expect("label");
    phase(&projects, "adopt", "Ready").await;
    let adopted = namespaces.get("garden-adopt").await.expect("ns");
    assert_eq!(
        adopted.annotations()["namespace.gardener.cloud/keep-after-project-deletion"],
        "true"
    );

    projects
        .delete("adopt", &DeleteParams::default())
        .await
        .expect("delete");
    wait_until("project gone", TIMEOUT, || async {
        projects.get_opt("adopt").await.expect("get").is_none()
    })
    .await;
    let kept = namespaces
        .get("garden-adopt")
        .await
        .expect("namespace kept");
    assert!(kept.metadata.deletion_timestamp.is_none());
    assert_eq!(
        kept.labels().keys().collect::<Vec<_>>(),
        ["keep", "kubernetes.io/metadata.name"]
    );
    assert!(kept.annotations().is_empty(), "{:?}", kept.annotations());
    assert!(kept.owner_references().is_empty());
    garden.stop().await;
}

fn stamp(
    project: &Project,
    field: fn(&seedlet_api::core::ProjectStatus) -> Option<Timestamp>,
) -> Option<Timestamp> {
    project.status.as_ref().and_then(field)
}

#[tokio::test]
async fn stale_timestamps_follow_the_injected_clock_until_auto_deletion() {
    // Whole seconds: status timestamps are stored with second precision.
    let start = Timestamp::from_second(Timestamp::now().as_second() + 200 * 86_400).expect("time");
    let clock = Arc::new(FakeClock::new(start));
    let garden = garden(Some(clock.clone())).await;
    let client = garden.client.clone();
    let projects: Api<Project> = Api::all(client.clone());
    for name in ["old", "busy"] {
        create(
            &projects,
            json!({
                "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
                "metadata": {"name": name}, "spec": {"namespace": format!("garden-{name}")}
            }),
        )
        .await;
    }
    let since =
        |p: &seedlet_api::core::ProjectStatus| p.stale_since_timestamp.as_ref().map(|t| t.0);
    let auto =
        |p: &seedlet_api::core::ProjectStatus| p.stale_auto_delete_timestamp.as_ref().map(|t| t.0);
    let until = |name: &'static str, what: &'static str, check: Box<dyn Fn(&Project) -> bool>| {
        let projects = projects.clone();
        async move {
            wait_for(what, TIMEOUT, || async {
                projects
                    .get_opt(name)
                    .await
                    .expect("get")
                    .filter(|p| check(p))
            })
            .await
        }
    };
    // Created "200 days ago" and empty: stale since now.
    until(
        "old",
        "stale since T0",
        Box::new(move |p| stamp(p, since) == Some(start)),
    )
    .await;

    // Activity: a shoot's spec change in `busy` stamps it; a shoot keeps it from going stale.
    let shoots: Api<Shoot> = Api::namespaced(client.clone(), "garden-busy");
    create(
        &shoots,
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": "s", "namespace": "garden-busy"},
            "spec": {"provider": {"type": "local"}, "region": "local"}
        }),
    )
    .await;
    let patch = json!({"spec": {"region": "other"}});
    shoots
        .patch("s", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch");
    until(
        "busy",
        "activity and not stale",
        Box::new(move |p| {
            p.status
                .as_ref()
                .and_then(|s| s.last_activity_timestamp.as_ref())
                .map(|t| t.0)
                == Some(start)
                && stamp(p, since).is_none()
        }),
    )
    .await;

    // T0 + 15d: past the grace period → auto-delete at T0 + 90d.
    clock.advance(SignedDuration::from_hours(15 * 24));
    let expected = start
        .checked_add(SignedDuration::from_hours(90 * 24))
        .expect("time");
    let old = until(
        "old",
        "auto-delete set",
        Box::new(move |p| stamp(p, auto) == Some(expected)),
    )
    .await;
    assert_eq!(stamp(&old, since), Some(start));

    // At the auto-delete instant the project is deleted (and its empty namespace with it).
    clock.set(expected);
    wait_until("stale project deleted", TIMEOUT, || async {
        projects.get_opt("old").await.expect("get").is_none()
    })
    .await;
    assert!(projects.get_opt("busy").await.expect("get").is_some());
    garden.stop().await;
}

#[tokio::test]
async fn a_deleted_or_changed_project_role_binding_is_restored() {
    let garden = garden(None).await;
    let client = garden.client.clone();
    let projects: Api<Project> = Api::all(client.clone());
    create(
        &projects,
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
            "metadata": {"name": "rb"},
            "spec": {"namespace": "garden-rb", "members": [member("dave", &["viewer"])]}
        }),
    )
    .await;
    phase(&projects, "rb", "Ready").await;
    let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), "garden-rb");
    let name = "gardener.cloud:system:project-viewer";
    let patch = json!({"subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "mallory"}]});
    bindings
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch");
    wait_until("subjects restored", TIMEOUT, || async {
        subjects(&bindings.get(name).await.expect("rb").subjects) == ["dave"]
    })
    .await;
    bindings
        .delete(name, &DeleteParams::default())
        .await
        .expect("delete");
    wait_until("binding recreated", TIMEOUT, || async {
        bindings
            .get_opt(name)
            .await
            .expect("get")
            .is_some_and(|b| subjects(&b.subjects) == ["dave"])
    })
    .await;
    garden.stop().await;
}

#[tokio::test]
async fn project_resource_quotas_grow_with_the_objects_per_shoot() {
    let garden = garden(None).await;
    let client = garden.client.clone();
    let projects: Api<Project> = Api::all(client.clone());
    create(
        &projects,
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
            "metadata": {"name": "rq"}, "spec": {"namespace": "garden-rq"}
        }),
    )
    .await;
    phase(&projects, "rq", "Ready").await;
    let quotas: Api<ResourceQuota> = Api::namespaced(client.clone(), "garden-rq");
    create(
        &quotas,
        json!({
            "metadata": {"name": "extra", "namespace": "garden-rq"},
            "spec": {"hard": {"count/shoots.core.gardener.cloud": "10", "count/secrets": "30"}}
        }),
    )
    .await;
    let hard = |quota: &ResourceQuota, key: &str| {
        quota
            .spec
            .as_ref()
            .and_then(|s| s.hard.as_ref())
            .and_then(|h| h.get(key))
            .map(|q| q.0.clone())
    };
    let quota = wait_for("secrets raised to 4 per shoot", TIMEOUT, || async {
        quotas
            .get_opt("extra")
            .await
            .expect("get")
            .filter(|q| hard(q, "count/secrets").as_deref() == Some("40"))
    })
    .await;
    assert_eq!(
        quota.annotations()["quota.gardener.cloud/secrets-per-shoot"],
        "4"
    );
    assert_eq!(
        quota.annotations()["quota.gardener.cloud/configmaps-per-shoot"],
        "2"
    );
    assert_eq!(hard(&quota, "count/configmaps"), None);
    // An older per-shoot number raises the limit by the difference per shoot.
    let patch =
        json!({"metadata": {"annotations": {"quota.gardener.cloud/secrets-per-shoot": "3"}}});
    quotas
        .patch("extra", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch");
    wait_until("raised by 10", TIMEOUT, || async {
        let quota = quotas.get("extra").await.expect("get");
        hard(&quota, "count/secrets").as_deref() == Some("50")
            && quota.annotations()["quota.gardener.cloud/secrets-per-shoot"] == "4"
    })
    .await;
    // The configured `gardener` quota (400 secrets for 100 shoots) is high enough already.
    let default = quotas.get("gardener").await.expect("default quota");
    assert_eq!(hard(&default, "count/secrets").as_deref(), Some("400"));
    garden.stop().await;
}
