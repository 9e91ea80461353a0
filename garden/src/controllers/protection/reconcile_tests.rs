//! Reconcile tests against an in-process garden sandbox: the controller type's `reconcile` is
//! called directly (through the `Reconciler` trait) on real bindings (a SecretBinding, its Secret
//! and a Shoot using it; a CredentialsBinding on a WorkloadIdentity), CloudProfiles and
//! NamespacedCloudProfiles.

use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::{Event, Secret};
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{
    CloudProfile, CredentialsBinding, NamespacedCloudProfile, Quota, SecretBinding, Shoot,
};
use seedlet_api::security::WorkloadIdentity;
use seedlet_runtime::controller::{Reason as _, Reconciler as _};
use serde_json::json;

use super::{Ctx, Error, Protected, Protection};
use crate::testing::{Env, create, ensure_namespace};

const NS: &str = "garden-dev";

fn ctx(env: &Env) -> Arc<Ctx> {
    Arc::new(Ctx {
        client: env.client.clone(),
        events: env.events(),
        clock: env.clock(),
    })
}

/// One reconcile of `object` by the protection controller of its kind.
async fn reconcile<K: Protected>(object: Arc<K>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    Protection::<K>::new(ctx, 1).reconcile(object).await
}

async fn binding(env: &Env) -> Arc<SecretBinding> {
    ensure_namespace(&env.client, NS).await;
    let _: Secret = create(
        &env.client,
        json!({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": "creds", "namespace": NS,
                            "finalizers": ["gardener.cloud/gardener"]}}),
    )
    .await;
    Arc::new(
        create(
            &env.client,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "SecretBinding",
                   "metadata": {"name": "b1", "namespace": NS},
                   "secretRef": {"name": "creds", "namespace": NS},
                   "provider": {"type": "aws,gcp"}}),
        )
        .await,
    )
}

fn bindings(env: &Env) -> Api<SecretBinding> {
    Api::namespaced(env.client.clone(), NS)
}

async fn secret(env: &Env) -> Secret {
    Api::<Secret>::namespaced(env.client.clone(), NS)
        .get("creds")
        .await
        .unwrap()
}

#[tokio::test]
async fn a_secret_binding_gets_its_finalizer_and_protects_and_labels_its_secret() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let b1 = binding(&env).await;

    // Pass 1 only adds the finalizer (its watch event brings the next pass).
    reconcile(b1.clone(), ctx.clone()).await.unwrap();
    assert_eq!(
        bindings(&env).get("b1").await.unwrap().finalizers(),
        ["gardener"]
    );
    assert_eq!(secret(&env).await.finalizers(), ["gardener.cloud/gardener"]);

    reconcile(b1, ctx).await.unwrap();
    let protected = secret(&env).await;
    assert_eq!(protected.finalizers(), ["gardener.cloud/secretbinding"]);
    let mut labels: Vec<_> = protected
        .labels()
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    labels.sort();
    assert_eq!(
        labels,
        [
            "provider.shoot.gardener.cloud/aws=true",
            "provider.shoot.gardener.cloud/gcp=true",
            "reference.gardener.cloud/secretbinding=true",
        ]
    );
    env.shutdown().await;
}

#[tokio::test]
async fn deletion_is_blocked_while_a_shoot_uses_the_binding_and_releases_the_secret_after() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let b1 = binding(&env).await;
    reconcile(b1.clone(), ctx.clone()).await.unwrap();
    reconcile(b1.clone(), ctx.clone()).await.unwrap();
    let _: Shoot = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"name": "s", "namespace": NS},
               "spec": {"region": "local", "secretBindingName": "b1",
                        "provider": {"type": "aws", "workers": []}}}),
    )
    .await;
    bindings(&env)
        .delete("b1", &DeleteParams::default())
        .await
        .unwrap();

    let error = reconcile(b1.clone(), ctx.clone()).await.unwrap_err();
    assert_eq!(error.reason(), "ResourceReferenced");
    assert_eq!(
        error.to_string(),
        "Cannot delete SecretBinding, because the following Shoots are still referencing it: [garden-dev/s]"
    );
    assert_eq!(
        bindings(&env).get("b1").await.unwrap().finalizers(),
        ["gardener"]
    );
    let events = Api::<Event>::namespaced(env.client.clone(), NS)
        .list(&Default::default())
        .await
        .unwrap();
    assert!(
        events
            .items
            .iter()
            .any(|e| e.reason.as_deref() == Some("ResourceReferenced")
                && e.involved_object.name.as_deref() == Some("b1"))
    );

    Api::<Shoot>::namespaced(env.client.clone(), NS)
        .delete("s", &DeleteParams::default())
        .await
        .unwrap();
    reconcile(b1, ctx).await.unwrap();
    assert!(bindings(&env).get_opt("b1").await.unwrap().is_none());
    let released = secret(&env).await;
    assert!(
        released.finalizers().is_empty(),
        "{:?}",
        released.finalizers()
    );
    assert!(
        !released
            .labels()
            .contains_key("reference.gardener.cloud/secretbinding")
    );
    env.shutdown().await;
}

/// Spec §13.1: a lifecycle stage starting in 3h makes the version `unavailable` and the reconcile
/// comes back when it starts.
#[tokio::test]
async fn a_cloud_profile_version_starting_in_three_hours_is_unavailable_until_then() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let profile: CloudProfile = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
        "metadata": {"name": "p"},
        "spec": {"type": "local", "kubernetes": {"versions": [
            {"version": "1.31.0", "lifecycle": [
                {"classification": "supported", "startTime": "2025-01-01T03:00:00Z"}]}
        ]}}}),
    )
    .await;
    let profile = Arc::new(profile);
    let profiles: Api<CloudProfile> = Api::all(env.client.clone());
    let classification = || async {
        let status = profiles.get("p").await.unwrap().status;
        serde_json::to_value(status).unwrap()["kubernetes"]["versions"][0]["classification"].clone()
    };

    assert_eq!(
        reconcile(profile.clone(), ctx.clone()).await.unwrap(),
        Action::await_change(),
        "pass 1 only adds the finalizer"
    );
    assert_eq!(
        reconcile(profile.clone(), ctx.clone()).await.unwrap(),
        Action::requeue(Duration::from_secs(3 * 3600))
    );
    assert_eq!(classification().await, "unavailable");

    env.clock.advance(SignedDuration::from_secs(3 * 3600 + 1));
    assert_eq!(
        reconcile(profile, ctx).await.unwrap(),
        Action::await_change(),
        "no later instant"
    );
    assert_eq!(classification().await, "supported");
    env.shutdown().await;
}

/// Spec §13.2: the parent gone → the NamespacedCloudProfile's status stays, and no error.
#[tokio::test]
async fn a_namespaced_cloud_profile_keeps_its_status_when_the_parent_is_gone() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    ensure_namespace(&env.client, NS).await;
    let profiles: Api<CloudProfile> = Api::all(env.client.clone());
    let _: CloudProfile = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
               "metadata": {"name": "parent"}, "spec": {"type": "local", "caBundle": "P\n"}}),
    )
    .await;
    let ncp: NamespacedCloudProfile = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "NamespacedCloudProfile",
               "metadata": {"name": "n", "namespace": NS},
               "spec": {"parent": {"kind": "CloudProfile", "name": "parent"}, "caBundle": "N\n"}}),
    )
    .await;
    let ncp = Arc::new(ncp);
    let children: Api<NamespacedCloudProfile> = Api::namespaced(env.client.clone(), NS);
    let spec = || async {
        children
            .get("n")
            .await
            .unwrap()
            .status
            .and_then(|s| s.cloud_profile_spec)
    };
    reconcile(ncp.clone(), ctx.clone()).await.unwrap();
    reconcile(ncp.clone(), ctx.clone()).await.unwrap();
    let before = spec().await.expect("status written");
    assert_eq!(before["caBundle"], "P\nN\n");

    // No controller runs here, so the parent has no finalizer and goes at once.
    profiles
        .delete("parent", &DeleteParams::default())
        .await
        .unwrap();
    let patch = json!({"spec": {"caBundle": "M\n"}});
    children
        .patch("n", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(reconcile(ncp, ctx).await.unwrap(), Action::await_change());
    assert_eq!(spec().await, Some(before));
    env.shutdown().await;
}

/// Spec §13.4 and §2.5: a CredentialsBinding on a labelled WorkloadIdentity removes the provider
/// label and adds the reference label and finalizer; its Quota is labelled; deleting the unused
/// binding releases both.
#[tokio::test]
async fn a_credentials_binding_marks_its_workload_identity_and_quota_and_releases_them() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    ensure_namespace(&env.client, NS).await;
    let _: WorkloadIdentity = create(
        &env.client,
        json!({"apiVersion": "security.gardener.cloud/v1alpha1", "kind": "WorkloadIdentity",
               "metadata": {"name": "wi", "namespace": NS,
                            "labels": {"provider.shoot.gardener.cloud/aws": "true"}},
               "spec": {"audiences": ["x"], "targetSystem": {"type": "aws"}}}),
    )
    .await;
    let _: Quota = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Quota",
               "metadata": {"name": "q", "namespace": NS},
               "spec": {"scope": {"apiVersion": "v1", "kind": "Secret"}}}),
    )
    .await;
    let binding: CredentialsBinding = create(
        &env.client,
        json!({"apiVersion": "security.gardener.cloud/v1alpha1", "kind": "CredentialsBinding",
               "metadata": {"name": "cb", "namespace": NS},
               "credentialsRef": {"apiVersion": "security.gardener.cloud/v1alpha1",
                                  "kind": "WorkloadIdentity", "namespace": NS, "name": "wi"},
               "provider": {"type": "aws"}, "quotas": [{"name": "q"}]}),
    )
    .await;
    let binding = Arc::new(binding);
    let identities: Api<WorkloadIdentity> = Api::namespaced(env.client.clone(), NS);
    let quotas: Api<Quota> = Api::namespaced(env.client.clone(), NS);
    let labels = |labels: &std::collections::BTreeMap<String, String>| {
        labels
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect::<Vec<_>>()
    };

    reconcile(binding.clone(), ctx.clone()).await.unwrap();
    reconcile(binding.clone(), ctx.clone()).await.unwrap();
    let identity = identities.get("wi").await.unwrap();
    assert_eq!(identity.finalizers(), ["gardener.cloud/credentialsbinding"]);
    assert_eq!(
        labels(identity.labels()),
        ["reference.gardener.cloud/credentialsbinding=true"]
    );
    assert_eq!(
        labels(quotas.get("q").await.unwrap().labels()),
        ["reference.gardener.cloud/credentialsbinding=true"]
    );

    Api::<CredentialsBinding>::namespaced(env.client.clone(), NS)
        .delete("cb", &DeleteParams::default())
        .await
        .unwrap();
    reconcile(binding, ctx).await.unwrap();
    let identity = identities.get("wi").await.unwrap();
    assert!(identity.finalizers().is_empty());
    assert!(identity.labels().is_empty(), "{:?}", identity.labels());
    assert!(quotas.get("q").await.unwrap().labels().is_empty());
    assert!(
        Api::<CredentialsBinding>::namespaced(env.client.clone(), NS)
            .get_opt("cb")
            .await
            .unwrap()
            .is_none()
    );
    env.shutdown().await;
}
