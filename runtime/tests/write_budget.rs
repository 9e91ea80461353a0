//! The write budget inside the client, against a sandbox API server: a controller that writes one
//! object far too often has its excess writes refused with 429 before they are sent, whatever
//! kind of write it sends, while reads, creates, other objects and other controllers go on.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use seedlet_runtime::budget::{self, guarded};
use seedlet_sandbox::Sandbox;
use serde_json::json;

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("n".to_owned(), "0".to_owned())])),
        ..ConfigMap::default()
    }
}

fn is_429(result: &Result<ConfigMap, kube::Error>) -> bool {
    matches!(result, Err(kube::Error::Api(status)) if status.code == 429)
}

#[tokio::test]
async fn a_flip_flopping_controller_is_held_to_the_budget_on_every_kind_of_write() {
    let sandbox = Sandbox::builder().start().await.expect("sandbox");
    // Wrapped twice on purpose: a write is still charged once.
    let client = guarded(guarded(sandbox.client()));
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for name in ["flip", "other"] {
        maps.create(&PostParams::default(), &config_map(name))
            .await
            .expect("creates are not charged");
    }

    let outcomes = budget::scoped("flip-flop", async {
        let mut outcomes = Vec::new();
        for n in 0..12 {
            let patch = json!({"data": {"n": n.to_string()}});
            let result = if n % 2 == 0 {
                maps.patch("flip", &PatchParams::default(), &Patch::Merge(&patch))
                    .await
            } else {
                let mut current = maps.get("flip").await.expect("reads are not charged");
                current.data = Some(BTreeMap::from([("n".to_owned(), n.to_string())]));
                maps.replace("flip", &PostParams::default(), &current).await
            };
            outcomes.push(result);
        }
        outcomes
    })
    .await;
    assert!(
        outcomes[..10].iter().all(Result::is_ok),
        "the burst of ten writes goes out: {outcomes:?}"
    );
    assert!(
        is_429(&outcomes[10]) && is_429(&outcomes[11]),
        "{outcomes:?}"
    );
    let stored = maps.get("flip").await.expect("get");
    assert_eq!(
        stored.data.unwrap_or_default().get("n").map(String::as_str),
        Some("9"),
        "refused writes were not sent"
    );

    let other_object = budget::scoped("flip-flop", async {
        maps.patch(
            "other",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"n": "1"}})),
        )
        .await
    })
    .await;
    assert!(other_object.is_ok(), "another object has its own budget");
    let other_controller = budget::scoped("another-controller", async {
        maps.delete("flip", &DeleteParams::default()).await
    })
    .await;
    assert!(
        other_controller.is_ok(),
        "another controller has its own budget: {other_controller:?}"
    );
}
