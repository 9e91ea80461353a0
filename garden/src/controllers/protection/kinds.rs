//! [`Protected`] for the kinds without credentials: CloudProfile, NamespacedCloudProfile, Quota,
//! ExposureClass — their in-use checks and triggers. (The bindings are in [`super::bindings`].)

use std::time::Duration;

use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, ResourceExt};
use seedlet_api::core::{
    CloudProfile, CredentialsBinding, ExposureClass, NamespacedCloudProfile, Quota, SecretBinding,
    Shoot,
};
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::triggers::key_of;

use crate::caches::{GardenCaches, changes};

use super::bindings::Binding;
use super::reconcile::{Error, list_all};
use super::{Blocked, Ctx, Protected, users};

/// Shoots whose references (as `refs` computes them) changed, plus deleted ones.
fn shoot_changes<F>(
    caches: &GardenCaches,
    refs: F,
) -> impl futures::Stream<Item = Result<Shoot, watcher::Error>> + Send + 'static
where
    F: Fn(&Shoot) -> String + Send + Sync + 'static,
{
    changes(&caches.all::<Shoot>(), refs)
}

impl Protected for CloudProfile {
    const NAME: &'static str = "cloudprofile";
    const KIND: &'static str = "CloudProfile";

    fn api(client: &kube::Client, _: Option<&str>) -> Api<Self> {
        Api::all(client.clone())
    }

    async fn reconcile_live(&self, ctx: &Ctx) -> Result<Option<Duration>, Error> {
        let now = ctx.clock.now();
        let spec = serde_json::to_value(&self.spec).unwrap_or_default();
        let (status, next) = super::classification::status(&spec, now);
        let current = self
            .status
            .as_ref()
            .map(|s| serde_json::to_value(s).unwrap_or_default())
            .unwrap_or_else(|| serde_json::json!({}));
        if current != status {
            super::ncp_status::replace_status(
                &Api::<CloudProfile>::all(ctx.client.clone()),
                self,
                "CloudProfile",
                status,
            )
            .await?;
        }
        Ok(next.map(|next| next.duration_since(now).unsigned_abs()))
    }

    async fn blockers(&self, ctx: &Ctx) -> Result<Option<Blocked>, Error> {
        let children: Vec<NamespacedCloudProfile> =
            list_all(&ctx.client, "NamespacedCloudProfile").await?;
        let shoots: Vec<Shoot> = list_all(&ctx.client, "Shoot").await?;
        Ok(users::cloud_profile(&self.name_any(), &children, &shoots))
    }

    fn watches(controller: Triggers<Self>, caches: &GardenCaches) -> Triggers<Self> {
        let children = changes(&caches.all::<NamespacedCloudProfile>(), |profile| {
            users::parent_name(profile).unwrap_or_default().to_owned()
        });
        controller
            .watches_stream(
                shoot_changes(caches, |shoot| key_of(&shoot.cloud_profile())),
                |shoot| {
                    shoot
                        .cloud_profile()
                        .filter(|r| r.kind_or_default() == "CloudProfile")
                        .map(|r| ObjectRef::new(&r.name))
                },
            )
            .watches_stream(children, |profile| {
                users::parent_name(&profile).map(ObjectRef::new)
            })
    }
}

impl Protected for NamespacedCloudProfile {
    const NAME: &'static str = "namespacedcloudprofile";
    const KIND: &'static str = "NamespacedCloudProfile";

    fn api(client: &kube::Client, namespace: Option<&str>) -> Api<Self> {
        Api::namespaced(client.clone(), namespace.unwrap_or_default())
    }

    async fn blockers(&self, ctx: &Ctx) -> Result<Option<Blocked>, Error> {
        let shoots: Vec<Shoot> = list_all(&ctx.client, "Shoot").await?;
        Ok(users::namespaced_cloud_profile(
            &self.namespace().unwrap_or_default(),
            &self.name_any(),
            &shoots,
        ))
    }

    async fn reconcile_live(&self, ctx: &Ctx) -> Result<Option<Duration>, Error> {
        super::ncp_status::update(self, ctx).await.map(|()| None)
    }

    fn watches(controller: Triggers<Self>, caches: &GardenCaches) -> Triggers<Self> {
        // Every change of a parent recomputes its children's status.
        let store = controller.store();
        controller
            .watches_stream(
                shoot_changes(caches, |shoot| key_of(&shoot.spec.cloud_profile)),
                |shoot| {
                    let reference = shoot.spec.cloud_profile.as_ref()?;
                    (reference.kind.as_deref() == Some("NamespacedCloudProfile")).then(|| {
                        ObjectRef::new(&reference.name)
                            .within(&shoot.namespace().unwrap_or_default())
                    })
                },
            )
            .watches_stream(
                changes(&caches.all::<CloudProfile>(), |parent| {
                    key_of(&(&parent.metadata.resource_version, &parent.spec))
                }),
                move |parent: CloudProfile| {
                    let name = parent.name_any();
                    store
                        .state()
                        .into_iter()
                        .filter(|child| users::parent_name(child) == Some(name.as_str()))
                        .map(|child| ObjectRef::from_obj(child.as_ref()))
                        .collect::<Vec<_>>()
                },
            )
    }
}

impl Protected for ExposureClass {
    const NAME: &'static str = "exposureclass";
    const KIND: &'static str = "ExposureClass";

    fn api(client: &kube::Client, _: Option<&str>) -> Api<Self> {
        Api::all(client.clone())
    }

    async fn blockers(&self, ctx: &Ctx) -> Result<Option<Blocked>, Error> {
        let shoots: Vec<Shoot> = list_all(&ctx.client, "Shoot").await?;
        Ok(users::exposure_class(&self.name_any(), &shoots))
    }

    fn watches(controller: Triggers<Self>, caches: &GardenCaches) -> Triggers<Self> {
        controller.watches_stream(
            shoot_changes(caches, |shoot| {
                users::exposure_class_name(shoot)
                    .unwrap_or_default()
                    .to_owned()
            }),
            |shoot| users::exposure_class_name(&shoot).map(ObjectRef::new),
        )
    }
}

impl Protected for Quota {
    const NAME: &'static str = "quota";
    const KIND: &'static str = "Quota";

    fn api(client: &kube::Client, namespace: Option<&str>) -> Api<Self> {
        Api::namespaced(client.clone(), namespace.unwrap_or_default())
    }

    async fn blockers(&self, ctx: &Ctx) -> Result<Option<Blocked>, Error> {
        let secret: Vec<SecretBinding> = list_all(&ctx.client, "SecretBinding").await?;
        let credentials: Vec<CredentialsBinding> =
            list_all(&ctx.client, "CredentialsBinding").await?;
        Ok(users::quota(
            &self.namespace().unwrap_or_default(),
            &self.name_any(),
            &secret,
            &credentials,
        ))
    }

    fn watches(controller: Triggers<Self>, caches: &GardenCaches) -> Triggers<Self> {
        let controller = watch_listings::<SecretBinding>(controller, caches);
        watch_listings::<CredentialsBinding>(controller, caches)
    }
}

/// Triggers the Quotas a binding of kind `B` lists, when the list changes and when the binding
/// goes.
fn watch_listings<B: Binding>(
    controller: Triggers<Quota>,
    caches: &GardenCaches,
) -> Triggers<Quota> {
    let bindings = changes(&caches.all::<B>(), |binding| key_of(&binding.quotas()));
    controller.watches_stream(bindings, |binding| {
        quota_refs(binding.quotas(), binding.namespace())
    })
}

/// The Quotas a binding in `namespace` lists.
fn quota_refs(
    quotas: &[seedlet_api::core::QuotaReference],
    namespace: Option<String>,
) -> Vec<ObjectRef<Quota>> {
    let namespace = namespace.unwrap_or_default();
    quotas
        .iter()
        .map(|quota| {
            ObjectRef::new(&quota.name).within(quota.namespace.as_deref().unwrap_or(&namespace))
        })
        .collect()
}
