//! Upstream's Secret table (gardenlets and extensions alike): generated bucket secrets, a
//! Shoot's project secrets, service-account issuer secrets, bootstrap tokens for managed seeds
//! and Gardenlets, and backup credentials of managed seeds.

use base64::Engine as _;
use serde_json::{Value, json};

use super::common::shoot_object_cases;
use super::*;

const SECRETS: (&str, &str) = ("", "secrets");

#[tokio::test]
async fn secrets() {
    for client in CLIENTS {
        let request = |operation: &str, namespace: &str, name: &str, object: Value| {
            client.request(operation, SECRETS, namespace, name, object)
        };
        let mut cases: Vec<Case> = vec![
            (
                "update".into(),
                request("UPDATE", "bar", "foo", Value::Null),
                Objects::default(),
                unexpected("UPDATE"),
            ),
            (
                "delete".into(),
                request("DELETE", "bar", "foo", Value::Null),
                Objects::default(),
                unexpected("DELETE"),
            ),
            (
                "no expected secret".into(),
                request("CREATE", "bar", "foo", json!({})),
                Objects::default(),
                mismatch(),
            ),
        ];
        let bucket_secret = request("CREATE", "bar", "generated-bucket-foo", json!({}));
        let bucket = |seed_name: &str| {
            Objects::default().with(
                CORE,
                "backupbuckets",
                "",
                "foo",
                json!({"spec": {"seedName": seed_name}}),
            )
        };
        cases.extend([
            (
                "bucket secret: bucket missing".into(),
                bucket_secret.clone(),
                Objects::default(),
                not_found(403, "backupbuckets.core.gardener.cloud", "foo"),
            ),
            (
                "bucket secret: bucket unreadable".into(),
                bucket_secret.clone(),
                Objects::default().failing(CORE, "backupbuckets"),
                read_error(),
            ),
            (
                "bucket secret: bucket on another seed".into(),
                bucket_secret.clone(),
                bucket("some-different-seed"),
                mismatch(),
            ),
            (
                "bucket secret: bucket on own seed".into(),
                bucket_secret,
                bucket(SEED),
                allowed(),
            ),
        ]);
        for suffix in [
            ".ca-cluster",
            ".ssh-keypair",
            ".ssh-keypair.old",
            ".monitoring",
        ] {
            cases.extend(shoot_object_cases(client, SECRETS, suffix));
        }
        cases.extend(issuer_cases(client));
        cases.extend(bootstrap_token_cases(client));
        cases.extend(managed_seed_backup_cases(client));
        check(cases).await;
    }
}

/// Secrets in `gardener-system-shoot-issuer` with the public keys of a Shoot's service account
/// issuer: labelled with the Shoot, which must run on the requester's seed.
fn issuer_cases(client: Client) -> Vec<Case> {
    let namespace = "gardener-system-shoot-issuer";
    let request = |labels: Value| {
        client.request(
            "CREATE",
            SECRETS,
            namespace,
            "foo",
            json!({"metadata": {"labels": labels}}),
        )
    };
    let missing = |label: &str| denied(422, &format!("label {label:?} is missing"));
    let complete = request(
        json!({"shoot.gardener.cloud/name": "foo", "shoot.gardener.cloud/namespace": "bar", "discovery.gardener.cloud/public": "serviceaccount"}),
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
            "issuer: no labels".into(),
            request(json!({})),
            Objects::default(),
            missing("shoot.gardener.cloud/name"),
        ),
        (
            "issuer: no shoot namespace".into(),
            request(json!({"shoot.gardener.cloud/name": "foo"})),
            Objects::default(),
            missing("shoot.gardener.cloud/namespace"),
        ),
        (
            "issuer: no public label".into(),
            request(
                json!({"shoot.gardener.cloud/name": "foo", "shoot.gardener.cloud/namespace": "foo"}),
            ),
            Objects::default(),
            missing("discovery.gardener.cloud/public"),
        ),
        (
            "issuer: wrong public label".into(),
            request(
                json!({"shoot.gardener.cloud/name": "foo", "shoot.gardener.cloud/namespace": "foo", "discovery.gardener.cloud/public": "foo"}),
            ),
            Objects::default(),
            denied(
                422,
                "label \"discovery.gardener.cloud/public\" value must be set to \"serviceaccount\"",
            ),
        ),
        (
            "issuer: shoot missing".into(),
            complete.clone(),
            Objects::default(),
            not_found(403, "shoots.core.gardener.cloud", "foo"),
        ),
        (
            "issuer: shoot unreadable".into(),
            complete.clone(),
            Objects::default().failing(CORE, "shoots"),
            read_error(),
        ),
        (
            "issuer: shoot on another seed".into(),
            complete.clone(),
            with_shoot("some-different-seed"),
            mismatch(),
        ),
        (
            "issuer: shoot on own seed".into(),
            complete,
            with_shoot(SEED),
            allowed(),
        ),
    ]
}

/// A bootstrap token Secret as the Go client sends it (`data` base64-encoded); `change` edits
/// the plain data first.
fn token(
    kind: &str,
    target: &str,
    secret_type: &str,
    change: impl FnOnce(&mut serde_json::Map<String, Value>),
) -> Value {
    let mut data = serde_json::Map::new();
    data.insert("usage-bootstrap-authentication".into(), json!("true"));
    data.insert("usage-bootstrap-signing".into(), json!("true"));
    data.insert("description".into(), json!(format!("A bootstrap token for the Gardenlet for seedmanagement.gardener.cloud/v1alpha1.{kind} resource {target}.")));
    change(&mut data);
    let encoded: serde_json::Map<String, Value> = data
        .into_iter()
        .map(|(key, value)| {
            let plain = value.as_str().unwrap_or_default().to_owned();
            (
                key,
                json!(base64::engine::general_purpose::STANDARD.encode(plain)),
            )
        })
        .collect();
    json!({"type": secret_type, "data": encoded})
}

/// Upstream's bootstrap token cases, for a ManagedSeed and for a Gardenlet.
fn bootstrap_token_cases(client: Client) -> Vec<Case> {
    let request = |object: Value| {
        client.request(
            "CREATE",
            SECRETS,
            "kube-system",
            "bootstrap-token-123456",
            object,
        )
    };
    let mut cases = Vec::new();
    for (kind, target) in [
        ("ManagedSeed", "ms1ns/ms1name"),
        ("Gardenlet", "garden/seed"),
    ] {
        let label = |what: &str| format!("{kind} token: {what}");
        let valid = |change: fn(&mut serde_json::Map<String, Value>)| {
            request(token(kind, target, "bootstrap.kubernetes.io/token", change))
        };
        cases.extend([
            (
                label("opaque"),
                request(token(kind, target, "Opaque", |_| {})),
                Objects::default(),
                denied(422, "unexpected secret type: \"Opaque\""),
            ),
            (
                label("not for authentication"),
                valid(|data| {
                    data.insert("usage-bootstrap-authentication".into(), json!("false"));
                }),
                Objects::default(),
                denied(
                    422,
                    "\"usage-bootstrap-authentication\" must be set to 'true'",
                ),
            ),
            (
                label("not for signing"),
                valid(|data| {
                    data.insert("usage-bootstrap-signing".into(), json!("false"));
                }),
                Objects::default(),
                denied(422, "\"usage-bootstrap-signing\" must be set to 'true'"),
            ),
            (
                label("extra groups"),
                valid(|data| {
                    data.insert("auth-extra-groups".into(), json!("foo"));
                }),
                Objects::default(),
                denied(422, "\"auth-extra-groups\" must not be set"),
            ),
        ]);
    }
    let managed_token = request(token(
        "ManagedSeed",
        "ms1ns/ms1name",
        "bootstrap.kubernetes.io/token",
        |_| {},
    ));
    cases.extend(managed_seed_bootstrap_cases(
        "ManagedSeed token",
        &managed_token,
        true,
    ));
    cases.extend(gardenlet_token_cases(&request));
    cases
}

/// *Gardenlet-bootstrap*: the Gardenlet `garden/seed` re-bootstraps its own, existing Seed.
fn gardenlet_token_cases(request: &dyn Fn(Value) -> Request) -> Vec<Case> {
    let for_target = |target: &str| {
        request(token(
            "Gardenlet",
            target,
            "bootstrap.kubernetes.io/token",
            |_| {},
        ))
    };
    let own = for_target("garden/seed");
    let gardenlet = |renew: bool| {
        let annotations = if renew {
            json!({"gardener.cloud/operation": "renew-kubeconfig"})
        } else {
            json!({})
        };
        Objects::default().with(
            MANAGEMENT,
            "gardenlets",
            "garden",
            SEED,
            json!({"metadata": {"name": SEED, "namespace": "garden", "annotations": annotations}}),
        )
    };
    vec![
        (
            "Gardenlet token: gardenlet missing".into(),
            own.clone(),
            Objects::default(),
            not_found(403, "gardenlets.seedmanagement.gardener.cloud", SEED),
        ),
        (
            "Gardenlet token: gardenlet unreadable".into(),
            own.clone(),
            Objects::default().failing(MANAGEMENT, "gardenlets"),
            read_error(),
        ),
        (
            "Gardenlet token: seed unreadable".into(),
            own.clone(),
            gardenlet(false).failing(CORE, "seeds"),
            read_error(),
        ),
        (
            "Gardenlet token: seed exists".into(),
            own.clone(),
            gardenlet(false).with(CORE, "seeds", "", SEED, seed(SEED, false)),
            denied(400, "gardenlet garden/seed is already bootstrapped"),
        ),
        (
            "Gardenlet token: seed not yet there".into(),
            own.clone(),
            gardenlet(false),
            not_found(403, "seeds.core.gardener.cloud", SEED),
        ),
        (
            "Gardenlet token: certificate expired".into(),
            own.clone(),
            gardenlet(false).with(CORE, "seeds", "", SEED, seed(SEED, true)),
            allowed(),
        ),
        (
            "Gardenlet token: renews kubeconfig".into(),
            own,
            gardenlet(true).with(CORE, "seeds", "", SEED, seed(SEED, false)),
            allowed(),
        ),
        (
            "Gardenlet token: another seed's gardenlet".into(),
            for_target("garden/other-seed"),
            Objects::default(),
            denied(
                403,
                "gardenlet garden/other-seed does not belong to seed \"seed\"",
            ),
        ),
        (
            "Gardenlet token: gardenlet outside garden".into(),
            for_target("kube-system/seed"),
            Objects::default(),
            denied(
                403,
                "gardenlet kube-system/seed does not belong to seed \"seed\"",
            ),
        ),
    ]
}

/// Backup credentials a parent seed creates for a managed seed: ManagedSeeds `ns1/shoot1` (on
/// Shoot `shoot1`, another seed) and `ns1/shoot2` (on Shoot `shoot2`, the requester's seed).
fn managed_seed_backup_cases(client: Client) -> Vec<Case> {
    let request = client.request("CREATE", SECRETS, "secret-foo", "secret-bar", json!({}));
    let plain = client.request("CREATE", SECRETS, "bar", "foo", json!({}));
    let credentials = json!({"apiVersion": "v1", "kind": "Secret", "namespace": "secret-foo", "name": "secret-bar"});
    let config = |seed_config: Option<Value>| {
        let mut config = json!({"apiVersion": "gardenlet.config.gardener.cloud/v1alpha1", "kind": "GardenletConfiguration"});
        if let Some(seed_config) = seed_config {
            config["seedConfig"] = seed_config;
        }
        config
    };
    let template = |backup: Option<&Value>| {
        Some(
            json!({"metadata": {}, "spec": {"backup": backup.map(|c| json!({"provider": "", "credentialsRef": c}))}}),
        )
    };
    let managed = |name: &str, gardenlet_config: Value| json!({"metadata": {"name": name, "namespace": "ns1"}, "spec": {"shoot": {"name": name}, "gardenlet": {"config": gardenlet_config}}});
    let managed_seeds = |first: Value, second: Value| {
        Objects::default()
            .with(
                MANAGEMENT,
                "managedseeds",
                "ns1",
                "shoot1",
                managed("shoot1", first),
            )
            .with(
                MANAGEMENT,
                "managedseeds",
                "ns1",
                "shoot2",
                managed("shoot2", second),
            )
    };
    let with_shoots = |objects: Objects| {
        objects
            .with(
                CORE,
                "shoots",
                "ns1",
                "shoot1",
                shoot("ns1", "shoot1", Some("some-other-seed-name"), None),
            )
            .with(
                CORE,
                "shoots",
                "ns1",
                "shoot2",
                shoot("ns1", "shoot2", Some(SEED), None),
            )
    };
    vec![
        (
            "managed seed secret: listing fails".into(),
            plain.clone(),
            Objects::default().failing_lists(),
            read_error(),
        ),
        (
            "managed seed secret: a managedseed's shoot missing".into(),
            plain.clone(),
            managed_seeds(config(template(None)), config(template(None))),
            not_found(500, "shoots.core.gardener.cloud", "shoot1"),
        ),
        (
            "managed seed secret: seed template missing".into(),
            plain,
            with_shoots(managed_seeds(config(template(None)), config(None))),
            denied(500, "seed template is nil for ManagedSeed \"shoot2\""),
        ),
        (
            "managed seed secret: referenced by another seed's managedseed".into(),
            request.clone(),
            with_shoots(managed_seeds(
                config(template(Some(&credentials))),
                config(template(None)),
            )),
            mismatch(),
        ),
        (
            "managed seed secret: referenced by own managedseed".into(),
            request,
            with_shoots(managed_seeds(
                config(template(None)),
                config(template(Some(&credentials))),
            )),
            allowed(),
        ),
    ]
}
