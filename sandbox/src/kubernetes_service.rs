//! The `default/kubernetes` Service, Endpoints and EndpointSlice that point at the sandbox
//! itself (127.0.0.1 and its port), as kube-apiserver's bootstrap controller and endpoint
//! reconciler keep them: clients and controllers (such as a seed's network policies) read the API
//! server's address from there.
//!
//! The sandbox writes them when it starts, after its port is known (a persistent sandbox started on
//! another port rewrites the address), and checks them again every 10 s like kube-apiserver: a
//! deleted object comes back and an edited address or label is put right.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::auth::authn::UserInfo;
use crate::registry::generic::{self, Ownership, Writer};
use crate::resources::Subresource;
use crate::status::ApiError;
use crate::storage::State;

/// The namespace and name of all three objects.
const NAMESPACE: &str = "default";
const NAME: &str = "kubernetes";
/// The address the sandbox serves on.
const ADDRESS: &str = "127.0.0.1";

/// One object kept: its resource and the fields the API server owns.
struct Kept {
    group: &'static str,
    plural: &'static str,
    object: Value,
    /// Fields (besides `metadata.labels`), as paths, that are compared and rewritten.
    owned: &'static [&'static [&'static str]],
}

/// How often kube-apiserver checks the objects (its endpoint reconciler's interval).
pub const INTERVAL: Duration = Duration::from_secs(10);

/// Checks the objects every `interval` (the first write is the start's) until the sandbox
/// shuts down. A failed write is a warning and is tried again at the next interval.
pub async fn keep(api: Arc<crate::endpoints::Api>, port: u16, interval: Duration) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = api.shutdown.cancelled() => return,
        }
        if let Err(error) = reconcile(&mut api.store.lock(), port) {
            tracing::warn!(
                code = error.code,
                message = %error.body["message"],
                "writing default/kubernetes failed"
            );
        }
    }
}

/// Creates or corrects the three objects for a server on `port`; an object that already has the
/// right labels and address is not written again.
///
/// # Errors
/// A write the registry refuses (which a store holding only what the sandbox wrote never does).
pub fn reconcile(state: &mut State, port: u16) -> Result<(), ApiError> {
    let user = UserInfo {
        username: "system:apiserver".into(),
        groups: vec!["system:masters".into()],
        ..UserInfo::default()
    };
    let writer = Writer {
        manager: "kube-apiserver",
        user: &user,
        dry_run: false,
    };
    let registry = state.registry();
    for kept in desired(port) {
        let Some(rt) = registry.lookup(kept.group, "v1", kept.plural) else {
            continue;
        };
        let Some(existing) = state.get(&rt, NAMESPACE, NAME) else {
            generic::create(state, &rt, NAMESPACE, kept.object, &writer)?;
            continue;
        };
        let mut updated = (*existing).clone();
        for path in kept.owned {
            let (mut target, mut source) = (&mut updated, &kept.object);
            for key in *path {
                target = &mut target[*key];
                source = &source[*key];
            }
            *target = source.clone();
        }
        for (key, value) in kept.object["metadata"]["labels"]
            .as_object()
            .into_iter()
            .flatten()
        {
            updated["metadata"]["labels"][key] = value.clone();
        }
        if updated != *existing {
            generic::update(
                state,
                &rt,
                NAMESPACE,
                NAME,
                &Subresource::None,
                updated,
                &writer,
                Ownership::Record,
            )?;
        }
    }
    Ok(())
}

/// The objects kube-apiserver v1.32 keeps, with the sandbox's address and `port`.
fn desired(port: u16) -> [Kept; 3] {
    let metadata = |labels: Value| json!({"name": NAME, "namespace": NAMESPACE, "labels": labels});
    let service = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(json!({"component": "apiserver", "provider": "kubernetes"})),
        "spec": {
            "type": "ClusterIP",
            "sessionAffinity": "None",
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}],
        },
    });
    let endpoints = json!({
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": metadata(json!({"endpointslice.kubernetes.io/skip-mirror": "true"})),
        "subsets": [{
            "addresses": [{"ip": ADDRESS}],
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
        }],
    });
    let slice = json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": metadata(json!({"kubernetes.io/service-name": NAME})),
        "addressType": "IPv4",
        "endpoints": [{"addresses": [ADDRESS], "conditions": {"ready": true}}],
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
    });
    [
        Kept {
            group: "",
            plural: "services",
            object: service,
            owned: &[&["spec", "ports"]],
        },
        Kept {
            group: "",
            plural: "endpoints",
            object: endpoints,
            owned: &[&["subsets"]],
        },
        Kept {
            group: "discovery.k8s.io",
            plural: "endpointslices",
            object: slice,
            owned: &[&["addressType"], &["endpoints"], &["ports"]],
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::Store;

    fn store() -> Store {
        let store = Store::open(None, crate::registry::crd::registry_for).expect("memory store");
        let mut state = store.lock();
        let registry = state.registry();
        let namespaces = registry.lookup("", "v1", "namespaces").expect("namespaces");
        let user = UserInfo::default();
        let writer = Writer {
            manager: "test",
            user: &user,
            dry_run: false,
        };
        generic::create(
            &mut state,
            &namespaces,
            "",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}),
            &writer,
        )
        .expect("namespace");
        drop(state);
        store
    }

    fn stored(state: &State, plural: &str) -> Value {
        let key = if plural == "endpointslices" {
            "endpointslices.discovery.k8s.io"
        } else {
            plural
        };
        (*state.get_by_key(key, NAMESPACE, NAME).expect("stored")).clone()
    }

    #[test]
    fn objects_point_at_the_sandbox_port_and_follow_a_new_one() {
        let store = store();
        let mut state = store.lock();
        reconcile(&mut state, 6443).expect("first reconcile");
        let service = stored(&state, "services");
        assert_eq!(service["spec"]["ports"][0]["targetPort"], 6443);
        assert_eq!(service["spec"]["ports"][0]["port"], 443);
        assert_eq!(service["metadata"]["labels"]["component"], "apiserver");
        let cluster_ip = service["spec"]["clusterIP"].clone();
        assert!(cluster_ip.is_string());
        let endpoints = stored(&state, "endpoints");
        assert_eq!(endpoints["subsets"][0]["addresses"][0]["ip"], ADDRESS);
        assert_eq!(endpoints["subsets"][0]["ports"][0]["port"], 6443);
        let slice = stored(&state, "endpointslices");
        assert_eq!(slice["endpoints"][0]["addresses"][0], ADDRESS);
        assert_eq!(slice["ports"][0]["port"], 6443);
        assert_eq!(
            slice["metadata"]["labels"]["kubernetes.io/service-name"],
            NAME
        );

        reconcile(&mut state, 6443).expect("second reconcile");
        assert_eq!(
            stored(&state, "endpoints")["metadata"]["resourceVersion"],
            endpoints["metadata"]["resourceVersion"],
            "an unchanged object is not written again"
        );

        reconcile(&mut state, 7443).expect("new port");
        assert_eq!(
            stored(&state, "endpoints")["subsets"][0]["ports"][0]["port"],
            7443
        );
        assert_eq!(stored(&state, "endpointslices")["ports"][0]["port"], 7443);
        let service = stored(&state, "services");
        assert_eq!(service["spec"]["ports"][0]["targetPort"], 7443);
        assert_eq!(
            service["spec"]["clusterIP"], cluster_ip,
            "the address stays"
        );
    }
}
