//! Admission webhooks on the request path: before a create, update, patch or delete is stored,
//! the matching webhooks see the object it would write (for a patch: the patched object) and
//! may change or refuse it. A patch a mutating webhook changed is stored as an update of the
//! object it was computed from (409 if that changed meanwhile). Server-side apply and
//! deletecollection are not sent to webhooks. A dry run is admitted like any request
//! (`request.dryRun: true`).

use serde_json::{Value, json};

use super::Call;
use super::patch::{is_apply, patch_body, patch_kind, patched};
use crate::admission::{self, Request, Webhooks};
use crate::endpoints::request::Verb;
use crate::resources::Behaviour;
use crate::status::ApiError;

/// What admission decided about the request body.
pub enum Admitted {
    /// Proceed as asked.
    Unchanged,
    /// Proceed with this JSON body instead (a mutated create or update).
    Body(Vec<u8>),
    /// Store this JSON object as an update instead of applying the patch.
    PatchAsUpdate(Vec<u8>),
}

/// Runs the admission webhooks for a call.
///
/// # Errors
/// A webhook's denial, a failing webhook (failurePolicy Fail), or the errors of decoding the
/// body and applying the patch.
pub async fn admit(call: &Call<'_>) -> Result<Admitted, ApiError> {
    let operation = match call.path.verb {
        Verb::Create => "CREATE",
        Verb::Update => "UPDATE",
        Verb::Patch if !is_apply(call) => "UPDATE",
        Verb::Delete => "DELETE",
        _ => return Ok(Admitted::Unchanged),
    };
    if call.rt.behaviour == Behaviour::Review || call.rt.group == "admissionregistration.k8s.io" {
        return Ok(Admitted::Unchanged);
    }
    let (webhooks, old, namespace_labels) = {
        let state = call.api.store.lock();
        let Some(webhooks) = Webhooks::read(&state) else {
            return Ok(Admitted::Unchanged);
        };
        let old = (!call.path.name.is_empty())
            .then(|| state.get(&call.rt, &call.path.namespace, &call.path.name))
            .flatten();
        let labels = state
            .get_by_key("namespaces", "", &call.path.namespace)
            .and_then(|ns| {
                ns.pointer("/metadata/labels")
                    .and_then(Value::as_object)
                    .cloned()
            });
        (webhooks, old, labels)
    };
    let object = match call.path.verb {
        Verb::Create | Verb::Update => {
            let mut body = call.json_body()?;
            if call.rt.namespaced
                && body.is_object()
                && body.pointer("/metadata/namespace").is_none()
            {
                crate::object::metadata_mut(&mut body)
                    .insert("namespace".into(), json!(call.path.namespace));
            }
            Some(body)
        }
        Verb::Patch => {
            let live = old
                .as_ref()
                .ok_or_else(|| ApiError::not_found(&call.rt, &call.path.name))?;
            Some(patched(call, live, patch_kind(call)?, patch_body(call)?)?)
        }
        _ => None,
    };
    if operation != "CREATE" && old.is_none() {
        // Nothing to admit; the handler answers 404.
        return Ok(Admitted::Unchanged);
    }
    let name = object
        .as_ref()
        .and_then(|o| o.pointer("/metadata/name"))
        .and_then(Value::as_str)
        .unwrap_or(&call.path.name)
        .to_string();
    let request = Request {
        rt: &call.rt,
        operation,
        subresource: call.path.subresource.as_str(),
        namespace: &call.path.namespace,
        name: &name,
        object,
        old: old.clone(),
        user: call.user,
        namespace_labels,
        dry_run: call.dry_run,
    };
    let Some(mut mutated) = admission::admit(&webhooks, request).await? else {
        return Ok(Admitted::Unchanged);
    };
    let bytes = |v: &Value| serde_json::to_vec(v).unwrap_or_default();
    if call.path.verb == Verb::Patch {
        if let Some(rv) = old
            .as_ref()
            .and_then(|o| o.pointer("/metadata/resourceVersion"))
        {
            crate::object::metadata_mut(&mut mutated).insert("resourceVersion".into(), rv.clone());
        }
        return Ok(Admitted::PatchAsUpdate(bytes(&mutated)));
    }
    Ok(Admitted::Body(bytes(&mutated)))
}
