//! Tests of the control-plane chart's values, rendering and health decision.

use seedlet_api::resources::ManagedResource;
use serde_json::json;

use super::*;

fn shoot(hibernated: bool) -> Shoot {
    serde_json::from_value(json!({
        "metadata": {"name": "s", "namespace": "garden-dev", "uid": "u-1"},
        "spec": {"region": "local", "provider": {"type": "local", "workers": [{"name": "a", "machine": {"type": "local"}}]},
                 "kubernetes": {"version": "1.32.0"}, "purpose": "evaluation",
                 "hibernation": {"enabled": hibernated}},
    }))
    .expect("shoot")
}

fn demo() -> ChartSource {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../charts/control-plane-demo");
    ChartSource::new(
        ControlPlaneChart {
            path: Some(path.to_owned()),
            raw_chart: None,
        },
        Limits::default(),
    )
}

#[test]
fn values_carry_the_shoot_and_scale_to_zero_while_hibernated() {
    for (hibernated, replicas) in [(false, 1), (true, 0)] {
        let values = values(&shoot(hibernated), "local", "shoot--dev--s");
        assert_eq!(values["replicas"], replicas);
        assert_eq!(values["shoot"]["hibernated"], hibernated);
        assert_eq!(values["shoot"]["name"], "s");
        assert_eq!(values["shoot"]["namespace"], "garden-dev");
        assert_eq!(values["shoot"]["technicalID"], "shoot--dev--s");
        assert_eq!(values["shoot"]["uid"], "u-1");
        assert_eq!(values["shoot"]["kubernetesVersion"], "1.32.0");
        assert_eq!(values["shoot"]["purpose"], "evaluation");
        assert_eq!(values["seed"]["name"], "local");
    }
}

#[test]
fn the_demo_chart_renders_a_kube_apiserver_with_the_shoots_replicas() {
    for (hibernated, replicas) in [(false, 1), (true, 0)] {
        let data = demo()
            .render(&shoot(hibernated), "local", "shoot--dev--s")
            .expect("render");
        let text = data
            .get("control-plane-demo_templates_kube-apiserver.yaml")
            .unwrap_or_else(|| panic!("{:?}", data.keys().collect::<Vec<_>>()));
        let object: serde_json::Value =
            serde_yaml::from_str(text.trim().trim_matches('-')).expect("yaml");
        assert_eq!(object["kind"], "Deployment");
        assert_eq!(object["metadata"]["name"], "kube-apiserver");
        assert_eq!(object["metadata"]["namespace"], "shoot--dev--s");
        assert_eq!(object["spec"]["replicas"], replicas);
    }
}

#[test]
fn chart_errors_name_the_field() {
    let cases = [
        (
            ControlPlaneChart {
                path: Some("/nonexistent/chart.tgz".into()),
                raw_chart: None,
            },
            "controllers.shoot.controlPlaneChart.path /nonexistent/chart.tgz",
        ),
        (
            ControlPlaneChart {
                path: None,
                raw_chart: Some("not base64!".into()),
            },
            "controllers.shoot.controlPlaneChart.rawChart: not base64",
        ),
        (
            ControlPlaneChart {
                path: None,
                raw_chart: Some("aGVsbG8=".into()),
            },
            "controllers.shoot.controlPlaneChart.rawChart: ",
        ),
    ];
    for (config, prefix) in cases {
        let error = ChartSource::new(config, Limits::default())
            .load()
            .expect_err("invalid chart");
        assert!(error.starts_with(prefix), "{error}");
    }
}

#[test]
fn a_chart_over_the_limits_is_refused() {
    let limits = Limits {
        max_file_bytes: 16,
        ..Limits::default()
    };
    let mut source = demo();
    source.limits = limits;
    let error = source.load().expect_err("over the limit");
    assert!(
        error.starts_with("controllers.shoot.controlPlaneChart.path"),
        "{error}"
    );
}

fn managed(generation: i64, status: serde_json::Value) -> ManagedResource {
    serde_json::from_value(json!({
        "apiVersion": "resources.gardener.cloud/v1alpha1", "kind": "ManagedResource",
        "metadata": {"name": NAME, "namespace": "shoot--dev--s", "generation": generation},
        "spec": {"class": "seed", "secretRefs": [{"name": "control-plane-00000000"}]},
        "status": status,
    }))
    .expect("managed resource")
}

fn condition(type_: &str, status: &str) -> serde_json::Value {
    json!({"type": type_, "status": status, "reason": "r", "message": "m",
           "lastTransitionTime": "2025-01-01T00:00:00Z", "lastUpdateTime": "2025-01-01T00:00:00Z"})
}

#[test]
fn health_needs_the_generation_observed_and_both_conditions_true() {
    let both = json!([
        condition("ResourcesApplied", "True"),
        condition("ResourcesHealthy", "True")
    ]);
    let cases = [
        (json!({"observedGeneration": 2, "conditions": both}), None),
        (
            json!({"observedGeneration": 1, "conditions": both}),
            Some("observed generation outdated (1/2)"),
        ),
        (
            json!({"observedGeneration": 2, "conditions": [condition("ResourcesApplied", "True")]}),
            Some("condition \"ResourcesHealthy\" has not been reported yet"),
        ),
        (
            json!({"observedGeneration": 2, "conditions": [condition("ResourcesApplied", "False"),
                condition("ResourcesHealthy", "True")]}),
            Some("condition \"ResourcesApplied\" is False: m"),
        ),
        (
            json!({"observedGeneration": 2, "conditions": [condition("ResourcesApplied", "True"),
                condition("ResourcesHealthy", "Progressing")]}),
            Some("condition \"ResourcesHealthy\" is Progressing: m"),
        ),
    ];
    for (status, want) in cases {
        assert_eq!(
            unhealthy(&managed(2, status.clone())).as_deref(),
            want,
            "{status}"
        );
    }
}
