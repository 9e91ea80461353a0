//! SeedRestriction's rules about managed seeds and Gardenlets: the backup credentials a parent
//! seed creates for its managed seed (rule (5)), bootstrap tokens, ServiceAccounts and bindings for
//! (re-)bootstrapping a managed seed or Gardenlet, and a parent deleting its managed seed's Seed.

use serde_json::Value;

use super::{Failure, Lookup, Outcome, internal, matches, mismatch, required, text};
use crate::webhooks::graph::edges::Bootstrap;

/// Rule (5): the backup credentials a ManagedSeed's seed template names, when the ManagedSeed's
/// Shoot runs on `seed` (the parent creates them for its child).
pub(super) async fn backup_secret<L: Lookup>(
    seed: &str,
    namespace: &str,
    name: &str,
    lookup: &L,
) -> Result<Outcome, Failure> {
    let managed_seeds = lookup
        .list("seedmanagement.gardener.cloud", "managedseeds")
        .await
        .map_err(internal)?;
    for managed in &managed_seeds {
        let managed_namespace = text(managed, "/metadata/namespace").unwrap_or_default();
        let Some(shoot_name) = text(managed, "/spec/shoot/name") else {
            continue;
        };
        // [QUIRK, upstream's] a ManagedSeed whose Shoot cannot be read (even one that is gone)
        // fails every Secret create that reaches this rule.
        let shoot = required(
            lookup,
            "core.gardener.cloud",
            "shoots",
            managed_namespace,
            shoot_name,
            500,
        )
        .await?;
        if text(&shoot, "/spec/seedName") != Some(seed) {
            continue;
        }
        let template = managed.pointer("/spec/gardenlet/config/seedConfig");
        let Some(template) = template.filter(|t| t.is_object()) else {
            let managed_name = text(managed, "/metadata/name").unwrap_or_default();
            return Err(internal(format!(
                "seed template is nil for ManagedSeed {managed_name:?}"
            )));
        };
        let credentials = template.pointer("/spec/backup/credentialsRef");
        let field = |key: &str| credentials.and_then(|c| text(c, key));
        if field("/apiVersion") == Some("v1")
            && field("/kind") == Some("Secret")
            && field("/namespace") == Some(namespace)
            && field("/name") == Some(name)
        {
            return Ok(Outcome::Allow(None));
        }
    }
    Ok(mismatch(seed))
}

pub(super) async fn bootstrap_token<L: Lookup>(
    seed: &str,
    object: &Value,
    lookup: &L,
) -> Result<Outcome, Failure> {
    if text(object, "/type") != Some("bootstrap.kubernetes.io/token") {
        let kind = text(object, "/type").unwrap_or_default();
        return Ok(Outcome::Deny(
            422,
            format!("unexpected secret type: {kind:?}"),
        ));
    }
    let data = |key: &str| {
        text(object, &format!("/stringData/{key}"))
            .map(str::to_owned)
            .or_else(|| {
                text(object, &format!("/data/{key}"))
                    .and_then(|v| {
                        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, v).ok()
                    })
                    .and_then(|v| String::from_utf8(v).ok())
            })
    };
    for key in ["usage-bootstrap-authentication", "usage-bootstrap-signing"] {
        if data(key).as_deref() != Some("true") {
            return Ok(Outcome::Deny(422, format!("{key:?} must be set to 'true'")));
        }
    }
    if data("auth-extra-groups").is_some() {
        return Ok(Outcome::Deny(
            422,
            "\"auth-extra-groups\" must not be set".to_owned(),
        ));
    }
    let description = data("description").unwrap_or_default();
    // `A bootstrap token for the Gardenlet for <kind> <namespace>/<name>.`
    let target = description
        .rsplit(' ')
        .next()
        .map(|t| t.trim_end_matches('.'))
        .and_then(|t| t.split_once('/'));
    match target {
        Some((namespace, name))
            if description
                .contains("seedmanagement.gardener.cloud/v1alpha1.ManagedSeed resource") =>
        {
            managed_seed_bootstrap(seed, namespace, name, lookup).await
        }
        Some((namespace, name)) if description.contains("Gardenlet resource") => {
            gardenlet_bootstrap(seed, namespace, name, lookup).await
        }
        _ => Ok(Outcome::Deny(
            400,
            format!(
                "unknown kind \"\" found in bootstrap token secret description {description:?}"
            ),
        )),
    }
}

/// *MS-bootstrap*: the managed seed `namespace/name` must run on `seed` and may (re-)bootstrap.
pub(super) async fn managed_seed_bootstrap<L: Lookup>(
    seed: &str,
    namespace: &str,
    name: &str,
    lookup: &L,
) -> Result<Outcome, Failure> {
    let managed = required(
        lookup,
        "seedmanagement.gardener.cloud",
        "managedseeds",
        namespace,
        name,
        403,
    )
    .await?;
    let shoot_name = text(&managed, "/spec/shoot/name").unwrap_or_default();
    let shoot = required(
        lookup,
        "core.gardener.cloud",
        "shoots",
        namespace,
        shoot_name,
        500,
    )
    .await?;
    if let Outcome::Deny(code, message) = matches(seed, &[text(&shoot, "/spec/seedName")]) {
        return Ok(Outcome::Deny(code, message));
    }
    let Some(child) = lookup
        .get("core.gardener.cloud", "seeds", "", name)
        .await
        .map_err(internal)?
    else {
        return Ok(Outcome::Allow(None));
    };
    Ok(
        if Bootstrap::of(&child, jiff::Timestamp::now()).renewable(&managed) {
            Outcome::Allow(None)
        } else {
            Outcome::Deny(
                400,
                format!("managed seed {namespace}/{name} is already bootstrapped"),
            )
        },
    )
}

/// *Gardenlet-bootstrap*: the Gardenlet `garden/<seed>` may (re-)bootstrap its own seed while
/// the Seed's client certificate has expired or the Gardenlet asks to renew its kubeconfig.
async fn gardenlet_bootstrap<L: Lookup>(
    seed: &str,
    namespace: &str,
    name: &str,
    lookup: &L,
) -> Result<Outcome, Failure> {
    if name != seed || namespace != seedlet_api::names::namespaces::GARDEN {
        return Ok(Outcome::Deny(
            403,
            format!("gardenlet {namespace}/{name} does not belong to seed {seed:?}"),
        ));
    }
    let gardenlet = required(
        lookup,
        "seedmanagement.gardener.cloud",
        "gardenlets",
        namespace,
        name,
        403,
    )
    .await?;
    let own = required(lookup, "core.gardener.cloud", "seeds", "", name, 403).await?;
    Ok(
        if Bootstrap::of(&own, jiff::Timestamp::now()).renewable(&gardenlet) {
            Outcome::Allow(None)
        } else {
            Outcome::Deny(
                400,
                format!("gardenlet {namespace}/{name} is already bootstrapped"),
            )
        },
    )
}

/// Another seed's Seed: only a parent deleting the Seed of a managed seed being deleted.
pub(super) async fn seed_deletion<L: Lookup>(
    seed: &str,
    name: &str,
    lookup: &L,
) -> Result<Outcome, Failure> {
    let Some(managed) = lookup
        .get(
            "seedmanagement.gardener.cloud",
            "managedseeds",
            "garden",
            name,
        )
        .await
        .map_err(internal)?
    else {
        return Ok(mismatch(seed));
    };
    if text(&managed, "/metadata/deletionTimestamp").is_none() {
        return Ok(Outcome::Deny(
            403,
            "object can only be deleted if corresponding ManagedSeed has a deletion timestamp"
                .to_owned(),
        ));
    }
    let Some(shoot_name) = text(&managed, "/spec/shoot/name") else {
        return Ok(mismatch(seed));
    };
    let shoot = required(
        lookup,
        "core.gardener.cloud",
        "shoots",
        "garden",
        shoot_name,
        500,
    )
    .await?;
    Ok(matches(seed, &[text(&shoot, "/spec/seedName")]))
}
