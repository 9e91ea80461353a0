//! Gardener's own SeedRestriction cases (`seedrestriction/handler_test.go` at `b312835d17`) as
//! tables, one per resource: the same request, stored objects and expected answer (code and
//! message). Left out are only the cases whose request kube-apiserver cannot send: an object
//! that is not JSON (upstream's decode-error cases, 12 in all).
//!
//! Upstream runs the resource tables shared by both clients once for a gardenlet and once for
//! an extension; so do these ([`CLIENTS`]).

use serde_json::{Value, json};

use super::tests::Objects;
use super::{Outcome, Request, admit};

mod clients;
mod common;
mod secrets;

/// The requesting seed in every case.
const SEED: &str = "seed";
const CORE: &str = "core.gardener.cloud";
const MANAGEMENT: &str = "seedmanagement.gardener.cloud";

/// Who sends the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Client {
    /// `gardener.cloud:system:seed:seed` in `gardener.cloud:system:seeds`.
    Gardenlet,
    /// ServiceAccount `extension-provider-local` in `seed-seed`.
    Extension,
}

const CLIENTS: [Client; 2] = [Client::Gardenlet, Client::Extension];

impl Client {
    /// A request by this client; `object` is what kube-apiserver sends (`null` for none).
    fn request(
        self,
        operation: &str,
        (group, resource): (&str, &str),
        namespace: &str,
        name: &str,
        object: Value,
    ) -> Request {
        let (user, groups) = match self {
            Client::Gardenlet => (
                format!("gardener.cloud:system:seed:{SEED}"),
                vec!["gardener.cloud:system:seeds".to_owned()],
            ),
            Client::Extension => (
                format!("system:serviceaccount:seed-{SEED}:extension-provider-local"),
                vec![
                    "system:serviceaccounts".to_owned(),
                    format!("system:serviceaccounts:seed-{SEED}"),
                ],
            ),
        };
        Request {
            uid: "uid".into(),
            group: group.into(),
            resource: resource.into(),
            operation: operation.into(),
            namespace: namespace.into(),
            name: name.into(),
            user,
            groups,
            object,
        }
    }
}

/// One upstream case: what it is called there, the request, the stored objects, the answer.
type Case = (String, Request, Objects, Outcome);

/// Runs `cases`; fails listing every case whose answer differs from upstream's.
async fn check(cases: Vec<Case>) {
    let mut disagreements = Vec::new();
    for (label, request, objects, expected) in cases {
        let got = admit(&request, &objects).await;
        if got != expected {
            disagreements.push(format!(
                "{label} ({} {} {}/{} by {}): got {got:?}, upstream {expected:?}",
                request.operation, request.resource, request.namespace, request.name, request.user
            ));
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreement(s) with upstream:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}

fn allowed() -> Outcome {
    Outcome::Allow(None)
}

fn denied(code: u16, message: &str) -> Outcome {
    Outcome::Deny(code, message.to_owned())
}

/// Upstream's answer to an object of another seed.
fn mismatch() -> Outcome {
    denied(403, &format!("object does not belong to seed {SEED:?}"))
}

/// Upstream's answer to an operation a rule does not judge.
fn unexpected(operation: &str) -> Outcome {
    denied(400, &format!("unexpected operation: {operation:?}"))
}

/// A read that failed (upstream's injected error).
fn read_error() -> Outcome {
    denied(500, "fake")
}

/// The API's not-found message for `name` of `resource.group`, with `code`.
fn not_found(code: u16, group_resource: &str, name: &str) -> Outcome {
    denied(code, &format!("{group_resource} {name:?} not found"))
}

/// A Shoot `namespace/name` with `spec.seedName` and `status.seedName` as given.
fn shoot(namespace: &str, name: &str, spec_seed: Option<&str>, status_seed: Option<&str>) -> Value {
    json!({"metadata": {"name": name, "namespace": namespace},
           "spec": {"seedName": spec_seed}, "status": {"seedName": status_seed}})
}

/// A Seed `name`; `expired` gives it a client certificate that expired an hour ago.
fn seed(name: &str, expired: bool) -> Value {
    let expiry =
        expired.then(|| (jiff::Timestamp::now() - jiff::SignedDuration::from_hours(1)).to_string());
    json!({"metadata": {"name": name, "uid": format!("uid-of-{name}")},
           "status": {"clientCertificateExpirationTimestamp": expiry}})
}

/// The ManagedSeed `namespace/name` on Shoot `shoot`, optionally annotated to renew its
/// kubeconfig.
fn managed_seed(namespace: &str, name: &str, shoot: &str, renew: bool) -> Value {
    let annotations = if renew {
        json!({"gardener.cloud/operation": "renew-kubeconfig"})
    } else {
        json!({})
    };
    json!({"metadata": {"name": name, "namespace": namespace, "annotations": annotations},
           "spec": {"shoot": {"name": shoot}}})
}

/// Upstream's *MS-bootstrap* cases for managed seed `ms1ns/ms1name` on Shoot `ms1shoot`, as
/// reached through `request` (the bootstrap token, ServiceAccount or ClusterRoleBinding);
/// `renewal` adds the case of a Seed whose ManagedSeed asks to renew its kubeconfig (upstream
/// tests it for the token only).
fn managed_seed_bootstrap_cases(what: &str, request: &Request, renewal: bool) -> Vec<Case> {
    let (namespace, name, shoot_name) = ("ms1ns", "ms1name", "ms1shoot");
    let own_shoot = || shoot(namespace, shoot_name, Some(SEED), None);
    let stored = |renew: bool| {
        Objects::default()
            .with(
                MANAGEMENT,
                "managedseeds",
                namespace,
                name,
                managed_seed(namespace, name, shoot_name, renew),
            )
            .with(CORE, "shoots", namespace, shoot_name, own_shoot())
    };
    let already = denied(
        400,
        &format!("managed seed {namespace}/{name} is already bootstrapped"),
    );
    let mut cases = vec![
        (
            "managedseed missing",
            Objects::default(),
            not_found(403, "managedseeds.seedmanagement.gardener.cloud", name),
        ),
        (
            "managedseed unreadable",
            Objects::default().failing(MANAGEMENT, "managedseeds"),
            read_error(),
        ),
        (
            "shoot unreadable",
            Objects::default()
                .with(
                    MANAGEMENT,
                    "managedseeds",
                    namespace,
                    name,
                    managed_seed(namespace, name, shoot_name, false),
                )
                .failing(CORE, "shoots"),
            read_error(),
        ),
        (
            "shoot missing",
            Objects::default().with(
                MANAGEMENT,
                "managedseeds",
                namespace,
                name,
                managed_seed(namespace, name, shoot_name, false),
            ),
            not_found(500, "shoots.core.gardener.cloud", shoot_name),
        ),
        (
            "shoot on another seed",
            stored(false).with(
                CORE,
                "shoots",
                namespace,
                shoot_name,
                shoot(namespace, shoot_name, Some("some-other-seed"), None),
            ),
            mismatch(),
        ),
        (
            "seed unreadable",
            stored(false).failing(CORE, "seeds"),
            read_error(),
        ),
        (
            "seed exists",
            stored(false).with(CORE, "seeds", "", name, seed(name, false)),
            already,
        ),
        ("seed not yet there", stored(false), allowed()),
        (
            "seed certificate expired",
            stored(false).with(CORE, "seeds", "", name, seed(name, true)),
            allowed(),
        ),
    ];
    if renewal {
        cases.push((
            "managedseed renews kubeconfig",
            stored(true).with(CORE, "seeds", "", name, seed(name, false)),
            allowed(),
        ));
    }
    cases
        .into_iter()
        .map(|(label, objects, expected)| {
            (
                format!("{what}: {label}"),
                request.clone(),
                objects,
                expected,
            )
        })
        .collect()
}
