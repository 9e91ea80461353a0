//! The SeedRestriction admission webhook (spec §4): a seed may create (and for Seeds and
//! BackupBuckets update or delete) only objects that belong to it. The authorizer lets seeds
//! `create` most kinds because a new object has no place in its graph yet; this is the real gate.
//!
//! Decisions read the objects they depend on through [`Lookup`] (live reads), so they can be
//! table-tested with a map.

use serde_json::{Value, json};

mod lookup;
mod managed;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod upstream;

pub use lookup::KubeLookup;

use super::authorizer::bootstrapper_binding_of;
use super::identity::{ClientKind, SeedIdentity, seed_identity};
use crate::seed_csr::request_facts;

/// Reads an object: `Ok(None)` when it does not exist.
pub trait Lookup {
    /// The object `group/resource` `namespace/name` as JSON.
    fn get(
        &self,
        group: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<Value>, String>> + Send;
    /// Every object of `group/resource` in all namespaces (none when the kind is not served).
    fn list(
        &self,
        group: &str,
        resource: &str,
    ) -> impl Future<Output = Result<Vec<Value>, String>> + Send;
}

/// The answer to one AdmissionReview request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Allowed (with a message for "object already exists").
    Allow(Option<String>),
    /// Refused with an HTTP code and message.
    Deny(u16, String),
}

fn mismatch(seed: &str) -> Outcome {
    Outcome::Deny(403, format!("object does not belong to seed {seed:?}"))
}

/// Allowed if any of `names` is `seed`.
fn matches(seed: &str, names: &[Option<&str>]) -> Outcome {
    if names.iter().flatten().any(|name| *name == seed) {
        Outcome::Allow(None)
    } else {
        mismatch(seed)
    }
}

fn text<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(Value::as_str)
}

/// The parts of `request` the rules look at.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub uid: String,
    pub group: String,
    pub resource: String,
    pub operation: String,
    pub namespace: String,
    pub name: String,
    pub user: String,
    pub groups: Vec<String>,
    pub object: Value,
}

impl Request {
    /// The request of an `admission.k8s.io/v1` AdmissionReview.
    ///
    /// # Errors
    /// A message when `request` is missing.
    pub fn parse(review: &Value) -> Result<Self, String> {
        let request = review
            .get("request")
            .filter(|r| r.is_object())
            .ok_or("AdmissionReview without request")?;
        let field = |pointer: &str| text(request, pointer).unwrap_or_default().to_owned();
        let object = request.get("object").cloned().unwrap_or(Value::Null);
        let name = Some(field("/name"))
            .filter(|n| !n.is_empty())
            .or_else(|| text(&object, "/metadata/name").map(str::to_owned))
            .unwrap_or_default();
        Ok(Self {
            uid: field("/uid"),
            group: field("/resource/group"),
            resource: field("/resource/resource"),
            operation: field("/operation"),
            namespace: field("/namespace"),
            name,
            user: field("/userInfo/username"),
            groups: request
                .pointer("/userInfo/groups")
                .and_then(Value::as_array)
                .map(|g| {
                    g.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            object,
        })
    }
}

/// The AdmissionReview response for `uid`.
pub fn response(uid: &str, outcome: &Outcome) -> Value {
    let answer = match outcome {
        Outcome::Allow(None) => json!({"uid": uid, "allowed": true}),
        Outcome::Allow(Some(message)) => {
            json!({"uid": uid, "allowed": true, "status": {"code": 200, "message": message}})
        }
        Outcome::Deny(code, message) => {
            json!({"uid": uid, "allowed": false, "status": {"code": code, "message": message}})
        }
    };
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": answer})
}

/// The decision on `request`.
pub async fn admit<L: Lookup>(request: &Request, lookup: &L) -> Outcome {
    let Some(identity) = seed_identity(&request.user, &request.groups) else {
        return Outcome::Allow(None);
    };
    if request.operation == "CREATE" {
        match lookup
            .get(
                &request.group,
                &request.resource,
                &request.namespace,
                &request.name,
            )
            .await
        {
            Ok(Some(_)) if !request.name.is_empty() => {
                return Outcome::Allow(Some("object already exists".to_owned()));
            }
            _ => {}
        }
    }
    match dispatch(&identity, request, lookup).await {
        Ok(outcome) => outcome,
        Err(Failure(code, message)) => Outcome::Deny(code, message),
    }
}

/// A failed read or decode: its HTTP code and message.
struct Failure(u16, String);

fn internal(message: String) -> Failure {
    Failure(500, message)
}

/// The rule of the request's (group, resource). Every resource but Seeds and BackupBuckets is
/// judged on CREATE only; any other operation is a 400, checked before anything else (the
/// webhook is registered for CREATE of these, so only a differently registered webhook sees one).
async fn dispatch<L: Lookup>(
    identity: &SeedIdentity,
    request: &Request,
    lookup: &L,
) -> Result<Outcome, Failure> {
    let seed = identity.seed.as_str();
    let extension = identity.kind == ClientKind::Extension;
    let object = &request.object;
    match (request.group.as_str(), request.resource.as_str()) {
        ("core.gardener.cloud", "backupbuckets") => backup_bucket(seed, request, lookup).await,
        ("core.gardener.cloud", "backupentries") => {
            create_only(request)?;
            backup_entry(seed, request, lookup).await
        }
        ("operations.gardener.cloud", "bastions") => {
            create_only(request)?;
            Ok(matches(seed, &[text(object, "/spec/seedName")]))
        }
        ("certificates.k8s.io", "certificatesigningrequests") => {
            create_only(request)?;
            if extension {
                return Ok(Outcome::Deny(
                    403,
                    "extension client may not create CertificateSigningRequests".to_owned(),
                ));
            }
            certificate_signing_request(seed, object)
        }
        ("rbac.authorization.k8s.io", "clusterrolebindings") => {
            create_only(request)?;
            if extension {
                return Ok(Outcome::Deny(
                    403,
                    "extension client may not create ClusterRoleBindings".to_owned(),
                ));
            }
            cluster_role_binding(seed, request, lookup).await
        }
        ("", "configmaps") => {
            create_only(request)?;
            match shoot_suffix(&request.name, &[".ca-cluster", ".ca-kubelet"]) {
                Some(shoot) => shoot_of(seed, &request.namespace, shoot, lookup).await,
                None => Ok(mismatch(seed)),
            }
        }
        ("core.gardener.cloud", "internalsecrets") => {
            create_only(request)?;
            match shoot_suffix(&request.name, &[".ca-client"]) {
                Some(shoot) => shoot_of(seed, &request.namespace, shoot, lookup).await,
                None => Ok(mismatch(seed)),
            }
        }
        ("seedmanagement.gardener.cloud", "gardenlets") => {
            create_only(request)?;
            if request.namespace != seedlet_api::names::namespaces::GARDEN {
                return Ok(Outcome::Deny(
                    400,
                    "object must be in namespace: \"garden\"".to_owned(),
                ));
            }
            Ok(matches(seed, &[Some(request.name.as_str())]))
        }
        ("coordination.k8s.io", "leases") => {
            create_only(request)?;
            Ok(lease(identity, request))
        }
        ("", "secrets") => {
            create_only(request)?;
            secret(seed, request, lookup).await
        }
        ("core.gardener.cloud", "seeds") => {
            // Any operation: the requester's own Seed; a DELETE may also come from the parent
            // of a managed seed being deleted.
            let own = matches(seed, &[Some(request.name.as_str())]);
            if request.operation == "DELETE" && own != Outcome::Allow(None) {
                return managed::seed_deletion(seed, &request.name, lookup).await;
            }
            Ok(own)
        }
        ("", "serviceaccounts") => {
            create_only(request)?;
            if extension {
                return Ok(Outcome::Deny(
                    403,
                    "extension client may not create ServiceAccounts".to_owned(),
                ));
            }
            if let Some(name) = request.name.strip_prefix("gardenlet-bootstrap-") {
                managed::managed_seed_bootstrap(seed, &request.namespace, name, lookup).await
            } else if request.namespace == format!("seed-{seed}") {
                Ok(Outcome::Allow(None))
            } else {
                Ok(mismatch(seed))
            }
        }
        ("core.gardener.cloud", "shootstates") => {
            create_only(request)?;
            let shoot = required(
                lookup,
                "core.gardener.cloud",
                "shoots",
                &request.namespace,
                &request.name,
                500,
            )
            .await?;
            Ok(matches(
                seed,
                &[
                    text(&shoot, "/spec/seedName"),
                    text(&shoot, "/status/seedName"),
                ],
            ))
        }
        (group, resource) => Err(Failure(
            400,
            format!(
                "unexpected resource: \"{}\"",
                group_resource(group, resource)
            ),
        )),
    }
}

/// A 400 for any operation but CREATE.
fn create_only(request: &Request) -> Result<(), Failure> {
    if request.operation == "CREATE" {
        Ok(())
    } else {
        Err(unexpected_operation(request))
    }
}

fn unexpected_operation(request: &Request) -> Failure {
    Failure(
        400,
        format!("unexpected operation: {:?}", request.operation),
    )
}

/// `<resource>.<group>`, or the bare resource for the core group (how the API names a kind in
/// its messages).
fn group_resource(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_owned()
    } else {
        format!("{resource}.{group}")
    }
}

/// BackupBuckets: created for the requester's seed; deleted only when named after its UID.
async fn backup_bucket<L: Lookup>(
    seed: &str,
    request: &Request,
    lookup: &L,
) -> Result<Outcome, Failure> {
    match request.operation.as_str() {
        "CREATE" => Ok(matches(seed, &[text(&request.object, "/spec/seedName")])),
        "DELETE" => {
            let own = required(lookup, "core.gardener.cloud", "seeds", "", seed, 500).await?;
            Ok(
                if text(&own, "/metadata/uid").unwrap_or_default() == request.name {
                    Outcome::Allow(None)
                } else {
                    Outcome::Deny(403, "cannot delete unrelated BackupBucket".to_owned())
                },
            )
        }
        _ => Err(unexpected_operation(request)),
    }
}

/// ClusterRoleBindings: only the bootstrapper binding of a managed seed the requester hosts.
async fn cluster_role_binding<L: Lookup>(
    seed: &str,
    request: &Request,
    lookup: &L,
) -> Result<Outcome, Failure> {
    let Some((namespace, name)) = bootstrapper_binding_of(&request.name) else {
        return Ok(mismatch(seed));
    };
    let object = &request.object;
    let role = (
        text(object, "/roleRef/apiGroup"),
        text(object, "/roleRef/kind"),
        text(object, "/roleRef/name"),
    );
    let bootstrapper = (
        Some("rbac.authorization.k8s.io"),
        Some("ClusterRole"),
        Some("gardener.cloud:system:seed-bootstrapper"),
    );
    if role != bootstrapper {
        return Ok(Outcome::Deny(
            403,
            "can only bindings referring to the bootstrapper role".to_owned(),
        ));
    }
    managed::managed_seed_bootstrap(seed, namespace, name, lookup).await
}

/// The object `group/resource` `namespace/name`; a missing one fails with `missing` (403 or 500,
/// as the rule says) and the API's not-found text, a failed read with 500.
async fn required<L: Lookup>(
    lookup: &L,
    group: &str,
    resource: &str,
    namespace: &str,
    name: &str,
    missing: u16,
) -> Result<Value, Failure> {
    lookup
        .get(group, resource, namespace, name)
        .await
        .map_err(internal)?
        .ok_or_else(|| Failure(missing, not_found(group, resource, name)))
}

/// The API's not-found message for `name` of `group/resource`.
fn not_found(group: &str, resource: &str, name: &str) -> String {
    format!("{} {name:?} not found", group_resource(group, resource))
}

fn shoot_suffix<'a>(name: &'a str, suffixes: &[&str]) -> Option<&'a str> {
    suffixes.iter().find_map(|suffix| name.strip_suffix(suffix))
}

/// The shoot `namespace/name` must be on `seed` (`spec.seedName` only [QUIRK, upstream's: the
/// source seed of a migration cannot create these]); a missing shoot is a 403.
async fn shoot_of<L: Lookup>(
    seed: &str,
    namespace: &str,
    name: &str,
    lookup: &L,
) -> Result<Outcome, Failure> {
    let shoot = required(
        lookup,
        "core.gardener.cloud",
        "shoots",
        namespace,
        name,
        403,
    )
    .await?;
    Ok(matches(seed, &[text(&shoot, "/spec/seedName")]))
}

fn lease(identity: &SeedIdentity, request: &Request) -> Outcome {
    let seed = identity.seed.as_str();
    if identity.kind == ClientKind::Extension {
        return if request.namespace == format!("seed-{seed}") {
            Outcome::Allow(None)
        } else {
            Outcome::Deny(
                403,
                format!(
                    "extension client can only create leases in the namespace for seed {seed:?}"
                ),
            )
        };
    }
    if request.name == "gardenlet-leader-election" {
        return Outcome::Allow(None);
    }
    if request.namespace == "gardener-system-seed-lease" {
        return matches(seed, &[Some(request.name.as_str())]);
    }
    mismatch(seed)
}

async fn backup_entry<L: Lookup>(
    seed: &str,
    request: &Request,
    lookup: &L,
) -> Result<Outcome, Failure> {
    let object = &request.object;
    if let Outcome::Deny(code, message) = matches(seed, &[text(object, "/spec/seedName")]) {
        return Ok(Outcome::Deny(code, message));
    }
    // The object's own name decides, as upstream decodes it (kube-apiserver sends the same).
    let entry_name = text(object, "/metadata/name").unwrap_or_default();
    if let Some(original) = entry_name.strip_prefix("source-") {
        let owner = object
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .and_then(|owners| owners.iter().find(|o| o["kind"] == "Shoot"))
            .and_then(|o| text(o, "/name"))
            .unwrap_or_default();
        let shoot = required(
            lookup,
            "core.gardener.cloud",
            "shoots",
            &request.namespace,
            owner,
            500,
        )
        .await?;
        let restoring = text(&shoot, "/status/lastOperation/type") == Some("Restore")
            && text(&shoot, "/status/lastOperation/state") == Some("Processing");
        if !restoring {
            return Ok(Outcome::Deny(
                403,
                format!(
                    "creation of source BackupEntry is only allowed during shoot Restore operation (shoot: {owner})"
                ),
            ));
        }
        let Some(entry) = lookup
            .get(
                "core.gardener.cloud",
                "backupentries",
                &request.namespace,
                original,
            )
            .await
            .map_err(internal)?
        else {
            return Ok(Outcome::Deny(
                403,
                format!(
                    "could not find original BackupEntry {original}: {}",
                    not_found("core.gardener.cloud", "backupentries", original)
                ),
            ));
        };
        return Ok(if entry["spec"] == object["spec"] {
            Outcome::Allow(None)
        } else {
            Outcome::Deny(
                403,
                format!(
                    "specification of source BackupEntry must equal specification of original BackupEntry {original}"
                ),
            )
        });
    }
    let bucket_name = text(object, "/spec/bucketName").unwrap_or_default();
    let bucket = required(
        lookup,
        "core.gardener.cloud",
        "backupbuckets",
        "",
        bucket_name,
        500,
    )
    .await?;
    Ok(matches(seed, &[text(&bucket, "/spec/seedName")]))
}

fn certificate_signing_request(seed: &str, object: &Value) -> Result<Outcome, Failure> {
    let request = text(object, "/spec/request").unwrap_or_default();
    let pem = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, request)
        .map_err(|e| Failure(400, e.to_string()))?;
    let facts = request_facts(&pem).map_err(|e| Failure(400, e))?;
    let usages: std::collections::BTreeSet<&str> = object
        .pointer("/spec/usages")
        .and_then(Value::as_array)
        .map(|u| u.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let reason = if facts.organizations != [super::identity::SEEDS_GROUP] {
        Some("subject's organization is not set to [gardener.cloud:system:seeds]")
    } else if !facts
        .common_name
        .starts_with(super::identity::SEED_USER_PREFIX)
    {
        Some("subject's common name does not start with \"gardener.cloud:system:seed:\"")
    } else if facts.alternative_names > 0 {
        Some("DNSNames, EmailAddresses and IPAddresses fields must be empty")
    } else if usages
        != ["client auth", "digital signature", "key encipherment"]
            .into_iter()
            .collect()
    {
        Some("key usages are not set to [key encipherment digital signature client auth]")
    } else {
        None
    };
    if let Some(reason) = reason {
        return Ok(Outcome::Deny(
            403,
            format!("can only create CSRs for seed clusters: {reason}"),
        ));
    }
    let cn_seed = &facts.common_name[super::identity::SEED_USER_PREFIX.len()..];
    Ok(matches(seed, &[Some(cn_seed)]))
}

async fn secret<L: Lookup>(seed: &str, request: &Request, lookup: &L) -> Result<Outcome, Failure> {
    let (namespace, name, object) = (
        request.namespace.as_str(),
        request.name.as_str(),
        &request.object,
    );
    if let Some(bucket) = name.strip_prefix("generated-bucket-") {
        let bucket = required(
            lookup,
            "core.gardener.cloud",
            "backupbuckets",
            "",
            bucket,
            403,
        )
        .await?;
        return Ok(matches(seed, &[text(&bucket, "/spec/seedName")]));
    }
    if let Some(shoot) = shoot_suffix(
        name,
        &[
            ".ca-cluster",
            ".ssh-keypair",
            ".ssh-keypair.old",
            ".monitoring",
        ],
    ) {
        return shoot_of(seed, namespace, shoot, lookup).await;
    }
    if namespace == "gardener-system-shoot-issuer" {
        let label = |key: &str| {
            text(
                object,
                &format!("/metadata/labels/{}", key.replace('/', "~1")),
            )
        };
        for key in [
            "shoot.gardener.cloud/name",
            "shoot.gardener.cloud/namespace",
            "discovery.gardener.cloud/public",
        ] {
            if label(key).is_none() {
                return Ok(Outcome::Deny(422, format!("label {key:?} is missing")));
            }
        }
        if label("discovery.gardener.cloud/public") != Some("serviceaccount") {
            return Ok(Outcome::Deny(
                422,
                "label \"discovery.gardener.cloud/public\" value must be set to \"serviceaccount\""
                    .to_owned(),
            ));
        }
        let shoot_namespace = label("shoot.gardener.cloud/namespace").unwrap_or_default();
        let shoot_name = label("shoot.gardener.cloud/name").unwrap_or_default();
        return shoot_of(seed, shoot_namespace, shoot_name, lookup).await;
    }
    if namespace == "kube-system" && name.starts_with("bootstrap-token-") {
        return managed::bootstrap_token(seed, object, lookup).await;
    }
    managed::backup_secret(seed, namespace, name, lookup).await
}
