//! Pure decisions of the main reconciler: the extension namespace (spec §2.4), rendered templates
//! → secret data with the `SEED_NAME` mutation (§2.5) and the installation's manifest Secret and
//! ManagedResource (§2.5), built with [`crate::managed_manifests`].

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::managed_manifests::{DataError, managed_resource, manifest_data};
use seedlet_api::names::{annotations, labels, namespaces};

/// The extension namespace as applied (spec §2.4).
///
/// `networking.gardener.cloud/access-target-apiserver: allowed` is set when the seed hosts the
/// garden and never removed once present (`had_access_label`).
pub fn desired_namespace(
    installation: &str,
    registration: &str,
    zones: &[String],
    hosts_garden: bool,
    had_access_label: bool,
    pod_security_enforce: Option<&str>,
) -> Value {
    let mut label_map = Map::new();
    label_map.insert(labels::ROLE.into(), json!(labels::ROLE_EXTENSION));
    label_map.insert(
        labels::CONTROLLER_REGISTRATION_NAME.into(),
        json!(registration),
    );
    label_map.insert(labels::HA_CONSIDER.into(), json!("true"));
    if hosts_garden || had_access_label {
        label_map.insert(labels::ACCESS_TARGET_APISERVER.into(), json!("allowed"));
    }
    if let Some(level) = pod_security_enforce {
        label_map.insert(labels::POD_SECURITY_ENFORCE.into(), json!(level));
    }
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": namespaces::extension_namespace(installation),
            "labels": label_map,
            "annotations": {annotations::HA_ZONES: zones.join(",")},
        }
    })
}

/// Secret data from rendered templates (`path → text`), keyed as `RenderedChart.AsSecretData`,
/// each value re-emitted by the mutation pass with `SEED_NAME=<seed>` injected into apps/batch
/// workloads that name the extension namespace explicitly.
///
/// # Errors
/// [`DataError::Yaml`] for an unparsable template, [`DataError::UnsupportedWorkload`] for an
/// apps/batch kind the mutation does not know in the extension namespace.
pub fn secret_data(
    templates: &BTreeMap<String, String>,
    extension_namespace: &str,
    seed: &str,
) -> Result<BTreeMap<String, String>, DataError> {
    manifest_data(templates, Some((extension_namespace, seed)))
}

/// The ManagedResource `garden/<CI>` as applied: labels, the reference annotation of the
/// current Secret and `spec = {class: seed, secretRefs: [<secret>]}`.
pub fn desired_managed_resource(installation: &str, registration: &str, secret: &str) -> Value {
    managed_resource(
        namespaces::GARDEN,
        installation,
        &json!({
            labels::CONTROLLER_INSTALLATION_NAME: installation,
            labels::CONTROLLER_REGISTRATION_NAME_SHORT: registration,
        }),
        secret,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unparsable_template_is_named_once_with_the_parser_message() {
        let templates = BTreeMap::from([(
            "ext/templates/bad.yaml".to_owned(),
            "kind: ConfigMap\ndata:\n  a: [unclosed\n".to_owned(),
        )]);
        let message = secret_data(&templates, "extension-ext", "local")
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("YAML parse error on ext/templates/bad.yaml: "),
            "{message}"
        );
        assert_eq!(message.matches("YAML parse error").count(), 1, "{message}");
        assert_eq!(message.matches("bad.yaml").count(), 1, "{message}");
    }

    #[test]
    fn namespace_has_labels_zones_and_optional_security_level() {
        let ns = desired_namespace(
            "ci-1",
            "reg",
            &["a".into(), "b".into()],
            false,
            false,
            Some("privileged"),
        );
        assert_eq!(ns["metadata"]["name"], "extension-ci-1");
        assert_eq!(ns["metadata"]["labels"]["gardener.cloud/role"], "extension");
        assert_eq!(
            ns["metadata"]["labels"]["controllerregistration.core.gardener.cloud/name"],
            "reg"
        );
        assert_eq!(
            ns["metadata"]["labels"]["high-availability-config.resources.gardener.cloud/consider"],
            "true"
        );
        assert_eq!(
            ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
            "privileged"
        );
        assert_eq!(
            ns["metadata"]["annotations"]["high-availability-config.resources.gardener.cloud/zones"],
            "a,b"
        );
        assert!(
            ns["metadata"]["labels"]
                .get("networking.gardener.cloud/access-target-apiserver")
                .is_none()
        );
    }

    #[test]
    fn namespace_keeps_access_label_once_set_and_zones_annotation_even_if_empty() {
        let ns = desired_namespace("ci", "reg", &[], false, true, None);
        assert_eq!(
            ns["metadata"]["labels"]["networking.gardener.cloud/access-target-apiserver"],
            "allowed"
        );
        assert_eq!(
            ns["metadata"]["annotations"]["high-availability-config.resources.gardener.cloud/zones"],
            ""
        );
        assert!(
            ns["metadata"]["labels"]
                .get("pod-security.kubernetes.io/enforce")
                .is_none()
        );
        let ns = desired_namespace("ci", "reg", &[], true, false, None);
        assert_eq!(
            ns["metadata"]["labels"]["networking.gardener.cloud/access-target-apiserver"],
            "allowed"
        );
    }

    fn templates(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn secret_data_keys_single_and_multi_resource_files() {
        let data = secret_data(
            &templates(&[
                ("test/templates/deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n"),
                (
                    "test/templates/rbac.yaml",
                    "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: gardener.cloud:foo\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: bar\n",
                ),
                ("test/templates/empty.yaml", "\n---\n# only a comment\n"),
                ("test/templates/hook.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    helm.sh/hook: pre-install\n"),
                ("test/templates/nometa.yaml", "apiVersion: v1\nkind: List\n"),
            ]),
            "extension-ci",
            "seed",
        )
        .unwrap();
        let keys: Vec<_> = data.keys().cloned().collect();
        assert_eq!(
            keys,
            [
                "test_templates_deployment.yaml",
                "test_templates_rbac_clusterrole_gardener.cloud_foo.yaml",
                "test_templates_rbac_clusterrolebinding_bar.yaml",
            ]
        );
        let value = &data["test_templates_deployment.yaml"];
        assert!(
            value.starts_with("\n---\napiVersion: apps/v1\nkind: Deployment\n"),
            "{value:?}"
        );
        assert!(value.ends_with("\n---\n"));
    }

    #[test]
    fn seed_name_is_injected_only_into_workloads_naming_the_extension_namespace() {
        let deployment = |namespace: &str| {
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n{namespace}spec:\n  template:\n    spec:\n      initContainers:\n      - name: i\n      containers:\n      - name: c\n        env:\n        - name: SEED_NAME\n          value: old\n"
            )
        };
        let with_ns = deployment("  namespace: extension-ci\n");
        let data = secret_data(
            &templates(&[("c/templates/d.yaml", &with_ns)]),
            "extension-ci",
            "local",
        )
        .unwrap();
        let object: Value = serde_yaml::from_str(
            data["c_templates_d.yaml"]
                .trim_start_matches("\n---\n")
                .trim_end_matches("\n---\n"),
        )
        .unwrap();
        for pointer in [
            "/spec/template/spec/initContainers/0/env",
            "/spec/template/spec/containers/0/env",
        ] {
            assert_eq!(
                object.pointer(pointer).unwrap(),
                &json!([{"name": "SEED_NAME", "value": "local"}]),
                "{pointer}"
            );
        }
        let without_ns = deployment("");
        let data = secret_data(
            &templates(&[("c/templates/d.yaml", &without_ns)]),
            "extension-ci",
            "local",
        )
        .unwrap();
        assert!(data["c_templates_d.yaml"].contains("value: old"));
    }

    #[test]
    fn unsupported_workload_kinds_in_extension_namespace_are_rejected() {
        let rs = "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: r\n  namespace: extension-ci\n";
        let error = secret_data(
            &templates(&[("c/templates/r.yaml", rs)]),
            "extension-ci",
            "local",
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("failed to inject garden access secrets"),
            "{error}"
        );
    }

    #[test]
    fn managed_resource_references_secret_with_hashed_annotation() {
        let mr = desired_managed_resource("ci", "reg", "ci-abcd1234");
        assert_eq!(
            mr["spec"],
            json!({"class": "seed", "secretRefs": [{"name": "ci-abcd1234"}]})
        );
        let key = format!(
            "reference.resources.gardener.cloud/secret-{}",
            crate::managed_manifests::text_hash8("ci-abcd1234")
        );
        assert_eq!(mr["metadata"]["annotations"][key.as_str()], "ci-abcd1234");
        assert_eq!(
            mr["metadata"]["labels"]["controllerinstallation-name"],
            "ci"
        );
        assert_eq!(
            mr["metadata"]["labels"]["controllerregistration-name"],
            "reg"
        );
        let secret = crate::managed_manifests::manifest_secret(
            namespaces::GARDEN,
            "ci-abcd1234",
            &BTreeMap::new(),
        );
        assert_eq!(secret.immutable, Some(true));
        assert_eq!(
            secret.metadata.labels.unwrap()["resources.gardener.cloud/garbage-collectable-reference"],
            "true"
        );
    }
}
