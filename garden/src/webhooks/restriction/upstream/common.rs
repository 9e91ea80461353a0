//! Upstream's cases for requests that are no resource of the webhook's, and its tables shared by
//! gardenlets and extensions: ShootStates, BackupBuckets, BackupEntries, Bastions, Seeds,
//! InternalSecrets and ConfigMaps.

use serde_json::{Value, json};

use super::*;

#[tokio::test]
async fn unhandled_requests_and_existing_objects() {
    let mut stranger = Client::Gardenlet.request("", ("", ""), "", "", Value::Null);
    stranger.user = "foo".into();
    stranger.groups = Vec::new();
    let empty = Client::Gardenlet.request("", ("", ""), "", "", Value::Null);
    let existing = Objects::default().with(CORE, "backupentries", "bar", "foo", json!({}));
    check(vec![
        ("no seed".into(), stranger, Objects::default(), allowed()),
        (
            "no resource".into(),
            empty.clone(),
            Objects::default(),
            denied(400, "unexpected resource: \"\""),
        ),
        (
            "irrelevant resource".into(),
            empty,
            Objects::default(),
            denied(400, "unexpected resource: \"\""),
        ),
        (
            "object already exists".into(),
            Client::Gardenlet.request("CREATE", (CORE, "backupentries"), "bar", "foo", Value::Null),
            existing,
            Outcome::Allow(Some("object already exists".into())),
        ),
    ])
    .await;
}

#[tokio::test]
async fn shoot_states() {
    for client in CLIENTS {
        let request = |operation: &str| {
            client.request(operation, (CORE, "shootstates"), "bar", "foo", json!({}))
        };
        let with_shoot = |spec: Option<&str>, status: Option<&str>| {
            Objects::default().with(
                CORE,
                "shoots",
                "bar",
                "foo",
                shoot("bar", "foo", spec, status),
            )
        };
        check(vec![
            (
                "update".into(),
                request("UPDATE"),
                Objects::default(),
                unexpected("UPDATE"),
            ),
            (
                "delete".into(),
                request("DELETE"),
                Objects::default(),
                unexpected("DELETE"),
            ),
            (
                "shoot missing".into(),
                request("CREATE"),
                Objects::default(),
                not_found(500, "shoots.core.gardener.cloud", "foo"),
            ),
            (
                "shoot without seed".into(),
                request("CREATE"),
                with_shoot(None, None),
                mismatch(),
            ),
            (
                "shoot on another seed".into(),
                request("CREATE"),
                with_shoot(Some("some-different-seed"), None),
                mismatch(),
            ),
            (
                "spec seed matches".into(),
                request("CREATE"),
                with_shoot(Some(SEED), None),
                allowed(),
            ),
            (
                "status seed matches".into(),
                request("CREATE"),
                with_shoot(None, Some(SEED)),
                allowed(),
            ),
        ])
        .await;
    }
}

#[tokio::test]
async fn backup_buckets() {
    for client in CLIENTS {
        let request = |operation: &str, name: &str, seed_name: Option<&str>| {
            let object = if operation == "CREATE" {
                json!({"spec": {"seedName": seed_name}})
            } else {
                Value::Null
            };
            client.request(operation, (CORE, "backupbuckets"), "", name, object)
        };
        let own_seed = Objects::default().with(CORE, "seeds", "", SEED, seed(SEED, false));
        check(vec![
            (
                "update".into(),
                request("UPDATE", "foo", None),
                Objects::default(),
                unexpected("UPDATE"),
            ),
            (
                "create without seed".into(),
                request("CREATE", "foo", None),
                Objects::default(),
                mismatch(),
            ),
            (
                "create for another seed".into(),
                request("CREATE", "foo", Some("some-different-seed")),
                Objects::default(),
                mismatch(),
            ),
            (
                "create for own seed".into(),
                request("CREATE", "foo", Some(SEED)),
                Objects::default(),
                allowed(),
            ),
            (
                "delete, own seed missing".into(),
                request("DELETE", "foo", None),
                Objects::default(),
                not_found(500, "seeds.core.gardener.cloud", SEED),
            ),
            (
                "delete unrelated".into(),
                request("DELETE", "foo", None),
                own_seed,
                denied(403, "cannot delete unrelated BackupBucket"),
            ),
            (
                "delete own (named after the seed's UID)".into(),
                request("DELETE", &format!("uid-of-{SEED}"), None),
                Objects::default().with(CORE, "seeds", "", SEED, seed(SEED, false)),
                allowed(),
            ),
        ])
        .await;
    }
}

#[tokio::test]
async fn backup_entries() {
    for client in CLIENTS {
        let entry = |entry_seed: Option<&str>| json!({"spec": {"bucketName": "bucket", "seedName": entry_seed}});
        let request = |operation: &str, object: Value| {
            client.request(operation, (CORE, "backupentries"), "bar", "foo", object)
        };
        let bucket = |bucket_seed: Option<&str>| {
            Objects::default().with(
                CORE,
                "backupbuckets",
                "",
                "bucket",
                json!({"metadata": {"name": "bucket"}, "spec": {"seedName": bucket_seed}}),
            )
        };
        let mut cases: Vec<Case> = vec![
            (
                "update".into(),
                request("UPDATE", Value::Null),
                Objects::default(),
                unexpected("UPDATE"),
            ),
            (
                "delete".into(),
                request("DELETE", Value::Null),
                Objects::default(),
                unexpected("DELETE"),
            ),
            (
                "entry without seed".into(),
                request("CREATE", entry(None)),
                Objects::default(),
                mismatch(),
            ),
            (
                "entry on another seed".into(),
                request("CREATE", entry(Some("some-different-seed"))),
                Objects::default(),
                mismatch(),
            ),
            (
                "bucket without seed".into(),
                request("CREATE", entry(Some(SEED))),
                bucket(None),
                mismatch(),
            ),
            (
                "bucket on another seed".into(),
                request("CREATE", entry(Some(SEED))),
                bucket(Some("some-different-seed")),
                mismatch(),
            ),
            (
                "entry and bucket on own seed".into(),
                request("CREATE", entry(Some(SEED))),
                bucket(Some(SEED)),
                allowed(),
            ),
        ];
        // A source BackupEntry (control plane migration): named `source-<original>`, owned by
        // Shoot `foo`, allowed only while that Shoot restores and when it copies the original.
        let source = request(
            "CREATE",
            json!({"metadata": {"name": "source-backupentry", "namespace": "bar", "ownerReferences": [{"kind": "Shoot", "name": "foo"}]},
                   "spec": {"bucketName": "bucket", "seedName": SEED}}),
        );
        let owner = |last_operation: Value| {
            Objects::default().with(CORE, "shoots", "bar", "foo", json!({"metadata": {"name": "foo", "namespace": "bar"}, "status": {"lastOperation": last_operation}}))
        };
        let restoring = || owner(json!({"type": "Restore", "state": "Processing"}));
        let original = |spec: Value| {
            restoring().with(
                CORE,
                "backupentries",
                "bar",
                "backupentry",
                json!({"metadata": {"name": "backupentry"}, "spec": spec}),
            )
        };
        let not_restoring = denied(
            403,
            "creation of source BackupEntry is only allowed during shoot Restore operation (shoot: foo)",
        );
        cases.extend([
            (
                "source: owner shoot missing".into(),
                source.clone(),
                Objects::default(),
                not_found(500, "shoots.core.gardener.cloud", "foo"),
            ),
            (
                "source: no last operation".into(),
                source.clone(),
                owner(Value::Null),
                not_restoring.clone(),
            ),
        ]);
        for operation in ["Create", "Reconcile", "Delete", "Migrate"] {
            cases.push((
                format!("source: last operation {operation}"),
                source.clone(),
                owner(json!({"type": operation})),
                not_restoring.clone(),
            ));
        }
        cases.extend([
            (
                "source: original missing".into(),
                source.clone(),
                restoring(),
                denied(403, "could not find original BackupEntry backupentry: backupentries.core.gardener.cloud \"backupentry\" not found"),
            ),
            (
                "source: original differs".into(),
                source.clone(),
                original(json!({"bucketName": "some-different-bucket", "seedName": "some-different-seedname"})),
                denied(403, "specification of source BackupEntry must equal specification of original BackupEntry backupentry"),
            ),
            ("source: original equal".into(), source, original(json!({"bucketName": "bucket", "seedName": SEED})), allowed()),
        ]);
        check(cases).await;
    }
}

#[tokio::test]
async fn bastions() {
    for client in CLIENTS {
        let request = |operation: &str, object: Value| {
            client.request(
                operation,
                ("operations.gardener.cloud", "bastions"),
                "",
                "foo",
                object,
            )
        };
        check(vec![
            (
                "update".into(),
                request("UPDATE", Value::Null),
                Objects::default(),
                unexpected("UPDATE"),
            ),
            (
                "delete".into(),
                request("DELETE", Value::Null),
                Objects::default(),
                unexpected("DELETE"),
            ),
            (
                "own seed".into(),
                request("CREATE", json!({"spec": {"seedName": SEED}})),
                Objects::default(),
                allowed(),
            ),
        ])
        .await;
    }
}

#[tokio::test]
async fn seeds() {
    for client in CLIENTS {
        for operation in ["CREATE", "UPDATE", "DELETE"] {
            let request =
                |name: &str| client.request(operation, (CORE, "seeds"), "", name, Value::Null);
            let other = "some-different-seed";
            let mut cases: Vec<Case> = vec![
                (
                    "own seed".into(),
                    request(SEED),
                    Objects::default(),
                    allowed(),
                ),
                (
                    "another seed, no managedseed".into(),
                    request(other),
                    Objects::default(),
                    mismatch(),
                ),
            ];
            if operation == "DELETE" {
                // The parent seed deletes the Seed of a managed seed that is being deleted.
                let managed = |deleting: bool, shoot: Option<&str>| {
                    let deletion = deleting.then_some("2024-01-01T00:00:00Z");
                    json!({"metadata": {"name": other, "namespace": "garden", "deletionTimestamp": deletion},
                           "spec": {"shoot": shoot.map(|name| json!({"name": name}))}})
                };
                let stored = |deleting: bool, shoot: Option<&str>| {
                    Objects::default().with(
                        MANAGEMENT,
                        "managedseeds",
                        "garden",
                        other,
                        managed(deleting, shoot),
                    )
                };
                let with_shoot = |seed_name: Option<&str>| {
                    stored(true, Some("shoot")).with(
                        CORE,
                        "shoots",
                        "garden",
                        "shoot",
                        super::shoot("garden", "shoot", seed_name, None),
                    )
                };
                cases.extend([
                    ("managedseed unreadable".into(), request(other), Objects::default().failing(MANAGEMENT, "managedseeds"), read_error()),
                    (
                        "managedseed not deleting".into(),
                        request(other),
                        stored(false, None),
                        denied(403, "object can only be deleted if corresponding ManagedSeed has a deletion timestamp"),
                    ),
                    ("managedseed without shoot".into(), request(other), stored(true, None), mismatch()),
                    ("managedseed's shoot missing".into(), request(other), stored(true, Some("shoot")), not_found(500, "shoots.core.gardener.cloud", "shoot")),
                    ("managedseed's shoot without seed".into(), request(other), with_shoot(None), mismatch()),
                    ("managedseed's shoot on another seed".into(), request(other), with_shoot(Some(other)), mismatch()),
                    ("managedseed's shoot on own seed".into(), request(other), with_shoot(Some(SEED)), allowed()),
                ]);
            }
            check(cases).await;
        }
    }
}

/// Upstream's cases for a Shoot's project object `<shoot>.<suffix>` of `resource` (the Shoot
/// `bar/foo` must run on the requester's seed; `spec.seedName` only).
pub(super) fn shoot_object_cases(
    client: Client,
    (group, resource): (&str, &str),
    suffix: &str,
) -> Vec<Case> {
    let request = client.request(
        "CREATE",
        (group, resource),
        "bar",
        &format!("foo{suffix}"),
        json!({}),
    );
    let with_shoot = |seed_name: &str| {
        Objects::default().with(
            CORE,
            "shoots",
            "bar",
            "foo",
            shoot("bar", "foo", Some(seed_name), None),
        )
    };
    vec![
        (
            format!("{suffix}: shoot missing"),
            request.clone(),
            Objects::default(),
            not_found(403, "shoots.core.gardener.cloud", "foo"),
        ),
        (
            format!("{suffix}: shoot unreadable"),
            request.clone(),
            Objects::default().failing(CORE, "shoots"),
            read_error(),
        ),
        (
            format!("{suffix}: shoot on another seed"),
            request.clone(),
            with_shoot("some-different-seed"),
            mismatch(),
        ),
        (
            format!("{suffix}: shoot on own seed"),
            request,
            with_shoot(SEED),
            allowed(),
        ),
    ]
}

#[tokio::test]
async fn internal_secrets_and_config_maps() {
    for client in CLIENTS {
        for (resource, suffix) in [
            ((CORE, "internalsecrets"), ".ca-client"),
            (("", "configmaps"), ".ca-cluster"),
        ] {
            let request =
                |operation: &str| client.request(operation, resource, "bar", "foo", json!({}));
            let mut cases: Vec<Case> = vec![
                (
                    "update".into(),
                    request("UPDATE"),
                    Objects::default(),
                    unexpected("UPDATE"),
                ),
                (
                    "delete".into(),
                    request("DELETE"),
                    Objects::default(),
                    unexpected("DELETE"),
                ),
                (
                    "not a shoot's object".into(),
                    request("CREATE"),
                    Objects::default(),
                    mismatch(),
                ),
            ];
            cases.extend(shoot_object_cases(client, resource, suffix));
            check(cases).await;
        }
    }
}
