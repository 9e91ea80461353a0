//! Secrets: `stringData` folded into base64 `data`, the `Opaque` type default, and `type` as a
//! selectable field.

use base64::Engine;
use serde_json::{Value, json};

use super::strategy::{Context, Strategy};
use crate::resources::{ResourceType, Subresource};
use crate::status::ApiError;

/// Secret rules.
pub struct Secrets;

impl Strategy for Secrets {
    fn selectable_fields<'r>(&self, _rt: &'r ResourceType) -> Vec<&'r str> {
        vec!["type"]
    }

    fn prepare_create(&self, _ctx: &Context<'_>, object: &mut Value) -> Result<(), ApiError> {
        secret_defaults(object, None);
        Ok(())
    }

    fn prepare_update(
        &self,
        _ctx: &Context<'_>,
        old: &Value,
        new: &mut Value,
        _subresource: &Subresource,
    ) -> Result<(), ApiError> {
        secret_defaults(new, Some(old));
        Ok(())
    }
}

/// Encodes `stringData` into `data` and defaults `type` (to the old type on update, else `Opaque`).
fn secret_defaults(object: &mut Value, old: Option<&Value>) {
    if let Some(Value::Object(string_data)) =
        object.as_object_mut().and_then(|o| o.remove("stringData"))
    {
        let data = object
            .as_object_mut()
            .map(|o| o.entry("data").or_insert_with(|| json!({})));
        if let Some(Value::Object(data)) = data {
            for (k, v) in string_data {
                let text = v.as_str().unwrap_or_default().to_string();
                data.insert(
                    k,
                    json!(base64::engine::general_purpose::STANDARD.encode(text)),
                );
            }
        }
    }
    if object.get("type").is_none_or(Value::is_null) {
        let previous = old
            .and_then(|o| o.get("type"))
            .cloned()
            .unwrap_or_else(|| json!("Opaque"));
        object["type"] = previous;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_data_is_encoded_into_data() {
        let mut secret = json!({"stringData": {"user": "admin"}, "data": {"pw": "c2VjcmV0"}});
        secret_defaults(&mut secret, None);
        assert_eq!(
            secret,
            json!({"data": {"pw": "c2VjcmV0", "user": "YWRtaW4="}, "type": "Opaque"})
        );
    }

    #[test]
    fn an_update_without_type_keeps_the_old_type() {
        let mut secret = json!({"data": {}});
        secret_defaults(&mut secret, Some(&json!({"type": "kubernetes.io/tls"})));
        assert_eq!(secret["type"], "kubernetes.io/tls");
    }
}
