//! Lists of one Seed's objects by a field selector (`spec.seedName=<seed>`) where the garden can
//! select by that field, else all of them: a garden serving the kind from a CRD without that
//! `selectableFields` entry (Kubernetes < 1.31) answers 400 `field label not supported`. Callers
//! filter by the same field either way, so both answers give the same objects.

use kube::Api;
use kube::api::ListParams;

/// The objects of `api` with `field` = `value` where the server selects them, else every object
/// (unfiltered: the caller filters).
///
/// A garden that cannot select costs one refused request and one full list per call; the
/// per-Seed checks that call this run once per sync period.
///
/// # Errors
/// The list's error, other than the 400 of an unsupported field.
pub async fn list_by_field<K>(api: &Api<K>, field: &str, value: &str) -> Result<Vec<K>, kube::Error>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let selected = ListParams::default().fields(&format!("{field}={value}"));
    match api.list(&selected).await {
        Ok(list) => Ok(list.items),
        Err(kube::Error::Api(status)) if status.code == 400 => {
            tracing::debug!(
                field,
                reason = %status.message,
                "the garden cannot select by this field; listing all and filtering"
            );
            Ok(api.list(&ListParams::default()).await?.items)
        }
        Err(error) => Err(error),
    }
}
