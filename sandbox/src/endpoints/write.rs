//! `create`, `update` (PUT), `delete` and `deletecollection`.

use http::Response;
use serde_json::{Map, Value, json};

use super::read::{Selectors, list_item, list_response};
use super::{Body, Call, json_response, present};
use crate::registry::generic::{self, DeleteOptions, DeleteOutcome, Ownership, Writer};
use crate::resources::Subresource;
use crate::status::ApiError;

/// POST to a collection.
pub fn create(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let body = call.json_body()?;
    check_body_namespace(call, &body)?;
    let manager = call.field_manager();
    let writer = Writer {
        manager: &manager,
        user: call.user,
        dry_run: call.dry_run,
    };
    let stored = {
        let mut state = call.api.store.lock();
        generic::create(&mut state, &call.rt, &call.path.namespace, body, &writer)?
    };
    Ok(json_response(201, &present(call, &stored)))
}

/// PUT of an object or a subresource.
pub fn update(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let body = call.json_body()?;
    check_body_namespace(call, &body)?;
    check_body_name(call, &body)?;
    if call.path.subresource == Subresource::Approval {
        check_signer_approval(call)?;
    }
    let manager = call.field_manager();
    let writer = Writer {
        manager: &manager,
        user: call.user,
        dry_run: call.dry_run,
    };
    let stored = {
        let mut state = call.api.store.lock();
        generic::update(
            &mut state,
            &call.rt,
            &call.path.namespace,
            &call.path.name,
            &call.path.subresource,
            body,
            &writer,
            Ownership::Record,
        )?
    };
    Ok(json_response(200, &present(call, &stored)))
}

/// The DeleteOptions of a DELETE: its body (if any), `propagationPolicy` and `dryRun`.
fn delete_options(call: &Call<'_>) -> Result<DeleteOptions, ApiError> {
    let body: Option<Value> = if call.body.is_empty() {
        None
    } else {
        Some(call.json_body().map_err(delete_options_error)?)
    };
    Ok(DeleteOptions {
        dry_run: call.dry_run,
        ..DeleteOptions::parse(
            body.as_ref(),
            call.query.get("propagationPolicy").map(String::as_str),
        )
    })
}

/// DELETE of one object.
pub fn delete(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let options = delete_options(call)?;
    crate::registry::namespace::check_deletable(&call.rt, &call.path.name)?;
    let outcome = {
        let mut state = call.api.store.lock();
        generic::delete(
            &mut state,
            &call.rt,
            &call.path.namespace,
            &call.path.name,
            &options,
        )?
    };
    Ok(match outcome {
        DeleteOutcome::Removed(object) => {
            json_response(200, &generic::deleted_status(&call.rt, &object))
        }
        DeleteOutcome::Marked(object) => json_response(200, &present(call, &object)),
    })
}

/// DELETE of a collection: every matching object is deleted; the answer lists them.
pub fn delete_collection(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    // Namespaces have no deletecollection (discovery does not list it): one namespace at a time.
    if call.rt.group.is_empty() && call.rt.plural == "namespaces" {
        return Err(ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        ));
    }
    let selectors = Selectors::parse(call)?;
    let options = delete_options(call)?;
    let namespace = (!call.path.namespace.is_empty()).then_some(call.path.namespace.as_str());
    let (items, rv) = {
        let mut state = call.api.store.lock();
        let candidates = state.list(&call.rt.storage_key(), namespace);
        let mut items = Vec::new();
        for object in candidates.iter().filter(|o| selectors.matches(o)) {
            let (ns, name) = crate::storage::object_key(object);
            match generic::delete(&mut state, &call.rt, &ns, &name, &options) {
                Ok(DeleteOutcome::Removed(o) | DeleteOutcome::Marked(o)) => {
                    items.push(list_item(call, &o))
                }
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        (items, state.resource_version())
    };
    let mut metadata = Map::new();
    metadata.insert("resourceVersion".into(), json!(rv.to_string()));
    Ok(list_response(call, items, metadata))
}

fn delete_options_error(error: ApiError) -> ApiError {
    let message = error
        .body
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    ApiError::bad_request(message)
}

/// The object's name must be the one in the path, as kube-apiserver's `checkName` requires of a
/// PUT body and of a patched object: an empty or missing name is "undeterminable", another name a
/// mismatch (both 400, before the stored object is looked up).
pub(super) fn check_body_name(call: &Call<'_>, body: &Value) -> Result<(), ApiError> {
    let url_name = &call.path.name;
    match body.pointer("/metadata/name").and_then(Value::as_str) {
        None | Some("") => Err(ApiError::bad_request(format!(
            "the name of the object ({url_name} based on URL) was undeterminable: name must be provided"
        ))),
        Some(given) if given != url_name => Err(ApiError::bad_request(format!(
            "the name of the object ({given}) does not match the name on the URL ({url_name})"
        ))),
        Some(_) => Ok(()),
    }
}

/// The object's namespace, when given, must be the one in the path.
pub(super) fn check_body_namespace(call: &Call<'_>, body: &Value) -> Result<(), ApiError> {
    let given = body
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if call.rt.namespaced && !given.is_empty() && given != call.path.namespace {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    Ok(())
}

/// Approving or denying a CSR also needs `approve` on its signer (by name or `domain/*`).
pub fn check_signer_approval(call: &Call<'_>) -> Result<(), ApiError> {
    let state = call.api.store.lock();
    let object = state
        .get(&call.rt, "", &call.path.name)
        .ok_or_else(|| ApiError::not_found(&call.rt, &call.path.name))?;
    let rbac = call.api.rbac(&state);
    crate::registry::csr::approval_admission(&object, call.user, &rbac).map_err(|body| ApiError {
        code: 403,
        body,
        plain: None,
        retry_after: None,
    })
}
