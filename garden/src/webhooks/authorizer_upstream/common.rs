//! Upstream's resource tables run for gardenlets and extensions alike.

use super::*;

const ALL_BUT_DELETECOLLECTION: &str = "[create delete get list patch update watch]";
const MUTATIONS: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];

/// The read-only kinds (`get`, `list`, `watch` through the graph): allowed with a path, every
/// other verb refused, no path, subresources and nameless requests refused. `no_path_case`,
/// `subresource_case`, `nameless_case`: whether upstream's table has those entries.
fn read_only(
    resource: Resource,
    no_path_case: bool,
    subresource_case: bool,
    nameless_case: bool,
) -> Table {
    let mut table = Table::default()
        .allow_path(resource.each(&["get", "list", "watch"]))
        .refuse(&verbs("[get list watch]"), resource.each(&MUTATIONS));
    if no_path_case {
        table = table.refuse(
            NO_RELATIONSHIP,
            [resource.ask("get").related(Related::NoPath)],
        );
    }
    if subresource_case {
        table = table.refuse(&subresources("[]"), [resource.ask("get").sub("status")]);
    }
    if nameless_case {
        table = table.refuse(NO_NAME, [resource.ask("get").named("")]);
    }
    table
}

#[test]
fn read_only_kinds() {
    let tables = || {
        [
            read_only(
                Resource::new(Kind::CloudProfile, (CORE, "cloudprofiles"), "", "fooCloud"),
                true,
                true,
                true,
            ),
            read_only(
                Resource::new(Kind::SecretBinding, (CORE, "secretbindings"), "bar", "foo"),
                true,
                true,
                true,
            ),
            read_only(
                Resource::new(
                    Kind::CredentialsBinding,
                    ("security.gardener.cloud", "credentialsbindings"),
                    "bar",
                    "foo",
                ),
                true,
                true,
                true,
            ),
            read_only(
                Resource::new(
                    Kind::NamespacedCloudProfile,
                    (CORE, "namespacedcloudprofiles"),
                    "bar",
                    "fooCloud",
                ),
                true,
                false,
                false,
            ),
            read_only(
                Resource::new(Kind::Namespace, ("", "namespaces"), "", "foo"),
                true,
                true,
                true,
            ),
            read_only(
                Resource::new(Kind::Project, (CORE, "projects"), "", "foo"),
                true,
                true,
                true,
            ),
            read_only(
                Resource::new(
                    Kind::ExposureClass,
                    (CORE, "exposureclasses"),
                    "",
                    "fooExposureClass",
                ),
                true,
                true,
                true,
            ),
        ]
    };
    for client in CLIENTS {
        for table in tables() {
            table.check(client);
        }
    }
}

#[test]
fn config_maps() {
    let config_map = Resource::new(Kind::ConfigMap, ("", "configmaps"), "bar", "foo");
    for client in CLIENTS {
        Table::default()
            .allow([config_map
                .ask("get")
                .within("gardener-system-public")
                .named("gardener-info")])
            .allow_path([config_map
                .ask("get")
                .within("kube-system")
                .named("cluster-identity")])
            .allow([
                config_map.ask("create"),
                config_map.ask("delete").related(Related::Absent),
            ])
            .allow_path(config_map.each(&["patch", "update", "get", "list", "watch"]))
            .refuse(
                &verbs(ALL_BUT_DELETECOLLECTION),
                [config_map.ask("deletecollection")],
            )
            .refuse(
                NO_RELATIONSHIP,
                [config_map.ask("get").related(Related::NoPath)],
            )
            .refuse(&subresources("[]"), [config_map.ask("get").sub("status")])
            .refuse(NO_NAME, [config_map.ask("get").named("")])
            .check(client);
    }
}

#[test]
fn workload_identities() {
    let identity = Resource::new(
        Kind::WorkloadIdentity,
        ("security.gardener.cloud", "workloadidentities"),
        "bar",
        "foo",
    );
    for client in CLIENTS {
        Table::default()
            .allow_path(identity.each(&["get", "list", "watch", "create", "patch"]))
            .allow_path([identity.ask("create").sub("token")])
            .refuse(
                &verbs("[create get list patch watch]"),
                identity.each(&["update", "delete", "deletecollection"]),
            )
            .refuse(
                NO_RELATIONSHIP,
                [identity.ask("get").related(Related::NoPath)],
            )
            .refuse(
                &subresources("[token]"),
                [identity.ask("get").sub("status")],
            )
            .refuse(NO_NAME, [identity.ask("get").named("")])
            .check(client);
    }
}

/// ShootStates and InternalSecrets: created freely, everything else but `deletecollection`
/// through the graph; an object the graph does not know may be deleted.
#[test]
fn shoot_states_and_internal_secrets() {
    for resource in [
        Resource::new(Kind::ShootState, (CORE, "shootstates"), "bar", "foo"),
        Resource::new(
            Kind::InternalSecret,
            (CORE, "internalsecrets"),
            "bar",
            "foo",
        ),
    ] {
        for client in CLIENTS {
            Table::default()
                .allow([
                    resource.ask("create"),
                    resource.ask("delete").related(Related::Absent),
                ])
                .by_graph(resource.each(&["get", "list", "watch", "patch", "update", "delete"]))
                .refuse(
                    &verbs(ALL_BUT_DELETECOLLECTION),
                    [resource.ask("deletecollection")],
                )
                .refuse(&subresources("[]"), [resource.ask("get").sub("status")])
                .refuse(NO_NAME, [resource.ask("get").named("")])
                .check(client);
        }
    }
}

#[test]
fn backup_buckets_and_entries() {
    let bucket = Resource::new(Kind::BackupBucket, (CORE, "backupbuckets"), "", "foo");
    let entry = Resource::new(Kind::BackupEntry, (CORE, "backupentries"), "bar", "foo");
    for client in CLIENTS {
        Table::default()
            .allow(bucket.each(&["get", "list", "watch", "create"]))
            .allow([bucket.ask("delete").related(Related::Absent)])
            .refuse(
                &verbs(ALL_BUT_DELETECOLLECTION),
                [bucket.ask("deletecollection")],
            )
            .refuse(
                &subresources("[finalizers status]"),
                [bucket.ask("list").sub("foo")],
            )
            .by_graph(
                ["", "status", "finalizers"]
                    .iter()
                    .flat_map(|sub| [bucket.ask("patch").sub(sub), bucket.ask("update").sub(sub)])
                    .collect::<Vec<_>>(),
            )
            .by_graph([bucket.ask("delete")])
            .check(client);
        Table::default()
            .allow(entry.each(&["get", "list", "watch", "create"]))
            .allow([entry.ask("delete").related(Related::Absent)])
            .refuse(
                &verbs(ALL_BUT_DELETECOLLECTION),
                [entry.ask("deletecollection")],
            )
            .refuse(&subresources("[status]"), [entry.ask("list").sub("foo")])
            .by_graph(
                ["", "status"]
                    .iter()
                    .flat_map(|sub| [entry.ask("patch").sub(sub), entry.ask("update").sub(sub)])
                    .collect::<Vec<_>>(),
            )
            .check(client);
    }
}

/// The seed-scoped kinds read through the graph by name and listed with a selector naming the
/// seed: Bastions, ManagedSeeds, Gardenlets, ControllerInstallations, Shoots and Seeds.
#[test]
fn seed_scoped_kinds() {
    let bastion = Resource::new(
        Kind::Bastion,
        ("operations.gardener.cloud", "bastions"),
        "bar",
        "foo",
    );
    let managed_seed = Resource::new(
        Kind::ManagedSeed,
        ("seedmanagement.gardener.cloud", "managedseeds"),
        "bar",
        "foo",
    );
    let gardenlet = Resource::new(
        Kind::Gardenlet,
        ("seedmanagement.gardener.cloud", "gardenlets"),
        "garden",
        "foo",
    );
    let installation = Resource::new(
        Kind::ControllerInstallation,
        (CORE, "controllerinstallations"),
        "",
        "foo",
    );
    let shoot = Resource::new(Kind::Shoot, (CORE, "shoots"), "bar", "foo");
    let seed = Resource::new(Kind::Seed, (CORE, "seeds"), "", "foo");
    let seed_label = "name.seed.gardener.cloud/seed=true";
    let by_graph_with = |resource: Resource, verbs: &[&str], subs: &[&str]| -> Vec<Ask> {
        verbs
            .iter()
            .flat_map(|verb| subs.iter().map(move |sub| resource.ask(verb).sub(sub)))
            .collect()
    };
    let get_patch_update = ["get", "patch", "update"];
    for client in CLIENTS {
        Table::default()
            .allow([bastion.ask("create")])
            .refuse(
                &verbs("[create get list patch update watch]"),
                bastion.each(&["delete", "deletecollection"]),
            )
            .refuse(&subresources("[status]"), [bastion.ask("list").sub("foo")])
            .by_graph(by_graph_with(bastion, &get_patch_update, &["", "status"]))
            .selected(bastion, true, "spec.seedName=seed")
            .check(client);
        Table::default()
            .refuse(
                &verbs("[get list patch update watch]"),
                managed_seed.each(&["create", "delete", "deletecollection"]),
            )
            .refuse(
                &subresources("[status]"),
                [managed_seed.ask("list").sub("foo")],
            )
            .by_graph(by_graph_with(
                managed_seed,
                &get_patch_update,
                &["", "status"],
            ))
            .selected(managed_seed, false, seed_label)
            .check(client);
        Table::default()
            .refuse(
                "only the following namespaces are allowed for this resource type: [garden]",
                [gardenlet.ask("list").within("other")],
            )
            .allow([gardenlet.ask("create")])
            .refuse(
                &verbs("[create get list patch update watch]"),
                gardenlet.each(&["delete", "deletecollection"]),
            )
            .refuse(
                &subresources("[status]"),
                [gardenlet.ask("list").sub("foo")],
            )
            .by_graph(by_graph_with(gardenlet, &get_patch_update, &["", "status"]))
            .selected(gardenlet, true, "metadata.name=seed")
            .check(client);
        Table::default()
            .refuse(
                &verbs("[get list patch update watch]"),
                installation.each(&["create", "delete", "deletecollection"]),
            )
            .refuse(
                &subresources("[status]"),
                [installation.ask("list").sub("foo")],
            )
            .by_graph(by_graph_with(
                installation,
                &get_patch_update,
                &["", "status"],
            ))
            .selected(installation, true, "spec.seedRef.name=seed")
            .check(client);
        Table::default()
            .allow([shoot.ask("get").within("garden").named(SEED)])
            .refuse(
                &verbs("[get list patch update watch]"),
                shoot.each(&["create", "delete", "deletecollection"]),
            )
            .refuse(
                &subresources("[finalizers status]"),
                [shoot.ask("list").sub("foo")],
            )
            .by_graph(by_graph_with(
                shoot,
                &get_patch_update,
                &["", "status", "finalizers"],
            ))
            .selected(shoot, false, seed_label)
            .check(client);
        Table::default()
            .allow([
                seed.ask("create"),
                seed.ask("delete").related(Related::Absent),
            ])
            .by_graph(by_graph_with(seed, &get_patch_update, &["", "status"]))
            .by_graph([seed.ask("delete")])
            .refuse(
                &verbs(ALL_BUT_DELETECOLLECTION),
                [seed.ask("deletecollection")],
            )
            .refuse(&subresources("[status]"), [seed.ask("list").sub("foo")])
            .selected(seed, false, seed_label)
            .check(client);
    }
}

#[test]
fn events_in_both_groups() {
    for group in ["", "events.k8s.io"] {
        let event = Resource::new(Kind::Secret, (group, "events"), "bar", "foo");
        for client in CLIENTS {
            Table::default()
                .allow(event.each(&["create", "patch"]))
                .refuse(
                    &verbs("[create patch]"),
                    event.each(&[
                        "get",
                        "list",
                        "watch",
                        "update",
                        "delete",
                        "deletecollection",
                    ]),
                )
                .refuse(&subresources("[]"), [event.ask("create").sub("status")])
                .check(client);
        }
    }
}

#[test]
fn controller_registrations_and_deployments() {
    let registration = Resource::new(
        Kind::ControllerRegistration,
        (CORE, "controllerregistrations"),
        "",
        "foo",
    );
    let deployment = Resource::new(
        Kind::ControllerDeployment,
        (CORE, "controllerdeployments"),
        "",
        "foo",
    );
    for client in CLIENTS {
        Table::default()
            .allow(registration.each(&["get", "list", "watch"]))
            .refuse(&verbs("[get list watch]"), registration.each(&MUTATIONS))
            .refuse(&subresources("[]"), [registration.ask("list").sub("foo")])
            .check(client);
        Table::default()
            .refuse(&verbs("[get list watch]"), deployment.each(&MUTATIONS))
            .refuse(&subresources("[]"), [deployment.ask("get").sub("foo")])
            .by_graph(deployment.each(&["get", "list", "watch"]))
            .check(client);
    }
}

#[test]
fn secrets() {
    let secret = Resource::new(Kind::Secret, ("", "secrets"), "bar", "foo");
    // `bootstrap-token-` + the first 6 hex digits of SHA-256("garden--seed").
    let own_token = "bootstrap-token-c3b902";
    for client in CLIENTS {
        Table::default()
            .allow(
                secret
                    .each(&["get", "list", "watch"])
                    .into_iter()
                    .map(|ask| ask.within("seed-seed")),
            )
            .allow([secret.ask("delete").within("kube-system").named(own_token)])
            .allow([
                secret.ask("create"),
                secret.ask("delete").related(Related::Absent),
            ])
            .refuse(
                &verbs("[create delete get patch update]"),
                secret.each(&["list", "watch", "deletecollection"]),
            )
            .refuse(&subresources("[]"), [secret.ask("get").sub("foo")])
            .by_graph(secret.each(&["get", "patch", "update", "delete"]))
            .check(client);
    }
}
