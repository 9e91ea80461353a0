//! The quick scale runs as CI tests: `seedlet bench scale --quick` (made smaller still: the real
//! agent binary as a separate process against garden and seed sandboxes, shoots, registrations
//! and extension objects churning) and `seedlet bench garden --quick` (the real garden controller
//! binary as a separate process, simulated seeds with their own identities behind the seed
//! authorizer). Both assert correctness (nothing lost, everything measured), not the performance
//! goals: CI runs a debug build on a shared machine; the README has release numbers.

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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn quick_garden_run_loses_nothing_and_measures_everything() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = seedlet_scale::garden::GardenOptions {
        dir: Some(dir.path().to_owned()),
        ..seedlet_scale::garden::GardenOptions::quick(PathBuf::from(env!(
            "CARGO_BIN_EXE_seedlet-garden"
        )))
    };
    let report = seedlet_scale::garden::run(&options)
        .await
        .expect("garden run");
    eprintln!("{}", report.summary());

    assert!(report.lost.is_empty(), "lost: {:?}", report.lost);
    let seeds = options.seeds;
    // Every seed got an installation of every registration and of the provider registration.
    assert_eq!(
        report.counts.installations_seen,
        seeds * (options.registrations + 1)
    );
    assert_eq!(
        report.registration_to_installations.samples,
        seeds * (options.registrations + 1)
    );
    assert_eq!(
        report.registration_change_to_installations.samples,
        seeds * options.registration_changes,
        "every changed registration reached every seed"
    );
    assert_eq!(report.csr_approval.samples, options.csrs);
    assert_eq!(report.csr_issued.samples, options.csrs);
    assert_eq!(
        report.lease_renewal_to_unknown.samples,
        options.expiring_seeds
    );
    // A seed turns Unknown only after monitorPeriod without renewal.
    let monitor_ms = options.monitor_period.as_secs_f64() * 1e3;
    assert!(
        report.lease_renewal_to_unknown.p50_ms >= monitor_ms,
        "Unknown too early: {:?}",
        report.lease_renewal_to_unknown
    );
    assert!(report.lease_renewal_request.samples > seeds);
    assert!(
        !report.garden_controller.samples.is_empty()
            && report.garden_controller.rss_peak_mib > 0.0
            && report.garden_controller.cpu_seconds > 0.0
    );

    let json = serde_json::to_value(&report).expect("report is JSON");
    for field in [
        "machine",
        "parameters",
        "garden_controller",
        "csr_approval",
        "registration_change_to_installations",
        "lease_renewal_to_unknown",
        "counts",
        "lost",
        "goals",
    ] {
        assert!(json.get(field).is_some(), "report has {field}");
    }
}
