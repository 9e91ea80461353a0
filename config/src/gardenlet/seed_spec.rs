//! Checks of `seedConfig.spec`, kept as written (a `core.gardener.cloud/v1beta1` SeedSpec): field
//! names of the parts seedlet reads (a misspelt `provder` is an unknown field, not a missing
//! `provider`), required provider and network fields, and the network CIDRs.

use std::net::IpAddr;

use serde_json::{Map, Value};

use crate::validate::Checker;

const PATH: &str = "seedConfig.spec";

/// The fields of Gardener's v1beta1 `SeedSpec`.
const SPEC_FIELDS: &[&str] = &[
    "accessRestrictions",
    "backup",
    "dns",
    "extensions",
    "ingress",
    "networks",
    "provider",
    "resources",
    "settings",
    "taints",
    "volume",
];
/// The fields of `SeedProvider`.
const PROVIDER_FIELDS: &[&str] = &["providerConfig", "region", "type", "zones"];
/// The fields of `SeedNetworks`.
const NETWORKS_FIELDS: &[&str] = &[
    "blockCIDRs",
    "ipFamilies",
    "nodes",
    "pods",
    "services",
    "shootDefaults",
];
/// The fields of `ShootNetworks` (`networks.shootDefaults`).
const SHOOT_DEFAULTS_FIELDS: &[&str] = &["pods", "services"];

/// Every problem of the Seed spec `spec`.
pub(crate) fn check(checker: &mut Checker, spec: &Value) {
    let Value::Object(spec) = spec else {
        checker.report(PATH, "required (a Seed spec object)");
        return;
    };
    unknown_fields(checker, PATH, spec, SPEC_FIELDS);
    match spec.get("provider") {
        Some(Value::Object(provider)) => {
            let path = format!("{PATH}.provider");
            unknown_fields(checker, &path, provider, PROVIDER_FIELDS);
            for field in ["type", "region"] {
                required_string(checker, &format!("{path}.{field}"), provider.get(field));
            }
        }
        Some(_) => checker.report(format!("{PATH}.provider"), "expected a mapping of fields"),
        None => checker.report(format!("{PATH}.provider"), "required"),
    }
    match spec.get("networks") {
        Some(Value::Object(networks)) => self::networks(checker, networks),
        Some(_) => checker.report(format!("{PATH}.networks"), "expected a mapping of fields"),
        None => checker.report(format!("{PATH}.networks"), "required"),
    }
}

fn networks(checker: &mut Checker, networks: &Map<String, Value>) {
    let path = format!("{PATH}.networks");
    unknown_fields(checker, &path, networks, NETWORKS_FIELDS);
    for field in ["pods", "services"] {
        let field_path = format!("{path}.{field}");
        if required_string(checker, &field_path, networks.get(field)) {
            cidr_field(checker, &field_path, networks.get(field));
        }
    }
    if networks.contains_key("nodes") {
        cidr_field(checker, &format!("{path}.nodes"), networks.get("nodes"));
    }
    match networks.get("shootDefaults") {
        Some(Value::Object(defaults)) => {
            let defaults_path = format!("{path}.shootDefaults");
            unknown_fields(checker, &defaults_path, defaults, SHOOT_DEFAULTS_FIELDS);
            for field in SHOOT_DEFAULTS_FIELDS {
                if defaults.contains_key(*field) {
                    cidr_field(
                        checker,
                        &format!("{defaults_path}.{field}"),
                        defaults.get(*field),
                    );
                }
            }
        }
        Some(_) => checker.report(
            format!("{path}.shootDefaults"),
            "expected a mapping of fields",
        ),
        None => {}
    }
    match networks.get("blockCIDRs") {
        Some(Value::Array(blocked)) => {
            for (index, cidr) in blocked.iter().enumerate() {
                cidr_field(checker, &format!("{path}.blockCIDRs[{index}]"), Some(cidr));
            }
        }
        Some(_) => checker.report(format!("{path}.blockCIDRs"), "expected a list of CIDRs"),
        None => {}
    }
}

/// Reports the keys of `object` that are not in `known`, in document order.
fn unknown_fields(checker: &mut Checker, path: &str, object: &Map<String, Value>, known: &[&str]) {
    for key in object.keys().filter(|key| !known.contains(&key.as_str())) {
        checker.report(format!("{path}.{key}"), "unknown field");
    }
}

/// Reports a missing or empty string; true when there is one.
fn required_string(checker: &mut Checker, path: &str, value: Option<&Value>) -> bool {
    match value {
        Some(Value::String(text)) if !text.is_empty() => true,
        Some(Value::String(_)) | None | Some(Value::Null) => {
            checker.report(path, "required");
            false
        }
        Some(_) => {
            checker.report(path, "expected a string");
            false
        }
    }
}

fn cidr_field(checker: &mut Checker, path: &str, value: Option<&Value>) {
    match value {
        Some(Value::String(text)) => {
            if let Err(problem) = cidr(text) {
                checker.report(path, problem);
            }
        }
        _ => checker.report(path, "expected a CIDR such as 10.0.0.0/16"),
    }
}

/// Checks `address/prefix` with a prefix length that fits the address family.
fn cidr(text: &str) -> Result<(), String> {
    let not_a_cidr = |why: &str| format!("{text:?} is not a CIDR such as 10.0.0.0/16: {why}");
    let Some((address, prefix)) = text.split_once('/') else {
        return Err(not_a_cidr("no /prefix length"));
    };
    let address: IpAddr = address
        .parse()
        .map_err(|_| not_a_cidr(&format!("{address:?} is not an IP address")))?;
    let bits = if address.is_ipv4() { 32 } else { 128 };
    match prefix.parse::<u8>() {
        Ok(length) if u32::from(length) <= bits => Ok(()),
        _ => Err(not_a_cidr(&format!(
            "prefix length {prefix} is not between 0 and {bits}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn problems(spec: Value) -> Vec<String> {
        let mut checker = Checker::default();
        check(&mut checker, &spec);
        checker
            .into_problems()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn cidrs_need_an_address_and_a_prefix_that_fits_it() {
        let cases = [
            ("10.1.0.0/16", None),
            ("fd00::/8", None),
            ("0.0.0.0/0", None),
            (
                "10.1.0.0/99",
                Some("prefix length 99 is not between 0 and 32"),
            ),
            (
                "fd00::/129",
                Some("prefix length 129 is not between 0 and 128"),
            ),
            ("10.1.0.0", Some("no /prefix length")),
            ("10.1.0/16", Some("\"10.1.0\" is not an IP address")),
            (
                "10.1.0.0/x",
                Some("prefix length x is not between 0 and 32"),
            ),
        ];
        for (text, expected) in cases {
            let found = cidr(text).err();
            match expected {
                None => assert_eq!(found, None, "{text}"),
                Some(why) => {
                    let found = found.unwrap_or_default();
                    assert!(found.ends_with(why), "{text}: {found}");
                }
            }
        }
    }

    #[test]
    fn a_valid_spec_has_no_problems() {
        let spec = json!({
            "provider": {"type": "local", "region": "local", "zones": ["a"]},
            "networks": {
                "nodes": "172.18.0.0/16", "pods": "10.1.0.0/16", "services": "10.2.0.0/16",
                "shootDefaults": {"pods": "100.96.0.0/11"}, "blockCIDRs": ["169.254.169.254/32"]
            },
            "dns": {}, "ingress": {}, "settings": {}
        });
        assert_eq!(problems(spec), Vec::<String>::new());
    }

    #[test]
    fn typos_are_unknown_fields_and_bad_cidrs_are_named() {
        let spec = json!({
            "provder": {"type": "local"},
            "networks": {
                "pods": "10.1.0.0/99", "servces": "10.2.0.0/16",
                "shootDefaults": {"pod": "x"}, "blockCIDRs": ["1.2.3.4/32", "nope"]
            }
        });
        assert_eq!(
            problems(spec),
            [
                "seedConfig.spec.provder: unknown field",
                "seedConfig.spec.provider: required",
                "seedConfig.spec.networks.servces: unknown field",
                "seedConfig.spec.networks.pods: \"10.1.0.0/99\" is not a CIDR such as 10.0.0.0/16: prefix length 99 is not between 0 and 32",
                "seedConfig.spec.networks.services: required",
                "seedConfig.spec.networks.shootDefaults.pod: unknown field",
                "seedConfig.spec.networks.blockCIDRs[1]: \"nope\" is not a CIDR such as 10.0.0.0/16: no /prefix length",
            ]
        );
        assert_eq!(
            problems(
                json!({"provider": {"type": "local", "regoin": "x"}, "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"}})
            ),
            [
                "seedConfig.spec.provider.regoin: unknown field",
                "seedConfig.spec.provider.region: required",
            ]
        );
    }
}
