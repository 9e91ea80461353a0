//! Kind-specific defaults and validation (what kube-apiserver's registry strategies do per kind).

use serde_json::{Value, json};

use crate::crd;
use crate::fieldpath::{BuiltinListRules, ListRules, SchemaListRules};
use crate::ops::Writer;
use crate::resources::ResourceType;
use crate::status::ApiError;
use crate::store::State;

/// Defaults and validation for a new object (identity and system metadata are already set).
pub fn prepare_create(
    state: &mut State,
    rt: &ResourceType,
    object: &mut Value,
    writer: &Writer<'_>,
) -> Result<(), ApiError> {
    if rt.custom {
        return crd::admit(rt, object);
    }
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Secret") => secret_defaults(object, None),
        ("", "Namespace") => {
            let name = object
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let metadata = crate::ops::metadata_mut(object);
            let labels = metadata.entry("labels").or_insert_with(|| json!({}));
            if let Some(labels) = labels.as_object_mut() {
                labels.insert("kubernetes.io/metadata.name".into(), json!(name));
            }
            object["spec"] = json!({"finalizers": ["kubernetes"]});
            object["status"] = json!({"phase": "Active"});
        }
        ("", "Service") => service_defaults(state, object),
        ("", "ServiceAccount") | ("", "ConfigMap") | ("", "Endpoints") | ("", "Event") => {}
        ("", "Pod") => {
            object["status"] = json!({"phase": "Pending", "qosClass": "BestEffort"});
        }
        ("coordination.k8s.io", "Lease") => normalize_lease(rt, object)?,
        ("certificates.k8s.io", "CertificateSigningRequest") => {
            crate::csr::prepare_create(object, writer.user).map_err(status_error)?;
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => crd::prepare(rt, object)?,
        ("apps", "Deployment") => deployment_defaults(object),
        ("apps", "StatefulSet") | ("apps", "ReplicaSet") => replicas_default(object),
        _ => {}
    }
    Ok(())
}

/// Defaults and validation for an update (system fields are already carried over).
pub fn prepare_update(
    state: &mut State,
    rt: &ResourceType,
    old: &Value,
    new: &mut Value,
    subresource: &str,
    writer: &Writer<'_>,
) -> Result<(), ApiError> {
    let _ = (state, writer);
    if rt.custom {
        return crd::admit(rt, new);
    }
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Secret") => secret_defaults(new, Some(old)),
        ("", "Namespace") => {
            if subresource != "finalize" {
                new["spec"] = old.get("spec").cloned().unwrap_or_else(|| json!({}));
            }
            if subresource.is_empty() {
                new["status"] = old.get("status").cloned().unwrap_or_else(|| json!({}));
            }
            let name = old
                .pointer("/metadata/name")
                .cloned()
                .unwrap_or(Value::Null);
            let labels = crate::ops::metadata_mut(new)
                .entry("labels")
                .or_insert_with(|| json!({}));
            if let Some(labels) = labels.as_object_mut() {
                labels.insert("kubernetes.io/metadata.name".into(), name);
            }
        }
        ("", "Service") => {
            for field in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
                if new.pointer(&format!("/spec/{field}")).is_none()
                    && let (Some(value), Some(spec)) = (
                        old.pointer(&format!("/spec/{field}")),
                        new.get_mut("spec").and_then(Value::as_object_mut),
                    )
                {
                    spec.insert(field.into(), value.clone());
                }
            }
        }
        ("coordination.k8s.io", "Lease") => normalize_lease(rt, new)?,
        ("certificates.k8s.io", "CertificateSigningRequest") => {
            let now = jiff::Timestamp::now();
            match subresource {
                "approval" => {
                    crate::csr::prepare_approval_update(old, new, now).map_err(status_error)?
                }
                "status" => {
                    crate::csr::prepare_status_update(old, new, now).map_err(status_error)?
                }
                _ => crate::csr::prepare_update(old, new),
            }
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") if subresource.is_empty() => {
            crd::prepare(rt, new)?
        }
        ("apps", "Deployment") => deployment_defaults(new),
        ("apps", "StatefulSet") | ("apps", "ReplicaSet") => replicas_default(new),
        _ => {}
    }
    Ok(())
}

/// Finalizers a delete adds for this kind.
pub fn deletion_finalizers(rt: &ResourceType, _object: &Value) -> Vec<&'static str> {
    if rt.group == "apiextensions.k8s.io" && rt.plural == "customresourcedefinitions" {
        vec![crd::CLEANUP_FINALIZER]
    } else {
        Vec::new()
    }
}

/// Namespaces are deleted through their `spec.finalizers` by the namespace controller.
pub fn graceful_namespace(rt: &ResourceType) -> bool {
    rt.group.is_empty() && rt.plural == "namespaces"
}

/// Whether something besides `metadata.finalizers` keeps a deleting object (a namespace's `spec.finalizers`).
pub fn removal_blocked(rt: &ResourceType, object: &Value) -> bool {
    graceful_namespace(rt)
        && object
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty())
}

/// Extra changes when an object is marked for deletion.
pub fn mark_deleting(rt: &ResourceType, object: &mut Value) {
    if graceful_namespace(rt) {
        object["status"] = json!({"phase": "Terminating"});
    }
}

/// Follow-up after an object was written.
pub fn after_write(state: &mut State, rt: &ResourceType, _object: &Value) {
    if rt.storage_key() == crd::CRD_KEY {
        let registry = crd::registry_for(state);
        state.set_registry(registry);
    }
}

/// Follow-up after an object was removed.
pub fn after_remove(state: &mut State, rt: &ResourceType, object: &Value) {
    if rt.storage_key() == crd::CRD_KEY {
        for custom in crd::types_of(object) {
            state.drop_resource(&custom.storage_key());
        }
        let registry = crd::registry_for(state);
        state.set_registry(registry);
    }
}

/// How lists of this type merge and are owned.
pub fn list_rules(rt: &ResourceType) -> Box<dyn ListRules + '_> {
    match &rt.schema {
        Some(schema) => Box::new(SchemaListRules { schema }),
        None => Box::new(BuiltinListRules),
    }
}

fn status_error(body: Value) -> ApiError {
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

fn secret_defaults(object: &mut Value, old: Option<&Value>) {
    use base64::Engine;
    if let Some(Value::Object(string_data)) =
        object.as_object_mut().and_then(|o| o.remove("stringData"))
    {
        let data = object
            .as_object_mut()
            .map(|o| o.entry("data").or_insert_with(|| json!({})));
        if let Some(Value::Object(data)) = data {
            for (k, v) in string_data {
                let text = v.as_str().unwrap_or_default().to_string();
                data.insert(
                    k,
                    json!(base64::engine::general_purpose::STANDARD.encode(text)),
                );
            }
        }
    }
    if object.get("type").is_none_or(Value::is_null) {
        let previous = old
            .and_then(|o| o.get("type"))
            .cloned()
            .unwrap_or_else(|| json!("Opaque"));
        object["type"] = previous;
    }
}

fn service_defaults(state: &State, object: &mut Value) {
    if object.get("spec").is_none_or(|s| !s.is_object()) {
        object["spec"] = json!({});
    }
    let spec = &mut object["spec"];
    let service_type = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
        .to_string();
    spec["type"] = json!(service_type);
    if spec.get("sessionAffinity").is_none() {
        spec["sessionAffinity"] = json!("None");
    }
    if service_type != "ExternalName" && spec.get("clusterIP").is_none() {
        let count = state.list("services", None).len() as u64 + 1;
        let ip = format!("10.96.{}.{}", (count / 250) % 250, count % 250 + 1);
        spec["clusterIP"] = json!(ip);
        spec["clusterIPs"] = json!([ip]);
        spec["ipFamilies"] = json!(["IPv4"]);
        spec["ipFamilyPolicy"] = json!("SingleStack");
    }
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            port.entry("protocol").or_insert_with(|| json!("TCP"));
            if let Some(number) = port.get("port").cloned() {
                port.entry("targetPort").or_insert(number);
            }
        }
    }
    object["status"] = json!({"loadBalancer": {}});
}

fn deployment_defaults(object: &mut Value) {
    replicas_default(object);
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    spec.entry("strategy").or_insert_with(|| {
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    });
    spec.entry("revisionHistoryLimit").or_insert(json!(10));
    spec.entry("progressDeadlineSeconds").or_insert(json!(600));
}

fn replicas_default(object: &mut Value) {
    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
        spec.entry("replicas").or_insert(json!(1));
    }
}

/// MicroTime fields of a Lease must parse; they are stored as kube serializes them (6 fraction digits, UTC).
fn normalize_lease(rt: &ResourceType, object: &mut Value) -> Result<(), ApiError> {
    for field in ["acquireTime", "renewTime"] {
        let Some(Value::String(text)) = object.pointer(&format!("/spec/{field}")).cloned() else {
            continue;
        };
        let normalized = normalize_micro_time(&text).ok_or_else(|| {
            ApiError::bad_request(format!(
                "{kind} in version \"{version}\" cannot be handled as a {kind}: parsing time \"{text}\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"{rest}\" as \"{element}\"",
                kind = rt.kind,
                version = rt.version,
                rest = text,
                element = failing_layout_element(&text),
            ))
        })?;
        object["spec"][field] = json!(normalized);
    }
    Ok(())
}

/// Parses an RFC 3339 time and renders it with microseconds in UTC, as `metav1.MicroTime` does.
pub fn normalize_micro_time(text: &str) -> Option<String> {
    let timestamp: jiff::Timestamp = text.parse().ok()?;
    Some(timestamp.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string())
}

/// The layout element Go's time.Parse reports as failing, approximated from the first bad position.
fn failing_layout_element(text: &str) -> &'static str {
    const ELEMENTS: [(usize, &str); 6] = [
        (4, "2006"),
        (7, "-01"),
        (10, "-02"),
        (13, "T15"),
        (16, ":04"),
        (19, ":05"),
    ];
    let bytes = text.as_bytes();
    let year_ok = bytes.len() >= 4 && bytes[..4].iter().all(u8::is_ascii_digit);
    if !year_ok {
        return "2006";
    }
    for (end, element) in ELEMENTS.iter().skip(1) {
        if bytes.len() < *end {
            return element;
        }
    }
    "Z07:00"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micro_time_keeps_microseconds_and_uses_utc() {
        assert_eq!(
            normalize_micro_time("2026-01-02T03:04:07.000001Z").as_deref(),
            Some("2026-01-02T03:04:07.000001Z")
        );
        assert_eq!(
            normalize_micro_time("2026-01-02T04:04:07+01:00").as_deref(),
            Some("2026-01-02T03:04:07.000000Z")
        );
        assert!(normalize_micro_time("yesterday").is_none());
    }

    #[test]
    fn unparsable_year_is_reported_against_the_year_element() {
        assert_eq!(failing_layout_element("yesterday"), "2006");
    }

    #[test]
    fn string_data_is_encoded_into_data() {
        let mut secret = json!({"stringData": {"user": "admin"}, "data": {"pw": "c2VjcmV0"}});
        secret_defaults(&mut secret, None);
        assert_eq!(
            secret,
            json!({"data": {"pw": "c2VjcmV0", "user": "YWRtaW4="}, "type": "Opaque"})
        );
    }
}
