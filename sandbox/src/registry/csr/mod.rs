//! CertificateSigningRequest semantics of kube-apiserver and kube-controller-manager: create
//! validation and requester fields, the approval and status subresources, the signer permission
//! check, and the built-in `kubernetes.io/kube-apiserver-client` signer.

pub(crate) mod strategy;
mod validation;

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::auth::authn::UserInfo;
use crate::auth::authz::{self, Attributes, RbacSnapshot};
use crate::auth::pki::CertificateAuthority;
use crate::object::string_list;
use validation::{
    FieldError, invalid_status, requested_organizations, validate_conditions,
    validate_conditions_kept, validate_expiration, validate_request, validate_signer_name,
    validate_usages,
};

/// The signer that issues client certificates for the API server itself.
pub const KUBE_APISERVER_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client";
/// Certificate validity when a request gives no `expirationSeconds` (kube-controller-manager's
/// `--cluster-signing-duration` default, one year).
pub const DEFAULT_VALIDITY: Duration = Duration::from_secs(365 * 24 * 3600);
/// Shortest validity the signer issues (twice the allowed clock skew).
const MIN_VALIDITY: Duration = Duration::from_secs(600);

/// Validates a CSR create (PEM type, expirationSeconds >= 600, usages, signerName, with the exact
/// 422 causes kube-apiserver gives) and fills spec.username/uid/groups/extra from the requester.
/// Err carries the 422 Status JSON (or a 400 Status when `spec.request` is not base64).
///
/// Call it after the name was generated from `generateName`: the Status names the object.
/// Like kube-apiserver, usages are defaulted to `digital signature, key encipherment`, any status
/// sent by the client is dropped, and whether the usages fit the signer is left to the signer.
pub fn prepare_create(object: &mut Value, requester: &UserInfo) -> Result<(), Value> {
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if !object.get("spec").is_some_and(Value::is_object) {
        object["spec"] = json!({});
    }
    let spec = &mut object["spec"];
    let usages = string_list(spec.get("usages"));
    if usages.is_empty() {
        spec["usages"] = json!(["digital signature", "key encipherment"]);
    }
    if let Some(map) = spec.as_object_mut() {
        for key in ["username", "uid", "groups", "extra"] {
            map.remove(key);
        }
    }
    spec["username"] = json!(requester.username);
    if !requester.uid.is_empty() {
        spec["uid"] = json!(requester.uid);
    }
    if !requester.groups.is_empty() {
        spec["groups"] = json!(requester.groups);
    }
    if !requester.extra.is_empty() {
        spec["extra"] = json!(requester.extra);
    }
    object["status"] = json!({});

    let request = decoded_request(&object["spec"]).map_err(|()| bad_request_status())?;
    let errors = validate_spec(&object["spec"], request.as_deref());
    if errors.is_empty() {
        Ok(())
    } else {
        Err(invalid_status(&name, &errors))
    }
}

/// Prepares a plain update (PUT/PATCH of the object itself): spec and status cannot change there,
/// they are taken from the stored object.
pub fn prepare_update(old: &Value, new: &mut Value) {
    new["spec"] = old.get("spec").cloned().unwrap_or_else(|| json!({}));
    new["status"] = old.get("status").cloned().unwrap_or_else(|| json!({}));
}

/// Prepares an update of the `approval` subresource: only `status.conditions` are taken from the
/// request, their timestamps are filled in, and the result is validated (422 Status on error).
pub fn prepare_approval_update(
    old: &Value,
    new: &mut Value,
    now: jiff::Timestamp,
) -> Result<(), Value> {
    let conditions = conditions_of(new).to_vec();
    new["spec"] = old.get("spec").cloned().unwrap_or_else(|| json!({}));
    new["status"] = old.get("status").cloned().unwrap_or_else(|| json!({}));
    set_conditions(
        new,
        populate_condition_times(conditions, conditions_of(old), now),
    );
    validate_update(old, new)
}

/// Prepares an update of the `status` subresource (certificate and conditions, as a signer does):
/// spec comes from the stored object, Approved/Denied conditions cannot be changed here.
pub fn prepare_status_update(
    old: &Value,
    new: &mut Value,
    now: jiff::Timestamp,
) -> Result<(), Value> {
    new["spec"] = old.get("spec").cloned().unwrap_or_else(|| json!({}));
    let is_approval = |c: &Value| {
        matches!(
            c.get("type").and_then(Value::as_str),
            Some("Approved" | "Denied")
        )
    };
    let mut merged: Vec<Value> = conditions_of(old)
        .iter()
        .filter(|c| is_approval(c))
        .cloned()
        .collect();
    merged.extend(
        conditions_of(new)
            .iter()
            .filter(|c| !is_approval(c))
            .cloned(),
    );
    if !new.get("status").is_some_and(Value::is_object) {
        new["status"] = json!({});
    }
    set_conditions(
        new,
        populate_condition_times(merged, conditions_of(old), now),
    );
    validate_update(old, new)
}

/// The checks kube-apiserver's CertificateApproval admission makes before `user` may approve or
/// deny `object`: `approve` on `signers` named after the signer, or on `<domain>/*`.
/// Returns the 403 Status when neither is allowed.
pub fn approval_admission(
    object: &Value,
    user: &UserInfo,
    rbac: &RbacSnapshot,
) -> Result<(), Value> {
    let signer = object
        .pointer("/spec/signerName")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if signer_attributes(user, "approve", signer)
        .iter()
        .any(|a| authz::authorize(a, rbac).allowed)
    {
        return Ok(());
    }
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut details = json!({"group": "certificates.k8s.io", "kind": "certificatesigningrequests"});
    if !name.is_empty() {
        details["name"] = json!(name);
    }
    Err(json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": format!(
            "certificatesigningrequests.certificates.k8s.io {name:?} is forbidden: user not permitted to approve requests with signerName {signer:?}"
        ),
        "reason": "Forbidden",
        "details": details,
        "code": 403,
    }))
}

/// kube-apiserver's CertificateSubjectRestriction admission: a request for the
/// `kubernetes.io/kube-apiserver-client` signer whose subject names the `system:masters`
/// organization is refused with 403 (it would mint cluster-admin credentials). Runs after
/// [`prepare_create`] validated the request.
pub fn subject_restriction(object: &Value) -> Result<(), Value> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    if spec.get("signerName").and_then(Value::as_str) != Some(KUBE_APISERVER_CLIENT_SIGNER) {
        return Ok(());
    }
    let request = decoded_request(spec).ok().flatten().unwrap_or_default();
    if !requested_organizations(&request)
        .iter()
        .any(|o| o == "system:masters")
    {
        return Ok(());
    }
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Err(json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": format!(
            "certificatesigningrequests.certificates.k8s.io {name:?} is forbidden: use of {KUBE_APISERVER_CLIENT_SIGNER} signer with system:masters group is not allowed"
        ),
        "reason": "Forbidden",
        "details": {"name": name, "group": "certificates.k8s.io", "kind": "certificatesigningrequests"},
        "code": 403,
    }))
}

/// Authorization attributes for `verb` (approve, sign) on a signer: the exact signer name first,
/// then the `<domain>/*` wildcard, as kube-apiserver checks them.
pub fn signer_attributes(user: &UserInfo, verb: &str, signer_name: &str) -> Vec<Attributes> {
    let attributes = |name: String| Attributes {
        user: user.clone(),
        verb: verb.to_owned(),
        api_group: "certificates.k8s.io".to_owned(),
        resource: "signers".to_owned(),
        name,
        resource_request: true,
        ..Attributes::default()
    };
    let mut checks = vec![attributes(signer_name.to_owned())];
    if let Some((domain, _)) = signer_name.split_once('/') {
        checks.push(attributes(format!("{domain}/*")));
    }
    checks
}

/// What the built-in signer does with a stored CSR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SignerOutcome {
    /// Nothing: not our signer, not approved, denied, failed, or already issued.
    Skip,
    /// Store this `status.certificate` (base64 of the PEM certificate).
    Issue(String),
    /// Append a `Failed` condition with this reason and message (see [`failed_condition`]).
    Fail {
        /// CamelCase reason, e.g. `SignerValidationFailure`.
        reason: String,
        /// Human-readable message.
        message: String,
    },
}

/// Decides what the `kubernetes.io/kube-apiserver-client` signer does with `object`, like
/// kube-controller-manager's csrsigning controller: approved (and not denied or failed) requests
/// without a certificate get one valid for `expirationSeconds` (between ten minutes and one year,
/// default one year); requests whose usages are not client usages fail.
pub fn signer_outcome(object: &Value, ca: &CertificateAuthority) -> SignerOutcome {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let has_certificate = object
        .pointer("/status/certificate")
        .and_then(Value::as_str)
        .is_some_and(|c| !c.is_empty());
    let is_true = |kind: &str| {
        conditions_of(object).iter().any(|c| {
            c.get("type").and_then(Value::as_str) == Some(kind)
                && c.get("status").and_then(Value::as_str) == Some("True")
        })
    };
    if spec.get("signerName").and_then(Value::as_str) != Some(KUBE_APISERVER_CLIENT_SIGNER)
        || has_certificate
        || !is_true("Approved")
        || is_true("Denied")
        || is_true("Failed")
    {
        return SignerOutcome::Skip;
    }
    if let Err(message) = client_usages(&string_list(spec.get("usages"))) {
        return SignerOutcome::Fail {
            reason: "SignerValidationFailure".to_owned(),
            message,
        };
    }
    let Some(pem) = decoded_request(spec)
        .ok()
        .flatten()
        .and_then(|bytes| String::from_utf8(bytes).ok())
    else {
        return SignerOutcome::Fail {
            reason: "SignerValidationFailure".to_owned(),
            message: "unable to parse csr: PEM block type must be CERTIFICATE REQUEST".to_owned(),
        };
    };
    match ca.sign_client_csr(
        &pem,
        validity(spec.get("expirationSeconds").and_then(Value::as_i64)),
    ) {
        Ok(certificate) => SignerOutcome::Issue(STANDARD.encode(certificate)),
        Err(error) => SignerOutcome::Fail {
            reason: "SignerValidationFailure".to_owned(),
            message: format!("error auto signing csr: {error}"),
        },
    }
}

/// If the CSR is Approved (not Denied/Failed), for the kube-apiserver-client signer, and has no certificate yet,
/// returns the new status.certificate (base64 of PEM) to store. Validity = spec.expirationSeconds (default 1 year).
pub fn issue_if_approved(object: &Value, ca: &CertificateAuthority) -> Option<String> {
    match signer_outcome(object, ca) {
        SignerOutcome::Issue(certificate) => Some(certificate),
        SignerOutcome::Skip | SignerOutcome::Fail { .. } => None,
    }
}

/// A `Failed` condition as the signer appends it.
pub fn failed_condition(reason: &str, message: &str, now: jiff::Timestamp) -> Value {
    json!({
        "type": "Failed",
        "status": "True",
        "reason": reason,
        "message": message,
        "lastUpdateTime": format_time(now),
        "lastTransitionTime": format_time(now),
    })
}

/// The certificate lifetime for a requested `expirationSeconds`.
fn validity(expiration_seconds: Option<i64>) -> Duration {
    match expiration_seconds.map(|s| Duration::from_secs(u64::try_from(s).unwrap_or(0))) {
        None => DEFAULT_VALIDITY,
        Some(requested) => requested.clamp(MIN_VALIDITY, DEFAULT_VALIDITY),
    }
}

/// Usages a kube-apiserver client certificate may have: `client auth`, optionally
/// `digital signature` and `key encipherment`.
fn client_usages(usages: &[String]) -> Result<(), String> {
    for usage in usages {
        if !["digital signature", "key encipherment", "client auth"].contains(&usage.as_str()) {
            return Err(format!("invalid usage for client certificate: {usage}"));
        }
    }
    if usages.iter().any(|u| u == "client auth") {
        Ok(())
    } else {
        Err("missing required usage for client certificate: client auth".to_owned())
    }
}

fn validate_spec(spec: &Value, request: Option<&[u8]>) -> Vec<FieldError> {
    let mut errors = validate_request(request);
    errors.extend(validate_usages(&string_list(spec.get("usages"))));
    errors.extend(validate_signer_name(
        spec.get("signerName")
            .and_then(Value::as_str)
            .unwrap_or_default(),
    ));
    errors.extend(validate_expiration(
        spec.get("expirationSeconds").and_then(Value::as_i64),
    ));
    errors
}

/// Validation of an update: the conditions, and no approval or denial removed. The spec was copied
/// from the stored object, so it is not validated again (it may predate stricter rules).
fn validate_update(old: &Value, new: &Value) -> Result<(), Value> {
    let mut errors = validate_conditions(conditions_of(new));
    errors.extend(validate_conditions_kept(
        conditions_of(old),
        conditions_of(new),
    ));
    if errors.is_empty() {
        return Ok(());
    }
    let name = new
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Err(invalid_status(name, &errors))
}

/// `spec.request` decoded from base64; `Ok(None)` when absent, `Err` when not base64.
fn decoded_request(spec: &Value) -> Result<Option<Vec<u8>>, ()> {
    match spec.get("request") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(encoded)) => STANDARD.decode(encoded).map(Some).map_err(|_| ()),
        Some(_) => Err(()),
    }
}

fn bad_request_status() -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "CertificateSigningRequest in version \"v1\" cannot be handled as a CertificateSigningRequest: spec.request: illegal base64 data",
        "reason": "BadRequest",
        "code": 400,
    })
}

/// Fills `lastUpdateTime` with `now` and `lastTransitionTime` from the stored condition of the same
/// type and status, or `now`, where the request left them empty.
fn populate_condition_times(
    mut conditions: Vec<Value>,
    old: &[Value],
    now: jiff::Timestamp,
) -> Vec<Value> {
    let now = format_time(now);
    for condition in &mut conditions {
        let empty =
            |c: &Value, key: &str| c.get(key).and_then(Value::as_str).is_none_or(str::is_empty);
        if empty(condition, "lastUpdateTime") {
            condition["lastUpdateTime"] = json!(now);
        }
        if empty(condition, "lastTransitionTime") {
            let previous = old.iter().find(|o| {
                o.get("type") == condition.get("type")
                    && o.get("status") == condition.get("status")
                    && !empty(o, "lastTransitionTime")
            });
            condition["lastTransitionTime"] =
                previous.map_or_else(|| json!(now), |o| o["lastTransitionTime"].clone());
        }
    }
    conditions
}

fn conditions_of(object: &Value) -> &[Value] {
    object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
}

/// Stores `conditions`, omitting the key when empty (like Go's `omitempty`).
fn set_conditions(object: &mut Value, conditions: Vec<Value>) {
    if !object.get("status").is_some_and(Value::is_object) {
        object["status"] = json!({});
    }
    if let Some(status) = object["status"].as_object_mut() {
        if conditions.is_empty() {
            status.remove("conditions");
        } else {
            status.insert("conditions".to_owned(), Value::Array(conditions));
        }
    }
}

/// RFC 3339 with second precision, like `metav1.Time`.
fn format_time(now: jiff::Timestamp) -> String {
    now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests;
