//! `metadata.managedFields`: who owns which fields, updated by every write and used by server-side apply.

use serde_json::{Map, Value, json};

use crate::fieldmanager::fieldpath::{self, Element, FieldSet, ListKind, ListRules, Path};

/// One managedFields entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Manager name.
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    /// apiVersion the manager wrote with.
    pub api_version: String,
    /// Subresource written through ("" for the main resource).
    pub subresource: String,
    /// Last write time.
    pub time: String,
    /// Owned fields.
    pub fields: FieldSet,
}

/// A field another manager owns with a different value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The manager as kube prints it: `"alpha"` or `"gamma" using v1`.
    pub manager: String,
    /// The field, e.g. `.data.a`.
    pub path: String,
}

/// Which part of an object a write goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The main resource of a type without a status subresource: everything is tracked.
    Whole,
    /// The main resource of a type with a status subresource: `status` is not tracked.
    Main,
    /// The status subresource: only `status` is tracked.
    Status,
}

impl Scope {
    /// The subresource name recorded in entries.
    pub fn subresource(self) -> &'static str {
        if self == Scope::Status { "status" } else { "" }
    }
}

/// Reads the entries of an object.
pub fn decode(object: &Value) -> Vec<Entry> {
    let Some(entries) = object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    entries
        .iter()
        .map(|e| {
            let text = |k: &str| {
                e.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            Entry {
                manager: text("manager"),
                operation: text("operation"),
                api_version: text("apiVersion"),
                subresource: text("subresource"),
                time: text("time"),
                fields: e
                    .get("fieldsV1")
                    .map(fieldpath::from_fields_v1)
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// Writes entries into an object's metadata, dropping empty ones, ordered as kube orders them.
pub fn encode(object: &mut Value, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.fields.is_empty());
    entries.sort_by(|a, b| {
        (
            a.operation.as_str(),
            a.time.as_str(),
            a.manager.as_str(),
            a.api_version.as_str(),
            a.subresource.as_str(),
        )
            .cmp(&(
                b.operation.as_str(),
                b.time.as_str(),
                b.manager.as_str(),
                b.api_version.as_str(),
                b.subresource.as_str(),
            ))
    });
    let encoded: Vec<Value> = entries
        .iter()
        .map(|e| {
            let mut m = Map::new();
            m.insert("manager".into(), json!(e.manager));
            m.insert("operation".into(), json!(e.operation));
            m.insert("apiVersion".into(), json!(e.api_version));
            m.insert("time".into(), json!(e.time));
            m.insert("fieldsType".into(), json!("FieldsV1"));
            m.insert("fieldsV1".into(), fieldpath::to_fields_v1(&e.fields));
            if !e.subresource.is_empty() {
                m.insert("subresource".into(), json!(e.subresource));
            }
            Value::Object(m)
        })
        .collect();
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        if encoded.is_empty() {
            metadata.remove("managedFields");
        } else {
            metadata.insert("managedFields".into(), Value::Array(encoded));
        }
    }
}

/// The part of an object whose fields are tracked in a scope (identity and system fields removed).
pub fn tracked(object: &Value, scope: Scope) -> Value {
    let mut out = object.clone();
    let Some(map) = out.as_object_mut() else {
        return Value::Null;
    };
    map.remove("apiVersion");
    map.remove("kind");
    match scope {
        Scope::Whole => {}
        Scope::Main => {
            map.remove("status");
        }
        Scope::Status => {
            map.retain(|k, _| k == "status");
            return out;
        }
    }
    if let Some(metadata) = map.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in [
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "managedFields",
            "selfLink",
        ] {
            metadata.remove(key);
        }
        if metadata.is_empty() {
            map.remove("metadata");
        }
    }
    out
}

/// Records a non-apply write by `manager`: it takes every field it changed; removed fields lose their owners.
pub fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    api_version: &str,
    scope: Scope,
    rules: &dyn ListRules,
    now: &str,
) {
    let mut entries = old.map(decode).unwrap_or_default();
    let old_tracked = old.map(|o| tracked(o, scope)).unwrap_or(Value::Null);
    let new_tracked = tracked(new, scope);
    let old_set = fieldpath::field_set(&old_tracked, rules);
    let new_set = fieldpath::field_set(&new_tracked, rules);
    let changed: FieldSet = new_set
        .iter()
        .filter(|p| {
            let existence_only = matches!(p.last(), Some(Element::Key(_) | Element::Value(_)));
            let before = fieldpath::lookup(&old_tracked, p);
            if existence_only {
                before.is_none()
            } else {
                before != fieldpath::lookup(&new_tracked, p)
            }
        })
        .cloned()
        .collect();
    let removed: FieldSet = old_set.difference(&new_set).cloned().collect();
    for entry in &mut entries {
        entry
            .fields
            .retain(|p| !changed.contains(p) && !removed.contains(p));
    }
    if !changed.is_empty() {
        let subresource = scope.subresource();
        match entries.iter_mut().find(|e| {
            e.manager == manager
                && e.operation == "Update"
                && e.subresource == subresource
                && e.api_version == api_version
        }) {
            Some(entry) => {
                entry.fields.extend(changed);
                entry.time = now.to_string();
            }
            None => entries.push(Entry {
                manager: manager.to_string(),
                operation: "Update".into(),
                api_version: api_version.to_string(),
                subresource: subresource.to_string(),
                time: now.to_string(),
                fields: changed,
            }),
        }
    }
    encode(new, entries);
}

/// Server-side apply of `applied` (already stripped to the scope) over `live` by `manager`.
/// Returns the merged object with updated managedFields, or the conflicts when not forced.
#[allow(clippy::too_many_arguments)]
pub fn apply(
    live: &Value,
    applied: &Value,
    manager: &str,
    force: bool,
    api_version: &str,
    scope: Scope,
    rules: &dyn ListRules,
    now: &str,
) -> Result<Value, Vec<Conflict>> {
    let mut entries = decode(live);
    let applied_tracked = tracked(applied, scope);
    let live_tracked = tracked(live, scope);
    let applied_set = fieldpath::field_set(&applied_tracked, rules);
    let subresource = scope.subresource();
    let is_self =
        |e: &Entry| e.manager == manager && e.operation == "Apply" && e.subresource == subresource;

    let mut conflicts: Vec<(usize, Path)> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        if is_self(entry) {
            continue;
        }
        for path in applied_set.intersection(&entry.fields) {
            if matches!(path.last(), Some(Element::Key(_) | Element::Value(_))) {
                continue;
            }
            if fieldpath::lookup(&live_tracked, path) != fieldpath::lookup(&applied_tracked, path) {
                conflicts.push((index, path.clone()));
            }
        }
    }
    if !conflicts.is_empty() && !force {
        return Err(conflicts
            .iter()
            .map(|(index, path)| {
                let entry = &entries[*index];
                let who = if entry.operation == "Apply" {
                    format!("\"{}\"", entry.manager)
                } else {
                    format!("\"{}\" using {}", entry.manager, entry.api_version)
                };
                Conflict {
                    manager: who,
                    path: fieldpath::display(path),
                }
            })
            .collect());
    }
    for (index, path) in &conflicts {
        entries[*index].fields.remove(path);
    }

    let mut merged = live.clone();
    merge_into(&mut merged, &applied_tracked, &mut Vec::new(), rules);

    let previous: FieldSet = entries
        .iter()
        .find(|e| is_self(e))
        .map(|e| e.fields.clone())
        .unwrap_or_default();
    // structured-merge-diff's prune: what the applier applied last time and not now goes, unless
    // another applier manages it; fields only updaters co-own go too (they lose them below).
    let mut dropped: Vec<&Path> = previous
        .difference(&applied_set)
        .filter(|p| {
            !entries
                .iter()
                .any(|e| !is_self(e) && e.operation == "Apply" && e.fields.contains(*p))
        })
        .collect();
    // A removed list item goes whole (with fields others own in it), so its children need no
    // removal of their own; removing a child first could change the item's key and lose it.
    dropped.sort_by_key(|p| p.len());
    let mut removed: Vec<&Path> = Vec::new();
    for path in dropped {
        if removed.iter().any(|r| path.starts_with(r)) {
            continue;
        }
        fieldpath::remove(&mut merged, path);
        removed.push(path);
    }
    // Fields the apply removed leave every other manager's set; managers left with nothing go.
    let merged_tracked = tracked(&merged, scope);
    for entry in entries.iter_mut().filter(|e| !is_self(e)) {
        entry.fields.retain(|p| {
            fieldpath::lookup(&live_tracked, p).is_none()
                || fieldpath::lookup(&merged_tracked, p).is_some()
        });
    }
    entries.retain(|e| is_self(e) || !e.fields.is_empty());

    match entries.iter_mut().find(|e| is_self(e)) {
        Some(entry) => {
            entry.fields = applied_set;
            entry.time = now.to_string();
            entry.api_version = api_version.to_string();
        }
        None => entries.push(Entry {
            manager: manager.to_string(),
            operation: "Apply".into(),
            api_version: api_version.to_string(),
            subresource: subresource.to_string(),
            time: now.to_string(),
            fields: applied_set,
        }),
    }
    encode(&mut merged, entries);
    Ok(merged)
}

/// Merges an applied configuration into an object: maps recursively, keyed and set lists by item,
/// everything else replaced.
fn merge_into(target: &mut Value, applied: &Value, path: &mut Path, rules: &dyn ListRules) {
    match (target, applied) {
        (Value::Object(t), Value::Object(a)) => {
            for (key, value) in a {
                path.push(Element::Field(key.clone()));
                match t.get_mut(key) {
                    Some(existing) if !value.is_null() => merge_into(existing, value, path, rules),
                    _ => {
                        t.insert(key.clone(), value.clone());
                    }
                }
                path.pop();
            }
        }
        (Value::Array(t), Value::Array(a)) => match rules.list_kind(path) {
            ListKind::Set => {
                for item in a {
                    if !t.contains(item) {
                        t.push(item.clone());
                    }
                }
            }
            ListKind::Map(keys) => {
                for item in a {
                    let key = fieldpath::item_key(item, &keys);
                    let position = key.as_ref().and_then(|k| {
                        t.iter().position(|existing| {
                            fieldpath::item_key(existing, &keys).as_ref() == Some(k)
                        })
                    });
                    match (position, key) {
                        (Some(i), Some(k)) => {
                            path.push(k);
                            merge_into(&mut t[i], item, path, rules);
                            path.pop();
                        }
                        _ => t.push(item.clone()),
                    }
                }
            }
            ListKind::Atomic => *t = a.clone(),
        },
        (target, applied) => *target = applied.clone(),
    }
}

/// The 409 message for apply conflicts, as kube-apiserver words it.
pub fn conflict_message(conflicts: &[Conflict]) -> String {
    let count = conflicts.len();
    let plural = if count == 1 { "" } else { "s" };
    let body = if count == 1 {
        format!(
            "conflict with {}: {}",
            conflicts[0].manager, conflicts[0].path
        )
    } else {
        let mut managers: Vec<&str> = conflicts.iter().map(|c| c.manager.as_str()).collect();
        managers.sort_unstable();
        managers.dedup();
        let mut lines = Vec::new();
        for manager in managers {
            lines.push(format!("conflicts with {manager}:"));
            for conflict in conflicts.iter().filter(|c| c.manager == manager) {
                lines.push(format!("- {}", conflict.path));
            }
        }
        lines.join("\n")
    };
    format!("Apply failed with {count} conflict{plural}: {body}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fieldmanager::fieldpath::BuiltinListRules;

    const NOW: &str = "2024-01-01T00:00:00Z";

    fn cm(data: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": data})
    }

    fn apply_as(
        live: &Value,
        applied: &Value,
        manager: &str,
        force: bool,
    ) -> Result<Value, Vec<Conflict>> {
        apply(
            live,
            applied,
            manager,
            force,
            "v1",
            Scope::Whole,
            &BuiltinListRules,
            NOW,
        )
    }

    #[test]
    fn second_applier_conflicts_on_a_different_value_but_shares_an_equal_one() {
        let live = apply_as(
            &cm(json!({})),
            &cm(json!({"a": "1", "b": "2"})),
            "alpha",
            false,
        )
        .expect("first apply");
        let conflicts =
            apply_as(&live, &cm(json!({"a": "x"})), "beta", false).expect_err("a is alpha's");
        assert_eq!(
            conflicts,
            [Conflict {
                manager: "\"alpha\"".into(),
                path: ".data.a".into()
            }]
        );
        let shared = apply_as(&live, &cm(json!({"a": "1", "c": "3"})), "beta", false)
            .expect("same value is shared");
        assert_eq!(shared["data"], json!({"a": "1", "b": "2", "c": "3"}));
    }

    #[test]
    fn force_takes_ownership_and_sole_owner_removal_drops_the_field() {
        let live = apply_as(
            &cm(json!({})),
            &cm(json!({"a": "1", "b": "2"})),
            "alpha",
            false,
        )
        .expect("first apply");
        let forced =
            apply_as(&live, &cm(json!({"a": "forced"})), "beta", true).expect("force wins");
        let entries = decode(&forced);
        let alpha = entries
            .iter()
            .find(|e| e.manager == "alpha")
            .expect("alpha still owns b");
        assert_eq!(alpha.fields.len(), 1);
        let dropped = apply_as(&forced, &cm(json!({})), "alpha", false).expect("alpha drops b");
        assert_eq!(dropped["data"], json!({"a": "forced"}));
    }

    #[test]
    fn update_takes_ownership_from_appliers() {
        let live = apply_as(&cm(json!({})), &cm(json!({"c": "3"})), "beta", false).expect("apply");
        let mut updated = live.clone();
        updated["data"]["c"] = json!("by-gamma");
        record_update(
            Some(&live),
            &mut updated,
            "gamma",
            "v1",
            Scope::Whole,
            &BuiltinListRules,
            NOW,
        );
        let conflicts =
            apply_as(&updated, &cm(json!({"c": "3"})), "beta", false).expect_err("gamma owns c");
        assert_eq!(
            conflict_message(&conflicts),
            "Apply failed with 1 conflict: conflict with \"gamma\" using v1: .data.c"
        );
    }

    fn managers(object: &Value) -> Vec<(String, String)> {
        decode(object)
            .into_iter()
            .map(|e| (e.manager, e.operation))
            .collect()
    }

    fn update_as(live: &Value, change: impl FnOnce(&mut Value), manager: &str) -> Value {
        let mut updated = live.clone();
        change(&mut updated);
        record_update(
            Some(live),
            &mut updated,
            manager,
            "v1",
            Scope::Whole,
            &BuiltinListRules,
            NOW,
        );
        updated
    }

    fn pod(containers: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": containers}})
    }

    fn container_names(object: &Value) -> Vec<&str> {
        object["spec"]["containers"]
            .as_array()
            .expect("containers")
            .iter()
            .map(|c| c["name"].as_str().unwrap_or_default())
            .collect()
    }

    /// Transcript: alpha applies a and b, beta applies the same a; alpha stops applying a. The
    /// field stays (beta, an applier, manages it) and alpha no longer owns it.
    #[test]
    fn a_field_another_applier_shares_survives_its_removal() {
        let live = apply_as(
            &cm(json!({})),
            &cm(json!({"a": "1", "b": "2"})),
            "alpha",
            false,
        )
        .expect("alpha applies");
        let live = apply_as(&live, &cm(json!({"a": "1"})), "beta", false).expect("beta shares a");
        let live = apply_as(&live, &cm(json!({"b": "2"})), "alpha", false).expect("alpha drops a");
        assert_eq!(live["data"], json!({"a": "1", "b": "2"}));
        let entries = decode(&live);
        let owners = |field: &str| -> Vec<String> {
            let path = vec![Element::Field("data".into()), Element::Field(field.into())];
            entries
                .iter()
                .filter(|e| e.fields.contains(&path))
                .map(|e| e.manager.clone())
                .collect()
        };
        assert_eq!(owners("a"), ["beta"]);
        assert_eq!(owners("b"), ["alpha"]);
    }

    /// Transcript: gamma sets a by update, alpha applies the same value (shared), then stops
    /// applying it. structured-merge-diff keeps only what other appliers manage, so a is removed
    /// and gamma, left without fields, leaves managedFields.
    #[test]
    fn a_field_only_an_updater_shares_is_removed_with_the_appliers_config() {
        let live = update_as(&cm(json!({})), |o| o["data"] = json!({"a": "1"}), "gamma");
        let live = apply_as(&live, &cm(json!({"a": "1", "b": "2"})), "alpha", false)
            .expect("same value: no conflict");
        assert_eq!(managers(&live).len(), 2);
        let live = apply_as(&live, &cm(json!({"b": "2"})), "alpha", false).expect("alpha drops a");
        assert_eq!(live["data"], json!({"b": "2"}));
        assert_eq!(
            managers(&live),
            [("alpha".to_string(), "Apply".to_string())]
        );
    }

    /// Transcript: alpha applies containers a and b, beta applies b unchanged; alpha applies only
    /// a. The item b stays whole (beta applies it) and stays beta's.
    #[test]
    fn a_list_item_another_applier_applies_survives_its_removal() {
        let containers = json!([{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]);
        let live = apply_as(&pod(json!([])), &pod(containers), "alpha", false).expect("alpha");
        let live = apply_as(
            &live,
            &pod(json!([{"name": "b", "image": "y"}])),
            "beta",
            false,
        )
        .expect("beta shares b");
        let live = apply_as(
            &live,
            &pod(json!([{"name": "a", "image": "x"}])),
            "alpha",
            false,
        )
        .expect("alpha drops b");
        assert_eq!(container_names(&live), ["a", "b"]);
        assert_eq!(live["spec"]["containers"][1]["image"], "y");
    }

    /// Transcript: alpha applies containers a and b, gamma updates b's image (taking it over);
    /// alpha applies only a. The item b was alpha's and no applier manages it, so it goes with
    /// gamma's image, and gamma leaves managedFields.
    #[test]
    fn a_list_item_whose_field_an_updater_took_goes_with_the_appliers_config() {
        let containers = json!([{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]);
        let live = apply_as(&pod(json!([])), &pod(containers), "alpha", false).expect("alpha");
        let live = update_as(
            &live,
            |o| o["spec"]["containers"][1]["image"] = json!("z"),
            "gamma",
        );
        assert!(managers(&live).contains(&("gamma".to_string(), "Update".to_string())));
        let live = apply_as(
            &live,
            &pod(json!([{"name": "a", "image": "x"}])),
            "alpha",
            false,
        )
        .expect("alpha drops b without conflict");
        assert_eq!(container_names(&live), ["a"]);
        assert_eq!(
            managers(&live),
            [("alpha".to_string(), "Apply".to_string())]
        );
    }

    #[test]
    fn several_conflicts_are_grouped_by_manager() {
        let conflicts = vec![
            Conflict {
                manager: "\"b\"".into(),
                path: ".x".into(),
            },
            Conflict {
                manager: "\"a\"".into(),
                path: ".y".into(),
            },
        ];
        assert_eq!(
            conflict_message(&conflicts),
            "Apply failed with 2 conflicts: conflicts with \"a\":\n- .y\nconflicts with \"b\":\n- .x"
        );
    }

    #[test]
    fn entries_sort_apply_before_update() {
        let mut object = json!({"metadata": {}});
        let entry = |m: &str, op: &str| Entry {
            manager: m.into(),
            operation: op.into(),
            api_version: "v1".into(),
            subresource: String::new(),
            time: NOW.into(),
            fields: [vec![Element::Field("a".into())]].into_iter().collect(),
        };
        encode(
            &mut object,
            vec![
                entry("z", "Update"),
                entry("b", "Apply"),
                entry("a", "Apply"),
            ],
        );
        let managers: Vec<&str> = object["metadata"]["managedFields"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|e| e["manager"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(managers, ["a", "b", "z"]);
    }
}
