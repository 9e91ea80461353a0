//! Who still uses a protected object (spec §2.1–§2.7), decided from listed objects without API
//! calls: the references of a Shoot, the Event/error texts of a blocked deletion.

use kube::ResourceExt;
use seedlet_api::core::{
    CredentialsBinding, NamespacedCloudProfile, QuotaReference, SecretBinding, Shoot,
};
use seedlet_runtime::events::EventType;

use super::Blocked;

/// `Reconcile` event action.
pub const ACTION_RECONCILE: &str = "Reconcile";
/// `Delete` event action.
pub const ACTION_DELETE: &str = "Delete";

/// Go's `fmt` of a string slice: `[a b]`, `[]` when empty.
pub fn go_list(items: &[String]) -> String {
    format!("[{}]", items.join(" "))
}

/// `namespace/name` of a namespaced object.
pub fn namespaced_key<K: kube::Resource>(object: &K) -> String {
    format!(
        "{}/{}",
        object.namespace().unwrap_or_default(),
        object.name_any()
    )
}

/// Sorted `ns/name` of the shoots matching `uses`.
fn users(shoots: &[Shoot], uses: impl Fn(&Shoot) -> bool) -> Vec<String> {
    let mut keys: Vec<String> = shoots
        .iter()
        .filter(|shoot| uses(shoot))
        .map(namespaced_key)
        .collect();
    keys.sort();
    keys
}

/// Whether `shoot` references CloudProfile `name` (`cloudProfileName`, or `cloudProfile` of kind
/// `CloudProfile`).
pub fn uses_cloud_profile(shoot: &Shoot, name: &str) -> bool {
    shoot
        .cloud_profile()
        .is_some_and(|r| r.kind_or_default() == "CloudProfile" && r.name == name)
}

/// Whether `shoot` references NamespacedCloudProfile `namespace/name`.
pub fn uses_namespaced_cloud_profile(shoot: &Shoot, namespace: &str, name: &str) -> bool {
    shoot.namespace().as_deref() == Some(namespace)
        && shoot
            .spec
            .cloud_profile
            .as_ref()
            .is_some_and(|r| r.kind.as_deref() == Some("NamespacedCloudProfile") && r.name == name)
}

/// `spec.exposureClassName` of a shoot.
pub fn exposure_class_name(shoot: &Shoot) -> Option<&str> {
    shoot.spec.exposure_class_name.as_deref()
}

/// `spec.parent.name` of a NamespacedCloudProfile.
pub fn parent_name(profile: &NamespacedCloudProfile) -> Option<&str> {
    profile
        .spec
        .fields
        .get("parent")
        .and_then(|parent| parent.get("name"))
        .and_then(serde_json::Value::as_str)
}

/// CloudProfile `name`: blocked by child NamespacedCloudProfiles first, then by shoots.
pub fn cloud_profile(
    name: &str,
    children: &[NamespacedCloudProfile],
    shoots: &[Shoot],
) -> Option<Blocked> {
    let mut profiles: Vec<String> = children
        .iter()
        .filter(|profile| parent_name(profile) == Some(name))
        .map(namespaced_key)
        .collect();
    profiles.sort();
    if !profiles.is_empty() {
        return Some(Blocked::new(
            EventType::Normal,
            ACTION_DELETE,
            format!(
                "Cannot delete CloudProfile, because the following NamespacedCloudProfiles are still referencing it: {}",
                go_list(&profiles)
            ),
        ));
    }
    let shoots = users(shoots, |shoot| uses_cloud_profile(shoot, name));
    (!shoots.is_empty()).then(|| {
        Blocked::new(
            EventType::Normal,
            ACTION_DELETE,
            format!(
                "Cannot delete CloudProfile, because the following Shoots are still referencing it: {}",
                go_list(&shoots)
            ),
        )
    })
}

/// NamespacedCloudProfile `namespace/name`: blocked by shoots of its namespace.
pub fn namespaced_cloud_profile(namespace: &str, name: &str, shoots: &[Shoot]) -> Option<Blocked> {
    let shoots = users(shoots, |shoot| {
        uses_namespaced_cloud_profile(shoot, namespace, name)
    });
    (!shoots.is_empty()).then(|| {
        Blocked::new(
            EventType::Normal,
            ACTION_RECONCILE,
            format!(
                "Cannot delete NamespacedCloudProfile, because the following Shoots are still referencing it: {}",
                go_list(&shoots)
            ),
        )
    })
}

/// What tells the two binding kinds apart when shoots block a deletion.
#[derive(Debug, Clone, Copy)]
pub struct BindingKind {
    /// Kind in the Event text.
    pub kind: &'static str,
    /// Event action (upstream records SecretBindings with `Reconcile`, CredentialsBindings with
    /// `Delete`).
    pub action: &'static str,
    /// The binding a shoot names (`spec.secretBindingName`, `spec.credentialsBindingName`).
    pub named_by: fn(&Shoot) -> Option<&str>,
}

/// SecretBindings, named by `spec.secretBindingName`.
pub const SECRET_BINDING: BindingKind = BindingKind {
    kind: "SecretBinding",
    action: ACTION_RECONCILE,
    named_by: |shoot| shoot.spec.secret_binding_name.as_deref(),
};

/// CredentialsBindings, named by `spec.credentialsBindingName`.
pub const CREDENTIALS_BINDING: BindingKind = BindingKind {
    kind: "CredentialsBinding",
    action: ACTION_DELETE,
    named_by: |shoot| shoot.spec.credentials_binding_name.as_deref(),
};

/// Binding `namespace/name` of kind `of`: blocked by shoots of its namespace naming it (a
/// Warning).
pub fn binding(of: &BindingKind, namespace: &str, name: &str, shoots: &[Shoot]) -> Option<Blocked> {
    let shoots = users(shoots, |shoot| {
        shoot.namespace().as_deref() == Some(namespace) && (of.named_by)(shoot) == Some(name)
    });
    (!shoots.is_empty()).then(|| {
        Blocked::new(
            EventType::Warning,
            of.action,
            format!(
                "Cannot delete {}, because the following Shoots are still referencing it: {}",
                of.kind,
                go_list(&shoots)
            ),
        )
    })
}

/// ExposureClass `name`: blocked by shoots (any namespace) naming it.
pub fn exposure_class(name: &str, shoots: &[Shoot]) -> Option<Blocked> {
    let shoots = users(shoots, |shoot| exposure_class_name(shoot) == Some(name));
    (!shoots.is_empty()).then(|| {
        let list = go_list(&shoots);
        Blocked {
            event_type: EventType::Normal,
            action: ACTION_RECONCILE,
            note: format!(
                "Cannot delete ExposureClass, because it is still associated by the following Shoots: {list}"
            ),
            error: format!(
                "cannot delete ExposureClass, because it is still associated by the following Shoots: {list}"
            ),
        }
    })
}

/// Whether a binding in `binding_namespace` listing `quotas` lists Quota `namespace/name` (an
/// entry without namespace means the binding's).
pub fn lists_quota(
    quotas: &[QuotaReference],
    binding_namespace: &str,
    namespace: &str,
    name: &str,
) -> bool {
    quotas.iter().any(|quota| {
        quota.name == name && quota.namespace.as_deref().unwrap_or(binding_namespace) == namespace
    })
}

/// Sorted `ns/name` of the bindings whose `quotas` list Quota `namespace/name`.
fn listing<B: kube::Resource>(
    bindings: &[B],
    quotas: impl Fn(&B) -> &[QuotaReference],
    namespace: &str,
    name: &str,
) -> Vec<String> {
    let mut keys: Vec<String> = bindings
        .iter()
        .filter(|b| {
            lists_quota(
                quotas(b),
                &b.namespace().unwrap_or_default(),
                namespace,
                name,
            )
        })
        .map(namespaced_key)
        .collect();
    keys.sort();
    keys
}

/// Quota `namespace/name`: blocked by SecretBindings and CredentialsBindings listing it,
/// deleting ones included.
pub fn quota(
    namespace: &str,
    name: &str,
    secret_bindings: &[SecretBinding],
    credentials_bindings: &[CredentialsBinding],
) -> Option<Blocked> {
    let secret = listing(secret_bindings, |b| &b.quotas, namespace, name);
    let credentials = listing(credentials_bindings, |b| &b.quotas, namespace, name);
    if secret.is_empty() && credentials.is_empty() {
        return None;
    }
    let rest = format!(
        "delete Quota, because the following resources are still referencing it: SecretBindings - {}, CredentialsBindings - {}",
        go_list(&secret),
        go_list(&credentials)
    );
    Some(Blocked {
        event_type: EventType::Normal,
        action: ACTION_RECONCILE,
        note: format!("Cannot {rest}"),
        error: format!("cannot {rest}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shoot(namespace: &str, name: &str, spec: serde_json::Value) -> Shoot {
        let mut spec = spec;
        spec["provider"] = json!({"type": "local"});
        spec["region"] = json!("local");
        serde_json::from_value(json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": name, "namespace": namespace},
            "spec": spec
        }))
        .expect("shoot")
    }

    fn ncp(namespace: &str, name: &str, parent: &str) -> NamespacedCloudProfile {
        serde_json::from_value(json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "NamespacedCloudProfile",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"parent": {"kind": "CloudProfile", "name": parent}}
        }))
        .expect("ncp")
    }

    #[test]
    fn go_list_formats_like_go() {
        assert_eq!(go_list(&[]), "[]");
        assert_eq!(go_list(&["a/b".into(), "c/d".into()]), "[a/b c/d]");
    }

    #[test]
    fn cloud_profile_references_by_name_or_typed_reference() {
        let cases = [
            (json!({"cloudProfileName": "p"}), true),
            (json!({"cloudProfile": {"name": "p"}}), true),
            (
                json!({"cloudProfile": {"kind": "CloudProfile", "name": "p"}}),
                true,
            ),
            (
                json!({"cloudProfile": {"kind": "NamespacedCloudProfile", "name": "p"}}),
                false,
            ),
            (json!({"cloudProfileName": "q"}), false),
            (json!({}), false),
        ];
        for (spec, expected) in cases {
            let s = shoot("garden-a", "s", spec.clone());
            assert_eq!(uses_cloud_profile(&s, "p"), expected, "{spec}");
        }
    }

    #[test]
    fn cloud_profile_with_a_child_reports_only_the_child() {
        let shoots = [shoot(
            "garden-a",
            "s",
            json!({"cloudProfile": {"kind": "CloudProfile", "name": "p"}}),
        )];
        let children = [ncp("garden-b", "n", "p"), ncp("garden-b", "other", "q")];
        let blocked = cloud_profile("p", &children, &shoots).expect("blocked");
        assert_eq!(
            blocked.note,
            "Cannot delete CloudProfile, because the following NamespacedCloudProfiles are still referencing it: [garden-b/n]"
        );
        assert_eq!(blocked.action, ACTION_DELETE);
        let blocked = cloud_profile("p", &[], &shoots).expect("blocked");
        assert_eq!(
            blocked.note,
            "Cannot delete CloudProfile, because the following Shoots are still referencing it: [garden-a/s]"
        );
        assert_eq!(cloud_profile("x", &children, &shoots), None);
    }

    #[test]
    fn namespaced_profile_and_bindings_count_only_shoots_of_their_namespace() {
        let shoots = [
            shoot(
                "garden-a",
                "s1",
                json!({"cloudProfile": {"kind": "NamespacedCloudProfile", "name": "n"},
                       "secretBindingName": "b", "credentialsBindingName": "c"}),
            ),
            shoot(
                "garden-b",
                "s2",
                json!({"cloudProfile": {"kind": "NamespacedCloudProfile", "name": "n"},
                       "secretBindingName": "b", "credentialsBindingName": "c"}),
            ),
        ];
        let ncp_block = namespaced_cloud_profile("garden-a", "n", &shoots).expect("ncp");
        assert_eq!(
            ncp_block.note,
            "Cannot delete NamespacedCloudProfile, because the following Shoots are still referencing it: [garden-a/s1]"
        );
        assert_eq!(
            (ncp_block.event_type, ncp_block.action),
            (EventType::Normal, ACTION_RECONCILE)
        );
        let sb = binding(&SECRET_BINDING, "garden-b", "b", &shoots).expect("sb");
        assert_eq!(
            (sb.event_type, sb.action),
            (EventType::Warning, ACTION_RECONCILE)
        );
        assert!(sb.note.ends_with("[garden-b/s2]"));
        let cb = binding(&CREDENTIALS_BINDING, "garden-a", "c", &shoots).expect("cb");
        assert_eq!(
            (cb.event_type, cb.action),
            (EventType::Warning, ACTION_DELETE)
        );
        assert_eq!(
            cb.note,
            "Cannot delete CredentialsBinding, because the following Shoots are still referencing it: [garden-a/s1]"
        );
        assert_eq!(binding(&SECRET_BINDING, "garden-c", "b", &shoots), None);
    }

    #[test]
    fn exposure_class_error_is_lowercase() {
        let shoots = [shoot("garden-a", "s", json!({"exposureClassName": "e"}))];
        let blocked = exposure_class("e", &shoots).expect("blocked");
        assert_eq!(
            blocked.note,
            "Cannot delete ExposureClass, because it is still associated by the following Shoots: [garden-a/s]"
        );
        assert!(blocked.error.starts_with("cannot delete ExposureClass"));
        assert_eq!(exposure_class("f", &shoots), None);
    }

    #[test]
    fn quota_lists_both_binding_kinds_and_defaults_the_namespace() {
        let binding = |namespace: &str, name: &str, quotas: serde_json::Value| -> SecretBinding {
            serde_json::from_value(json!({
                "metadata": {"name": name, "namespace": namespace}, "quotas": quotas
            }))
            .expect("binding")
        };
        let sb = binding(
            "garden-a",
            "sb",
            json!([{"name": "q", "namespace": "garden"}]),
        );
        let local = binding("garden", "local", json!([{"name": "q"}]));
        let blocked = quota("garden", "q", &[sb.clone(), local], &[]).expect("blocked");
        assert_eq!(
            blocked.note,
            "Cannot delete Quota, because the following resources are still referencing it: SecretBindings - [garden-a/sb garden/local], CredentialsBindings - []"
        );
        assert!(blocked.error.starts_with("cannot delete Quota"));
        assert_eq!(
            quota("garden", "other", std::slice::from_ref(&sb), &[]),
            None
        );
        let cb: CredentialsBinding = serde_json::from_value(json!({
            "metadata": {"name": "cb", "namespace": "garden"}, "quotas": [{"name": "q"}]
        }))
        .expect("binding");
        assert_eq!(
            quota("garden", "q", &[sb], &[cb]).expect("blocked").note,
            "Cannot delete Quota, because the following resources are still referencing it: SecretBindings - [garden-a/sb], CredentialsBindings - [garden/cb]"
        );
    }
}
