//! The quick scale run (`seedlet bench scale --quick`, made smaller still) as a CI test: the real
//! agent binary as a separate process against garden and seed sandboxes, shoots, registrations
//! and extension objects churning. Asserts correctness (nothing lost, everything measured), not
//! the performance goals: CI runs a debug build on a shared machine; the README has release
//! numbers.

use std::path::PathBuf;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn quick_scale_run_loses_nothing_and_measures_everything() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = seedlet_scale::Options {
        shoots: 10,
        registrations: 3,
        extension_objects: 80,
        churn: Duration::from_secs(5),
        state_changes_per_second: 40,
        dir: Some(dir.path().to_owned()),
        ..seedlet_scale::Options::quick(PathBuf::from(env!("CARGO_BIN_EXE_seedlet-agent")))
    };
    let report = seedlet_scale::run(&options).await.expect("scale run");
    eprintln!("{}", report.summary());

    assert!(report.lost.is_empty(), "lost updates: {:?}", report.lost);
    // Every installation (3 + the provider registration) got its ManagedResource.
    assert_eq!(report.installation_to_managed_resource.samples, 4);
    assert!(
        report.initial_states_to_shoot_state.samples >= 80,
        "every first state is measured: {:?}",
        report.initial_states_to_shoot_state
    );
    assert!(
        report.extension_state_to_shoot_state.samples > 0,
        "the churn is measured: {:?}",
        report.extension_state_to_shoot_state
    );
    assert!(report.shoot_change_to_cluster.samples > 0);
    assert!(report.traffic.shoot_state_writes > 0);
    assert!(
        report.traffic.shoot_state_writes <= report.traffic.state_changes_written,
        "the agent never writes a ShootState more often than states change"
    );
    assert!(report.traffic.garden_requests > 0 && report.traffic.seed_requests > 0);
    assert!(!report.agent.samples.is_empty() && report.agent.rss_peak_mib > 0.0);
    assert!(report.bootstrap_ms > 0.0 && report.bootstrap_ms <= report.ready_ms);

    let json = serde_json::to_value(&report).expect("report is JSON");
    for field in [
        "machine",
        "parameters",
        "agent",
        "installation_to_managed_resource",
        "extension_state_to_shoot_state",
        "lease_drift",
        "traffic",
        "lost",
        "goals",
    ] {
        assert!(json.get(field).is_some(), "report has {field}");
    }
}
