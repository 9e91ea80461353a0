//! [`Protected`] for SecretBinding (§2.4) and CredentialsBinding (§2.5), one implementation
//! for both [`Binding`] kinds: both protect their credential (finalizer, labels from
//! [`credential`]) and label their Quotas while they live; deleting one waits for its shoots,
//! then releases the credential unless another live binding of the same kind uses it, and
//! unlabels the Quotas no other binding of that kind lists.

use std::time::Duration;

use kube::api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, ResourceExt};
use seedlet_api::core::{CredentialsBinding, Quota, QuotaReference, SecretBinding, Shoot};
use seedlet_api::security::CredentialsReference;
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::triggers::key_of;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::credential::{self, Marks};
use super::reconcile::{Error, list_all};
use super::{Blocked, Ctx, Protected, users};
use crate::caches::GardenCaches;

/// Finalizer of SecretBindings on their Secret.
pub const SECRET_BINDING_FINALIZER: &str = "gardener.cloud/secretbinding";
/// Finalizer of CredentialsBindings on their credential.
pub const CREDENTIALS_BINDING_FINALIZER: &str = "gardener.cloud/credentialsbinding";
/// Label of SecretBindings on their Secret and Quotas.
pub const SECRET_BINDING_LABEL: &str = "reference.gardener.cloud/secretbinding";
/// Label of CredentialsBindings on their credential and Quotas.
pub const CREDENTIALS_BINDING_LABEL: &str = "reference.gardener.cloud/credentialsbinding";

/// What the shared binding logic needs from either binding kind.
#[derive(Debug, Clone)]
pub struct View {
    namespace: String,
    name: String,
    deleting: bool,
    credential: CredentialsReference,
    quotas: Vec<QuotaReference>,
    marks: Marks,
}

impl View {
    fn of_secret_binding(binding: &SecretBinding) -> Self {
        let namespace = binding.namespace().unwrap_or_default();
        let secret = binding.secret_ref();
        View {
            credential: CredentialsReference {
                api_version: "v1".into(),
                kind: "Secret".into(),
                namespace: secret
                    .namespace
                    .filter(|ns| !ns.is_empty())
                    .unwrap_or_else(|| namespace.clone()),
                name: secret.name,
            },
            quotas: binding.quotas.clone(),
            marks: Marks {
                finalizer: SECRET_BINDING_FINALIZER,
                reference_label: SECRET_BINDING_LABEL,
                other_reference_label: CREDENTIALS_BINDING_LABEL,
                provider_types: credential::provider_types(&binding.provider_type()),
                strip_provider_label: false,
            },
            name: binding.name_any(),
            deleting: binding.metadata.deletion_timestamp.is_some(),
            namespace,
        }
    }

    fn of_credentials_binding(binding: &CredentialsBinding) -> Self {
        let credential = binding.credentials_ref();
        View {
            namespace: binding.namespace().unwrap_or_default(),
            name: binding.name_any(),
            deleting: binding.metadata.deletion_timestamp.is_some(),
            marks: Marks {
                finalizer: CREDENTIALS_BINDING_FINALIZER,
                reference_label: CREDENTIALS_BINDING_LABEL,
                other_reference_label: SECRET_BINDING_LABEL,
                provider_types: credential::provider_types(&binding.provider_type()),
                strip_provider_label: credential.kind == "WorkloadIdentity",
            },
            credential,
            quotas: binding.quotas.clone(),
        }
    }

    fn is(&self, other: &View) -> bool {
        self.namespace == other.namespace && self.name == other.name
    }

    fn quota_namespace<'a>(&'a self, quota: &'a QuotaReference) -> &'a str {
        quota.namespace.as_deref().unwrap_or(&self.namespace)
    }
}

/// The API of a supported credential kind.
fn credential_api(
    client: &kube::Client,
    reference: &CredentialsReference,
) -> Result<Api<DynamicObject>, Error> {
    let (group, version, plural) = match (reference.api_version.as_str(), reference.kind.as_str()) {
        ("v1", "Secret") => ("", "v1", "secrets"),
        ("core.gardener.cloud/v1beta1", "InternalSecret") => {
            ("core.gardener.cloud", "v1beta1", "internalsecrets")
        }
        ("security.gardener.cloud/v1alpha1", "WorkloadIdentity") => {
            ("security.gardener.cloud", "v1alpha1", "workloadidentities")
        }
        _ => {
            return Err(Error::Unsupported(format!(
                "unsupported credentials reference: {}/{}, {}, Kind={}",
                reference.namespace, reference.name, reference.api_version, reference.kind
            )));
        }
    };
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(group, version, &reference.kind),
        plural,
    );
    Ok(Api::namespaced_with(
        client.clone(),
        &reference.namespace,
        &resource,
    ))
}

async fn get_credential(
    ctx: &Ctx,
    view: &View,
) -> Result<(Api<DynamicObject>, Option<DynamicObject>), Error> {
    let api = credential_api(&ctx.client, &view.credential)?;
    let object = api
        .get_opt(&view.credential.name)
        .await
        .map_err(|source| Error::Read {
            kind: "credential",
            key: format!("{}/{}", view.credential.namespace, view.credential.name),
            source,
        })?;
    Ok((api, object))
}

async fn apply<K>(
    api: &Api<K>,
    name: &str,
    kind: &'static str,
    key: String,
    patch: Option<serde_json::Value>,
) -> Result<(), Error>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let Some(patch) = patch else { return Ok(()) };
    match api
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(source) => Err(Error::Write {
            what: "patching labels and finalizers",
            kind,
            key,
            source,
        }),
    }
}

/// Live binding: protect the credential (it must exist) and label the Quotas.
async fn protect(view: &View, ctx: &Ctx) -> Result<(), Error> {
    let (api, object) = get_credential(ctx, view).await?;
    let key = format!("{}/{}", view.credential.namespace, view.credential.name);
    let Some(object) = object else {
        return Err(Error::Read {
            kind: "credential",
            key: key.clone(),
            source: not_found(&key),
        });
    };
    apply(
        &api,
        &view.credential.name,
        "credential",
        key,
        credential::protect(&object.metadata, &view.marks),
    )
    .await?;
    for quota in &view.quotas {
        label_quota(
            ctx,
            view.quota_namespace(quota),
            &quota.name,
            view.marks.reference_label,
            true,
        )
        .await?;
    }
    Ok(())
}

async fn label_quota(
    ctx: &Ctx,
    namespace: &str,
    name: &str,
    label: &str,
    present: bool,
) -> Result<(), Error> {
    let api: Api<Quota> = Api::namespaced(ctx.client.clone(), namespace);
    let key = format!("{namespace}/{name}");
    let quota = api.get_opt(name).await.map_err(|source| Error::Read {
        kind: "Quota",
        key: key.clone(),
        source,
    })?;
    match quota {
        Some(quota) => {
            apply(
                &api,
                name,
                "Quota",
                key,
                credential::quota_label(&quota.metadata, label, present),
            )
            .await
        }
        None if present => Err(Error::Read {
            kind: "Quota",
            key: key.clone(),
            source: not_found(&key),
        }),
        None => Ok(()),
    }
}

fn not_found(key: &str) -> kube::Error {
    kube::Error::Api(Box::new(
        kube::core::Status::failure(&format!("{key} not found"), "NotFound").with_code(404),
    ))
}

/// Deleting binding, step 1: the credential keeps its protection while shoots may still use it.
async fn reprotect(view: &View, ctx: &Ctx) -> Result<(), Error> {
    let (api, object) = get_credential(ctx, view).await?;
    if let Some(object) = object {
        let key = format!("{}/{}", view.credential.namespace, view.credential.name);
        apply(
            &api,
            &view.credential.name,
            "credential",
            key,
            credential::reprotect(&object.metadata, &view.marks),
        )
        .await?;
    }
    Ok(())
}

/// Deleting binding nobody uses: release the credential unless another live binding shares it,
/// and unlabel the Quotas no other binding (deleting ones included) lists.
async fn release(view: &View, others: &[View], ctx: &Ctx) -> Result<(), Error> {
    let others: Vec<&View> = others.iter().filter(|other| !other.is(view)).collect();
    let shared = others
        .iter()
        .any(|other| !other.deleting && other.credential == view.credential);
    if !shared {
        let (api, object) = get_credential(ctx, view).await?;
        if let Some(object) = object {
            let key = format!("{}/{}", view.credential.namespace, view.credential.name);
            apply(
                &api,
                &view.credential.name,
                "credential",
                key,
                credential::release(&object.metadata, &view.marks),
            )
            .await?;
        }
    }
    for quota in &view.quotas {
        let namespace = view.quota_namespace(quota);
        let listed = others.iter().any(|other| {
            users::lists_quota(&other.quotas, &other.namespace, namespace, &quota.name)
        });
        if !listed {
            label_quota(
                ctx,
                namespace,
                &quota.name,
                view.marks.reference_label,
                false,
            )
            .await?;
        }
    }
    Ok(())
}

/// A binding kind: what tells SecretBindings and CredentialsBindings apart. Everything else,
/// the [`Protected`] implementation below, is one for both.
pub trait Binding:
    kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
    + Clone
    + DeserializeOwned
    + Serialize
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
    /// Controller name (logs, metrics, event component).
    const CONTROLLER: &'static str;
    /// Kind, Event action of a blocked deletion, and the shoot field naming a binding.
    const USERS: users::BindingKind;

    /// The binding as the shared logic sees it.
    fn view(&self) -> View;

    /// The Quotas it lists.
    fn quotas(&self) -> &[QuotaReference];
}

impl Binding for SecretBinding {
    const CONTROLLER: &'static str = "secretbinding";
    const USERS: users::BindingKind = users::SECRET_BINDING;

    fn view(&self) -> View {
        View::of_secret_binding(self)
    }

    fn quotas(&self) -> &[QuotaReference] {
        &self.quotas
    }
}

impl Binding for CredentialsBinding {
    const CONTROLLER: &'static str = "credentialsbinding";
    const USERS: users::BindingKind = users::CREDENTIALS_BINDING;

    fn view(&self) -> View {
        View::of_credentials_binding(self)
    }

    fn quotas(&self) -> &[QuotaReference] {
        &self.quotas
    }
}

impl<B: Binding> Protected for B {
    const NAME: &'static str = B::CONTROLLER;
    const KIND: &'static str = B::USERS.kind;

    fn api(client: &kube::Client, namespace: Option<&str>) -> Api<Self> {
        Api::namespaced(client.clone(), namespace.unwrap_or_default())
    }

    async fn blockers(&self, ctx: &Ctx) -> Result<Option<Blocked>, Error> {
        let shoots: Vec<Shoot> = list_all(&ctx.client, "Shoot").await?;
        Ok(users::binding(
            &B::USERS,
            &self.namespace().unwrap_or_default(),
            &self.name_any(),
            &shoots,
        ))
    }

    async fn reconcile_live(&self, ctx: &Ctx) -> Result<Option<Duration>, Error> {
        protect(&self.view(), ctx).await.map(|()| None)
    }

    async fn before_delete(&self, ctx: &Ctx) -> Result<(), Error> {
        reprotect(&self.view(), ctx).await
    }

    async fn release(&self, ctx: &Ctx) -> Result<(), Error> {
        let others: Vec<B> = list_all(&ctx.client, B::USERS.kind).await?;
        let others: Vec<View> = others.iter().map(B::view).collect();
        release(&self.view(), &others, ctx).await
    }

    fn watches(controller: Triggers<Self>, caches: &GardenCaches) -> Triggers<Self> {
        let named_by = B::USERS.named_by;
        controller.watches_stream(
            crate::caches::changes(&caches.all::<Shoot>(), move |shoot| {
                key_of(&named_by(shoot))
            }),
            move |shoot| {
                let name = named_by(&shoot)?;
                Some(ObjectRef::new(name).within(&shoot.namespace().unwrap_or_default()))
            },
        )
    }
}
