//! The generated CRDs describe every field of gardener's types: each upstream field path has a
//! schema, descriptions never leak Rust internals, and `x-kubernetes-preserve-unknown-fields`
//! appears only where gardener's types hold raw extensions.

// Test helpers outside #[test] fns: a panic is how they report a broken fixture.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::PathBuf;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

use seedlet_api::crds::{garden_crds, seed_crds};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The first version's schema of every CRD, by `(group, kind)`.
fn schemas(crds: Vec<CustomResourceDefinition>) -> BTreeMap<(String, String), Value> {
    crds.into_iter()
        .map(|crd| {
            let schema = crd.spec.versions[0]
                .schema
                .as_ref()
                .unwrap()
                .open_api_v3_schema
                .clone()
                .unwrap();
            (
                (crd.spec.group.clone(), crd.spec.names.kind.clone()),
                serde_json::to_value(schema).unwrap(),
            )
        })
        .collect()
}

/// Every node of `schema` by path (`.a.b`, `[]` for items, `{}` for map values), calling `visit`.
fn walk(schema: &Value, path: &str, visit: &mut dyn FnMut(&str, &Value)) {
    visit(path, schema);
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, child) in properties {
            walk(child, &format!("{path}.{name}"), visit);
        }
    }
    if let Some(items) = schema.get("items") {
        walk(items, &format!("{path}[]"), visit);
    }
    if let Some(additional) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        walk(additional, &format!("{path}{{}}"), visit);
    }
}

fn paths(schema: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk(schema, "", &mut |path, _| {
        out.insert(path.to_owned());
    });
    out
}

#[test]
fn garden_crds_have_every_field_of_gardener_apiserver_types() {
    let ours = schemas(garden_crds());
    let text = fs::read_to_string(fixtures().join("upstream/garden-fields.txt")).unwrap();
    let mut missing = Vec::new();
    let mut checked = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let mut parts = line.splitn(3, ' ');
        let (group, kind, path) = (
            parts.next().unwrap(),
            parts.next().unwrap(),
            parts.next().unwrap(),
        );
        let schema = ours
            .get(&(group.to_owned(), kind.to_owned()))
            .unwrap_or_else(|| panic!("no CRD for {group}/{kind}"));
        checked += 1;
        if !paths(schema).contains(path) {
            missing.push(line.to_owned());
        }
    }
    assert!(checked > 600, "only {checked} upstream paths read");
    assert!(missing.is_empty(), "fields without schema: {missing:#?}");
}

/// Fields seedlet's garden CRDs have beyond gardener-apiserver's current types: the credentials
/// `secretRef`s that gardens before Gardener v1.120 use, the deprecated `globallyEnabled` of
/// extension resources, and ControllerDeployment's v1beta1 shape (one CRD serves v1 and v1beta1).
const GARDEN_ADDITIONS: &[(&str, &str)] = &[
    ("Seed", ".spec.backup.secretRef"),
    ("Seed", ".spec.dns.provider.secretRef"),
    ("BackupBucket", ".spec.secretRef"),
    (
        "ControllerRegistration",
        ".spec.resources[].globallyEnabled",
    ),
    ("ControllerDeployment", ".type"),
    ("ControllerDeployment", ".providerConfig"),
];

#[test]
fn garden_crds_have_no_field_gardener_apiserver_lacks() {
    let text = fs::read_to_string(fixtures().join("upstream/garden-fields.txt")).unwrap();
    let mut upstream: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let mut parts = line.splitn(3, ' ');
        let key = (
            parts.next().unwrap().to_owned(),
            parts.next().unwrap().to_owned(),
        );
        upstream
            .entry(key)
            .or_default()
            .insert(parts.next().unwrap().to_owned());
    }
    let mut invented = Vec::new();
    for (key, schema) in schemas(garden_crds()) {
        let Some(known) = upstream.get(&key) else {
            continue;
        };
        for path in paths(&schema) {
            let top = ["", ".apiVersion", ".kind"].contains(&path.as_str())
                || path.starts_with(".metadata");
            let added = GARDEN_ADDITIONS
                .iter()
                .any(|(kind, added)| *kind == key.1 && path.starts_with(added));
            if !(top || added || covered(known, &path)) {
                invented.push(format!("{} {path}", key.1));
            }
        }
    }
    assert!(
        invented.is_empty(),
        "fields gardener's types lack: {invented:#?}"
    );
}

/// Whether `path` is an upstream field, the item or value node of one, or lies below an
/// upstream field listed without children (a Kubernetes type or a raw extension, whose schema
/// is that type's own).
fn covered(known: &BTreeSet<String>, path: &str) -> bool {
    let stripped = path.trim_end_matches("[]").trim_end_matches("{}");
    if known.contains(path) || known.contains(stripped) {
        return true;
    }
    let has_children = |field: &str| {
        known.iter().any(|other| {
            other.len() > field.len()
                && other.starts_with(field)
                && matches!(other.as_bytes()[field.len()], b'.' | b'[' | b'{')
        })
    };
    known
        .iter()
        .filter(|field| {
            path.len() > field.len()
                && path.starts_with(field.as_str())
                && matches!(path.as_bytes()[field.len()], b'.' | b'[' | b'{')
        })
        .max_by_key(|field| field.len())
        .is_some_and(|parent| !has_children(parent))
}
#[test]
fn seed_crds_have_every_field_of_gardenlets_crds() {
    let ours = schemas(seed_crds());
    let mut missing = Vec::new();
    for entry in fs::read_dir(fixtures().join("upstream/crds")).unwrap() {
        let text = fs::read_to_string(entry.unwrap().path()).unwrap();
        let crd: CustomResourceDefinition = serde_yaml::from_str(&text).unwrap();
        let upstream = schemas(vec![crd]);
        for (key, schema) in upstream {
            let mine = paths(&ours[&key]);
            missing.extend(
                paths(&schema)
                    .into_iter()
                    .filter(|path| {
                        !matches!(path.as_str(), ".apiVersion" | ".kind")
                            && !path.starts_with(".metadata")
                            && !mine.contains(path)
                    })
                    .map(|path| format!("{} {path}", key.1)),
            );
        }
    }
    assert!(missing.is_empty(), "fields without schema: {missing:#?}");
}

#[test]
fn no_description_mentions_rust_internals() {
    for crd in seed_crds().into_iter().chain(garden_crds()) {
        let name = crd.metadata.name.clone().unwrap();
        for (_, schema) in schemas(vec![crd]) {
            walk(&schema, "", &mut |path, node| {
                let description = node
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_lowercase();
                for word in ["`extra`", "unmodelled", "round-trip", "kept verbatim", "[`"] {
                    assert!(
                        !description.contains(word),
                        "{name} {path}: {description:?} mentions {word:?}"
                    );
                }
            });
        }
    }
}

/// Where each kind keeps raw JSON, as gardener's types do (`runtime.RawExtension`, the
/// embedded objects of a Cluster, Helm values). The Shoot and the ManagedSeedSet's shoot
/// template are left out: their schema is the Shoot's own.
const PRESERVED: &[(&str, &[&str])] = &[
    (
        "Cluster",
        &[".spec.cloudProfile", ".spec.seed", ".spec.shoot"],
    ),
    ("ControlPlane", &[".spec.infrastructureProviderStatus"]),
    (
        "Worker",
        &[
            ".spec.infrastructureProviderStatus",
            ".spec.pools[].providerConfig",
        ],
    ),
    ("BackupEntry", &[".spec.backupBucketProviderStatus"]),
    (
        "OperatingSystemConfig",
        &[".spec.criConfig.containerd.plugins[].values"],
    ),
    (
        "Seed",
        &[
            ".spec.backup.providerConfig",
            ".spec.extensions[].providerConfig",
            ".spec.ingress.controller.providerConfig",
            ".spec.provider.providerConfig",
        ],
    ),
    (
        "CloudProfile",
        &[
            ".spec.providerConfig",
            ".spec.machineImages[].versions[].cri[].containerRuntimes[].providerConfig",
        ],
    ),
    (
        "NamespacedCloudProfile",
        &[
            ".spec.providerConfig",
            ".spec.machineImages[].versions[].cri[].containerRuntimes[].providerConfig",
            ".status.cloudProfileSpec.providerConfig",
            ".status.cloudProfileSpec.machineImages[].versions[].cri[].containerRuntimes[].providerConfig",
        ],
    ),
    ("ControllerDeployment", &[".helm.values", ".providerConfig"]),
    ("ControllerInstallation", &[".status.providerStatus"]),
    (
        "ShootState",
        &[
            ".spec.extensions[].state",
            ".spec.gardener[].data",
            ".spec.resources[].data",
        ],
    ),
    ("ManagedSeed", &[".spec.gardenlet.config"]),
    ("ManagedSeedSet", &[".spec.template.spec.gardenlet.config"]),
    ("Gardenlet", &[".spec.config"]),
    ("WorkloadIdentity", &[".spec.targetSystem.providerConfig"]),
];

/// Raw fields every extension kind has (and core BackupBuckets).
const EXTENSION_RAW: &[&str] = &[
    ".spec.providerConfig",
    ".status.providerStatus",
    ".status.state",
];

#[test]
fn unknown_fields_are_preserved_only_where_gardener_holds_raw_extensions() {
    let allowed: BTreeMap<&str, &[&str]> = PRESERVED.iter().copied().collect();
    for ((group, kind), schema) in schemas(seed_crds().into_iter().chain(garden_crds()).collect()) {
        if kind == "Shoot" {
            continue;
        }
        walk(&schema, "", &mut |path, node| {
            if node.get("x-kubernetes-preserve-unknown-fields") != Some(&Value::Bool(true))
                || path.starts_with(".spec.shootTemplate.spec")
            {
                return;
            }
            let generic = (group == "extensions.gardener.cloud" && kind != "Cluster"
                || kind == "BackupBucket")
                && EXTENSION_RAW.contains(&path);
            let listed = allowed
                .get(kind.as_str())
                .is_some_and(|paths| paths.contains(&path));
            assert!(
                generic || listed,
                "{group}/{kind} preserves unknown fields at {path}"
            );
        });
    }
}
