//! `.Capabilities` inputs as Helm v3.11 builds them: the defaults `helm template` renders with when no
//! cluster is asked ([`HELM_DEFAULT_KUBE_VERSION`], [`helm_default_api_versions`]) and the version set
//! Helm derives from a cluster's discovery ([`version_set`], Helm's `action.GetVersionSet`).

use std::collections::BTreeSet;
use std::sync::{Arc, LazyLock};

/// `.Capabilities.KubeVersion` of Helm v3.11's engine without a cluster (`chartutil.DefaultCapabilities`:
/// `v1.20.0` unless the binary is linked with other values; the release binaries built by Helm's Makefile
/// carry the client-go minor + 1, `v1.26.0`).
pub const HELM_DEFAULT_KUBE_VERSION: &str = "v1.20.0";

/// Helm v3.11.3's `chartutil.DefaultVersionSet`, in its order: every group/version client-go v0.26's
/// `kubernetes/scheme` registers (the unversioned `v1` first, then the scheme builder's order), then
/// `apiextensions.k8s.io/v1beta1` and `/v1`, which Helm adds so CRDs are known to `helm template`.
const HELM_DEFAULT_API_VERSIONS: &[&str] = &[
    "v1",
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1alpha1",
    "admissionregistration.k8s.io/v1beta1",
    "internal.apiserver.k8s.io/v1alpha1",
    "apps/v1",
    "apps/v1beta1",
    "apps/v1beta2",
    "authentication.k8s.io/v1",
    "authentication.k8s.io/v1alpha1",
    "authentication.k8s.io/v1beta1",
    "authorization.k8s.io/v1",
    "authorization.k8s.io/v1beta1",
    "autoscaling/v1",
    "autoscaling/v2",
    "autoscaling/v2beta1",
    "autoscaling/v2beta2",
    "batch/v1",
    "batch/v1beta1",
    "certificates.k8s.io/v1",
    "certificates.k8s.io/v1beta1",
    "coordination.k8s.io/v1beta1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "discovery.k8s.io/v1beta1",
    "events.k8s.io/v1",
    "events.k8s.io/v1beta1",
    "extensions/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1alpha1",
    "flowcontrol.apiserver.k8s.io/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1beta2",
    "flowcontrol.apiserver.k8s.io/v1beta3",
    "networking.k8s.io/v1",
    "networking.k8s.io/v1alpha1",
    "networking.k8s.io/v1beta1",
    "node.k8s.io/v1",
    "node.k8s.io/v1alpha1",
    "node.k8s.io/v1beta1",
    "policy/v1",
    "policy/v1beta1",
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1beta1",
    "rbac.authorization.k8s.io/v1alpha1",
    "resource.k8s.io/v1alpha1",
    "scheduling.k8s.io/v1alpha1",
    "scheduling.k8s.io/v1beta1",
    "scheduling.k8s.io/v1",
    "storage.k8s.io/v1beta1",
    "storage.k8s.io/v1",
    "storage.k8s.io/v1alpha1",
    "apiextensions.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1",
];

/// [`helm_default_api_versions`] as one shared list: a constant like Helm's own default version set.
static SHARED_DEFAULT_API_VERSIONS: LazyLock<Arc<[String]>> =
    LazyLock::new(|| helm_default_api_versions().into());

/// `api_versions` as a shared list: Helm's default set without copying its strings, any other list copied.
pub(crate) fn shared_api_versions(api_versions: &[String]) -> Arc<[String]> {
    if **SHARED_DEFAULT_API_VERSIONS == *api_versions {
        Arc::clone(&SHARED_DEFAULT_API_VERSIONS)
    } else {
        api_versions.into()
    }
}

/// `.Capabilities.APIVersions` of `helm template` (Helm v3.11's default version set); group/versions only,
/// no `group/version/Kind` entries.
pub fn helm_default_api_versions() -> Vec<String> {
    HELM_DEFAULT_API_VERSIONS
        .iter()
        .map(|v| (*v).to_owned())
        .collect()
}

/// The version set Helm builds from a cluster's discovery: every served group/version (`apps/v1`, `v1`) and
/// every `group/version/Kind` of the resources (and subresources) listed under it (`apps/v1/Deployment`,
/// `v1/Pod`, `apps/v1/Scale`), each once. Helm's order is a Go map's (random); this one is sorted. A discovery
/// that returned nothing at all gives Helm's default set, as Helm does.
pub fn version_set(
    group_versions: impl IntoIterator<Item = String>,
    kinds: impl IntoIterator<Item = (String, String)>,
) -> Vec<String> {
    let mut set = BTreeSet::new();
    set.extend(group_versions.into_iter().filter(|gv| !gv.is_empty()));
    set.extend(
        kinds
            .into_iter()
            .filter(|(gv, kind)| !gv.is_empty() && !kind.is_empty())
            .map(|(gv, kind)| format!("{gv}/{kind}")),
    );
    if set.is_empty() {
        return helm_default_api_versions();
    }
    set.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_versions_are_handed_out_shared_and_any_other_list_copied() {
        assert_eq!(
            **SHARED_DEFAULT_API_VERSIONS,
            helm_default_api_versions()[..]
        );
        let defaults = shared_api_versions(&helm_default_api_versions());
        assert!(Arc::ptr_eq(&defaults, &SHARED_DEFAULT_API_VERSIONS));
        let other = vec!["v1".to_string(), "apps/v1".to_string()];
        let copied = shared_api_versions(&other);
        assert_eq!(*copied, other[..]);
        assert!(!Arc::ptr_eq(&copied, &SHARED_DEFAULT_API_VERSIONS));
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn version_set_has_group_versions_and_kinds_once() {
        type Case<'a> = (
            &'a str,
            &'a [&'a str],
            &'a [(&'a str, &'a str)],
            &'a [&'a str],
        );
        let cases: &[Case] = &[
            (
                "core and a group with kinds",
                &["v1", "apps/v1"],
                &[("v1", "Pod"), ("apps/v1", "Deployment")],
                &["apps/v1", "apps/v1/Deployment", "v1", "v1/Pod"],
            ),
            (
                "subresources repeat a kind or add another",
                &["apps/v1"],
                &[
                    ("apps/v1", "Deployment"),
                    ("apps/v1", "Deployment"),
                    ("apps/v1", "Scale"),
                ],
                &["apps/v1", "apps/v1/Deployment", "apps/v1/Scale"],
            ),
            (
                "a group version listed only through its resources",
                &[],
                &[("example.com/v1", "Widget")],
                &["example.com/v1/Widget"],
            ),
            (
                "empty kinds and group versions are skipped",
                &["", "batch/v1"],
                &[("batch/v1", ""), ("", "Job")],
                &["batch/v1"],
            ),
        ];
        for (name, groups, kinds, want) in cases {
            let got = version_set(
                strings(groups),
                kinds
                    .iter()
                    .map(|(gv, kind)| ((*gv).to_owned(), (*kind).to_owned())),
            );
            assert_eq!(got, strings(want), "{name}");
        }
    }

    #[test]
    fn empty_discovery_falls_back_to_helms_default_set() {
        assert_eq!(
            version_set(Vec::new(), Vec::new()),
            helm_default_api_versions()
        );
    }

    #[test]
    fn default_set_is_helm_3_11s() {
        let set = helm_default_api_versions();
        assert_eq!(set.len(), 52);
        assert_eq!(set.first().map(String::as_str), Some("v1"));
        let unique: BTreeSet<_> = set.iter().collect();
        assert_eq!(unique.len(), set.len());
        for wanted in [
            "apps/v1",
            "policy/v1beta1",
            "apiextensions.k8s.io/v1",
            "flowcontrol.apiserver.k8s.io/v1beta3",
        ] {
            assert!(set.iter().any(|v| v == wanted), "{wanted}");
        }
        assert!(!set.iter().any(|v| v.ends_with("/Deployment")));
    }
}
