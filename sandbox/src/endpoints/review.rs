//! SubjectAccessReview, SelfSubjectAccessReview, LocalSubjectAccessReview and
//! SelfSubjectRulesReview, answered from RBAC (in JSON, or in protobuf for clients that accept
//! nothing else).

use bytes::Bytes;
use http::Response;
use serde_json::{Value, json};

use super::{Body, Call, json_response, response};
use crate::auth::authz;
use crate::endpoints::protobuf;
use crate::status::{ApiError, Cause};

/// POST of a review: the answer is the review with its `status` filled in.
pub fn create(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    if call.rt.kind == "SelfSubjectRulesReview" {
        return rules(call);
    }
    let mut review = call.json_body()?;
    let spec = review.get("spec").cloned().unwrap_or_else(|| json!({}));
    let user = match call.rt.kind.as_str() {
        "SelfSubjectAccessReview" => call.user.clone(),
        _ => authz::review_user(&spec),
    };
    let Some(mut attributes) = authz::review_attributes(&spec, user) else {
        return Err(ApiError::invalid(
            &call.rt,
            &call.rt.kind,
            "",
            vec![Cause::new(
                "spec.resourceAttributes",
                "FieldValueInvalid",
                "Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )],
        ));
    };
    if call.rt.kind == "LocalSubjectAccessReview" {
        if attributes.namespace != call.path.namespace {
            return Err(ApiError::invalid(
                &call.rt,
                &call.rt.kind,
                "",
                vec![Cause::new(
                    "spec.resourceAttributes.namespace",
                    "FieldValueInvalid",
                    format!(
                        "Invalid value: \"{}\": must match metadata.namespace",
                        attributes.namespace
                    ),
                )],
            ));
        }
        attributes.namespace = call.path.namespace.clone();
    }
    let decision = call.api.authorize(&attributes);
    if let Some(map) = review.as_object_mut() {
        map.insert("apiVersion".into(), json!(call.rt.api_version()));
        map.insert("kind".into(), json!(call.rt.kind));
        let metadata = map.entry("metadata").or_insert_with(|| json!({}));
        if let Some(metadata) = metadata.as_object_mut() {
            metadata.insert("creationTimestamp".into(), Value::Null);
        }
        map.insert("status".into(), authz::review_status(&decision));
    }
    created(call, &review)
}

/// POST of a SelfSubjectRulesReview: the requester's rules in `spec.namespace`. Like
/// kube-apiserver, the answer carries only the status (an empty `spec`), and a review without a
/// namespace is a bad request.
fn rules(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let review = call.json_body()?;
    let namespace = review
        .pointer("/spec/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if namespace.is_empty() {
        return Err(ApiError::bad_request("no namespace on request"));
    }
    let rules = call.api.rules_for(call.user, namespace);
    let answer = json!({
        "kind": call.rt.kind,
        "apiVersion": call.rt.api_version(),
        "metadata": {"creationTimestamp": null},
        "spec": {},
        "status": rules.status(),
    });
    created(call, &answer)
}

/// The 201 answer to a review, in protobuf when the client accepts nothing else.
fn created(call: &Call<'_>, review: &Value) -> Result<Response<Body>, ApiError> {
    if protobuf::only_protobuf_accepted(call.accept) {
        let encoded = protobuf::encode_object(review).map_err(|error| {
            ApiError::internal(format!("encoding the review as protobuf: {error}"))
        })?;
        return Ok(response(201, protobuf::MEDIA_TYPE, Bytes::from(encoded)));
    }
    Ok(json_response(201, review))
}
