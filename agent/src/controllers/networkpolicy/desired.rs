//! The six network policies of a seed namespace (spec §4.2): which namespaces get which policy,
//! and each policy's spec from the seed networks, the API server endpoints and, in shoot
//! namespaces, the shoot's networks. Pure.

use std::collections::BTreeMap;

use k8s_openapi::api::networking::v1::NetworkPolicySpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::{Value, json};

use super::cidr::{Cidr, except_for};

/// The managed policy names.
pub const POLICIES: [&str; 6] = [
    DENY_ALL,
    TO_RUNTIME_APISERVER,
    TO_PUBLIC_NETWORKS,
    TO_PRIVATE_NETWORKS,
    TO_BLOCKED_CIDRS,
    TO_DNS,
];
/// `deny-all`.
pub const DENY_ALL: &str = "deny-all";
/// `allow-to-runtime-apiserver`.
pub const TO_RUNTIME_APISERVER: &str = "allow-to-runtime-apiserver";
/// `allow-to-public-networks`.
pub const TO_PUBLIC_NETWORKS: &str = "allow-to-public-networks";
/// `allow-to-private-networks`.
pub const TO_PRIVATE_NETWORKS: &str = "allow-to-private-networks";
/// `allow-to-blocked-cidrs`.
pub const TO_BLOCKED_CIDRS: &str = "allow-to-blocked-cidrs";
/// `allow-to-dns`.
pub const TO_DNS: &str = "allow-to-dns";
/// The description annotation.
pub const DESCRIPTION: &str = "gardener.cloud/description";
/// Label of namespaces exposed through an exposure class handler.
pub const EXPOSURE_CLASS: &str = "handler.exposureclass.gardener.cloud/name";

const PRIVATE_V4: [&str; 4] = [
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "100.64.0.0/10",
];
const PRIVATE_V6: [&str; 2] = ["fe80::/10", "fc00::/7"];

/// One API server endpoint subset: addresses and `(port, protocol)`s.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointSubset {
    /// Addresses (`ip`).
    pub addresses: Vec<String>,
    /// Ports.
    pub ports: Vec<(i32, String)>,
}

/// Everything the policies are computed from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inputs {
    /// Seed pod networks.
    pub pods: Vec<Cidr>,
    /// Seed service networks.
    pub services: Vec<Cidr>,
    /// Seed node networks.
    pub nodes: Vec<Cidr>,
    /// `blockCIDRs`.
    pub block: Vec<Cidr>,
    /// The seed's family when single-stack (`Some(true)` IPv4, `Some(false)` IPv6).
    pub single_stack_v4: Option<bool>,
    /// Subsets of `default/kubernetes`.
    pub api_server: Vec<EndpointSubset>,
}

/// Whether `policy` belongs into namespace `name` with `labels`: its built-in namespace selectors
/// or any of `additional` (`controllers.networkPolicy.additionalNamespaceSelectors`, appended to
/// every policy's selectors as in gardenlet).
pub fn wanted(
    policy: &str,
    name: &str,
    labels: &BTreeMap<String, String>,
    additional: &[LabelSelector],
) -> bool {
    POLICIES.contains(&policy)
        && (built_in(policy, name, labels)
            || additional
                .iter()
                .any(|selector| selector_matches(selector, labels)))
}

/// Whether `labels` match a label selector (`matchLabels` and every `matchExpressions` entry; an
/// empty selector matches every namespace, an unknown operator none).
pub fn selector_matches(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let labels_match = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(key, value)| labels.get(key) == Some(value));
    labels_match
        && selector
            .match_expressions
            .iter()
            .flatten()
            .all(|expression| {
                let values = expression.values.as_deref().unwrap_or_default();
                let value = labels.get(&expression.key);
                match expression.operator.as_str() {
                    "In" => value.is_some_and(|v| values.contains(v)),
                    "NotIn" => value.is_none_or(|v| !values.contains(v)),
                    "Exists" => value.is_some(),
                    "DoesNotExist" => value.is_none(),
                    _ => false,
                }
            })
}

/// The built-in namespace selectors of `policy` (spec §4.2's table).
fn built_in(policy: &str, name: &str, labels: &BTreeMap<String, String>) -> bool {
    let garden = name == seedlet_api::names::namespaces::GARDEN;
    let role = labels
        .get(seedlet_api::names::labels::ROLE)
        .map(String::as_str)
        .unwrap_or_default();
    let exposed = labels.contains_key(EXPOSURE_CLASS);
    match policy {
        DENY_ALL => {
            garden
                || matches!(
                    role,
                    "shoot" | "istio-system" | "istio-ingress" | "extension"
                )
                || exposed
        }
        TO_RUNTIME_APISERVER => {
            garden
                || matches!(
                    role,
                    "istio-system" | "istio-ingress" | "shoot" | "extension"
                )
        }
        TO_PUBLIC_NETWORKS | TO_PRIVATE_NETWORKS | TO_BLOCKED_CIDRS => {
            garden || matches!(role, "shoot" | "extension")
        }
        TO_DNS => {
            garden
                || matches!(
                    role,
                    "shoot" | "extension" | "istio-system" | "istio-ingress"
                )
                || exposed
        }
        _ => false,
    }
}

/// The blocked networks of a namespace: blockCIDRs, the seed networks of a single-stack seed's
/// family, and (shoot namespaces) the shoot's networks.
pub fn blocked(inputs: &Inputs, shoot_networks: &[Cidr]) -> Vec<Cidr> {
    let mut out = inputs.block.clone();
    if let Some(v4) = inputs.single_stack_v4 {
        out.extend(
            inputs
                .pods
                .iter()
                .chain(&inputs.services)
                .chain(&inputs.nodes)
                .filter(|cidr| cidr.is_ipv4() == v4),
        );
    }
    out.extend(shoot_networks.iter().copied());
    out
}

/// `(description, spec)` of `policy`.
///
/// # Errors
/// `no service range configured` for `allow-to-dns` without a services network.
pub fn policy(
    policy: &str,
    inputs: &Inputs,
    shoot_networks: &[Cidr],
) -> Result<(&'static str, NetworkPolicySpec), String> {
    let selector = |label: &str| json!({"matchLabels": {label: "allowed"}});
    let (description, spec) = match policy {
        DENY_ALL => (
            "Disables all ingress and egress traffic into/from this namespace.",
            json!({"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}),
        ),
        TO_RUNTIME_APISERVER => (
            "Allows egress traffic from pods labeled with 'networking.gardener.cloud/to-runtime-apiserver=allowed' to the endpoints of the runtime cluster's API server.",
            egress(
                selector("networking.gardener.cloud/to-runtime-apiserver"),
                api_server_rules(&inputs.api_server),
            ),
        ),
        TO_PUBLIC_NETWORKS => {
            let blocked = blocked(inputs, shoot_networks);
            let mut v4_except: Vec<Cidr> = PRIVATE_V4
                .iter()
                .filter_map(|c| Cidr::parse(c).ok())
                .collect();
            v4_except.extend(inputs.block.iter().copied());
            let mut v6_except: Vec<Cidr> = PRIVATE_V6
                .iter()
                .filter_map(|c| Cidr::parse(c).ok())
                .collect();
            v6_except.extend(inputs.block.iter().copied());
            if inputs.single_stack_v4 == Some(false) {
                v6_except.extend(blocked.iter().filter(|c| !c.is_ipv4()));
            }
            let all_v4 = Cidr::parse("0.0.0.0/0").map_err(|e| e.to_string())?;
            let all_v6 = Cidr::parse("::/0").map_err(|e| e.to_string())?;
            (
                "Allows egress traffic from pods labeled with 'networking.gardener.cloud/to-public-networks=allowed' to all public network IPs, except for private networks (RFC1918), carrier-grade NAT (RFC6598), and explicitly blocked addresses configured by human operators.",
                egress(
                    selector("networking.gardener.cloud/to-public-networks"),
                    vec![
                        json!({"to": [ip_block(&all_v4, &v4_except), ip_block(&all_v6, &v6_except)]}),
                    ],
                ),
            )
        }
        TO_PRIVATE_NETWORKS => {
            let blocked = blocked(inputs, shoot_networks);
            let rule = |blocks: &[&str]| {
                let to: Vec<Value> = blocks
                    .iter()
                    .filter_map(|c| Cidr::parse(c).ok())
                    .map(|block| ip_block(&block, &blocked))
                    .collect();
                json!({"to": to})
            };
            (
                "Allows egress traffic from pods labeled with 'networking.gardener.cloud/to-private-networks=allowed' to the private networks (RFC1918), carrier-grade NAT (RFC6598), except for cluster-specific networks and explicitly blocked addresses configured by human operators.",
                egress(
                    selector("networking.gardener.cloud/to-private-networks"),
                    vec![rule(&PRIVATE_V4), rule(&PRIVATE_V6)],
                ),
            )
        }
        TO_BLOCKED_CIDRS => (
            "Allows egress traffic from pods labeled with 'networking.gardener.cloud/to-blocked-cidrs=allowed' to explicitly blocked addresses configured by human operators.",
            egress(
                selector("networking.gardener.cloud/to-blocked-cidrs"),
                inputs
                    .block
                    .iter()
                    .map(|cidr| json!({"to": [{"ipBlock": {"cidr": cidr.to_string()}}]}))
                    .collect(),
            ),
        ),
        TO_DNS => (
            "Allows egress traffic from pods labeled with 'networking.gardener.cloud/to-dns=allowed' to DNS running in the 'kube-system' namespace.",
            egress(
                selector("networking.gardener.cloud/to-dns"),
                vec![dns_rule(&inputs.services)?],
            ),
        ),
        other => return Err(format!("unknown network policy {other}")),
    };
    let spec: NetworkPolicySpec = serde_json::from_value(spec).map_err(|e| e.to_string())?;
    Ok((description, spec))
}

fn egress(pod_selector: Value, rules: Vec<Value>) -> Value {
    json!({"podSelector": pod_selector, "policyTypes": ["Egress"], "ingress": [], "egress": rules})
}

fn ip_block(block: &Cidr, candidates: &[Cidr]) -> Value {
    let except = except_for(block, candidates);
    if except.is_empty() {
        json!({"ipBlock": {"cidr": block.to_string()}})
    } else {
        json!({"ipBlock": {"cidr": block.to_string(), "except": except}})
    }
}

/// One rule per subset: its distinct addresses as host routes and its ports.
pub fn api_server_rules(subsets: &[EndpointSubset]) -> Vec<Value> {
    subsets
        .iter()
        .filter(|subset| !subset.addresses.is_empty())
        .map(|subset| {
            let mut to: Vec<String> = Vec::new();
            for address in &subset.addresses {
                if let Ok(ip) = address.parse() {
                    let text = Cidr::of_address(ip).to_string();
                    if !to.contains(&text) {
                        to.push(text);
                    }
                }
            }
            let to: Vec<Value> = to
                .iter()
                .map(|cidr| json!({"ipBlock": {"cidr": cidr}}))
                .collect();
            let ports: Vec<Value> = subset
                .ports
                .iter()
                .map(|(port, protocol)| json!({"port": port, "protocol": protocol}))
                .collect();
            json!({"to": to, "ports": ports})
        })
        .collect()
}

fn dns_rule(services: &[Cidr]) -> Result<Value, String> {
    if services.is_empty() {
        return Err("no service range configured".to_owned());
    }
    let pods = |app: &str| {
        json!({
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "podSelector": {"matchExpressions": [{"key": "k8s-app", "operator": "In", "values": [app]}]},
        })
    };
    let mut to = vec![
        pods("kube-dns"),
        pods("node-local-dns"),
        json!({"ipBlock": {"cidr": "169.254.20.10/32"}}),
        json!({"ipBlock": {"cidr": "fd30:1319:f1e:230b::1/128"}}),
    ];
    for range in services {
        to.push(json!({"ipBlock": {"cidr": range.host(10).to_string()}}));
    }
    let ports: Vec<Value> = [("UDP", 53), ("TCP", 53), ("UDP", 8053), ("TCP", 8053)]
        .iter()
        .map(|(protocol, port)| json!({"protocol": protocol, "port": port}))
        .collect();
    Ok(json!({"to": to, "ports": ports}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(text: &str) -> Cidr {
        Cidr::parse(text).unwrap()
    }

    fn inputs() -> Inputs {
        Inputs {
            pods: vec![c("10.1.0.0/16")],
            services: vec![c("10.96.0.0/12")],
            nodes: vec![],
            block: vec![c("10.250.0.0/16"), c("0.0.0.0/0")],
            single_stack_v4: Some(true),
            api_server: vec![EndpointSubset {
                addresses: vec!["10.0.0.1".into(), "10.0.0.1".into(), "10.0.0.2".into()],
                ports: vec![(443, "TCP".into())],
            }],
        }
    }

    fn spec_json(name: &str, shoot: &[Cidr]) -> Value {
        serde_json::to_value(policy(name, &inputs(), shoot).unwrap().1).unwrap()
    }

    #[test]
    fn namespaces_get_the_policies_of_their_role() {
        let role = |r: &str| BTreeMap::from([("gardener.cloud/role".to_owned(), r.to_owned())]);
        let got = |name: &str, labels: &BTreeMap<String, String>| -> Vec<&str> {
            POLICIES
                .iter()
                .copied()
                .filter(|p| wanted(p, name, labels, &[]))
                .collect()
        };
        assert_eq!(got("garden", &BTreeMap::new()).len(), 6);
        assert_eq!(got("shoot--a--b", &role("shoot")).len(), 6);
        assert_eq!(
            got("istio-system", &role("istio-system")),
            [DENY_ALL, TO_RUNTIME_APISERVER, TO_DNS]
        );
        let exposed = BTreeMap::from([(EXPOSURE_CLASS.to_owned(), "x".to_owned())]);
        assert_eq!(got("exposed", &exposed), [DENY_ALL, TO_DNS]);
        assert!(got("default", &BTreeMap::new()).is_empty());
    }

    #[test]
    fn additional_selectors_add_every_policy_to_matching_namespaces() {
        let selector: LabelSelector = serde_json::from_value(json!({
            "matchLabels": {"team": "a"},
            "matchExpressions": [{"key": "stage", "operator": "NotIn", "values": ["dev"]}],
        }))
        .unwrap();
        let labels = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        let count = |labels: &BTreeMap<String, String>| {
            POLICIES
                .iter()
                .filter(|p| wanted(p, "x", labels, std::slice::from_ref(&selector)))
                .count()
        };
        assert_eq!(count(&labels(&[("team", "a")])), 6);
        assert_eq!(count(&labels(&[("team", "a"), ("stage", "prod")])), 6);
        assert_eq!(count(&labels(&[("team", "a"), ("stage", "dev")])), 0);
        assert_eq!(count(&labels(&[("team", "b")])), 0);
        for (operator, values, present, expected) in [
            ("In", vec!["v"], Some("v"), true),
            ("In", vec!["v"], None, false),
            ("Exists", vec![], Some("w"), true),
            ("DoesNotExist", vec![], Some("w"), false),
            ("DoesNotExist", vec![], None, true),
            ("Near", vec!["v"], Some("v"), false),
        ] {
            let selector: LabelSelector = serde_json::from_value(json!({
                "matchExpressions": [{"key": "k", "operator": operator, "values": values}],
            }))
            .unwrap();
            let labels = present.map(|v| labels(&[("k", v)])).unwrap_or_default();
            assert_eq!(
                selector_matches(&selector, &labels),
                expected,
                "{operator} {present:?}"
            );
        }
    }

    #[test]
    fn specs_follow_the_rules() {
        let deny = spec_json(DENY_ALL, &[]);
        assert_eq!(deny["policyTypes"], json!(["Ingress", "Egress"]));
        let api = spec_json(TO_RUNTIME_APISERVER, &[]);
        assert_eq!(
            api["egress"],
            json!([{"to": [{"ipBlock": {"cidr": "10.0.0.1/32"}}, {"ipBlock": {"cidr": "10.0.0.2/32"}}],
                    "ports": [{"port": 443, "protocol": "TCP"}]}])
        );
        // Edge case 4: 0.0.0.0/0 in blockCIDRs is no exception of 10.0.0.0/8; the seed's pods are.
        let private = spec_json(TO_PRIVATE_NETWORKS, &[c("100.64.0.0/13")]);
        assert_eq!(
            private["egress"][0]["to"][0],
            json!({"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.250.0.0/16", "10.1.0.0/16", "10.96.0.0/12"]}})
        );
        assert_eq!(
            private["egress"][0]["to"][3],
            json!({"ipBlock": {"cidr": "100.64.0.0/10", "except": ["100.64.0.0/13"]}})
        );
        let public = spec_json(TO_PUBLIC_NETWORKS, &[]);
        assert_eq!(
            public["egress"][0]["to"][0]["ipBlock"]["except"],
            json!([
                "10.0.0.0/8",
                "172.16.0.0/12",
                "192.168.0.0/16",
                "100.64.0.0/10",
                "10.250.0.0/16"
            ])
        );
        let blocked = spec_json(TO_BLOCKED_CIDRS, &[]);
        assert_eq!(blocked["egress"].as_array().unwrap().len(), 2);
        // Edge case 6.
        let dns = spec_json(TO_DNS, &[]);
        assert_eq!(
            dns["egress"][0]["to"][4],
            json!({"ipBlock": {"cidr": "10.96.0.10/32"}})
        );
        assert_eq!(dns["egress"][0]["ports"].as_array().unwrap().len(), 4);
        let mut no_services = inputs();
        no_services.services.clear();
        assert_eq!(
            policy(TO_DNS, &no_services, &[]).unwrap_err(),
            "no service range configured"
        );
    }
}
