//! One ShootState write: an incremental batch (the changed extension objects and Secrets of one
//! control-plane namespace, copied with their referenced objects) or a full snapshot listed
//! fresh from the seed; read the ShootState, decide (pure, in [`crate::shoot_state::entries`]),
//! create or merge-patch. Reads and errors are [`crate::shoot_state::io`]'s.

use std::collections::BTreeMap;

use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::{ShootState, ShootStateSpec};
use seedlet_api::names::annotations;

pub use crate::shoot_state::io::{Ctx, Error};

use super::model::ObjectKey;
use crate::cluster_shoot::ShootRef;
use crate::shoot_state::entries::{self, Change, ExtensionData, SecretItem};
use crate::shoot_state::io::{copies, snapshot};

/// The work for one ShootState.
#[derive(Clone, Debug)]
pub struct Job {
    /// Control-plane namespace.
    pub namespace: String,
    /// The shoot (ShootState key).
    pub shoot: ShootRef,
    /// Changed extension objects by (kind, name); `None` = gone.
    pub extensions: Vec<(ObjectKey, Option<ExtensionData>)>,
    /// Changed persisted Secrets by name; `None` = gone.
    pub secrets: Vec<(String, Option<SecretItem>)>,
    /// Whether to write a full snapshot instead (covers every change).
    pub snapshot: bool,
}

/// What a job did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Whether a create or patch was sent.
    pub wrote: bool,
    /// The ShootState's `gardener.cloud/timestamp` afterwards (last snapshot).
    pub timestamp: Option<String>,
    /// Extension objects whose change could not be prepared (e.g. a referenced object is
    /// missing); their entries were left as they were, the rest of the batch was written.
    pub failed: Vec<(ObjectKey, Error)>,
}

/// Runs one job: reads the ShootState, applies the batch (or computes the snapshot) and writes it
/// when it changed; a snapshot always writes, to move its timestamp. Creates the ShootState when
/// missing unless the shoot is deleting — seedlet runs no shoot flow that would create it.
/// Idempotent; a concurrent writer makes the patch fail with a conflict, and the caller retries
/// on fresh state. The writes are charged to the write budget of the running controller.
///
/// # Errors
/// See [`Error`].
pub async fn run(ctx: &Ctx, job: &Job) -> Result<Outcome, Error> {
    let key = format!("{}/{}", job.shoot.namespace, job.shoot.name);

    let api: Api<ShootState> = Api::namespaced(ctx.garden.clone(), &job.shoot.namespace);
    let current = api
        .get_opt(&job.shoot.name)
        .await
        .map_err(|source| Error::ReadShootState {
            key: key.clone(),
            source,
        })?;
    let timestamp = current
        .as_ref()
        .and_then(|state| state.annotations().get(annotations::TIMESTAMP).cloned());
    let previous = current.as_ref().map(|state| &state.spec);
    let mut failed = Vec::new();
    let mut extra_annotations = BTreeMap::new();
    let (spec, changed) = if job.snapshot {
        let spec = snapshot(ctx, &job.namespace, previous).await?;
        let stamp = ctx
            .clock
            .now()
            .round(jiff::Unit::Second)
            .unwrap_or_else(|_| ctx.clock.now())
            .to_string();
        extra_annotations.insert(annotations::TIMESTAMP.to_owned(), stamp);
        (spec, true)
    } else {
        let (changes, not_prepared) = changes(ctx, job).await;
        failed = not_prepared;
        let mut spec = previous.cloned().unwrap_or_default();
        let changed = entries::apply_changes(&mut spec, changes, job.shoot.migrating());
        (spec, changed)
    };
    let new_timestamp = extra_annotations
        .get(annotations::TIMESTAMP)
        .cloned()
        .or(timestamp);
    let Some(current) = current else {
        if job.shoot.deleting || (!job.snapshot && spec == ShootStateSpec::default()) {
            return Ok(Outcome {
                failed,
                ..Outcome::default()
            });
        }
        let mut state = ShootState::new(&job.shoot.name, spec);
        state.metadata.namespace = Some(job.shoot.namespace.clone());
        if !extra_annotations.is_empty() {
            state.metadata.annotations = Some(extra_annotations);
        }
        let params = PostParams {
            field_manager: Some(ctx.field_manager.to_owned()),
            ..PostParams::default()
        };
        ctx.metrics.shoot_state_written();
        api.create(&params, &state)
            .await
            .map_err(|source| Error::WriteShootState { key, source })?;
        return Ok(Outcome {
            wrote: true,
            timestamp: new_timestamp,
            failed,
        });
    };
    if !changed {
        return Ok(Outcome {
            wrote: false,
            timestamp: new_timestamp,
            failed,
        });
    }
    let patch = entries::spec_patch(
        &spec,
        current.metadata.resource_version.as_deref(),
        &extra_annotations,
    );
    let params = PatchParams {
        field_manager: Some(ctx.field_manager.to_owned()),
        ..PatchParams::default()
    };
    ctx.metrics.shoot_state_written();
    api.patch(&job.shoot.name, &params, &Patch::Merge(&patch))
        .await
        .map_err(|source| Error::WriteShootState { key, source })?;
    Ok(Outcome {
        wrote: true,
        timestamp: new_timestamp,
        failed,
    })
}

/// The changes of an incremental job, and the objects whose change could not be prepared (they
/// must not hold up the rest of the batch); paused objects are left alone.
async fn changes(ctx: &Ctx, job: &Job) -> (Vec<Change>, Vec<(ObjectKey, Error)>) {
    let mut changes = Vec::new();
    let mut failed = Vec::new();
    for ((kind, name), data) in &job.extensions {
        if data.as_ref().is_some_and(|data| data.paused) {
            continue;
        }
        match data.as_ref().and_then(|data| data.entry(kind, name)) {
            Some(entry) => match copies(ctx, &job.namespace, &entry.resources).await {
                Ok(resources) => changes.push(Change::UpsertExtension { entry, resources }),
                Err(error) => failed.push(((*kind, name.clone()), error)),
            },
            None => changes.push(Change::RemoveExtension {
                kind: (*kind).to_owned(),
                name: name.clone(),
            }),
        }
    }
    for (name, item) in &job.secrets {
        match item {
            Some(item) if !item.deleting => changes.push(Change::UpsertSecret(item.entry.clone())),
            _ => changes.push(Change::RemoveSecret(name.clone())),
        }
    }
    (changes, failed)
}
