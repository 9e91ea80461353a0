//! The registry strategy of CertificateSigningRequests: path-segment names, `spec.signerName` as a
//! selectable field, and the create, approval and status rules of [`super`].

use serde_json::Value;

use crate::registry::strategy::{Context, Strategy, status_error};
use crate::registry::validation::NameRule;
use crate::resources::{ResourceType, Subresource};
use crate::status::ApiError;

/// CertificateSigningRequest rules.
pub struct Requests;

impl Strategy for Requests {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn selectable_fields<'r>(&self, _rt: &'r ResourceType) -> Vec<&'r str> {
        vec!["spec.signerName"]
    }

    fn prepare_create(&self, ctx: &Context<'_>, object: &mut Value) -> Result<(), ApiError> {
        super::prepare_create(object, ctx.writer.user).map_err(status_error)?;
        super::subject_restriction(object).map_err(status_error)
    }

    fn prepare_update(
        &self,
        _ctx: &Context<'_>,
        old: &Value,
        new: &mut Value,
        subresource: &Subresource,
    ) -> Result<(), ApiError> {
        let now = jiff::Timestamp::now();
        match subresource {
            Subresource::Approval => {
                super::prepare_approval_update(old, new, now).map_err(status_error)
            }
            Subresource::Status => {
                super::prepare_status_update(old, new, now).map_err(status_error)
            }
            _ => {
                super::prepare_update(old, new);
                Ok(())
            }
        }
    }
}
