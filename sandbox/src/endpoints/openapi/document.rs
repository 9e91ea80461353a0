//! Building the OpenAPI documents from the served types: a v2 document (definitions and paths of
//! every group version) and one v3 document per group version, with kube-apiserver's
//! definition names, `x-kubernetes-group-version-kind` extensions and paths whose PATCH
//! operations list their query parameters (what kubectl checks to decide on client-side
//! validation). Custom resources get their structural schema (apiVersion, kind and metadata
//! filled in as the apiextensions server publishes them).

use std::collections::{BTreeMap, BTreeSet};

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use super::builtin;
use crate::endpoints::discovery::OPENAPI_VERSION;
use crate::resources::{Behaviour, Registry, ResourceType};

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const API_VERSION_DOC: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DOC: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
const METADATA_DOC: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// One served type with the name of its definition.
struct Served {
    rt: std::sync::Arc<ResourceType>,
    definition: String,
}

/// The v2 document and the v3 documents by group-version path (`api/v1`, `apis/apps/v1`).
pub struct Built {
    /// The Swagger 2.0 document.
    pub v2: Value,
    /// OpenAPI 3.0 documents per group version.
    pub v3: BTreeMap<String, Value>,
}

/// Builds every document for the types `registry` serves.
pub fn build(registry: &Registry) -> Built {
    let mut generator = SchemaSettings::draft07()
        .with(|s| s.transforms.clear())
        .into_generator();
    builtin::add_common(&mut generator);
    let mut served = Vec::new();
    let mut custom = Map::new();
    for rt in all_types(registry) {
        let definition = if rt.custom {
            let name = custom_definition_name(&rt);
            custom.insert(name.clone(), custom_schema(&rt));
            name
        } else {
            match builtin::add_kind(&mut generator, &rt.group, &rt.kind) {
                Some(name) => name,
                None => continue,
            }
        };
        served.push(Served { rt, definition });
    }
    let mut definitions = generator.take_definitions(true);
    untype_any_value_definitions(&mut definitions);
    definitions.extend(custom);
    for value in definitions.values_mut() {
        replace_bool_schemas(value);
    }
    for s in &served {
        if let Some(definition) = definitions.get_mut(&s.definition) {
            let gvk = json!([{"group": s.rt.group, "kind": s.rt.kind, "version": s.rt.version}]);
            definition["x-kubernetes-group-version-kind"] = gvk;
        }
    }
    let mut paths = Map::new();
    let mut by_group_version: BTreeMap<String, Vec<&Served>> = BTreeMap::new();
    for s in &served {
        paths.extend(v2_paths(s));
        by_group_version
            .entry(group_version_path(&s.rt))
            .or_default()
            .push(s);
    }
    let v2 = json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": OPENAPI_VERSION},
        "paths": paths,
        "definitions": definitions,
    });
    let v3 = by_group_version
        .into_iter()
        .map(|(path, types)| {
            let document = v3_document(&types, &definitions);
            (path, document)
        })
        .collect();
    Built { v2, v3 }
}

/// The apiextensions types that hold any JSON value (`JSON`, the `…OrBool`, `…OrArray` and
/// `…OrStringArray` unions): kube-apiserver publishes them without a `type` (any value), while
/// k8s-openapi's schemas say `object`, which makes kubectl's client-side validation reject a
/// CRD whose `default` or `example` is a string or a number.
fn untype_any_value_definitions(definitions: &mut Map<String, Value>) {
    const PREFIX: &str = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.";
    for name in [
        "JSON",
        "JSONSchemaPropsOrBool",
        "JSONSchemaPropsOrArray",
        "JSONSchemaPropsOrStringArray",
    ] {
        if let Some(Value::Object(definition)) = definitions.get_mut(&format!("{PREFIX}{name}")) {
            definition.remove("type");
        }
    }
}

fn all_types(registry: &Registry) -> Vec<std::sync::Arc<ResourceType>> {
    let mut out = registry.group_version_types("", "v1");
    for (group, versions) in registry.groups() {
        for version in versions {
            out.extend(registry.group_version_types(&group, &version));
        }
    }
    out
}

/// `api/v1` or `apis/<group>/<version>`.
pub fn group_version_path(rt: &ResourceType) -> String {
    if rt.group.is_empty() {
        format!("api/{}", rt.version)
    } else {
        format!("apis/{}/{}", rt.group, rt.version)
    }
}

/// `com.example.print.v1.Widget` for `widgets.print.example.com/v1`, as kube-apiserver names them.
fn custom_definition_name(rt: &ResourceType) -> String {
    let reversed: Vec<&str> = rt.group.split('.').rev().collect();
    format!("{}.{}.{}", reversed.join("."), rt.version, rt.kind)
}

/// A custom resource's schema as published: its structural schema with apiVersion, kind and a
/// reference to ObjectMeta, value validations (allOf/anyOf/oneOf/not) left out, and objects that
/// preserve unknown fields left open (so that clients do not reject the fields they keep).
fn custom_schema(rt: &ResourceType) -> Value {
    let mut schema = rt
        .schema
        .clone()
        .unwrap_or_else(|| json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
    publishable(&mut schema);
    if !schema.is_object() {
        schema = json!({});
    }
    schema["type"] = json!("object");
    if schema.get("properties").is_none_or(|p| !p.is_object()) {
        schema["properties"] = json!({});
    }
    let properties = &mut schema["properties"];
    properties["apiVersion"] = json!({"description": API_VERSION_DOC, "type": "string"});
    properties["kind"] = json!({"description": KIND_DOC, "type": "string"});
    properties["metadata"] =
        json!({"$ref": format!("#/definitions/{OBJECT_META}"), "description": METADATA_DOC});
    schema
}

fn publishable(schema: &mut Value) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    for key in ["allOf", "anyOf", "oneOf", "not", "nullable"] {
        map.remove(key);
    }
    let preserve = map.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    let int_or_string = map.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    if preserve || int_or_string {
        for key in [
            "type",
            "properties",
            "required",
            "items",
            "additionalProperties",
        ] {
            map.remove(key);
        }
        return;
    }
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        properties.values_mut().for_each(publishable);
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = map.get_mut(key) {
            publishable(sub);
        }
    }
}

/// `true`/`false` schemas (which OpenAPI v2 cannot express) as `{}` and `{"not": {}}`-free `{}`.
fn replace_bool_schemas(value: &mut Value) {
    match value {
        Value::Bool(_) => *value = json!({}),
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                match key.as_str() {
                    "properties" => {
                        if let Value::Object(properties) = child {
                            properties.values_mut().for_each(replace_bool_schemas);
                        }
                    }
                    "items" | "additionalProperties" if child.is_object() => {
                        replace_bool_schemas(child)
                    }
                    "items" => replace_bool_schemas(child),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// The URL path of a type's collection and of one object.
fn resource_paths(rt: &ResourceType) -> (String, String) {
    let prefix = if rt.group.is_empty() {
        format!("/api/{}", rt.version)
    } else {
        format!("/apis/{}/{}", rt.group, rt.version)
    };
    let collection = if rt.namespaced {
        format!("{prefix}/namespaces/{{namespace}}/{}", rt.plural)
    } else {
        format!("{prefix}/{}", rt.plural)
    };
    let item = format!("{collection}/{{name}}");
    (collection, item)
}

fn query(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "type": "string", "uniqueItems": true, "description": description})
}

fn path_param(name: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "type": "string", "uniqueItems": true,
        "description": format!("{name} of the resource")})
}

const DRY_RUN: &str = "When present, indicates that modifications should not be persisted.";
const FIELD_MANAGER: &str =
    "fieldManager is a name associated with the actor or entity that is making these changes.";
const FORCE: &str = "Force is going to \"force\" Apply requests.";

/// The v2 paths of one type: get/put/patch/delete of an object and list/post of the collection
/// (post only for reviews), each with the GVK extension and its query parameters. PATCH lists
/// `dryRun`, `fieldManager` and `force` (no `fieldValidation`, which v1.24 does not serve).
fn v2_paths(s: &Served) -> Map<String, Value> {
    let rt = &s.rt;
    let gvk = json!({"group": rt.group, "kind": rt.kind, "version": rt.version});
    let reference = json!({"$ref": format!("#/definitions/{}", s.definition)});
    let operation = |action: &str, parameters: Vec<Value>| {
        json!({
            "consumes": ["*/*"],
            "produces": ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"],
            "schemes": ["https"],
            "operationId": format!("{action}{}", rt.kind),
            "parameters": parameters,
            "responses": {"200": {"description": "OK", "schema": reference}, "401": {"description": "Unauthorized"}},
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
        })
    };
    let body = json!({"name": "body", "in": "body", "required": true, "schema": reference});
    let (collection_path, item_path) = resource_paths(rt);
    let mut scope = Vec::new();
    if rt.namespaced {
        scope.push(path_param("namespace"));
    }
    let mut collection = Map::new();
    collection.insert(
        "post".into(),
        operation(
            "post",
            vec![
                body.clone(),
                query("dryRun", DRY_RUN),
                query("fieldManager", FIELD_MANAGER),
            ],
        ),
    );
    collection.insert("parameters".into(), json!(scope));
    let mut out = Map::new();
    if rt.behaviour == Behaviour::Review {
        out.insert(collection_path, Value::Object(collection));
        return out;
    }
    collection.insert("get".into(), operation("list", Vec::new()));
    let mut item = Map::new();
    item.insert("get".into(), operation("get", Vec::new()));
    item.insert(
        "put".into(),
        operation(
            "put",
            vec![
                body.clone(),
                query("dryRun", DRY_RUN),
                query("fieldManager", FIELD_MANAGER),
            ],
        ),
    );
    let patch_body =
        json!({"name": "body", "in": "body", "required": true, "schema": {"type": "object"}});
    item.insert(
        "patch".into(),
        operation(
            "patch",
            vec![
                patch_body,
                query("dryRun", DRY_RUN),
                query("fieldManager", FIELD_MANAGER),
                json!({"name": "force", "in": "query", "type": "boolean", "uniqueItems": true, "description": FORCE}),
            ],
        ),
    );
    item.insert(
        "delete".into(),
        operation("delete", vec![query("dryRun", DRY_RUN)]),
    );
    let mut item_scope = scope;
    item_scope.push(path_param("name"));
    item.insert("parameters".into(), json!(item_scope));
    out.insert(collection_path, Value::Object(collection));
    out.insert(item_path, Value::Object(item));
    out
}

/// A v3 document of one group version: its paths (v2 operations in v3 shape) and the schemas of
/// its kinds with every definition they reference.
fn v3_document(types: &[&Served], definitions: &Map<String, Value>) -> Value {
    let mut paths = Map::new();
    let mut wanted: Vec<String> = Vec::new();
    for s in types {
        wanted.push(s.definition.clone());
        for (path, item) in v2_paths(s) {
            paths.insert(path, v3_path_item(&item));
        }
    }
    let mut schemas = Map::new();
    let mut seen = BTreeSet::new();
    while let Some(name) = wanted.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let Some(schema) = definitions.get(&name) else {
            continue;
        };
        collect_refs(schema, &mut wanted);
        schemas.insert(name, v3_schema(schema));
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": OPENAPI_VERSION},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}

fn collect_refs(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(name) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/definitions/"))
            {
                out.push(name.to_string());
            }
            map.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// A v2 schema in v3 form: references point into components, and a reference with siblings is
/// wrapped in `allOf`, as kube-apiserver publishes it.
fn v3_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                if key == "$ref" {
                    continue;
                }
                out.insert(key.clone(), v3_schema(value));
            }
            if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                let reference = reference.replace("#/definitions/", "#/components/schemas/");
                if out.is_empty() {
                    out.insert("$ref".into(), json!(reference));
                } else {
                    out.insert("allOf".into(), json!([{"$ref": reference}]));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(v3_schema).collect()),
        other => other.clone(),
    }
}

/// A v2 path item in v3 form: parameters carry a schema, bodies become request bodies.
fn v3_path_item(item: &Value) -> Value {
    let parameter = |p: &Value| {
        let mut p = p.clone();
        if let Some(map) = p.as_object_mut() {
            let ty = map.remove("type").unwrap_or(json!("string"));
            let unique = map.remove("uniqueItems");
            let mut schema = json!({"type": ty});
            if let Some(unique) = unique {
                schema["uniqueItems"] = unique;
            }
            map.insert("schema".into(), schema);
        }
        p
    };
    let mut out = Map::new();
    for (key, value) in item.as_object().into_iter().flatten() {
        if key == "parameters" {
            let params: Vec<Value> = value
                .as_array()
                .into_iter()
                .flatten()
                .map(parameter)
                .collect();
            out.insert(key.clone(), json!(params));
            continue;
        }
        let mut operation = Map::new();
        for (field, v) in value.as_object().into_iter().flatten() {
            match field.as_str() {
                "consumes" | "produces" | "schemes" => {}
                "parameters" => {
                    let mut params = Vec::new();
                    for p in v.as_array().into_iter().flatten() {
                        if p["in"] == "body" {
                            operation.insert(
                                "requestBody".into(),
                                json!({"content": {"application/json": {"schema": v3_schema(&p["schema"])}}, "required": true}),
                            );
                        } else {
                            params.push(parameter(p));
                        }
                    }
                    operation.insert("parameters".into(), json!(params));
                }
                "responses" => {
                    let ok = v3_schema(&v["200"]["schema"]);
                    operation.insert(
                        "responses".into(),
                        json!({"200": {"description": "OK", "content": {"application/json": {"schema": ok}}}, "401": {"description": "Unauthorized"}}),
                    );
                }
                _ => {
                    operation.insert(field.clone(), v.clone());
                }
            }
        }
        out.insert(key.clone(), Value::Object(operation));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_definitions_are_named_by_reversed_group() {
        let rt = ResourceType {
            group: "core.gardener.cloud".into(),
            version: "v1beta1".into(),
            kind: "ControllerInstallation".into(),
            ..crate::resources::builtin_types().remove(0)
        };
        assert_eq!(
            custom_definition_name(&rt),
            "cloud.gardener.core.v1beta1.ControllerInstallation"
        );
    }

    #[test]
    fn published_schemas_leave_preserved_and_int_or_string_fields_open() {
        let mut schema = json!({"type": "object", "properties": {
            "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "properties": {"a": {"type": "string"}}},
            "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "name": {"type": "string", "nullable": true},
        }});
        publishable(&mut schema);
        assert_eq!(
            schema["properties"],
            json!({
                "config": {"x-kubernetes-preserve-unknown-fields": true},
                "port": {"x-kubernetes-int-or-string": true},
                "name": {"type": "string"},
            })
        );
    }

    #[test]
    fn references_with_siblings_become_all_of_in_v3() {
        let v2 = json!({"$ref": "#/definitions/X", "description": "d"});
        assert_eq!(
            v3_schema(&v2),
            json!({"description": "d", "allOf": [{"$ref": "#/components/schemas/X"}]})
        );
        assert_eq!(
            v3_schema(&json!({"$ref": "#/definitions/X"})),
            json!({"$ref": "#/components/schemas/X"})
        );
    }
}
