//! Checks the generated CRDs: structural schemas, names/columns/scope matching gardenlet's CRDs,
//! objects valid under upstream CRDs valid under ours, and the YAML output.

// Test helpers outside #[test] fns: a panic is how they report a broken fixture.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::Deserialize;
use serde_json::Value;

use seedlet_api::crds::{garden_crds, seed_crds, structural_violations, to_yaml};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn documents(path: &str) -> Vec<Value> {
    let text = fs::read_to_string(fixtures().join(path)).unwrap();
    serde_yaml::Deserializer::from_str(&text)
        .map(|document| Value::deserialize(document).unwrap())
        .filter(|value| !value.is_null())
        .collect()
}

fn upstream_crds() -> BTreeMap<String, CustomResourceDefinition> {
    let dir = fixtures().join("upstream/crds");
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let text = fs::read_to_string(&path).unwrap();
        let crd: CustomResourceDefinition = serde_yaml::from_str(&text).unwrap();
        out.insert(crd.metadata.name.clone().unwrap(), crd);
    }
    out
}

fn by_name(crds: Vec<CustomResourceDefinition>) -> BTreeMap<String, CustomResourceDefinition> {
    crds.into_iter()
        .map(|crd| (crd.metadata.name.clone().unwrap(), crd))
        .collect()
}

/// The schema of `version` in `crd`, as JSON.
fn schema(crd: &CustomResourceDefinition, version: &str) -> Value {
    let version = crd
        .spec
        .versions
        .iter()
        .find(|v| v.name == version)
        .unwrap();
    serde_json::to_value(
        version
            .schema
            .as_ref()
            .unwrap()
            .open_api_v3_schema
            .as_ref()
            .unwrap(),
    )
    .unwrap()
}

/// A small validator for what kube-apiserver checks and prunes: types, required fields, enums,
/// and fields that are neither declared nor preserved (they would be pruned, i.e. lost).
fn validate(value: &Value, schema: &Value, path: &str, errors: &mut Vec<String>) {
    let flag = |key: &str| schema.get(key).and_then(Value::as_bool).unwrap_or(false);
    if value.is_null() {
        if !flag("nullable") {
            errors.push(format!("{path}: null not allowed"));
        }
        return;
    }
    if flag("x-kubernetes-int-or-string") {
        if !(value.is_string() || value.is_i64() || value.is_u64()) {
            errors.push(format!("{path}: expected int-or-string"));
        }
        return;
    }
    let type_ok = match schema.get("type").and_then(Value::as_str) {
        None => true,
        Some("object") => value.is_object(),
        Some("array") => value.is_array(),
        Some("string") => value.is_string(),
        Some("integer") => value.is_i64() || value.is_u64(),
        Some("number") => value.is_number(),
        Some("boolean") => value.is_boolean(),
        Some(other) => {
            errors.push(format!("{path}: unknown schema type {other}"));
            false
        }
    };
    if !type_ok {
        errors.push(format!("{path}: expected {}, got {value}", schema["type"]));
        return;
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        errors.push(format!("{path}: {value} not in enum"));
    }
    if let Some(map) = value.as_object() {
        for required in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = required.as_str().unwrap();
            if !map.contains_key(key) {
                errors.push(format!("{path}.{key}: required"));
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (key, child) in map {
            if path.is_empty() && ["apiVersion", "kind", "metadata"].contains(&key.as_str()) {
                continue;
            }
            let child_path = format!("{path}.{key}");
            if let Some(property) = properties.and_then(|p| p.get(key)) {
                validate(child, property, &child_path, errors);
            } else if let Some(additional) =
                schema.get("additionalProperties").filter(|a| a.is_object())
            {
                validate(child, additional, &child_path, errors);
            } else if !flag("x-kubernetes-preserve-unknown-fields") {
                errors.push(format!("{child_path}: unknown field would be pruned"));
            }
        }
    }
    if let (Some(items), Some(schema_items)) = (value.as_array(), schema.get("items")) {
        for (index, item) in items.iter().enumerate() {
            validate(item, schema_items, &format!("{path}[{index}]"), errors);
        }
    }
}

/// Validates `object` against the CRD (looked up by group and kind) and version in `crds`.
fn validate_against(
    crds: &BTreeMap<String, CustomResourceDefinition>,
    object: &Value,
) -> Vec<String> {
    let (group, version) = object["apiVersion"]
        .as_str()
        .unwrap()
        .split_once('/')
        .unwrap();
    let kind = object["kind"].as_str().unwrap();
    let crd = crds
        .values()
        .find(|crd| crd.spec.group == group && crd.spec.names.kind == kind)
        .unwrap_or_else(|| panic!("no CRD for {group}/{kind}"));
    let mut errors = Vec::new();
    validate(object, &schema(crd, version), "", &mut errors);
    errors
}

#[test]
fn every_generated_crd_is_structural() {
    for crd in seed_crds().into_iter().chain(garden_crds()) {
        let problems = structural_violations(&crd);
        assert!(
            problems.is_empty(),
            "{}: {problems:#?}",
            crd.metadata.name.unwrap()
        );
    }
}

#[test]
fn upstream_crds_pass_the_structural_checker() {
    for (name, crd) in upstream_crds() {
        let problems = structural_violations(&crd);
        assert!(problems.is_empty(), "{name}: {problems:#?}");
    }
}

#[test]
fn structural_checker_reports_non_structural_schemas() {
    let mut crd = seed_crds().remove(0);
    let version = &mut crd.spec.versions[0];
    let schema = version
        .schema
        .as_mut()
        .unwrap()
        .open_api_v3_schema
        .as_mut()
        .unwrap();
    let mut bad: Value = serde_json::json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "untyped": {"description": "no type"},
                    "ref": {"$ref": "#/definitions/Foo"},
                    "nullable": {"nullable": true, "x-kubernetes-preserve-unknown-fields": true},
                    "list": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
                    "either": {"type": "string", "anyOf": [{"type": "string"}]}
                }
            }
        }
    });
    *schema = serde_json::from_value(bad.take()).unwrap();
    let problems = structural_violations(&crd).join("\n");
    for expected in [
        ".spec.untyped: missing type",
        ".spec.ref: forbidden keyword $ref",
        ".spec.nullable: nullable without type",
        ".spec.list: uniqueItems must not be true",
        ".spec.either.anyOf: type inside a logical junctor",
    ] {
        assert!(
            problems.contains(expected),
            "missing {expected:?} in:\n{problems}"
        );
    }
}

#[test]
fn seed_crds_match_gardenlet_names_scope_columns_and_subresources() {
    let ours = by_name(seed_crds());
    let upstream = upstream_crds();
    for (name, theirs) in &upstream {
        let mine = ours
            .get(name)
            .unwrap_or_else(|| panic!("missing CRD {name}"));
        assert_eq!(mine.spec.group, theirs.spec.group, "{name}");
        assert_eq!(mine.spec.scope, theirs.spec.scope, "{name} scope");
        assert_eq!(mine.spec.names.kind, theirs.spec.names.kind, "{name}");
        assert_eq!(mine.spec.names.plural, theirs.spec.names.plural, "{name}");
        assert_eq!(
            mine.spec.names.singular, theirs.spec.names.singular,
            "{name}"
        );
        assert_eq!(
            mine.spec.names.list_kind, theirs.spec.names.list_kind,
            "{name}"
        );
        assert_eq!(
            mine.spec.names.short_names, theirs.spec.names.short_names,
            "{name} short names"
        );
        let (mine_v, theirs_v) = (&mine.spec.versions[0], &theirs.spec.versions[0]);
        assert_eq!(mine_v.name, theirs_v.name, "{name}");
        assert!(mine_v.served && mine_v.storage, "{name}");
        assert_eq!(
            mine_v.subresources, theirs_v.subresources,
            "{name} subresources"
        );
        let columns = |v: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionVersion| {
            v.additional_printer_columns
                .iter()
                .flatten()
                .map(|c| (c.name.clone(), c.json_path.clone(), c.type_.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(columns(mine_v), columns(theirs_v), "{name} printer columns");
    }
    assert_eq!(ours.len(), upstream.len());
}

#[test]
fn objects_valid_under_upstream_crds_are_valid_under_ours() {
    let ours = by_name(seed_crds());
    let upstream = upstream_crds();
    let objects: Vec<Value> = documents("own/extensions.yaml")
        .into_iter()
        .chain(documents("own/seed-objects.yaml"))
        .collect();
    for object in &objects {
        let kind = object["kind"].as_str().unwrap().to_owned();
        let upstream_errors = validate_against(&upstream, object);
        assert!(
            upstream_errors.is_empty(),
            "fixture {kind} invalid upstream: {upstream_errors:#?}"
        );
        let our_errors = validate_against(&ours, object);
        assert!(
            our_errors.is_empty(),
            "{kind} invalid under seedlet's CRD: {our_errors:#?}"
        );
    }
}

#[test]
fn garden_examples_are_valid_under_garden_crds() {
    let ours = by_name(garden_crds());
    let files = [
        "upstream/25-controllerdeployment.yaml",
        "upstream/25-controllerinstallation.yaml",
        "upstream/25-controllerregistration.yaml",
        "upstream/30-cloudprofile.yaml",
        "upstream/50-seed.yaml",
        "upstream/90-shoot.yaml",
        "own/seed-with-status.yaml",
        "own/shoot-with-status.yaml",
        "own/controllerinstallation-with-status.yaml",
        "own/controllerdeployment-v1beta1.yaml",
        "own/controllerdeployment-v1-raw.yaml",
        "own/controllerregistration-full.yaml",
        "own/shootstate.yaml",
        "own/core-misc.yaml",
    ];
    for file in files {
        for object in documents(file) {
            let errors = validate_against(&ours, &object);
            assert!(errors.is_empty(), "{file} {}: {errors:#?}", object["kind"]);
        }
    }
}

#[test]
fn validator_rejects_wrong_types_and_missing_required_fields() {
    let ours = by_name(seed_crds());
    let object = serde_json::json!({
        "apiVersion": "extensions.gardener.cloud/v1alpha1",
        "kind": "Infrastructure",
        "metadata": {"name": "x", "namespace": "y"},
        "spec": {"class": 3},
        "status": {"conditions": [{"type": "A"}]}
    });
    let errors = validate_against(&ours, &object).join("\n");
    assert!(errors.contains(".spec.type: required"), "{errors}");
    assert!(errors.contains(".spec.class: expected"), "{errors}");
    assert!(
        errors.contains(".status.conditions[0].status: required"),
        "{errors}"
    );
}

#[test]
fn controller_deployment_crd_serves_v1_and_v1beta1_with_v1_storage() {
    let crds = by_name(garden_crds());
    let crd = &crds["controllerdeployments.core.gardener.cloud"];
    let versions: Vec<_> = crd
        .spec
        .versions
        .iter()
        .map(|v| (v.name.as_str(), v.served, v.storage))
        .collect();
    assert_eq!(versions, [("v1", true, true), ("v1beta1", true, false)]);
    assert_eq!(schema(crd, "v1"), schema(crd, "v1beta1"));
}

#[test]
fn garden_crds_cover_every_core_kind_with_the_right_scope() {
    let crds = by_name(garden_crds());
    let expected = [
        ("seeds", "Cluster"),
        ("shoots", "Namespaced"),
        ("cloudprofiles", "Cluster"),
        ("namespacedcloudprofiles", "Namespaced"),
        ("controllerregistrations", "Cluster"),
        ("controllerdeployments", "Cluster"),
        ("controllerinstallations", "Cluster"),
        ("shootstates", "Namespaced"),
        ("backupbuckets", "Cluster"),
        ("backupentries", "Namespaced"),
        ("projects", "Cluster"),
        ("quotas", "Namespaced"),
        ("secretbindings", "Namespaced"),
        ("exposureclasses", "Cluster"),
        ("workloadidentities.security", "Namespaced"),
    ];
    for (plural, scope) in expected {
        let name = match plural.strip_suffix(".security") {
            Some(plural) => format!("{plural}.security.gardener.cloud"),
            None => format!("{plural}.core.gardener.cloud"),
        };
        let crd = &crds[&name];
        assert_eq!(crd.spec.scope, scope, "{plural}");
    }
    let other_groups = [
        "credentialsbindings.security.gardener.cloud",
        "managedseeds.seedmanagement.gardener.cloud",
        "managedseedsets.seedmanagement.gardener.cloud",
        "gardenlets.seedmanagement.gardener.cloud",
    ];
    for name in other_groups {
        assert_eq!(crds[name].spec.scope, "Namespaced", "{name}");
    }

    assert_eq!(
        crds["bastions.operations.gardener.cloud"].spec.scope,
        "Namespaced"
    );
    assert_eq!(crds.len(), expected.len() + other_groups.len() + 1);
    let status = |name: &str| {
        crds[name].spec.versions[0]
            .subresources
            .as_ref()
            .and_then(|s| s.status.as_ref())
            .is_some()
    };
    assert!(status("seeds.core.gardener.cloud"));
    assert!(status("controllerinstallations.core.gardener.cloud"));
    assert!(!status("shootstates.core.gardener.cloud"));
}

#[test]
fn yaml_output_parses_back_into_the_same_crds() {
    for crds in [seed_crds(), garden_crds()] {
        let yaml = to_yaml(&crds).unwrap();
        assert!(yaml.starts_with("---\n"));
        let parsed: Vec<CustomResourceDefinition> = serde_yaml::Deserializer::from_str(&yaml)
            .map(|document| CustomResourceDefinition::deserialize(document).unwrap())
            .collect();
        assert_eq!(parsed, crds);
    }
}

/// `.a.b[0].c` as its field names (`[..]` steps descend into array items); escaped dots
/// (`labels.x\.io/y`) stay in their name.
fn column_steps(path: &str) -> Vec<(String, bool)> {
    let mut steps = Vec::new();
    let (mut name, mut depth, mut escaped) = (String::new(), 0usize, false);
    let mut items = false;
    for c in path.trim_start_matches('.').chars() {
        match c {
            '\\' if depth == 0 => escaped = true,
            '.' if depth == 0 && !escaped => {
                steps.push((std::mem::take(&mut name), std::mem::take(&mut items)));
            }
            '[' => {
                depth += 1;
                items = true;
            }
            ']' => depth -= 1,
            _ if depth > 0 => {}
            _ => {
                escaped = false;
                name.push(c);
            }
        }
    }
    steps.push((name, items));
    steps
}

/// Whether `schema` declares the field at `steps` (or preserves unknown fields on the way).
fn declares(schema: &Value, steps: &[(String, bool)]) -> bool {
    let Some(((name, items), rest)) = steps.split_first() else {
        return true;
    };
    if schema["x-kubernetes-preserve-unknown-fields"] == Value::Bool(true)
        && schema.get("properties").is_none()
    {
        return true;
    }
    let Some(mut field) = schema["properties"].get(name.as_str()) else {
        return false;
    };
    if *items {
        field = &field["items"];
    }
    declares(field, rest)
}

#[test]
fn printer_columns_read_declared_fields_and_no_wildcard_list() {
    for crd in garden_crds() {
        let name = crd.metadata.name.clone().unwrap();
        for version in &crd.spec.versions {
            let schema = schema(&crd, &version.name);
            for column in version.additional_printer_columns.iter().flatten() {
                let path = &column.json_path;
                // kube-apiserver prints only the first of several matches.
                assert!(!path.contains("[*]"), "{name} {}: {path}", column.name);
                if path.starts_with(".metadata.") {
                    continue;
                }
                assert!(
                    declares(&schema, &column_steps(path)),
                    "{name} {} column reads {path}, which the schema does not declare",
                    column.name
                );
            }
        }
    }
}

#[test]
fn shoot_and_registration_columns_follow_gardener_s_tables() {
    let crds = by_name(garden_crds());
    let columns = |name: &str| -> Vec<(String, String)> {
        crds[name].spec.versions[0]
            .additional_printer_columns
            .iter()
            .flatten()
            .map(|c| (c.name.clone(), c.json_path.clone()))
            .collect()
    };
    let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(n, p)| ((*n).to_owned(), (*p).to_owned()))
            .collect()
    };
    assert_eq!(
        columns("shoots.core.gardener.cloud"),
        pairs(&[
            ("Cloud Profile", ".spec.cloudProfile.name"),
            ("Provider", ".spec.provider.type"),
            ("Region", ".spec.region"),
            ("K8S Version", ".spec.kubernetes.version"),
            ("Seed", ".spec.seedName"),
            ("Hibernated", ".status.hibernated"),
            ("Last Operation", ".status.lastOperation.type"),
            ("Operation State", ".status.lastOperation.state"),
            ("Status", ".metadata.labels.shoot\\.gardener\\.cloud/status"),
            ("Age", ".metadata.creationTimestamp"),
        ])
    );
    assert_eq!(
        columns("controllerregistrations.core.gardener.cloud"),
        pairs(&[
            ("Resources", ".spec.resources"),
            ("Age", ".metadata.creationTimestamp"),
        ])
    );
    let shoot = schema(&crds["shoots.core.gardener.cloud"], "v1beta1");
    assert!(declares(&shoot, &column_steps(".status.hibernated")));
    assert!(!declares(&shoot, &column_steps(".status.isHibernated")));
    // The helpers themselves: a filter's dots and an escaped dot are no steps.
    assert_eq!(
        column_steps(".status.conditions[?(@.type==\"Ready\")].status"),
        vec![
            ("status".to_owned(), false),
            ("conditions".to_owned(), true),
            ("status".to_owned(), false)
        ]
    );
}
