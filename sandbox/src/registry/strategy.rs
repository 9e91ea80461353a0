//! The per-kind strategy (kube-apiserver's `rest.RESTCreateStrategy`/`RESTUpdateStrategy` and
//! friends): the hooks [`super::generic`] calls around every write, with defaults that fit a kind
//! without rules of its own.

use serde_json::Value;

use crate::auth::authn::UserInfo;
use crate::registry::validation::NameRule;
use crate::resources::{ResourceType, Subresource};
use crate::status::ApiError;
use crate::storage::State;

/// Who writes, for managedFields and spec.username style defaults.
#[derive(Clone, Debug)]
pub struct Writer<'a> {
    /// Field manager name.
    pub manager: &'a str,
    /// The authenticated (possibly impersonated) user.
    pub user: &'a UserInfo,
    /// `dryRun=All`: everything runs but the store is not written (see [`super::generic`]).
    pub dry_run: bool,
}

/// What a strategy hook may look at besides the object.
pub struct Context<'a> {
    /// The store (read-only: strategies decide, [`super::generic`] writes).
    pub state: &'a State,
    /// The resource type written.
    pub rt: &'a ResourceType,
    /// Who writes.
    pub writer: &'a Writer<'a>,
}

/// The rules of one kind. Every method has the default of a kind without rules.
pub trait Strategy: Sync {
    /// Which rule `metadata.name` follows.
    fn name_rule(&self) -> NameRule {
        NameRule::Subdomain
    }

    /// Fields a field selector may use besides `metadata.name` and `metadata.namespace`.
    fn selectable_fields<'r>(&self, _rt: &'r ResourceType) -> Vec<&'r str> {
        Vec::new()
    }

    /// Defaults and validation for a new object (identity and system metadata are already set).
    ///
    /// # Errors
    /// The Status kube-apiserver answers for an object it refuses.
    fn prepare_create(&self, _ctx: &Context<'_>, _object: &mut Value) -> Result<(), ApiError> {
        Ok(())
    }

    /// Defaults and validation for an update through the main resource or `subresource`
    /// (system fields are already carried over from `old`).
    ///
    /// # Errors
    /// The Status kube-apiserver answers for an update it refuses.
    fn prepare_update(
        &self,
        _ctx: &Context<'_>,
        _old: &Value,
        _new: &mut Value,
        _subresource: &Subresource,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// Finalizers a delete adds.
    fn deletion_finalizers(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether a delete always marks the object (deletionTimestamp without a grace period of 0)
    /// and leaves removal to a controller, as namespaces do.
    fn graceful_deletion(&self) -> bool {
        false
    }

    /// Whether something besides `metadata.finalizers` keeps a deleting object.
    fn removal_blocked(&self, _object: &Value) -> bool {
        false
    }

    /// Extra changes when an object is marked for deletion.
    fn mark_deleting(&self, _object: &mut Value) {}

    /// Follow-up after an object was stored.
    fn after_write(&self, _state: &mut State, _object: &Value) {}

    /// Follow-up after an object was removed.
    fn after_remove(&self, _state: &mut State, _object: &Value) {}
}

/// The strategy of kinds without rules of their own.
pub struct Plain;

impl Strategy for Plain {}

/// A Status JSON body (as the CSR rules produce) as an API error.
pub fn status_error(body: Value) -> ApiError {
    let code = body
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .unwrap_or(422);
    ApiError {
        code,
        body,
        plain: None,
        retry_after: None,
    }
}
