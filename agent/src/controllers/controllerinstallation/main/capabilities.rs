//! What a chart sees of the seed's API when the agent renders it: `.Capabilities.KubeVersion` from the
//! seed's `/version` and `.Capabilities.APIVersions` from its discovery, built like Helm's `GetVersionSet`
//! (group/versions and `group/version/Kind`), plus the resource names `lookup` needs.
//!
//! Discovery is one request per group/version, so it is cached ([`SeedDiscovery`]) rather than read per
//! render as Helm does, and re-read in two cases:
//! - the snapshot is older than [`MAX_AGE`] (a Kubernetes upgrade or removed API shows within minutes);
//! - a render asked `.Capabilities.APIVersions.Has` (or `lookup`) about something absent from a snapshot
//!   taken before that reconcile began ([`SeedDiscovery::fresh_since`]): a CRD installed since the snapshot
//!   is then seen by that very render. Concurrent reconciles share one re-read (the cache lock is held
//!   across it), and charts that never miss never cause one. A CRD installed after a render does not
//!   trigger a re-render, as with Helm, whose capabilities are read at install/upgrade time only.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList;
use seedlet_runtime::repeated::{Failure, RepeatedFailures};
use tokio::sync::Mutex;
use tokio::time::Instant;

/// Oldest snapshot a render uses without a miss.
pub const MAX_AGE: Duration = Duration::from_secs(300);

/// A served resource `lookup` can read: its plural name and whether it lives in namespaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedResource {
    /// Plural resource name (`configmaps`).
    pub plural: String,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
}

/// One reading of the seed's version and discovery.
#[derive(Debug)]
pub struct Snapshot {
    /// `gitVersion` of the seed's `/version`.
    pub kube_version: String,
    /// Helm's version set of the seed (sorted).
    pub api_versions: Vec<String>,
    /// Top-level resources (no subresources) by `(group/version, Kind)`.
    resources: HashMap<(String, String), ServedResource>,
    /// When it was read.
    pub taken: Instant,
}

impl Snapshot {
    /// Builds a snapshot from a version and the resource lists of every served group/version (a list that
    /// could not be read is `None`: its group/version counts, its kinds are unknown, as in Helm).
    pub fn new(
        kube_version: String,
        lists: Vec<(String, Option<APIResourceList>)>,
        taken: Instant,
    ) -> Self {
        let group_versions: Vec<String> = lists.iter().map(|(gv, _)| gv.clone()).collect();
        let mut kinds = Vec::new();
        let mut resources = HashMap::new();
        for list in lists.iter().filter_map(|(_, list)| list.as_ref()) {
            for resource in &list.resources {
                kinds.push((list.group_version.clone(), resource.kind.clone()));
                if !resource.name.contains('/') {
                    resources
                        .entry((list.group_version.clone(), resource.kind.clone()))
                        .or_insert_with(|| ServedResource {
                            plural: resource.name.clone(),
                            namespaced: resource.namespaced,
                        });
                }
            }
        }
        Self {
            kube_version,
            api_versions: seedlet_chartrender::version_set(group_versions, kinds),
            resources,
            taken,
        }
    }

    /// Whether `.Capabilities.APIVersions.Has version` is true.
    pub fn has(&self, version: &str) -> bool {
        self.api_versions
            .binary_search_by(|v| v.as_str().cmp(version))
            .is_ok()
    }

    /// The resource serving `kind` at `api_version` (`v1`, `apps/v1`).
    pub fn resource(&self, api_version: &str, kind: &str) -> Option<&ServedResource> {
        self.resources
            .get(&(api_version.to_owned(), kind.to_owned()))
    }
}

/// The cached discovery of the seed.
pub struct SeedDiscovery {
    client: kube::Client,
    current: Mutex<Option<Arc<Snapshot>>>,
    /// Group/versions whose resource lists failed, logged once per distinct set.
    failures: std::sync::Mutex<RepeatedFailures>,
}

impl std::fmt::Debug for SeedDiscovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeedDiscovery").finish_non_exhaustive()
    }
}

impl SeedDiscovery {
    /// An empty cache reading through `client`.
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            current: Mutex::new(None),
            failures: std::sync::Mutex::new(RepeatedFailures::new()),
        }
    }

    /// A snapshot at most [`MAX_AGE`] old, read now if there is none.
    ///
    /// # Errors
    /// The seed's `/version`, `/api` or `/apis` cannot be read.
    pub async fn current(&self) -> Result<Arc<Snapshot>, kube::Error> {
        let mut current = self.current.lock().await;
        if let Some(snapshot) = current.as_ref()
            && snapshot.taken.elapsed() < MAX_AGE
        {
            return Ok(Arc::clone(snapshot));
        }
        let snapshot = self.discover().await?;
        *current = Some(Arc::clone(&snapshot));
        Ok(snapshot)
    }

    /// Reads discovery, logging group/versions whose lists failed once per distinct failure.
    async fn discover(&self) -> Result<Arc<Snapshot>, kube::Error> {
        let (snapshot, failed) = discover(&self.client).await?;
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        if failed.is_empty() {
            if failures.succeeded().is_some() {
                tracing::info!("seed discovery reads every group version again");
            }
        } else {
            let message = failed.join("; ");
            match failures.failed(&message) {
                Failure::New => {
                    tracing::warn!(failed = %message, "seed discovery of some group versions failed, charts see them without kinds");
                }
                Failure::Repeated => {
                    tracing::debug!(failed = %message, "seed discovery of some group versions still fails");
                }
            }
        }
        Ok(Arc::new(snapshot))
    }

    /// A snapshot taken at or after `since`: the cached one if it is, otherwise read now (once for all
    /// callers waiting on the same cache).
    ///
    /// # Errors
    /// As [`Self::current`].
    pub async fn fresh_since(&self, since: Instant) -> Result<Arc<Snapshot>, kube::Error> {
        let mut current = self.current.lock().await;
        if let Some(snapshot) = current.as_ref()
            && snapshot.taken >= since
        {
            return Ok(Arc::clone(snapshot));
        }
        let snapshot = self.discover().await?;
        *current = Some(Arc::clone(&snapshot));
        Ok(snapshot)
    }
}

/// Reads `/version` and the resource lists of every group/version (in parallel). A group/version whose list
/// fails (an unavailable aggregated API) is kept without kinds, as Helm tolerates it, and returned as
/// `group/version: error`.
async fn discover(client: &kube::Client) -> Result<(Snapshot, Vec<String>), kube::Error> {
    let taken = Instant::now();
    let (version, core, groups) = tokio::try_join!(
        client.apiserver_version(),
        client.list_core_api_versions(),
        client.list_api_groups(),
    )?;
    let mut group_versions: Vec<(String, bool)> =
        core.versions.into_iter().map(|v| (v, true)).collect();
    group_versions.extend(
        groups
            .groups
            .into_iter()
            .flat_map(|g| g.versions)
            .map(|v| (v.group_version, false)),
    );
    let reads = group_versions.iter().map(|(gv, core)| async move {
        let list = if *core {
            client.list_core_api_resources(gv).await
        } else {
            client.list_api_group_resources(gv).await
        };
        match list {
            Ok(list) => (gv.clone(), Ok(list)),
            Err(error) => (gv.clone(), Err(seedlet_runtime::error_chain(&error))),
        }
    });
    let mut failed = Vec::new();
    let lists = join_all(reads)
        .await
        .into_iter()
        .map(|(gv, list)| match list {
            Ok(list) => (gv, Some(list)),
            Err(message) => {
                failed.push(format!("{gv}: {message}"));
                (gv, None)
            }
        })
        .collect();
    Ok((Snapshot::new(version.git_version, lists, taken), failed))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResource;

    use super::*;

    fn list(group_version: &str, resources: &[(&str, &str, bool)]) -> APIResourceList {
        APIResourceList {
            group_version: group_version.into(),
            resources: resources
                .iter()
                .map(|(name, kind, namespaced)| APIResource {
                    name: (*name).into(),
                    kind: (*kind).into(),
                    namespaced: *namespaced,
                    singular_name: String::new(),
                    verbs: vec!["get".into()],
                    ..Default::default()
                })
                .collect(),
        }
    }

    #[test]
    fn snapshot_answers_has_and_resolves_top_level_resources() {
        let snapshot = Snapshot::new(
            "v1.32.13".into(),
            vec![
                (
                    "v1".into(),
                    Some(list(
                        "v1",
                        &[
                            ("pods", "Pod", true),
                            ("pods/eviction", "Eviction", true),
                            ("namespaces", "Namespace", false),
                        ],
                    )),
                ),
                (
                    "apps/v1".into(),
                    Some(list(
                        "apps/v1",
                        &[
                            ("deployments/scale", "Scale", true),
                            ("deployments", "Deployment", true),
                        ],
                    )),
                ),
                ("metrics.k8s.io/v1beta1".into(), None),
            ],
            Instant::now(),
        );
        let cases: &[(&str, bool)] = &[
            ("v1", true),
            ("v1/Pod", true),
            ("v1/Eviction", true),
            ("apps/v1/Scale", true),
            ("metrics.k8s.io/v1beta1", true),
            ("metrics.k8s.io/v1beta1/PodMetrics", false),
            ("batch/v1", false),
            ("Pod", false),
        ];
        for (version, want) in cases {
            assert_eq!(snapshot.has(version), *want, "{version}");
        }
        type Resolved<'a> = (&'a str, &'a str, Option<(&'a str, bool)>);
        let resolved: &[Resolved] = &[
            ("v1", "Pod", Some(("pods", true))),
            ("v1", "Namespace", Some(("namespaces", false))),
            ("apps/v1", "Deployment", Some(("deployments", true))),
            ("apps/v1", "Scale", None),
            ("v1", "Eviction", None),
            ("batch/v1", "Job", None),
        ];
        for (api_version, kind, want) in resolved {
            let got = snapshot
                .resource(api_version, kind)
                .map(|r| (r.plural.as_str(), r.namespaced));
            assert_eq!(got, *want, "{api_version} {kind}");
        }
    }
}
