//! Table tests of the edges each watched kind contributes.

use super::*;
use crate::webhooks::graph::Graph;
use serde_json::json;

#[test]
fn bootstrap_token_names_follow_the_spec_example() {
    assert_eq!(
        bootstrap_token_secret("garden", "my-seed"),
        "bootstrap-token-88264c"
    );
}

#[test]
fn a_shoot_s_secrets_reach_the_seeds_of_spec_and_status() {
    let mut graph = Graph::default();
    let object = json!({"metadata": {"name": "s", "namespace": "garden-dev", "uid": "u1",
            "annotations": {"authentication.gardener.cloud/issuer": "managed"}},
        "spec": {"seedName": "b", "secretBindingName": "sb", "cloudProfile": {"kind": "NamespacedCloudProfile", "name": "ncp"},
                 "kubernetes": {"kubeAPIServer": {"auditConfig": {"auditPolicy": {"configMapRef": {"name": "audit"}}}}},
                 "dns": {"providers": [{"credentialsRef": {"apiVersion": "v1", "kind": "Secret", "name": "dns"}}]}},
        "status": {"seedName": "a"}});
    graph.replace(shoot(&object, Some("dev")));
    graph.replace(secret_binding(
        &json!({"metadata": {"name": "sb", "namespace": "garden-dev"},
        "secretRef": {"name": "creds"}}),
    ));
    let reaches = |kind, ns: &str, name: &str, seed: &str| {
        graph.has_path(
            &Vertex::new(kind, ns, name),
            &Vertex::cluster(Kind::Seed, seed),
        )
    };
    for seed in ["a", "b"] {
        assert!(reaches(Kind::Secret, "garden-dev", "creds", seed));
        assert!(reaches(Kind::Secret, "garden-dev", "s.ca-cluster", seed));
        assert!(reaches(Kind::ShootState, "garden-dev", "s", seed));
        assert!(reaches(Kind::ConfigMap, "garden-dev", "audit", seed));
        assert!(reaches(Kind::Secret, "garden-dev", "dns", seed));
        assert!(reaches(
            Kind::NamespacedCloudProfile,
            "garden-dev",
            "ncp",
            seed
        ));
        assert!(reaches(
            Kind::Secret,
            "gardener-system-shoot-issuer",
            "dev--u1",
            seed
        ));
        assert!(reaches(Kind::Namespace, "", "garden-dev", seed));
    }
    assert!(!reaches(Kind::Secret, "garden-dev", "other", "a"));
}

#[test]
fn a_bucket_is_reachable_through_another_seed_s_entry() {
    let mut graph = Graph::default();
    graph.replace(backup_bucket(&json!({"metadata": {"name": "bb"},
        "spec": {"seedName": "a", "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "namespace": "garden", "name": "backup"}},
        "status": {"generatedSecretRef": {"namespace": "garden", "name": "generated-bucket-bb"}}})));
    graph.replace(backup_entry(
        &json!({"metadata": {"name": "e", "namespace": "garden-dev",
            "ownerReferences": [{"kind": "Shoot", "name": "s"}]},
        "spec": {"bucketName": "bb", "seedName": "b"}}),
    ));
    let seed = |s| Vertex::cluster(Kind::Seed, s);
    let bucket = Vertex::cluster(Kind::BackupBucket, "bb");
    assert!(graph.has_path(&bucket, &seed("a")));
    assert!(graph.has_path(&bucket, &seed("b")));
    assert!(graph.has_path(&Vertex::new(Kind::Secret, "garden", "backup"), &seed("b")));
}

#[test]
fn installations_deployments_and_oci_pull_secrets() {
    let mut graph = Graph::default();
    graph.replace(controller_installation(&json!({"metadata": {"name": "ci"},
        "spec": {"registrationRef": {"name": "r"}, "deploymentRef": {"name": "d"}, "seedRef": {"name": "a"}}})));
    graph.replace(controller_deployment(&json!({"metadata": {"name": "d"},
        "helm": {"ociRepository": {"ref": "x", "pullSecretRef": {"name": "pull"}}}})));
    let seed = Vertex::cluster(Kind::Seed, "a");
    assert!(graph.has_path(&Vertex::new(Kind::Secret, "garden", "pull"), &seed));
    assert!(graph.has_path(&Vertex::cluster(Kind::ControllerRegistration, "r"), &seed));
    // A raw chart's resources never enter the graph.
    graph.replace(controller_deployment(&json!({"metadata": {"name": "d"},
        "helm": {"rawChart": "abc"}, "resources": [{"resourceRef": {"apiVersion": "v1", "kind": "Secret", "name": "x"}}]})));
    assert!(!graph.contains(&Vertex::new(Kind::Secret, "garden", "pull")));
    assert!(!graph.contains(&Vertex::new(Kind::Secret, "garden", "x")));
}

#[test]
fn managed_seeds_bootstrap_only_while_they_may() {
    let ms = json!({"metadata": {"name": "child", "namespace": "garden"},
        "spec": {"shoot": {"name": "child-shoot"}, "gardenlet": {"bootstrap": "BootstrapToken"}}});
    let token = Vertex::new(
        Kind::Secret,
        "kube-system",
        &bootstrap_token_secret("garden", "child"),
    );
    let mut graph = Graph::default();
    graph.replace(managed_seed(
        &ms,
        Bootstrap {
            seed_exists: false,
            certificate_expired: false,
        },
    ));
    assert!(graph.contains(&token));
    graph.replace(managed_seed(
        &ms,
        Bootstrap {
            seed_exists: true,
            certificate_expired: false,
        },
    ));
    assert!(!graph.contains(&token));
    // The child's Seed reaches the parent's through the managed seed's shoot.
    graph.replace(shoot(
        &json!({"metadata": {"name": "child-shoot", "namespace": "garden"},
        "spec": {"seedName": "parent"}}),
        None,
    ));
    assert!(graph.has_path(
        &Vertex::cluster(Kind::Seed, "child"),
        &Vertex::cluster(Kind::Seed, "parent")
    ));
    assert!(!graph.has_path(
        &Vertex::cluster(Kind::Seed, "parent"),
        &Vertex::cluster(Kind::Seed, "child")
    ));
}

/// Every backup credentials field — `credentialsRef` and the older `secretRef` — links its
/// Secret to the seed that uses it; other seeds stay out.
#[test]
fn backup_secret_refs_reach_the_seed_like_credentials_refs() {
    let secret = |name: &str| json!({"namespace": "garden", "name": name});
    let credentials = |name: &str| json!({"apiVersion": "v1", "kind": "Secret", "namespace": "garden", "name": name});
    let not_yet = Bootstrap {
        seed_exists: false,
        certificate_expired: false,
    };
    let cases: Vec<(&str, Update)> = vec![
        (
            "seed backup secretRef",
            seed(&json!({"metadata": {"name": "a"},
                "spec": {"backup": {"provider": "p", "secretRef": secret("s")}}})),
        ),
        (
            "seed backup credentialsRef",
            seed(&json!({"metadata": {"name": "a"},
                "spec": {"backup": {"provider": "p", "credentialsRef": credentials("s")}}})),
        ),
        (
            "seed dns provider secretRef",
            seed(&json!({"metadata": {"name": "a"},
                "spec": {"dns": {"provider": {"type": "t", "secretRef": secret("s")}}}})),
        ),
        (
            "bucket secretRef",
            backup_bucket(&json!({"metadata": {"name": "bb"},
                "spec": {"seedName": "a", "secretRef": secret("s")}})),
        ),
        (
            "bucket credentialsRef",
            backup_bucket(&json!({"metadata": {"name": "bb"},
                "spec": {"seedName": "a", "credentialsRef": credentials("s")}})),
        ),
        (
            "managed seed template backup secretRef",
            managed_seed(
                &json!({"metadata": {"name": "a", "namespace": "garden"},
                    "spec": {"gardenlet": {"config": {"seedConfig": {"spec": {"backup": {"secretRef": secret("s")}}}}}}}),
                not_yet,
            ),
        ),
        (
            "gardenlet template backup secretRef",
            gardenlet(
                &json!({"metadata": {"name": "a", "namespace": "garden"},
                    "spec": {"config": {"seedConfig": {"spec": {"backup": {"secretRef": secret("s")}}}}}}),
                not_yet,
            )
            .expect("a seed's gardenlet"),
        ),
    ];
    for (case, update) in cases {
        let mut graph = Graph::default();
        graph.replace(update);
        let s = Vertex::new(Kind::Secret, "garden", "s");
        assert!(
            graph.has_path(&s, &Vertex::cluster(Kind::Seed, "a")),
            "{case}"
        );
        assert!(
            !graph.has_path(&s, &Vertex::cluster(Kind::Seed, "b")),
            "{case}"
        );
    }
}

/// A bucket that switches from `secretRef` to `credentialsRef` releases the old Secret.
#[test]
fn a_bucket_s_replaced_secret_ref_no_longer_reaches_the_seed() {
    let mut graph = Graph::default();
    graph.replace(backup_bucket(&json!({"metadata": {"name": "bb"},
        "spec": {"seedName": "a", "secretRef": {"namespace": "garden", "name": "old"}}})));
    graph.replace(backup_bucket(&json!({"metadata": {"name": "bb"},
        "spec": {"seedName": "a", "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "namespace": "garden", "name": "new"}}})));
    let seed = Vertex::cluster(Kind::Seed, "a");
    assert!(!graph.has_path(&Vertex::new(Kind::Secret, "garden", "old"), &seed));
    assert!(graph.has_path(&Vertex::new(Kind::Secret, "garden", "new"), &seed));
}
