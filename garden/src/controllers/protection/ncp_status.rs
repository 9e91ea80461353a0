//! `status.cloudProfileSpec` of a NamespacedCloudProfile (spec §2.3): the parent's spec merged
//! with the namespaced profile's ([`super::merge`]) and the observed generation, written when
//! they changed. A missing parent leaves the status as it is. [`replace_status`] writes a
//! computed status (also the CloudProfile's).

use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use seedlet_api::core::{CloudProfile, NamespacedCloudProfile, NamespacedCloudProfileStatus};
use serde_json::json;

use seedlet_runtime::policy::object_key;

use super::reconcile::Error;
use super::{Ctx, merge, users};

/// The status `profile` should have when its parent has `parent`'s spec.
pub fn desired_status(
    profile: &NamespacedCloudProfile,
    parent: &CloudProfile,
) -> NamespacedCloudProfileStatus {
    let parent_spec = serde_json::to_value(&parent.spec).unwrap_or_default();
    let spec = serde_json::to_value(&profile.spec).unwrap_or_default();
    NamespacedCloudProfileStatus {
        cloud_profile_spec: Some(merge::merge(&parent_spec, &spec)),
        observed_generation: profile.metadata.generation,
        extra: profile
            .status
            .as_ref()
            .map(|status| status.extra.clone())
            .unwrap_or_default(),
    }
}

/// Recomputes and writes the status of `profile` (read fresh by the caller).
///
/// # Errors
/// Reading the parent (other than NotFound) or writing the status.
pub async fn update(profile: &NamespacedCloudProfile, ctx: &Ctx) -> Result<(), Error> {
    let Some(parent_name) = users::parent_name(profile) else {
        return Ok(());
    };
    let parents: Api<CloudProfile> = Api::all(ctx.client.clone());
    let parent = parents
        .get_opt(parent_name)
        .await
        .map_err(|source| Error::Read {
            kind: "CloudProfile",
            key: parent_name.to_owned(),
            source,
        })?;
    let Some(parent) = parent else {
        return Ok(());
    };
    let status = desired_status(profile, &parent);
    if profile.status.as_ref() == Some(&status) {
        return Ok(());
    }
    let api = Api::<NamespacedCloudProfile>::namespaced(
        ctx.client.clone(),
        &profile.namespace().unwrap_or_default(),
    );
    replace_status(&api, profile, "NamespacedCloudProfile", status).await
}

/// Replaces the whole status of `object` with `status`: a merge patch could not drop fields the
/// computation no longer yields. The resourceVersion test keeps a concurrent writer's change
/// (the write then fails and the reconcile is retried on fresh state).
///
/// # Errors
/// [`Error::Encode`] (not expected), [`Error::Write`].
pub async fn replace_status<K, S>(
    api: &Api<K>,
    object: &K,
    kind: &'static str,
    status: S,
) -> Result<(), Error>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    S: serde::Serialize,
{
    let patch: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/metadata/resourceVersion", "value": object.resource_version()},
        {"op": "add", "path": "/status", "value": status},
    ]))
    .map_err(|source| Error::Encode {
        key: object_key(object),
        source,
    })?;
    api.patch_status(
        &object.name_any(),
        &PatchParams::default(),
        &Patch::Json::<()>(patch),
    )
    .await
    .map_err(|source| Error::Write {
        what: "writing status",
        kind,
        key: object_key(object),
        source,
    })?;
    Ok(())
}
