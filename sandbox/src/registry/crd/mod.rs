//! CustomResourceDefinitions: validating them, their status, the types they serve, and the
//! strategy of custom objects ([`schema`] prunes, defaults and validates them).

use serde_json::{Map, Value, json};

pub mod schema;

use super::strategy::{Context, Strategy};
use crate::object::string_list;
use crate::resources::{Behaviour, Registry, ResourceType, Subresource};
use crate::status::{ApiError, Cause};
use crate::storage::State;

/// Storage key of CRDs.
pub const CRD_KEY: &str = "customresourcedefinitions.apiextensions.k8s.io";
/// Finalizer that keeps a CRD until its objects are gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// The registry for the CRDs stored in `state`.
pub fn registry_for(state: &State) -> Registry {
    Registry::new(
        state
            .list(CRD_KEY, None)
            .iter()
            .flat_map(|crd| types_of(crd))
            .collect(),
    )
}

/// The served types of one CRD (one per served version).
pub fn types_of(crd: &Value) -> Vec<ResourceType> {
    let spec = &crd["spec"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let names = &spec["names"];
    let kind = text(&names["kind"]);
    spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["served"].as_bool().unwrap_or(true))
        .map(|version| ResourceType {
            group: text(&spec["group"]),
            version: text(&version["name"]),
            kind: kind.clone(),
            list_kind: names["listKind"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| format!("{kind}List")),
            plural: text(&names["plural"]),
            singular: names["singular"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| kind.to_lowercase()),
            namespaced: spec["scope"].as_str() != Some("Cluster"),
            short_names: string_list(names.get("shortNames")),
            categories: string_list(names.get("categories")),
            status_subresource: version.pointer("/subresources/status").is_some(),
            extra_subresources: Vec::new(),
            generation: true,
            custom: true,
            schema: version.pointer("/schema/openAPIV3Schema").cloned(),
            behaviour: Behaviour::Plain,
            printer_columns: version
                .get("additionalPrinterColumns")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            selectable_fields: version
                .get("selectableFields")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                .map(|path| path.trim_start_matches('.').to_string())
                .collect(),
        })
        .collect()
}

/// Validates a CRD and fills its defaults and its (always accepted) status.
pub fn prepare(rt: &ResourceType, crd: &mut Value) -> Result<(), ApiError> {
    let text = |pointer: &str| {
        crd.pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let name = text("/metadata/name");
    let kind = text("/spec/names/kind");
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let causes = definition_causes(
        &name,
        &text("/spec/group"),
        &text("/spec/names/plural"),
        &kind,
        &versions,
    );
    if !causes.is_empty() {
        return Err(ApiError::invalid(
            rt,
            "CustomResourceDefinition",
            &name,
            causes,
        ));
    }
    let mut names = crd["spec"]["names"]
        .as_object_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    names
        .entry("singular")
        .or_insert_with(|| json!(kind.to_lowercase()));
    names
        .entry("listKind")
        .or_insert_with(|| json!(format!("{kind}List")));
    crd["spec"]["names"] = Value::Object(names.clone());
    if crd.pointer("/spec/conversion").is_none() {
        crd["spec"]["conversion"] = json!({"strategy": "None"});
    }
    crd["status"] = accepted_status(crd, names, &versions);
    Ok(())
}

/// The 422 causes of a CRD's name, kind and versions.
fn definition_causes(
    name: &str,
    group: &str,
    plural: &str,
    kind: &str,
    versions: &[Value],
) -> Vec<Cause> {
    let mut causes = Vec::new();
    if name != format!("{plural}.{group}") {
        causes.push(Cause::new(
            "metadata.name",
            "FieldValueInvalid",
            format!("Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    if kind.is_empty() {
        causes.push(Cause::new(
            "spec.names.kind",
            "FieldValueRequired",
            "Required value",
        ));
    }
    if versions.is_empty() {
        causes.push(Cause::new("spec.versions", "FieldValueInvalid", "Invalid value: []apiextensions.CustomResourceDefinitionVersion(nil): must have exactly one version marked as storage version"));
    } else if versions
        .iter()
        .filter(|v| v["storage"].as_bool() == Some(true))
        .count()
        != 1
    {
        causes.push(Cause::new(
            "spec.versions",
            "FieldValueInvalid",
            "Invalid value: \"\": must have exactly one version marked as storage version",
        ));
    }
    causes
}

/// The status of an accepted CRD: NamesAccepted and Established (keeping their transition times),
/// the accepted names and every storage version it ever had.
fn accepted_status(crd: &Value, names: Map<String, Value>, versions: &[Value]) -> Value {
    let now = crate::object::now_rfc3339();
    let previous = crd.pointer("/status/conditions").cloned();
    let transition = |ty: &str| -> String {
        previous
            .as_ref()
            .and_then(Value::as_array)
            .and_then(|c| c.iter().find(|c| c["type"] == ty))
            .and_then(|c| c["lastTransitionTime"].as_str())
            .map(str::to_string)
            .unwrap_or_else(|| now.clone())
    };
    let mut stored_versions: Vec<Value> = crd
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for version in versions
        .iter()
        .filter(|v| v["storage"].as_bool() == Some(true))
        .map(|v| v["name"].clone())
    {
        if !stored_versions.contains(&version) {
            stored_versions.push(version);
        }
    }
    json!({
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "lastTransitionTime": transition("NamesAccepted"), "reason": "NoConflicts", "message": "no conflicts found"},
            {"type": "Established", "status": "True", "lastTransitionTime": transition("Established"), "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"},
        ],
        "acceptedNames": Value::Object(names),
        "storedVersions": stored_versions,
    })
}

/// CustomResourceDefinition rules: validation and status on create/update, the cleanup finalizer,
/// and the served types following every write and removal.
pub struct Definitions;

impl Strategy for Definitions {
    fn prepare_create(&self, ctx: &Context<'_>, object: &mut Value) -> Result<(), ApiError> {
        prepare(ctx.rt, object)
    }

    fn prepare_update(
        &self,
        ctx: &Context<'_>,
        _old: &Value,
        new: &mut Value,
        subresource: &Subresource,
    ) -> Result<(), ApiError> {
        if *subresource == Subresource::None {
            prepare(ctx.rt, new)?;
        }
        Ok(())
    }

    fn deletion_finalizers(&self) -> &'static [&'static str] {
        &[CLEANUP_FINALIZER]
    }

    fn after_write(&self, state: &mut State, _object: &Value) {
        let registry = registry_for(state);
        state.set_registry(registry);
    }

    fn after_remove(&self, state: &mut State, object: &Value) {
        for custom in types_of(object) {
            state.drop_resource(&custom.storage_key());
        }
        let registry = registry_for(state);
        state.set_registry(registry);
    }
}

/// Custom objects: pruned, defaulted and validated against their version's structural schema.
pub struct CustomObjects;

impl Strategy for CustomObjects {
    fn selectable_fields<'r>(&self, rt: &'r ResourceType) -> Vec<&'r str> {
        rt.selectable_fields.iter().map(String::as_str).collect()
    }

    fn prepare_create(&self, ctx: &Context<'_>, object: &mut Value) -> Result<(), ApiError> {
        schema::admit(ctx.rt, object)
    }

    fn prepare_update(
        &self,
        ctx: &Context<'_>,
        _old: &Value,
        new: &mut Value,
        _subresource: &Subresource,
    ) -> Result<(), ApiError> {
        schema::admit(ctx.rt, new)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A namespaced `Widget` type with defaults, a preserved field and a status subresource;
    /// shared with the schema tests.
    pub(crate) fn widget_type() -> ResourceType {
        let crd = json!({
            "metadata": {"name": "widgets.kc.example.com"},
            "spec": {
                "group": "kc.example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
                "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {
                            "size": {"type": "integer", "default": 1},
                            "color": {"type": "string"},
                            "providerConfig": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                        "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}}}}]
            }
        });
        types_of(&crd).remove(0)
    }

    #[test]
    fn crd_types_carry_names_and_subresources() {
        let rt = widget_type();
        assert_eq!(
            (
                rt.plural.as_str(),
                rt.singular.as_str(),
                rt.list_kind.as_str()
            ),
            ("widgets", "widget", "WidgetList")
        );
        assert!(rt.status_subresource && rt.namespaced && rt.custom);
    }
}
