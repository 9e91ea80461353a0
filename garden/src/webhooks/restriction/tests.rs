//! SeedRestriction's rules (spec §4.3, §6 item 13) against objects held in a map.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::*;

/// Stored objects by (group, resource, namespace, name); reads of the kinds in `failing` and,
/// with `failing_lists`, every list fail with the message `fake`.
#[derive(Default)]
pub(super) struct Objects {
    objects: HashMap<(String, String, String, String), Value>,
    failing: Vec<(String, String)>,
    failing_lists: bool,
}

impl Objects {
    pub(super) fn with(
        mut self,
        group: &str,
        resource: &str,
        namespace: &str,
        name: &str,
        object: Value,
    ) -> Self {
        self.objects.insert(
            (group.into(), resource.into(), namespace.into(), name.into()),
            object,
        );
        self
    }

    /// Reads of `group/resource` fail.
    pub(super) fn failing(mut self, group: &str, resource: &str) -> Self {
        self.failing.push((group.into(), resource.into()));
        self
    }

    /// Lists fail.
    pub(super) fn failing_lists(mut self) -> Self {
        self.failing_lists = true;
        self
    }
}

impl Lookup for Objects {
    async fn get(
        &self,
        group: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, String> {
        if self
            .failing
            .iter()
            .any(|(g, r)| g == group && r == resource)
        {
            return Err("fake".to_owned());
        }
        Ok(self
            .objects
            .get(&(group.into(), resource.into(), namespace.into(), name.into()))
            .cloned())
    }

    async fn list(&self, group: &str, resource: &str) -> Result<Vec<Value>, String> {
        if self.failing_lists {
            return Err("fake".to_owned());
        }
        let mut found: Vec<_> = self
            .objects
            .iter()
            .filter(|((g, r, _, _), _)| g == group && r == resource)
            .collect();
        found.sort_by(|a, b| a.0.cmp(b.0));
        Ok(found
            .into_iter()
            .map(|(_, object)| object.clone())
            .collect())
    }
}

fn request(
    seed: &str,
    operation: &str,
    group: &str,
    resource: &str,
    namespace: &str,
    name: &str,
    object: Value,
) -> Request {
    Request {
        uid: "u".into(),
        group: group.into(),
        resource: resource.into(),
        operation: operation.into(),
        namespace: namespace.into(),
        name: name.into(),
        user: format!("gardener.cloud:system:seed:{seed}"),
        groups: vec!["gardener.cloud:system:seeds".into()],
        object,
    }
}

fn garden() -> Objects {
    Objects::default()
        .with(
            "core.gardener.cloud",
            "seeds",
            "",
            "a",
            json!({"metadata": {"name": "a", "uid": "uid-a"}}),
        )
        .with(
            "core.gardener.cloud",
            "shoots",
            "garden-dev",
            "s",
            json!({"spec": {"seedName": "b"}, "status": {"seedName": "a"}}),
        )
        .with(
            "core.gardener.cloud",
            "backupbuckets",
            "",
            "bb",
            json!({"spec": {"seedName": "a"}}),
        )
        .with("", "secrets", "garden", "exists", json!({}))
}

fn denied(code: u16, message: &str) -> Outcome {
    Outcome::Deny(code, message.into())
}

#[tokio::test]
async fn rules_follow_the_spec() {
    let core = "core.gardener.cloud";
    let mismatch_a = denied(403, "object does not belong to seed \"a\"");
    let cases = [
        (
            request(
                "a",
                "CREATE",
                "coordination.k8s.io",
                "leases",
                "gardener-system-seed-lease",
                "a",
                json!({}),
            ),
            Outcome::Allow(None),
        ),
        (
            request(
                "a",
                "CREATE",
                "coordination.k8s.io",
                "leases",
                "gardener-system-seed-lease",
                "b",
                json!({}),
            ),
            mismatch_a.clone(),
        ),
        (
            request(
                "a",
                "CREATE",
                "coordination.k8s.io",
                "leases",
                "anywhere",
                "gardenlet-leader-election",
                json!({}),
            ),
            Outcome::Allow(None),
        ),
        // ShootState: spec or status seed; migration keeps the source allowed.
        (
            request(
                "a",
                "CREATE",
                core,
                "shootstates",
                "garden-dev",
                "s",
                json!({}),
            ),
            Outcome::Allow(None),
        ),
        (
            request(
                "c",
                "CREATE",
                core,
                "shootstates",
                "garden-dev",
                "s",
                json!({}),
            ),
            denied(403, "object does not belong to seed \"c\""),
        ),
        (
            request(
                "a",
                "CREATE",
                core,
                "shootstates",
                "garden-dev",
                "missing",
                json!({}),
            ),
            denied(500, "shoots.core.gardener.cloud \"missing\" not found"),
        ),
        // Shoot secrets use spec.seedName only [QUIRK]: the source seed of a migration is refused.
        (
            request(
                "a",
                "CREATE",
                "",
                "configmaps",
                "garden-dev",
                "s.ca-cluster",
                json!({}),
            ),
            mismatch_a.clone(),
        ),
        (
            request(
                "b",
                "CREATE",
                "",
                "configmaps",
                "garden-dev",
                "s.ca-cluster",
                json!({}),
            ),
            Outcome::Allow(None),
        ),
        (
            request(
                "a",
                "CREATE",
                "",
                "configmaps",
                "garden-dev",
                "other",
                json!({}),
            ),
            mismatch_a.clone(),
        ),
        (
            request(
                "a",
                "CREATE",
                "",
                "secrets",
                "garden",
                "generated-bucket-bb",
                json!({}),
            ),
            Outcome::Allow(None),
        ),
        (
            request("a", "CREATE", "", "secrets", "garden", "exists", json!({})),
            Outcome::Allow(Some("object already exists".into())),
        ),
        (
            request(
                "a",
                "DELETE",
                core,
                "backupbuckets",
                "",
                "uid-a",
                json!(null),
            ),
            Outcome::Allow(None),
        ),
        (
            request("a", "DELETE", core, "backupbuckets", "", "bb", json!(null)),
            denied(403, "cannot delete unrelated BackupBucket"),
        ),
        (
            request(
                "a",
                "CREATE",
                core,
                "backupbuckets",
                "",
                "new",
                json!({"spec": {"seedName": "b"}}),
            ),
            mismatch_a.clone(),
        ),
        (
            request(
                "a",
                "CREATE",
                core,
                "backupentries",
                "garden-dev",
                "e",
                json!({"spec": {"seedName": "a", "bucketName": "bb"}}),
            ),
            Outcome::Allow(None),
        ),
        (
            request("a", "UPDATE", core, "seeds", "", "b", json!({})),
            mismatch_a.clone(),
        ),
        (
            request("a", "UPDATE", core, "seeds", "", "a", json!({})),
            Outcome::Allow(None),
        ),
        (
            request("a", "DELETE", core, "seeds", "", "b", json!(null)),
            mismatch_a.clone(),
        ),
        (
            request(
                "a",
                "CREATE",
                "",
                "serviceaccounts",
                "seed-a",
                "x",
                json!({}),
            ),
            Outcome::Allow(None),
        ),
        (
            request(
                "a",
                "CREATE",
                "",
                "serviceaccounts",
                "garden",
                "x",
                json!({}),
            ),
            mismatch_a.clone(),
        ),
        (
            request(
                "a",
                "CREATE",
                "",
                "secrets",
                "kube-system",
                "bootstrap-token-abcdef",
                json!({"type": "Opaque"}),
            ),
            denied(422, "unexpected secret type: \"Opaque\""),
        ),
        (
            request(
                "a",
                "CREATE",
                "",
                "secrets",
                "kube-system",
                "bootstrap-token-abcdef",
                json!({"type": "bootstrap.kubernetes.io/token", "stringData": {"usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true", "auth-extra-groups": "x"}}),
            ),
            denied(422, "\"auth-extra-groups\" must not be set"),
        ),
        (
            request("a", "CREATE", "example.com", "widgets", "", "w", json!({})),
            denied(400, "unexpected resource: \"widgets.example.com\""),
        ),
    ];
    let objects = garden();
    for (request, expected) in cases {
        assert_eq!(
            admit(&request, &objects).await,
            expected,
            "{} {} {}/{}",
            request.operation,
            request.resource,
            request.namespace,
            request.name
        );
    }
}

#[tokio::test]
async fn extensions_and_non_seeds() {
    let objects = garden();
    let mut extension = request(
        "a",
        "CREATE",
        "coordination.k8s.io",
        "leases",
        "garden",
        "l",
        json!({}),
    );
    extension.user = "system:serviceaccount:seed-a:extension-x".into();
    extension.groups = vec![
        "system:serviceaccounts".into(),
        "system:serviceaccounts:seed-a".into(),
    ];
    assert_eq!(
        admit(&extension, &objects).await,
        denied(
            403,
            "extension client can only create leases in the namespace for seed \"a\""
        )
    );
    extension.namespace = "seed-a".into();
    assert_eq!(admit(&extension, &objects).await, Outcome::Allow(None));
    let mut stranger = request("a", "CREATE", "", "secrets", "garden", "x", json!({}));
    stranger.groups = vec!["system:authenticated".into()];
    assert_eq!(admit(&stranger, &objects).await, Outcome::Allow(None));
}

#[test]
fn responses_carry_uid_code_and_message() {
    assert_eq!(
        response("u1", &denied(403, "no")),
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
               "response": {"uid": "u1", "allowed": false, "status": {"code": 403, "message": "no"}}})
    );
    let parsed = Request::parse(&json!({"request": {"uid": "x", "operation": "CREATE",
        "resource": {"group": "", "version": "v1", "resource": "secrets"}, "namespace": "garden",
        "userInfo": {"username": "u", "groups": ["g"]}, "object": {"metadata": {"name": "from-object"}}}}))
    .expect("parses");
    assert_eq!(parsed.name, "from-object");
    assert_eq!(parsed.groups, vec!["g".to_owned()]);
}

fn bootstrap_token_secret(kind: &str, target: &str) -> Value {
    json!({"type": "bootstrap.kubernetes.io/token", "stringData": {
        "usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true",
        "description": format!("A bootstrap token for the Gardenlet for {kind} {target}.")}})
}

/// Rule (5) (a managed seed's backup credentials, created by the seed its Shoot runs on) and the
/// Gardenlet bootstrap rule (own Gardenlet only, once, again when expired or renewing).
#[tokio::test]
async fn managed_seed_backup_secrets_and_gardenlet_bootstrap_tokens() {
    let ms = "seedmanagement.gardener.cloud";
    let core = "core.gardener.cloud";
    let managed = |name: &str, shoot: &str, template: Value| {
        json!({"metadata": {"name": name, "namespace": "garden"},
               "spec": {"shoot": {"name": shoot}, "gardenlet": {"config": template}}})
    };
    let backup = |name: &str| {
        json!({"seedConfig": {"spec": {"backup": {"credentialsRef": {
            "apiVersion": "v1", "kind": "Secret", "namespace": "garden", "name": name}}}}})
    };
    let objects = garden()
        .with(core, "shoots", "garden", "child", json!({"spec": {"seedName": "a"}}))
        .with(core, "shoots", "garden", "other", json!({"spec": {"seedName": "b"}}))
        .with(ms, "managedseeds", "garden", "child", managed("child", "child", backup("child-backup")))
        .with(ms, "managedseeds", "garden", "other", managed("other", "other", backup("other-backup")))
        .with(ms, "gardenlets", "garden", "a", json!({"metadata": {"name": "a"}}))
        .with(ms, "gardenlets", "garden", "b", json!({"metadata": {"name": "b", "annotations": {"gardener.cloud/operation": "renew-kubeconfig"}}}))
        .with(core, "seeds", "", "b", json!({"metadata": {"name": "b"}}))
        .with(core, "seeds", "", "c", json!({"metadata": {"name": "c"}, "status": {"clientCertificateExpirationTimestamp": "2000-01-01T00:00:00Z"}}));
    let objects = objects
        .with(
            ms,
            "gardenlets",
            "garden",
            "c",
            json!({"metadata": {"name": "c"}}),
        )
        .with(
            ms,
            "gardenlets",
            "garden",
            "e",
            json!({"metadata": {"name": "e"}}),
        );
    let secret = |seed: &str, namespace: &str, name: &str, object: Value| {
        request(seed, "CREATE", "", "secrets", namespace, name, object)
    };
    let cases = [
        (
            secret("a", "garden", "child-backup", json!({})),
            Outcome::Allow(None),
        ),
        (
            secret("a", "garden", "other-backup", json!({})),
            denied(403, "object does not belong to seed \"a\""),
        ),
        (
            secret("b", "garden", "other-backup", json!({})),
            Outcome::Allow(None),
        ),
        (
            secret("a", "elsewhere", "child-backup", json!({})),
            denied(403, "object does not belong to seed \"a\""),
        ),
        // Gardenlet bootstrap: own Gardenlet in garden only.
        (
            secret(
                "a",
                "kube-system",
                "bootstrap-token-aaaaaa",
                bootstrap_token_secret(
                    "seedmanagement.gardener.cloud/v1alpha1.Gardenlet resource",
                    "garden/b",
                ),
            ),
            denied(403, "gardenlet garden/b does not belong to seed \"a\""),
        ),
        // Bootstrapped, certificate valid, no renewal asked for.
        (
            secret(
                "a",
                "kube-system",
                "bootstrap-token-aaaaaa",
                bootstrap_token_secret(
                    "seedmanagement.gardener.cloud/v1alpha1.Gardenlet resource",
                    "garden/a",
                ),
            ),
            denied(400, "gardenlet garden/a is already bootstrapped"),
        ),
        // The Seed does not exist (upstream answers 403 here, unlike for a ManagedSeed).
        (
            secret(
                "e",
                "kube-system",
                "bootstrap-token-eeeeee",
                bootstrap_token_secret(
                    "seedmanagement.gardener.cloud/v1alpha1.Gardenlet resource",
                    "garden/e",
                ),
            ),
            denied(403, "seeds.core.gardener.cloud \"e\" not found"),
        ),
        // Bootstrapped, renewal asked for.
        (
            secret(
                "b",
                "kube-system",
                "bootstrap-token-bbbbbb",
                bootstrap_token_secret(
                    "seedmanagement.gardener.cloud/v1alpha1.Gardenlet resource",
                    "garden/b",
                ),
            ),
            Outcome::Allow(None),
        ),
        // Bootstrapped, certificate expired.
        (
            secret(
                "c",
                "kube-system",
                "bootstrap-token-cccccc",
                bootstrap_token_secret(
                    "seedmanagement.gardener.cloud/v1alpha1.Gardenlet resource",
                    "garden/c",
                ),
            ),
            Outcome::Allow(None),
        ),
        // No Gardenlet object.
        (
            secret(
                "d",
                "kube-system",
                "bootstrap-token-dddddd",
                bootstrap_token_secret(
                    "seedmanagement.gardener.cloud/v1alpha1.Gardenlet resource",
                    "garden/d",
                ),
            ),
            denied(
                403,
                "gardenlets.seedmanagement.gardener.cloud \"d\" not found",
            ),
        ),
    ];
    for (request, expected) in cases {
        assert_eq!(
            admit(&request, &objects).await,
            expected,
            "{} {}/{}",
            request.user,
            request.namespace,
            request.name
        );
    }
}
