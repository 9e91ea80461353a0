//! `default/kubernetes`: the Service, Endpoints and EndpointSlice kube-apiserver keeps pointing at
//! itself, read through HTTP, rewritten when a persistent sandbox comes back on another port, and
//! repaired after a delete or an edit.

use http::{Method, StatusCode};
use seedlet_sandbox::Sandbox;
use serde_json::{Value, json};

use super::send;

/// The three objects as a started sandbox serves them.
async fn kubernetes_objects(sb: &Sandbox) -> [Value; 3] {
    let mut out = [Value::Null, Value::Null, Value::Null];
    for (slot, path) in out.iter_mut().zip([
        "/api/v1/namespaces/default/services/kubernetes",
        "/api/v1/namespaces/default/endpoints/kubernetes",
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes",
    ]) {
        let (status, _, object) = send(sb, Method::GET, path, None, None).await;
        assert_eq!(status, StatusCode::OK, "{path}: {object}");
        *slot = object;
    }
    out
}

fn port(sb: &Sandbox) -> u16 {
    sb.endpoint()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("endpoint port")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_kubernetes_points_at_the_sandbox_and_follows_its_port() {
    let dir = tempfile::tempdir().expect("state directory");
    let sb = Sandbox::builder()
        .name("kubernetes-service")
        .dir(dir.path())
        .start()
        .await
        .expect("sandbox starts");
    let first_port = port(&sb);
    let [service, endpoints, slice] = kubernetes_objects(&sb).await;
    assert_eq!(
        service["metadata"]["labels"],
        json!({"component": "apiserver", "provider": "kubernetes"})
    );
    assert_eq!(
        service["spec"]["ports"],
        json!([{"name": "https", "port": 443, "protocol": "TCP", "targetPort": first_port}])
    );
    assert_eq!(service["spec"]["type"], "ClusterIP");
    let cluster_ip = service["spec"]["clusterIP"].clone();
    assert!(cluster_ip.is_string(), "{service}");
    assert_eq!(
        endpoints["subsets"],
        json!([{"addresses": [{"ip": "127.0.0.1"}],
                "ports": [{"name": "https", "port": first_port, "protocol": "TCP"}]}])
    );
    assert_eq!(
        endpoints["metadata"]["labels"],
        json!({"endpointslice.kubernetes.io/skip-mirror": "true"})
    );
    assert_eq!(slice["addressType"], "IPv4");
    assert_eq!(
        slice["endpoints"],
        json!([{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}])
    );
    assert_eq!(
        slice["ports"],
        json!([{"name": "https", "port": first_port, "protocol": "TCP"}])
    );
    assert_eq!(
        slice["metadata"]["labels"],
        json!({"kubernetes.io/service-name": "kubernetes"})
    );
    sb.shutdown().await;

    // Back from the same state on another port: the address moves, the Service keeps its IP.
    let second_port = loop {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("free port");
        let free = listener.local_addr().expect("address").port();
        if free != first_port {
            break free;
        }
    };
    let sb = Sandbox::builder()
        .name("kubernetes-service")
        .dir(dir.path())
        .port(second_port)
        .start()
        .await
        .expect("sandbox restarts");
    assert_eq!(port(&sb), second_port);
    let [service, endpoints, slice] = kubernetes_objects(&sb).await;
    assert_eq!(service["spec"]["ports"][0]["targetPort"], second_port);
    assert_eq!(service["spec"]["clusterIP"], cluster_ip);
    assert_eq!(endpoints["subsets"][0]["ports"][0]["port"], second_port);
    assert_eq!(slice["ports"][0]["port"], second_port);
    sb.shutdown().await;
}

/// kube-apiserver checks the objects every 10 s: a deleted Service and an edited Endpoints
/// address are put back (here with a 200 ms interval).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_kubernetes_is_repaired_after_a_delete_or_an_edit() {
    let sb = Sandbox::builder()
        .name("kubernetes-repair")
        .kubernetes_service_interval(std::time::Duration::from_millis(200))
        .start()
        .await
        .expect("sandbox starts");
    let [service, endpoints, _] = kubernetes_objects(&sb).await;
    let service_path = "/api/v1/namespaces/default/services/kubernetes";
    let (status, _, _) = send(&sb, Method::DELETE, service_path, None, None).await;
    assert_eq!(status, StatusCode::OK);
    let endpoints_path = "/api/v1/namespaces/default/endpoints/kubernetes";
    let mut edited = endpoints.clone();
    edited["subsets"][0]["addresses"] = json!([{"ip": "10.0.0.1"}]);
    let (status, _, answer) = send(&sb, Method::PUT, endpoints_path, None, Some(edited)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["subsets"][0]["addresses"],
        json!([{"ip": "10.0.0.1"}])
    );

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let (status, _, back) = send(&sb, Method::GET, service_path, None, None).await;
        let (_, _, now) = send(&sb, Method::GET, endpoints_path, None, None).await;
        if status == StatusCode::OK && now["subsets"] == endpoints["subsets"] {
            assert_eq!(back["spec"]["ports"], service["spec"]["ports"]);
            assert_ne!(
                back["metadata"]["uid"], service["metadata"]["uid"],
                "created again"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not repaired: service {status}, endpoints {}",
            now["subsets"]
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    sb.shutdown().await;
}
