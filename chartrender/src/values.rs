//! Values layering like Helm: chart defaults ← subchart scoping and globals ← supplied values; plus Gardener's
//! injected `gardener.*` values built from a Seed (spec §2.3).

use serde_json::{Map, Value as Json};

use crate::chart::Chart;

/// Deep-merges `overlay` onto `base`: maps merge recursively, everything else is replaced, `null` deletes.
pub fn merge_values(base: &mut Json, overlay: &Json) {
    match (base, overlay) {
        (Json::Object(base_map), Json::Object(overlay_map)) => {
            for (key, value) in overlay_map {
                if value.is_null() {
                    base_map.remove(key);
                    continue;
                }
                // One lookup for a key the base has (replaced in place, where `insert` keeps its position too).
                match base_map.get_mut(key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        merge_values(existing, value)
                    }
                    Some(existing) => *existing = strip_nulls(value),
                    None => {
                        base_map.insert(key.clone(), strip_nulls(value));
                    }
                }
            }
        }
        (base, overlay) => *base = strip_nulls(overlay),
    }
}

/// [`merge_values`] of an overlay the caller owns: its entries move into `base` instead of being copied.
fn merge_owned(base: &mut Json, overlay: Json) {
    match (base, overlay) {
        (Json::Object(base_map), Json::Object(overlay_map)) => {
            for (key, value) in overlay_map {
                if value.is_null() {
                    base_map.remove(&key);
                    continue;
                }
                match base_map.get_mut(&key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        merge_owned(existing, value);
                    }
                    Some(existing) => *existing = strip_nulls_owned(value),
                    None => {
                        base_map.insert(key, strip_nulls_owned(value));
                    }
                }
            }
        }
        (base, overlay) => *base = strip_nulls_owned(overlay),
    }
}

/// [`strip_nulls`] of a value the caller owns.
fn strip_nulls_owned(value: Json) -> Json {
    if holds_null_entry(&value) {
        without_nulls(&value)
    } else {
        value
    }
}

/// Removes `null` map entries recursively (a supplied `null` only ever means "delete the default").
fn strip_nulls(value: &Json) -> Json {
    // Values nearly never hold a null entry: a clone copies each map's hash table as it is, where building the map
    // again hashed every key anew (SipHash; a chart's globals are merged into every subchart's values this way).
    if !holds_null_entry(value) {
        return value.clone();
    }
    without_nulls(value)
}

/// Whether `value` is a map with a `null` entry at any depth of maps (lists are not looked into, as by
/// [`without_nulls`]).
fn holds_null_entry(value: &Json) -> bool {
    match value {
        Json::Object(map) => map.values().any(|v| v.is_null() || holds_null_entry(v)),
        _ => false,
    }
}

/// [`strip_nulls`] by building every map again.
fn without_nulls(value: &Json) -> Json {
    match value {
        Json::Object(map) => Json::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), strip_nulls(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The effective values of `chart` given `supplied` values: defaults (with `import-values`), then subchart
/// scopes, then globals.
pub(crate) fn coalesce(chart: &Chart, supplied: &Json) -> Json {
    coalesce_from(chart, imported_defaults(chart, supplied), supplied)
}

/// [`coalesce`] of values the caller owns (a subchart's section of its parent's): their entries move into the
/// result instead of being copied.
fn coalesce_owned(chart: &Chart, supplied: Json) -> Json {
    let mut result = imported_defaults(chart, &supplied);
    if !result.is_object() {
        result = Json::Object(Map::new());
    }
    merge_owned(&mut result, supplied);
    subchart_scopes(chart, result)
}

fn coalesce_from(chart: &Chart, defaults: Json, supplied: &Json) -> Json {
    let mut result = defaults;
    if !result.is_object() {
        result = Json::Object(Map::new());
    }
    merge_values(&mut result, supplied);
    subchart_scopes(chart, result)
}

/// `result` (a chart's values merged with the supplied ones) with each subchart's section coalesced in turn.
fn subchart_scopes(chart: &Chart, mut result: Json) -> Json {
    let globals = result
        .get("global")
        .cloned()
        .unwrap_or(Json::Object(Map::new()));
    for (name, sub) in subcharts(chart) {
        // Taken out rather than copied: the subchart's coalesced values take its place below.
        let mut supplied_sub = result
            .get_mut(&name)
            .filter(|v| v.is_object())
            .map(Json::take)
            .unwrap_or_else(|| Json::Object(Map::new()));
        // The parent's globals reach the subchart's own subcharts too: pass them down with its values.
        let mut passed_globals = supplied_sub
            .get_mut("global")
            .filter(|v| v.is_object())
            .map(Json::take)
            .unwrap_or_else(|| Json::Object(Map::new()));
        merge_values(&mut passed_globals, &globals);
        if let Some(map) = supplied_sub.as_object_mut() {
            map.insert("global".into(), passed_globals);
        }
        let mut sub_values = coalesce_owned(sub, supplied_sub);
        let mut sub_globals = sub_values
            .get_mut("global")
            .filter(|v| v.is_object())
            .map(Json::take)
            .unwrap_or_else(|| Json::Object(Map::new()));
        // Parent globals win over the subchart's own.
        merge_values(&mut sub_globals, &globals);
        if let Some(map) = sub_values.as_object_mut() {
            map.insert("global".into(), sub_globals);
        }
        if let Some(map) = result.as_object_mut() {
            map.insert(name, sub_values);
        }
    }
    // Subcharts always get `global` (above); the top chart has one only if its values define it.
    result
}

/// Helm's `processImportValues`: the chart's defaults coalesced with its subcharts' (themselves processed
/// first), then each `import-values` entry filled in where the parent has no value of its own. A string entry
/// imports `<dependency>.exports.<name>` to the top; `{child, parent}` imports `<dependency>.<child>` at
/// `parent`. Entries that do not name a table are skipped, as Helm only logs them; so are the entries of a
/// dependency that `supplied` values disable (Helm removes disabled subcharts before importing).
fn imported_defaults(chart: &Chart, supplied: &Json) -> Json {
    let defaults = chart.values.clone();
    if chart
        .metadata
        .dependencies
        .iter()
        .all(|d| d.import_values.is_empty())
    {
        return defaults;
    }
    let mut combined = coalesce_from(chart, defaults, &Json::Object(Map::new()));
    let mut with_supplied = combined.clone();
    merge_values(&mut with_supplied, supplied);
    // Helm v3.11 gathers the imports in one table: a string entry is added to it, a `{child, parent}` entry
    // replaces it (so string entries listed before a `{child, parent}` one are lost).
    let mut imports = Json::Object(Map::new());
    for dependency in &chart.metadata.dependencies {
        let name = if dependency.alias.is_empty() {
            &dependency.name
        } else {
            &dependency.alias
        };
        if !subchart_enabled(chart, name, &dependency.name, &with_supplied) {
            continue;
        }
        for import in &dependency.import_values {
            let (child, parent, replaces) = match import {
                Json::String(name) => (format!("exports.{name}"), ".".to_string(), false),
                Json::Object(map) => {
                    let text = |k: &str| map.get(k).and_then(Json::as_str).unwrap_or_default();
                    (text("child").to_string(), text("parent").to_string(), true)
                }
                _ => continue,
            };
            let Some(table) = table(&combined, &format!("{}.{child}", dependency.name)) else {
                continue;
            };
            let imported = path_to_map(&parent, table.clone());
            if replaces {
                imports = imported;
            } else {
                fill(&mut imports, &imported);
            }
        }
    }
    fill(&mut combined, &imports);
    combined
}

/// The map at a dotted `path` (Helm's `Values.Table`).
fn table<'a>(values: &'a Json, path: &str) -> Option<&'a Json> {
    let mut current = values;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        current = current.get(part)?;
    }
    current.is_object().then_some(current)
}

/// `data` placed at a dotted `path` (`.` is the top).
fn path_to_map(path: &str, data: Json) -> Json {
    if path == "." || path.is_empty() {
        return data;
    }
    path.split('.').rev().fold(data, |inner, key| {
        let mut map = Map::new();
        map.insert(key.to_string(), inner);
        Json::Object(map)
    })
}

/// Helm's `CoalesceTables(dst, src)`: keys of `src` missing from `dst` are added, maps merged, `dst` wins.
fn fill(dst: &mut Json, src: &Json) {
    let (Json::Object(dst), Json::Object(src)) = (dst, src) else {
        return;
    };
    for (key, value) in src {
        match dst.get_mut(key) {
            None => {
                dst.insert(key.clone(), value.clone());
            }
            Some(existing) if existing.is_object() && value.is_object() => fill(existing, value),
            Some(_) => {}
        }
    }
}

/// Subcharts with the name they are rendered under (their alias, if the parent's dependency gives one).
pub(crate) fn subcharts(chart: &Chart) -> Vec<(String, &Chart)> {
    chart
        .subcharts
        .iter()
        .map(|sub| {
            let alias = chart
                .metadata
                .dependencies
                .iter()
                .find(|d| d.name == sub.metadata.name && !d.alias.is_empty())
                .map(|d| d.alias.clone());
            (alias.unwrap_or_else(|| sub.metadata.name.clone()), sub)
        })
        .collect()
}

/// Whether the subchart rendered as `name` is enabled by its dependency `condition`/`tags` in `values`.
pub(crate) fn subchart_enabled(chart: &Chart, name: &str, chart_name: &str, values: &Json) -> bool {
    let Some(dependency) = chart.metadata.dependencies.iter().find(|d| {
        (!d.alias.is_empty() && d.alias == name) || (d.alias.is_empty() && d.name == chart_name)
    }) else {
        return true;
    };
    for path in dependency
        .condition
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let mut current = values;
        let mut found = true;
        for part in path.split('.') {
            match current.get(part) {
                Some(next) => current = next,
                None => {
                    found = false;
                    break;
                }
            }
        }
        if found && let Some(enabled) = current.as_bool() {
            return enabled;
        }
    }
    if dependency.tags.is_empty() {
        return true;
    }
    dependency.tags.iter().any(|tag| {
        values
            .get("tags")
            .and_then(|t| t.get(tag))
            .and_then(Json::as_bool)
            .unwrap_or(false)
    })
}

/// Inputs for Gardener's injected values besides the Seed itself.
#[derive(Debug, Clone, Default)]
pub struct GardenerInfo {
    /// Gardener version (`gardener.version`).
    pub version: String,
    /// Garden cluster identity (`gardener.garden.clusterIdentity`).
    pub garden_cluster_identity: String,
    /// Set when the deployment injects the garden kubeconfig.
    pub generic_kubeconfig_secret_name: Option<String>,
    /// Feature gates (`gardener.gardenlet.featureGates`).
    pub feature_gates: Map<String, Json>,
}

/// Builds the `gardener` values object gardenlet injects for a Seed (`{"gardener": {...}}`).
pub fn gardener_values(seed: &Json, info: &GardenerInfo) -> Json {
    let spec = seed
        .get("spec")
        .cloned()
        .unwrap_or(Json::Object(Map::new()));
    let metadata = seed
        .get("metadata")
        .cloned()
        .unwrap_or(Json::Object(Map::new()));
    let non_empty = |v: Option<&Json>| match v {
        Some(Json::Object(m)) if !m.is_empty() => Json::Object(m.clone()),
        Some(Json::Array(a)) if !a.is_empty() => Json::Array(a.clone()),
        _ => Json::Null,
    };
    let volume_providers = spec.pointer("/volume/providers").cloned();
    let first_volume_provider = volume_providers
        .as_ref()
        .and_then(|p| p.get(0))
        .and_then(|p| p.get("name"))
        .cloned()
        .unwrap_or(Json::String(String::new()));
    let taints = spec.get("taints").cloned().unwrap_or(Json::Null);
    let protected = taints.as_array().is_some_and(|list| {
        list.iter()
            .any(|t| t.get("key").and_then(Json::as_str) == Some("seed.gardener.cloud/protected"))
    });
    let mut seed_values = Map::new();
    seed_values.insert(
        "name".into(),
        metadata
            .get("name")
            .cloned()
            .unwrap_or(Json::String(String::new())),
    );
    let cluster_identity = seed
        .pointer("/status/clusterIdentity")
        .cloned()
        .unwrap_or(Json::Null);
    // `identity` is the name the gardenlet document gives the seed's cluster identity; charts
    // read either key.
    seed_values.insert("identity".into(), cluster_identity.clone());
    seed_values.insert("clusterIdentity".into(), cluster_identity);
    seed_values.insert("annotations".into(), non_empty(metadata.get("annotations")));
    seed_values.insert("labels".into(), non_empty(metadata.get("labels")));
    seed_values.insert(
        "provider".into(),
        spec.pointer("/provider/type")
            .cloned()
            .unwrap_or(Json::String(String::new())),
    );
    seed_values.insert(
        "region".into(),
        spec.pointer("/provider/region")
            .cloned()
            .unwrap_or(Json::String(String::new())),
    );
    seed_values.insert("volumeProvider".into(), first_volume_provider);
    seed_values.insert(
        "volumeProviders".into(),
        non_empty(volume_providers.as_ref()),
    );
    if let Some(domain) = spec.pointer("/ingress/domain") {
        seed_values.insert("ingressDomain".into(), domain.clone());
    }
    seed_values.insert("protected".into(), Json::Bool(protected));
    seed_values.insert(
        "visible".into(),
        spec.pointer("/settings/scheduling/visible")
            .cloned()
            .unwrap_or(Json::Bool(true)),
    );
    seed_values.insert("taints".into(), taints);
    seed_values.insert(
        "networks".into(),
        spec.get("networks").cloned().unwrap_or(Json::Null),
    );
    seed_values.insert(
        "blockCIDRs".into(),
        spec.pointer("/networks/blockCIDRs")
            .cloned()
            .unwrap_or(Json::Null),
    );
    seed_values.insert("spec".into(), spec);

    let mut garden = Map::new();
    garden.insert(
        "clusterIdentity".into(),
        Json::String(info.garden_cluster_identity.clone()),
    );
    if let Some(name) = &info.generic_kubeconfig_secret_name {
        garden.insert(
            "genericKubeconfigSecretName".into(),
            Json::String(name.clone()),
        );
    }
    let mut gardenlet = Map::new();
    gardenlet.insert(
        "featureGates".into(),
        Json::Object(info.feature_gates.clone()),
    );
    let mut gardener = Map::new();
    gardener.insert("version".into(), Json::String(info.version.clone()));
    gardener.insert("garden".into(), Json::Object(garden));
    gardener.insert("gardenlet".into(), Json::Object(gardenlet));
    gardener.insert("seed".into(), Json::Object(seed_values));
    let mut root = Map::new();
    root.insert("gardener".into(), Json::Object(gardener));
    Json::Object(root)
}

/// Equal values with their map keys in the same order (`serde_json`'s `==` ignores the order, which coalescing
/// keeps), so a coalesced result can be reused for values equal in this sense.
pub(crate) fn same_order_equal(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Object(a), Json::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| ka == kb && same_order_equal(va, vb))
        }
        (Json::Array(a), Json::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_order_equal(a, b))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_merged_key_the_base_has_keeps_its_place() {
        let base = json!({"a": 1, "b": {"x": 1}, "c": 3, "d": {"y": 1}});
        let overlay = json!({"d": {"z": 2}, "a": {"n": null, "m": 1}, "b": 5, "e": 6});
        let want = json!({"a": {"m": 1}, "b": 5, "c": 3, "d": {"y": 1, "z": 2}, "e": 6});
        let mut borrowed = base.clone();
        merge_values(&mut borrowed, &overlay);
        let mut owned = base;
        merge_owned(&mut owned, overlay);
        for merged in [borrowed, owned] {
            assert_eq!(merged, want);
            let keys: Vec<&String> = merged.as_object().unwrap().keys().collect();
            assert_eq!(keys, ["a", "b", "c", "d", "e"]);
        }
    }

    #[test]
    fn merging_owned_values_gives_what_merging_borrowed_ones_gives() {
        let bases = [
            json!({}),
            json!({"a": 1, "b": {"c": 2, "d": {"e": 3}}, "f": [1], "g": "x"}),
            json!("not a map"),
        ];
        let overlays = [
            json!({"b": {"c": null, "d": {"x": 1, "e": {"deep": null, "y": 2}}}, "f": null, "h": {"i": null}}),
            json!({"a": {"now": "a map"}, "g": [null], "z": 0}),
            json!({"global": {"image": {"tag": "v1"}}, "b": 7}),
            json!(3),
        ];
        for base in &bases {
            for overlay in &overlays {
                let mut borrowed = base.clone();
                merge_values(&mut borrowed, overlay);
                let mut owned = base.clone();
                merge_owned(&mut owned, overlay.clone());
                assert_eq!(
                    owned.to_string(),
                    borrowed.to_string(),
                    "{base} + {overlay}"
                );
            }
        }
    }

    #[test]
    fn strip_nulls_clones_values_without_null_entries_as_rebuilding_them_gives() {
        let cases = [
            json!({"a": 1, "b": {"c": [null, 2], "d": "x"}, "e": []}),
            json!({"a": null, "b": {"c": null, "d": {"e": null, "f": 1}}, "g": [{"h": null}]}),
            json!({"b": {"d": {"e": null}}}),
            json!([null, {"a": null}]),
            json!(null),
            json!("text"),
        ];
        for value in cases {
            let stripped = strip_nulls(&value);
            assert_eq!(stripped, without_nulls(&value), "{value}");
            // Same keys in the same order.
            assert_eq!(
                stripped.to_string(),
                without_nulls(&value).to_string(),
                "{value}"
            );
        }
        assert!(!holds_null_entry(&json!({"a": [null]})));
        assert!(holds_null_entry(&json!({"a": {"b": null}})));
    }

    #[test]
    fn merge_values_merges_maps_replaces_scalars_and_deletes_nulls() {
        let mut base = json!({"a": {"b": 1, "c": 2}, "list": [1, 2], "foo": "x"});
        merge_values(
            &mut base,
            &json!({"a": {"c": 3}, "list": [9], "foo": null, "new": {"n": null, "m": 1}}),
        );
        assert_eq!(
            base,
            json!({"a": {"b": 1, "c": 3}, "list": [9], "new": {"m": 1}})
        );
    }

    #[test]
    fn gardener_values_follow_the_seed() {
        let seed = json!({
            "metadata": {"name": "local", "labels": {"env": "dev"}},
            "spec": {"provider": {"type": "local", "region": "r"}, "taints": [{"key": "seed.gardener.cloud/protected"}],
                     "ingress": {"domain": "ingress.local"}},
            "status": {"clusterIdentity": "seed-local"}
        });
        let values = gardener_values(
            &seed,
            &GardenerInfo {
                version: "v1.110.0".into(),
                ..Default::default()
            },
        );
        let seed_values = &values["gardener"]["seed"];
        assert_eq!(seed_values["name"], "local");
        assert_eq!(seed_values["identity"], "seed-local");
        assert_eq!(seed_values["clusterIdentity"], "seed-local");
        assert_eq!(seed_values["protected"], true);
        assert_eq!(seed_values["annotations"], Json::Null);
        assert_eq!(seed_values["ingressDomain"], "ingress.local");
        assert_eq!(seed_values["volumeProvider"], "");
        assert_eq!(values["gardener"]["version"], "v1.110.0");
    }

    #[test]
    fn same_order_equal_needs_equal_values_in_the_same_key_order() {
        let cases = [
            (
                json!({"a": 1, "b": [1, {"c": "x"}]}),
                json!({"a": 1, "b": [1, {"c": "x"}]}),
                true,
            ),
            (json!({"a": 1, "b": 2}), json!({"b": 2, "a": 1}), false),
            (
                json!({"a": {"x": 1, "y": 2}}),
                json!({"a": {"y": 2, "x": 1}}),
                false,
            ),
            (json!({"a": 1}), json!({"a": 1.0}), false),
            (json!({"a": 1}), json!({"a": 1, "b": null}), false),
            (json!([1, 2]), json!([1, 2, 3]), false),
            (json!({"a": "1"}), json!({"a": 1}), false),
            (json!(null), json!(null), true),
        ];
        for (a, b, want) in cases {
            assert_eq!(same_order_equal(&a, &b), want, "{a} vs {b}");
        }
    }
}
