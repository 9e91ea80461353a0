//! Services: DNS-1035 names, the type/affinity/port defaults, and a cluster IP allocated on
//! create and kept across updates that leave it out.

use serde_json::{Value, json};

use super::strategy::{Context, Strategy};
use crate::registry::validation::NameRule;
use crate::resources::Subresource;
use crate::status::ApiError;
use crate::storage::State;

/// The spec fields the server allocates and an update may leave out.
const ALLOCATED: [&str; 4] = ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"];

/// Service rules.
pub struct Services;

impl Strategy for Services {
    fn name_rule(&self) -> NameRule {
        NameRule::Dns1035
    }

    fn prepare_create(&self, ctx: &Context<'_>, object: &mut Value) -> Result<(), ApiError> {
        service_defaults(ctx.state, object);
        Ok(())
    }

    fn prepare_update(
        &self,
        _ctx: &Context<'_>,
        old: &Value,
        new: &mut Value,
        _subresource: &Subresource,
    ) -> Result<(), ApiError> {
        for field in ALLOCATED {
            if new.pointer(&format!("/spec/{field}")).is_none()
                && let (Some(value), Some(spec)) = (
                    old.pointer(&format!("/spec/{field}")),
                    new.get_mut("spec").and_then(Value::as_object_mut),
                )
            {
                spec.insert(field.into(), value.clone());
            }
        }
        Ok(())
    }
}

fn service_defaults(state: &State, object: &mut Value) {
    if object.get("spec").is_none_or(|s| !s.is_object()) {
        object["spec"] = json!({});
    }
    let spec = &mut object["spec"];
    let service_type = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
        .to_string();
    spec["type"] = json!(service_type);
    if spec.get("sessionAffinity").is_none() {
        spec["sessionAffinity"] = json!("None");
    }
    if service_type != "ExternalName" && spec.get("clusterIP").is_none() {
        let count = state.list("services", None).len() as u64 + 1;
        let ip = format!("10.96.{}.{}", (count / 250) % 250, count % 250 + 1);
        spec["clusterIP"] = json!(ip);
        spec["clusterIPs"] = json!([ip]);
        spec["ipFamilies"] = json!(["IPv4"]);
        spec["ipFamilyPolicy"] = json!("SingleStack");
    }
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            port.entry("protocol").or_insert_with(|| json!("TCP"));
            if let Some(number) = port.get("port").cloned() {
                port.entry("targetPort").or_insert(number);
            }
        }
    }
    object["status"] = json!({"loadBalancer": {}});
}
