//! The migrate flow's "Persisting ShootState in garden cluster" step (spec
//! `cluster-shootstate-managedresource.md` §3.2, `Deploy(overwrite=false)`): the state computed
//! from the control-plane namespace is upserted into the garden ShootState, entry by entry, so
//! entries of objects that are already gone survive (they may hold state that only the
//! destination seed can still use). The snapshot timestamp moves like with every deploy.

use std::collections::BTreeMap;

use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use seedlet_api::core::{ShootState, ShootStateSpec};
use seedlet_api::names::annotations;

use super::entries;
use super::io::{Ctx, Error, snapshot};

/// `previous` with every entry of `computed` upserted (gardener by name, extensions by kind,
/// name and purpose, resources by apiVersion, kind and name); nothing is removed.
pub fn upsert(previous: Option<&ShootStateSpec>, computed: ShootStateSpec) -> ShootStateSpec {
    let mut spec = previous.cloned().unwrap_or_default();
    for entry in computed.gardener {
        spec.upsert_gardener(entry);
    }
    for entry in computed.extensions {
        spec.upsert_extension(entry);
    }
    for entry in computed.resources {
        spec.upsert_resource(entry);
    }
    spec
}

/// Upserts the state of control-plane namespace `namespace` into ShootState
/// `shoot_namespace/shoot_name` (created when missing), guarded by the resourceVersion read.
/// Idempotent; a conflict is returned for the caller to retry on fresh state.
///
/// # Errors
/// [`Error`] of the reads (seed lists, referenced objects) or of the garden write.
pub async fn persist(
    ctx: &Ctx,
    shoot_namespace: &str,
    shoot_name: &str,
    namespace: &str,
) -> Result<(), Error> {
    let key = format!("{shoot_namespace}/{shoot_name}");
    let api: Api<ShootState> = Api::namespaced(ctx.garden.clone(), shoot_namespace);
    let current = api
        .get_opt(shoot_name)
        .await
        .map_err(|source| Error::ReadShootState {
            key: key.clone(),
            source,
        })?;
    let previous = current.as_ref().map(|state| &state.spec);
    let computed = snapshot(ctx, namespace, previous).await?;
    let spec = upsert(previous, computed);
    let stamp = ctx
        .clock
        .now()
        .round(jiff::Unit::Second)
        .unwrap_or_else(|_| ctx.clock.now())
        .to_string();
    let stamped = BTreeMap::from([(annotations::TIMESTAMP.to_owned(), stamp)]);
    ctx.metrics.shoot_state_written();
    let written = match current {
        None => {
            let mut state = ShootState::new(shoot_name, spec);
            state.metadata.namespace = Some(shoot_namespace.to_owned());
            state.metadata.annotations = Some(stamped);
            let params = PostParams {
                field_manager: Some(ctx.field_manager.to_owned()),
                ..PostParams::default()
            };
            api.create(&params, &state).await.map(|_| ())
        }
        Some(current) => {
            let patch = entries::spec_patch(
                &spec,
                current.metadata.resource_version.as_deref(),
                &stamped,
            );
            let params = PatchParams {
                field_manager: Some(ctx.field_manager.to_owned()),
                ..PatchParams::default()
            };
            api.patch(shoot_name, &params, &Patch::Merge(&patch))
                .await
                .map(|_| ())
        }
    };
    written.map_err(|source| Error::WriteShootState { key, source })
}

#[cfg(test)]
mod tests {
    use seedlet_api::core::{ExtensionResourceState, GardenerResourceData};
    use serde_json::json;

    use super::*;

    fn extension(kind: &str, name: &str, state: serde_json::Value) -> ExtensionResourceState {
        ExtensionResourceState {
            kind: kind.into(),
            name: Some(name.into()),
            purpose: None,
            state: Some(state),
            resources: Vec::new(),
        }
    }

    fn secret(name: &str, value: &str) -> GardenerResourceData {
        GardenerResourceData {
            name: name.into(),
            type_: "secret".into(),
            data: json!({"data": {"k": value}}),
            labels: BTreeMap::new(),
        }
    }

    #[test]
    fn upsert_overwrites_known_entries_appends_new_ones_and_keeps_the_rest() {
        let previous = ShootStateSpec {
            gardener: vec![secret("ca", "old"), secret("machine-state", "m")],
            extensions: vec![
                extension("Worker", "s", json!({"old": true})),
                extension("Infrastructure", "s", json!({"vpc": "1"})),
            ],
            ..ShootStateSpec::default()
        };
        let computed = ShootStateSpec {
            gardener: vec![secret("ca", "new")],
            extensions: vec![
                extension("Worker", "s", json!({"new": true})),
                extension("Network", "s", json!({"cidr": "x"})),
            ],
            ..ShootStateSpec::default()
        };
        let cases = [
            (
                Some(&previous),
                vec![("ca", "new"), ("machine-state", "m")],
                vec![
                    ("Worker", json!({"new": true})),
                    ("Infrastructure", json!({"vpc": "1"})),
                    ("Network", json!({"cidr": "x"})),
                ],
            ),
            (
                None,
                vec![("ca", "new")],
                vec![
                    ("Worker", json!({"new": true})),
                    ("Network", json!({"cidr": "x"})),
                ],
            ),
        ];
        for (previous, gardener, extensions) in cases {
            let spec = upsert(previous, computed.clone());
            let got: Vec<(&str, &str)> = spec
                .gardener
                .iter()
                .map(|e| (e.name.as_str(), e.data["data"]["k"].as_str().unwrap()))
                .collect();
            assert_eq!(got, gardener);
            let got: Vec<(&str, serde_json::Value)> = spec
                .extensions
                .iter()
                .map(|e| (e.kind.as_str(), e.state.clone().unwrap()))
                .collect();
            assert_eq!(got, extensions);
        }
    }
}
