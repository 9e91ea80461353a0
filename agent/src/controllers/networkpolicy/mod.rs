//! NetworkPolicy controller (gardenlet `networkpolicy`, spec §4): keeps six egress policies
//! (`deny-all`, `allow-to-runtime-apiserver`, `allow-to-public-networks`,
//! `allow-to-private-networks`, `allow-to-blocked-cidrs`, `allow-to-dns`) in the seed's `garden`
//! namespace and in namespaces with `gardener.cloud/role` `shoot`, `extension`, `istio-system`,
//! `istio-ingress` (or an exposure-class label), per the selectors of [`desired::wanted`]; a
//! namespace that stops matching loses the policy. Inputs: `seedConfig.spec.networks`, the
//! endpoints of `default/kubernetes`, and in `shoot-*` namespaces the shoot's networks from the
//! seed `Cluster` of that name.
//!
//! Triggers: namespace events, `default/kubernetes` Endpoints changes (→ every namespace), events
//! of policies with a managed name (→ their namespace, so manual edits are reverted) and Cluster
//! changes of the shoot networks (→ that namespace). Workers:
//! `controllers.networkPolicy.concurrentSyncs` (5). Namespaces matching one of
//! `controllers.networkPolicy.additionalNamespaceSelectors` get every policy. When the seed API
//! server is reached by a host name, [`resolver`] looks it up every 30 s and a change of its
//! addresses re-reconciles every namespace.

pub mod cidr;
pub mod desired;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
pub mod resolver;

use std::net::IpAddr;
use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Endpoints, Namespace};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use seedlet_api::extensions::Cluster;
use seedlet_runtime::triggers::{changes, filter_changes_and_store, key_of};
use tokio::sync::watch;

pub use reconcile::Error;

use crate::context::AgentContext;

/// Controller name (logs, metrics label).
pub const NAME: &str = "networkpolicy";
/// Parallel reconciles when `controllers.networkPolicy.concurrentSyncs` is unset.
pub const DEFAULT_CONCURRENT_SYNCS: i64 = 5;

/// Dependencies of the controller.
pub struct NetworkPolicies {
    /// Field manager of our writes.
    pub field_manager: &'static str,
    /// Parallel reconciles (its `concurrentSyncs`).
    pub concurrency: u16,
    /// Client of the seed cluster.
    pub seed: kube::Client,
    /// The seed networks (from `seedConfig.spec.networks`), or why they cannot be read.
    pub inputs: Result<desired::Inputs, String>,
    /// `controllers.networkPolicy.additionalNamespaceSelectors`.
    pub additional_selectors: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
    /// The hostname resolver's port and addresses, when the seed API server has a host name.
    pub resolved: Option<(u16, watch::Receiver<Vec<IpAddr>>)>,
}

impl std::fmt::Debug for NetworkPolicies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetworkPolicies")
            .field("inputs", &self.inputs)
            .finish_non_exhaustive()
    }
}

/// Runs the controller until `ctx.stop` is cancelled.
pub async fn run(agent: Arc<AgentContext>) {
    let config = agent
        .config
        .controllers
        .network_policy
        .clone()
        .unwrap_or_default();
    let concurrency = config.concurrent_syncs.unwrap_or(DEFAULT_CONCURRENT_SYNCS);
    let spec = agent
        .config
        .seed_config
        .as_ref()
        .map(|template| template.spec.clone())
        .unwrap_or_default();
    let target = resolver::target(
        agent.seed_server.as_deref(),
        std::env::var("KUBERNETES_SERVICE_HOST").ok().as_deref(),
        std::env::var("KUBERNETES_SERVICE_PORT").ok().as_deref(),
    );
    let (resolved, resolver_changes) = match target {
        Some(target) => {
            let port = target.port;
            let (sender, receiver) = watch::channel(Vec::new());
            tokio::spawn(resolver::run(target, sender, agent.stop.clone()));
            let changes = futures::stream::unfold(receiver.clone(), |mut receiver| async move {
                receiver.changed().await.ok()?;
                Some(((), receiver))
            });
            (Some((port, receiver)), changes.boxed())
        }
        None => (None, futures::stream::empty().boxed()),
    };
    let ctx = Arc::new(NetworkPolicies {
        field_manager: agent.field_manager,
        concurrency: seedlet_runtime::watch::concurrency(concurrency),
        seed: agent.seed.clone(),
        inputs: reconcile::seed_inputs(&spec),
        additional_selectors: config.namespace_selectors(),
        resolved,
    });
    let seed = agent.seed.clone();
    let (reader, writer) = reflector::store::<Namespace>();
    // The change key reads labels, phase and deletion of the whole Namespace; the store keeps
    // only the name ([`keep_what_is_read`]).
    let namespaces = filter_changes_and_store(
        watcher::watcher(
            Api::<Namespace>::all(seed.clone()),
            watcher::Config::default(),
        )
        .backoff(seedlet_runtime::watch::watch_backoff()),
        namespace_change,
        keep_what_is_read,
        writer,
    );
    let endpoints = changes(
        Api::<Endpoints>::namespaced(seed.clone(), "default"),
        watcher::Config::default().fields("metadata.name=kubernetes"),
        |endpoints: &Endpoints| key_of(&endpoints.subsets),
    );
    let policies = changes(
        Api::<NetworkPolicy>::all(seed.clone()),
        watcher::Config::default(),
        |policy: &NetworkPolicy| {
            key_of(&(&policy.spec, policy.annotations().get(desired::DESCRIPTION)))
        },
    )
    .filter(|policy| {
        futures::future::ready(
            policy
                .as_ref()
                .is_ok_and(|p| desired::POLICIES.contains(&p.name_any().as_str())),
        )
    });
    let clusters = changes(
        Api::<Cluster>::all(seed),
        watcher::Config::default(),
        |cluster: &Cluster| key_of(&reconcile::shoot_network_texts(&cluster.spec.shoot)),
    );
    let all = reader.clone();
    let controller = seedlet_runtime::controller::Triggers::for_stream(namespaces, reader)
        .watches_stream(endpoints, move |_: Endpoints| every_namespace(&all))
        .watches_stream(policies, |policy: NetworkPolicy| {
            policy
                .namespace()
                .map(|ns| ObjectRef::<Namespace>::new(&ns))
        })
        .watches_stream(clusters, |cluster: Cluster| {
            Some(ObjectRef::<Namespace>::new(&cluster.name_any()))
        })
        .reconcile_all_on(resolver_changes);
    seedlet_runtime::controller::run(controller, ctx, agent.stop.clone(), agent.metrics.common())
        .await;
}

/// What starts a namespace's reconcile besides its creation and deletion: its labels (they
/// select the policies), its phase and the start of its deletion.
fn namespace_change(namespace: &Namespace) -> String {
    key_of(&(
        namespace.labels(),
        namespace.status.as_ref().and_then(|s| s.phase.clone()),
        namespace.metadata.deletion_timestamp.is_some(),
    ))
}

/// The stored Namespace keeps only its name, all that its readers use (the reconcile reads its
/// namespace afresh, the mappers and the queue name it): a seed has a namespace per shoot, and
/// the labels the Cluster sync sets on each of them were most of the cached bytes.
fn keep_what_is_read(namespace: &mut Namespace) {
    let name = namespace.metadata.name.take();
    *namespace = Namespace::default();
    namespace.metadata.name = name;
}

fn every_namespace(namespaces: &Store<Namespace>) -> Vec<ObjectRef<Namespace>> {
    namespaces
        .state()
        .iter()
        .map(|namespace| seedlet_runtime::controller::object_ref(namespace.as_ref()))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::NamespaceStatus;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;

    fn namespace(labels: &[(&str, &str)], phase: &str, deleting: bool) -> Namespace {
        let mut namespace = Namespace::default();
        namespace.metadata.name = Some("shoot--dev--a".to_owned());
        namespace.metadata.resource_version = Some("7".to_owned());
        namespace.metadata.labels = Some(
            labels
                .iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                .collect::<BTreeMap<_, _>>(),
        );
        namespace.metadata.annotations = Some([("a".to_owned(), "b".to_owned())].into());
        namespace.status = Some(NamespaceStatus {
            phase: Some(phase.to_owned()),
            ..NamespaceStatus::default()
        });
        if deleting {
            namespace.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        }
        namespace
    }

    #[test]
    fn the_stored_namespace_keeps_only_the_name_its_readers_use() {
        let mut stored = namespace(&[("gardener.cloud/role", "shoot")], "Active", true);
        keep_what_is_read(&mut stored);
        assert_eq!(stored.name_any(), "shoot--dev--a");
        assert_eq!(
            seedlet_runtime::controller::object_ref(&stored),
            ObjectRef::<Namespace>::new("shoot--dev--a")
        );
        let mut expected = Namespace::default();
        expected.metadata.name = Some("shoot--dev--a".to_owned());
        assert_eq!(stored, expected);
    }

    #[test]
    fn a_namespace_changes_with_its_labels_phase_or_deletion_only() {
        let role = [("gardener.cloud/role", "shoot")];
        let base = namespace_change(&namespace(&role, "Active", false));
        let mut other_annotations = namespace(&role, "Active", false);
        other_annotations.metadata.annotations = None;
        other_annotations.metadata.resource_version = Some("8".to_owned());
        assert_eq!(namespace_change(&other_annotations), base);
        for changed in [
            namespace(&[("gardener.cloud/role", "extension")], "Active", false),
            namespace(&role, "Terminating", false),
            namespace(&role, "Active", true),
        ] {
            assert_ne!(namespace_change(&changed), base);
        }
    }
}
