//! Table tests of the delete flow's pure decisions.

use super::*;

fn facts() -> Facts {
    Facts {
        namespace_alive: true,
        kube_apiserver_found: true,
        infrastructure_found: true,
        infrastructure_provider_status: true,
        control_plane_found: true,
        control_plane_deleting: false,
        workerless: false,
        hibernation_enabled: false,
        credentials: true,
    }
}

#[test]
fn the_plan_follows_upstreams_facts() {
    let all = Plan {
        cloudprovider_secret: true,
        redeploy_control_plane: true,
        worker_kinds: true,
        osc_wait: true,
        dns_records: true,
    };
    let cases: Vec<(&str, Facts, Plan)> = vec![
        ("a running shoot", facts(), all),
        (
            "terminating namespace: no secret, no re-deploy, no DNS",
            Facts {
                namespace_alive: false,
                ..facts()
            },
            Plan {
                cloudprovider_secret: false,
                redeploy_control_plane: false,
                dns_records: false,
                ..all
            },
        ),
        (
            "no kube-apiserver: no shoot cleanup, no re-deploy",
            Facts {
                kube_apiserver_found: false,
                ..facts()
            },
            Plan {
                redeploy_control_plane: false,
                ..all
            },
        ),
        (
            "ControlPlane being deleted is treated as gone",
            Facts {
                control_plane_deleting: true,
                ..facts()
            },
            Plan {
                redeploy_control_plane: false,
                ..all
            },
        ),
        (
            "kube-apiserver still there re-deploys a missing ControlPlane",
            Facts {
                control_plane_found: false,
                ..facts()
            },
            all,
        ),
        (
            "Infrastructure without provider status",
            Facts {
                infrastructure_provider_status: false,
                ..facts()
            },
            Plan {
                redeploy_control_plane: false,
                ..all
            },
        ),
        (
            "no Infrastructure",
            Facts {
                infrastructure_found: false,
                infrastructure_provider_status: false,
                ..facts()
            },
            Plan {
                redeploy_control_plane: false,
                ..all
            },
        ),
        (
            "hibernated: the OSC wait is skipped [QUIRK]",
            Facts {
                hibernation_enabled: true,
                ..facts()
            },
            Plan {
                osc_wait: false,
                ..all
            },
        ),
        (
            "workerless: no worker kinds, no secret",
            Facts {
                workerless: true,
                ..facts()
            },
            Plan {
                cloudprovider_secret: false,
                redeploy_control_plane: false,
                worker_kinds: false,
                osc_wait: false,
                dns_records: true,
            },
        ),
        (
            "no credentials: no secret",
            Facts {
                credentials: false,
                ..facts()
            },
            Plan {
                cloudprovider_secret: false,
                ..all
            },
        ),
        (
            "never created: nothing to re-deploy",
            Facts {
                kube_apiserver_found: false,
                infrastructure_found: false,
                infrastructure_provider_status: false,
                control_plane_found: false,
                ..facts()
            },
            Plan {
                redeploy_control_plane: false,
                ..all
            },
        ),
    ];
    for (case, facts, want) in cases {
        assert_eq!(plan(&facts), want, "{case}");
    }
}

#[test]
fn extensions_are_grouped_by_wanted_and_delete_lifecycle() {
    let cases = [
        (true, None, ExtensionGroup::Before),
        (true, Some("BeforeKubeAPIServer"), ExtensionGroup::Before),
        (true, Some("AfterKubeAPIServer"), ExtensionGroup::After),
        (true, Some("unknown"), ExtensionGroup::Before),
        (false, Some("AfterKubeAPIServer"), ExtensionGroup::Stale),
        (false, None, ExtensionGroup::Stale),
    ];
    for (wanted, lifecycle, want) in cases {
        assert_eq!(
            extension_group(wanted, lifecycle),
            want,
            "{wanted} {lifecycle:?}"
        );
    }
}
