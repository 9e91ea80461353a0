//! Admission webhooks (kube-apiserver's MutatingAdmissionWebhook and ValidatingAdmissionWebhook):
//! the MutatingWebhookConfiguration and ValidatingWebhookConfiguration objects in the store are
//! honoured for CREATE, UPDATE and DELETE. Matching webhooks ([`matching`]) get an
//! `admission.k8s.io/v1` AdmissionReview at their URL or service (resolved through its Endpoints,
//! TLS verified with the `caBundle` for `<service>.<namespace>.svc`), within `timeoutSeconds`
//! (default 10); mutating webhooks run first, in configuration-name order, their JSONPatch
//! applied in turn; then the validating ones. `matchConditions` (CEL) skip a webhook
//! ([`conditions`]). A denial is kube's
//! `admission webhook "<name>" denied the request: <message>` (code from the webhook, at least
//! 400); a failing call is a 500 unless the webhook's failurePolicy is Ignore. A dry run is sent
//! with `request.dryRun: true` and refused (400) when a webhook it reaches may have side effects
//! (`sideEffects` other than `None`/`NoneOnDryRun`).

pub mod conditions;
pub mod matching;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde_json::{Map, Value, json};

use crate::auth::authn::UserInfo;
use crate::resources::ResourceType;
use crate::status::ApiError;
use crate::storage::State;
use crate::webhook::Endpoint;
use matching::Subject;

const MUTATING_KEY: &str = "mutatingwebhookconfigurations.admissionregistration.k8s.io";
const VALIDATING_KEY: &str = "validatingwebhookconfigurations.admissionregistration.k8s.io";
/// Default `timeoutSeconds` of admission webhooks.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// One webhook ready to be called.
struct Hook {
    name: String,
    webhook: Value,
    endpoint: Result<Endpoint, String>,
}

/// The webhooks of the stored configurations, read under the store lock.
pub struct Webhooks {
    mutating: Vec<Hook>,
    validating: Vec<Hook>,
}

impl Webhooks {
    /// The stored webhook configurations (`None` when there are none, the common case).
    pub fn read(state: &State) -> Option<Self> {
        let hooks = |key: &str| -> Vec<Hook> {
            let mut configurations = state.list(key, None);
            configurations.sort_by(|a, b| {
                a.pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .cmp(&b.pointer("/metadata/name").and_then(Value::as_str))
            });
            configurations
                .iter()
                .flat_map(|c| c["webhooks"].as_array().cloned().unwrap_or_default())
                .map(|webhook| Hook {
                    name: webhook["name"].as_str().unwrap_or_default().to_string(),
                    endpoint: endpoint_of(state, &webhook),
                    webhook,
                })
                .collect()
        };
        let webhooks = Webhooks {
            mutating: hooks(MUTATING_KEY),
            validating: hooks(VALIDATING_KEY),
        };
        (!webhooks.mutating.is_empty() || !webhooks.validating.is_empty()).then_some(webhooks)
    }
}

/// Where a webhook's clientConfig points: its URL, or its service's first endpoint address.
fn endpoint_of(state: &State, webhook: &Value) -> Result<Endpoint, String> {
    let config = &webhook["clientConfig"];
    let ca = match config["caBundle"].as_str() {
        Some(bundle) => Some(
            base64::engine::general_purpose::STANDARD
                .decode(bundle)
                .map_err(|_| "clientConfig.caBundle is not base64".to_string())?,
        ),
        None => None,
    };
    let timeout = webhook["timeoutSeconds"]
        .as_u64()
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
    if let Some(url) = config["url"].as_str() {
        return Endpoint::new(url, ca, None, None, timeout);
    }
    let service = &config["service"];
    let (namespace, name) = (
        service["namespace"].as_str().unwrap_or_default(),
        service["name"].as_str().unwrap_or_default(),
    );
    let endpoints = state
        .get_by_key("endpoints", namespace, name)
        .ok_or_else(|| {
            format!("service \"{name}\" in namespace \"{namespace}\" has no endpoints")
        })?;
    let subset = &endpoints["subsets"][0];
    let ip = subset["addresses"][0]["ip"].as_str().ok_or_else(|| {
        format!("service \"{name}\" in namespace \"{namespace}\" has no endpoints")
    })?;
    let port = subset["ports"][0]["port"].as_u64().unwrap_or(443);
    let path = service["path"].as_str().unwrap_or("/");
    Endpoint::new(
        &format!("https://{ip}:{port}{path}"),
        ca,
        None,
        None,
        timeout,
    )
    .map(|e| e.with_server_name(format!("{name}.{namespace}.svc")))
}

/// One request as admission sees it.
pub struct Request<'a> {
    /// The resource type.
    pub rt: &'a ResourceType,
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub operation: &'static str,
    /// Subresource ("" for none).
    pub subresource: &'a str,
    /// Namespace ("" for cluster-scoped).
    pub namespace: &'a str,
    /// Object name ("" when generated).
    pub name: &'a str,
    /// The new object (CREATE, UPDATE).
    pub object: Option<Value>,
    /// The stored object (UPDATE, DELETE).
    pub old: Option<Arc<Value>>,
    /// Who asks.
    pub user: &'a UserInfo,
    /// Labels of the request's namespace.
    pub namespace_labels: Option<Map<String, Value>>,
    /// `dryRun=All`: webhooks must declare `sideEffects: None` or `NoneOnDryRun`.
    pub dry_run: bool,
}

/// Runs the mutating and then the validating webhooks that match; returns the object the
/// mutating webhooks produced (when they changed it).
///
/// # Errors
/// A denial (the webhook's Status) or a failed call of a webhook whose failurePolicy is Fail.
pub async fn admit(
    webhooks: &Webhooks,
    mut request: Request<'_>,
) -> Result<Option<Value>, ApiError> {
    let mut mutated = false;
    for hook in &webhooks.mutating {
        if !applies(hook, &request) {
            continue;
        }
        let Some(answer) = call(hook, &request).await? else {
            continue;
        };
        if let Some(patch) = answer["patch"].as_str() {
            let operations: json_patch::Patch = base64::engine::general_purpose::STANDARD
                .decode(patch)
                .ok()
                .and_then(|bytes| serde_json::from_slice(&bytes).ok())
                .ok_or_else(|| {
                    ApiError::internal(format!(
                        "admission webhook {:?} returned an invalid patch",
                        hook.name
                    ))
                })?;
            if let Some(object) = request.object.as_mut() {
                json_patch::patch(object, &operations).map_err(|e| {
                    ApiError::internal(format!(
                        "admission webhook {:?} returned a patch that does not apply: {e}",
                        hook.name
                    ))
                })?;
                mutated = true;
            }
        }
    }
    for hook in &webhooks.validating {
        if applies(hook, &request) {
            call(hook, &request).await?;
        }
    }
    Ok(if mutated { request.object } else { None })
}

fn labels(object: Option<&Value>) -> Option<&Map<String, Value>> {
    object
        .and_then(|o| o.pointer("/metadata/labels"))
        .and_then(Value::as_object)
}

fn applies(hook: &Hook, request: &Request<'_>) -> bool {
    let own_labels;
    let namespace_labels = if request.rt.plural == "namespaces" && request.rt.group.is_empty() {
        own_labels = labels(request.object.as_ref()).or(labels(request.old.as_deref()));
        own_labels
    } else {
        request.namespace_labels.as_ref()
    };
    matching::matches(
        &hook.webhook,
        &Subject {
            operation: request.operation,
            group: &request.rt.group,
            version: &request.rt.version,
            resource: &request.rt.plural,
            subresource: request.subresource,
            namespaced: request.rt.namespaced,
            namespace_labels,
            object_labels: request.object.as_ref().map(|o| labels(Some(o))),
            old_labels: request.old.as_deref().map(|o| labels(Some(o))),
        },
    )
}

/// The AdmissionReview of a request.
fn review(request: &Request<'_>, uid: &str) -> Value {
    let rt = request.rt;
    let user = request.user;
    let mut user_info = json!({"username": user.username, "groups": user.groups});
    if !user.uid.is_empty() {
        user_info["uid"] = json!(user.uid);
    }
    if !user.extra.is_empty() {
        user_info["extra"] = json!(user.extra);
    }
    let kind = json!({"group": rt.group, "version": rt.version, "kind": rt.kind});
    let resource = json!({"group": rt.group, "version": rt.version, "resource": rt.plural});
    let mut body = json!({
        "uid": uid,
        "kind": kind, "resource": resource,
        "requestKind": kind, "requestResource": resource,
        "name": request.name,
        "operation": request.operation,
        "userInfo": user_info,
        "object": request.object.clone().unwrap_or(Value::Null),
        "oldObject": request.old.as_deref().cloned().unwrap_or(Value::Null),
        "dryRun": request.dry_run,
    });
    if !request.namespace.is_empty() {
        body["namespace"] = json!(request.namespace);
    }
    if !request.subresource.is_empty() {
        body["subResource"] = json!(request.subresource);
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": body})
}

/// Calls one webhook; `Ok(None)` when it failed and its failurePolicy is Ignore, or when its
/// match conditions skip it.
async fn call(hook: &Hook, request: &Request<'_>) -> Result<Option<Value>, ApiError> {
    let uid = crate::object::new_uid();
    let review = review(request, &uid);
    let verdict = conditions::evaluate(&hook.webhook, &review["request"]);
    if request.dry_run && !matches!(verdict, conditions::Verdict::Skip) {
        check_dry_run_side_effects(hook)?;
    }
    let outcome = match verdict {
        conditions::Verdict::Skip => return Ok(None),
        conditions::Verdict::Error(error) => Err(error),
        conditions::Verdict::Call => match &hook.endpoint {
            Ok(endpoint) => endpoint.post_json(&review).await,
            Err(error) => Err(error.clone()),
        },
    };
    let answer = match outcome.and_then(|a| {
        let response = a.get("response").cloned().unwrap_or(Value::Null);
        if response["uid"] != uid {
            return Err(format!(
                "expected response.uid={uid:?}, got {}",
                response["uid"]
            ));
        }
        Ok(response)
    }) {
        Ok(answer) => answer,
        Err(_) if hook.webhook["failurePolicy"] == "Ignore" => return Ok(None),
        Err(error) => {
            return Err(ApiError::internal(format!(
                "failed calling webhook {:?}: {error}",
                hook.name
            )));
        }
    };
    if answer["allowed"].as_bool() == Some(true) {
        return Ok(Some(answer));
    }
    Err(denial(&hook.name, &answer["status"]))
}

/// A dry run may only reach webhooks without side effects (`sideEffects: None` or
/// `NoneOnDryRun`); kube-apiserver refuses the request otherwise (400), before calling.
/// A webhook without `sideEffects` (not valid in v1) fails as a call would.
fn check_dry_run_side_effects(hook: &Hook) -> Result<(), ApiError> {
    match hook.webhook["sideEffects"].as_str() {
        Some("None" | "NoneOnDryRun") => Ok(()),
        Some(_) => Err(ApiError::bad_request(format!(
            "admission webhook {:?} does not support dry run",
            hook.name
        ))),
        None if hook.webhook["failurePolicy"] == "Ignore" => Ok(()),
        None => Err(ApiError::bad_request("Webhook SideEffects is nil")),
    }
}

/// kube-apiserver's error for a denial: the webhook's Status with at least code 400, Failure,
/// and the message naming the webhook.
fn denial(name: &str, status: &Value) -> ApiError {
    let denied_by = format!("admission webhook {name:?} denied the request");
    let message = match (status["message"].as_str(), status["reason"].as_str()) {
        (Some(m), _) if !m.is_empty() => format!("{denied_by}: {m}"),
        (_, Some(r)) if !r.is_empty() => format!("{denied_by}: {r}"),
        _ => format!("{denied_by} without explanation"),
    };
    let code = status["code"].as_u64().filter(|c| *c >= 400).unwrap_or(400);
    let mut body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "code": code});
    if let Some(reason) = status["reason"].as_str().filter(|r| !r.is_empty()) {
        body["reason"] = json!(reason);
    }
    if let Some(details) = status.get("details").filter(|d| !d.is_null()) {
        body["details"] = details.clone();
    }
    ApiError {
        code: u16::try_from(code).unwrap_or(400),
        body,
        plain: None,
        retry_after: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denials_name_the_webhook_and_keep_at_least_400() {
        for (status, code, message) in [
            (
                json!({"message": "no"}),
                400,
                "admission webhook \"w\" denied the request: no",
            ),
            (
                json!({"reason": "Why", "code": 403}),
                403,
                "admission webhook \"w\" denied the request: Why",
            ),
            (
                json!({"code": 200}),
                400,
                "admission webhook \"w\" denied the request without explanation",
            ),
        ] {
            let error = denial("w", &status);
            assert_eq!(
                (error.code, error.body["message"].as_str()),
                (code, Some(message))
            );
        }
    }
}
