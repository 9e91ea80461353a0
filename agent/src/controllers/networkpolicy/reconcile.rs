//! One namespace's network policies: read the inputs, then per policy delete (not wanted),
//! skip (semantically equal) or write.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Endpoints, Namespace};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::api::{DeleteParams, ObjectMeta, PostParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::SeedNetworks;
use seedlet_api::extensions::Cluster;
use seedlet_runtime::policy;
use serde_json::Value;

use super::cidr::Cidr;
use super::desired::{self, EndpointSubset, Inputs};
use super::{NAME, NetworkPolicies};
use seedlet_runtime::controller::{Reason, Reconciler};

/// Errors of one namespace pass; each names the object.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The seed networks in `seedConfig` are unusable.
    #[error("seedConfig.spec.networks: {0}")]
    SeedNetworks(String),
    /// `default/kubernetes` is missing or unreadable.
    #[error("reading endpoints default/kubernetes")]
    Endpoints(#[source] kube::Error),
    /// `default/kubernetes` does not exist.
    #[error("endpoints default/kubernetes not found")]
    NoEndpoints,
    /// The shoot namespace's Cluster is missing or unusable.
    #[error("cluster {name}: {message}")]
    Cluster {
        /// Cluster (= namespace) name.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// A policy cannot be computed.
    #[error("network policy {namespace}/{policy}: {message}")]
    Policy {
        /// Namespace.
        namespace: String,
        /// Policy name.
        policy: &'static str,
        /// What is wrong.
        message: String,
    },
    /// An API call failed.
    #[error("{step} {key}")]
    Api {
        /// What was done.
        step: &'static str,
        /// The object.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::SeedNetworks(_) => "SeedNetworksInvalid",
            Error::Endpoints(_) | Error::NoEndpoints => "EndpointsError",
            Error::Cluster { .. } => "ClusterError",
            Error::Policy { .. } => "PolicyError",
            Error::Api { .. } => "NetworkPolicyError",
        }
    }
}

impl Error {
    /// Whether the failure is in the inputs every namespace shares.
    fn is_seed_wide(&self) -> bool {
        matches!(
            self,
            Error::SeedNetworks(_) | Error::Endpoints(_) | Error::NoEndpoints
        )
    }
}

/// How logs name the inputs every namespace's policies share: a missing `default/kubernetes` or
/// unusable seed networks fail every namespace alike, and are one line, not one per namespace.
const SEED_WIDE: &str = "seed-wide inputs (default/kubernetes, seedConfig.spec.networks)";

impl Reconciler for NetworkPolicies {
    type Object = Namespace;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Reconciles the policies of one namespace.
    async fn reconcile(&self, namespace: Arc<Namespace>) -> Result<Action, Error> {
        let name = namespace.name_any();
        let result = sync(&name, self).await;
        if result.is_ok() {
            policy::recovered(NAME, SEED_WIDE);
        }
        result.map(|()| Action::await_change())
    }

    /// Retry delay after a failure.
    fn retry_after(&self, _: &Error) -> Duration {
        Duration::from_secs(15)
    }

    /// Logs the error once, a seed-wide one once for all namespaces.
    fn error_policy(&self, namespace: &Namespace, error: &Error) -> Action {
        let object = if error.is_seed_wide() {
            SEED_WIDE.to_owned()
        } else {
            namespace.name_any()
        };
        policy::requeue_after_failure(
            NAME,
            &object,
            error.reason(),
            error,
            self.retry_after(error),
        )
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn sync(name: &str, ctx: &NetworkPolicies) -> Result<(), Error> {
    let seed = &ctx.seed;
    let Some(namespace) = Api::<Namespace>::all(seed.clone())
        .get_opt(name)
        .await
        .map_err(|source| Error::Api {
            step: "reading namespace",
            key: name.to_owned(),
            source,
        })?
    else {
        return Ok(());
    };
    let active = namespace.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Active");
    if namespace.metadata.deletion_timestamp.is_some() || !active {
        return Ok(());
    }
    let labels = namespace.labels().clone();
    let wanted: Vec<&'static str> = desired::POLICIES
        .into_iter()
        .filter(|policy| desired::wanted(policy, name, &labels, &ctx.additional_selectors))
        .collect();
    let api: Api<NetworkPolicy> = Api::namespaced(seed.clone(), name);
    for policy in desired::POLICIES
        .into_iter()
        .filter(|p| !wanted.contains(p))
    {
        match api.delete(policy, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.is_not_found() => {}
            Err(source) => {
                return Err(Error::Api {
                    step: "deleting network policy",
                    key: format!("{name}/{policy}"),
                    source,
                });
            }
        }
    }
    if wanted.is_empty() {
        return Ok(());
    }
    let mut inputs = ctx.inputs.clone().map_err(Error::SeedNetworks)?;
    inputs.api_server = api_server(seed).await?;
    // One more rule for the resolved host name; a resolver without an answer yet leaves the
    // policy as it is.
    let mut keep_api_server_policy = false;
    if let Some((port, addresses)) = &ctx.resolved {
        let addresses = addresses.borrow().clone();
        if addresses.is_empty() {
            keep_api_server_policy = true;
        } else {
            inputs.api_server.push(EndpointSubset {
                addresses: addresses.iter().map(ToString::to_string).collect(),
                ports: vec![(i32::from(*port), "TCP".to_owned())],
            });
        }
    }
    let shoot_networks = if name.starts_with("shoot-") {
        shoot_networks(seed, name).await?
    } else {
        Vec::new()
    };
    for policy in wanted {
        if keep_api_server_policy && policy == desired::TO_RUNTIME_APISERVER {
            continue;
        }
        let (description, spec) =
            desired::policy(policy, &inputs, &shoot_networks).map_err(|message| Error::Policy {
                namespace: name.to_owned(),
                policy,
                message,
            })?;
        write(&api, name, policy, description, spec, ctx).await?;
    }
    Ok(())
}

async fn write(
    api: &Api<NetworkPolicy>,
    namespace: &str,
    policy: &str,
    description: &str,
    spec: k8s_openapi::api::networking::v1::NetworkPolicySpec,
    ctx: &NetworkPolicies,
) -> Result<(), Error> {
    let key = format!("{namespace}/{policy}");
    let existing = api.get_opt(policy).await.map_err(|source| Error::Api {
        step: "reading network policy",
        key: key.clone(),
        source,
    })?;
    if let Some(existing) = &existing
        && existing.spec.as_ref() == Some(&spec)
        && existing
            .annotations()
            .get(desired::DESCRIPTION)
            .map(String::as_str)
            == Some(description)
    {
        return Ok(());
    }
    let mut annotations = existing
        .as_ref()
        .and_then(|p| p.metadata.annotations.clone())
        .unwrap_or_default();
    annotations.insert(desired::DESCRIPTION.to_owned(), description.to_owned());
    let object = NetworkPolicy {
        metadata: ObjectMeta {
            name: Some(policy.to_owned()),
            namespace: Some(namespace.to_owned()),
            annotations: Some(annotations),
            labels: existing.as_ref().and_then(|p| p.metadata.labels.clone()),
            resource_version: existing
                .as_ref()
                .and_then(|p| p.metadata.resource_version.clone()),
            ..ObjectMeta::default()
        },
        spec: Some(spec),
    };
    let params = PostParams {
        field_manager: Some(ctx.field_manager.to_owned()),
        ..PostParams::default()
    };
    match existing {
        Some(_) => api.replace(policy, &params, &object).await,
        None => api.create(&params, &object).await,
    }
    .map(|_| ())
    .map_err(|source| Error::Api {
        step: "writing network policy",
        key,
        source,
    })
}

/// The subsets of `default/kubernetes`.
async fn api_server(seed: &kube::Client) -> Result<Vec<EndpointSubset>, Error> {
    let endpoints = Api::<Endpoints>::namespaced(seed.clone(), "default")
        .get_opt("kubernetes")
        .await
        .map_err(Error::Endpoints)?
        .ok_or(Error::NoEndpoints)?;
    Ok(endpoints
        .subsets
        .unwrap_or_default()
        .into_iter()
        .map(|subset| EndpointSubset {
            addresses: subset
                .addresses
                .unwrap_or_default()
                .into_iter()
                .map(|address| address.ip)
                .collect(),
            ports: subset
                .ports
                .unwrap_or_default()
                .into_iter()
                .map(|port| (port.port, port.protocol.unwrap_or_else(|| "TCP".to_owned())))
                .collect(),
        })
        .collect())
}

/// The seed inputs from `seedConfig.spec`.
///
/// # Errors
/// A message naming the unusable field.
pub fn seed_inputs(spec: &Value) -> Result<Inputs, String> {
    let networks: SeedNetworks =
        serde_json::from_value(spec.get("networks").cloned().unwrap_or_default())
            .map_err(|error| error.to_string())?;
    let list = |text: &str, field: &str| -> Result<Vec<Cidr>, String> {
        text.split(',')
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .map(|part| Cidr::parse(part).map_err(|e| format!("{field}: {e}")))
            .collect()
    };
    let single_stack_v4 = match networks.ip_families.as_slice() {
        [] => Some(true),
        [one] => Some(one == "IPv4"),
        _ => None,
    };
    Ok(Inputs {
        pods: list(&networks.pods, "pods")?,
        services: list(&networks.services, "services")?,
        nodes: list(networks.nodes.as_deref().unwrap_or_default(), "nodes")?,
        block: networks
            .block_cidrs
            .iter()
            .map(|c| Cidr::parse(c).map_err(|e| format!("blockCIDRs: {e}")))
            .collect::<Result<_, _>>()?,
        single_stack_v4,
        api_server: Vec::new(),
    })
}

/// The shoot network texts of an embedded Shoot: `spec.networking.{nodes,pods,services}` and the
/// `status.networking` lists, plus whether it is IPv4 single-stack.
pub fn shoot_network_texts(shoot: &Value) -> (Vec<String>, bool) {
    let mut out = Vec::new();
    let spec = &shoot["spec"]["networking"];
    for field in ["nodes", "pods", "services"] {
        if let Some(text) = spec[field].as_str() {
            out.push(text.to_owned());
        }
        if let Some(list) = shoot["status"]["networking"][field].as_array() {
            out.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
        }
    }
    let families: Vec<&str> = spec["ipFamilies"]
        .as_array()
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let v4_single = families.is_empty() || families == ["IPv4"];
    out.dedup();
    (out, v4_single)
}

async fn shoot_networks(seed: &kube::Client, name: &str) -> Result<Vec<Cidr>, Error> {
    let cluster = Api::<Cluster>::all(seed.clone())
        .get_opt(name)
        .await
        .map_err(|source| Error::Api {
            step: "reading cluster",
            key: name.to_owned(),
            source,
        })?
        .ok_or_else(|| Error::Cluster {
            name: name.to_owned(),
            message: "not found".to_owned(),
        })?;
    let (texts, v4_single) = shoot_network_texts(&cluster.spec.shoot);
    let mut out: Vec<Cidr> = Vec::new();
    for text in texts {
        let cidr = Cidr::parse(&text).map_err(|message| Error::Cluster {
            name: name.to_owned(),
            message,
        })?;
        if cidr.is_ipv4() == v4_single && !out.contains(&cidr) {
            out.push(cidr);
        }
    }
    Ok(out)
}
