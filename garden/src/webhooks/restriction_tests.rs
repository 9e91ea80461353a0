//! SeedRestriction's rules (spec §4.3, §6 item 13) against objects held in a map.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::*;

#[derive(Default)]
struct Objects(HashMap<(String, String, String, String), Value>);

impl Objects {
    fn with(
        mut self,
        group: &str,
        resource: &str,
        namespace: &str,
        name: &str,
        object: Value,
    ) -> Self {
        self.0.insert(
            (group.into(), resource.into(), namespace.into(), name.into()),
            object,
        );
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
        Ok(self
            .0
            .get(&(group.into(), resource.into(), namespace.into(), name.into()))
            .cloned())
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
