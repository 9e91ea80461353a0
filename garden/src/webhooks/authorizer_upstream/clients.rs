//! Upstream's tables that differ between gardenlets and extensions: CertificateSigningRequests,
//! ClusterRoleBindings, Leases and ServiceAccounts.

use super::*;

const CSR: Resource = Resource::new(
    Kind::CertificateSigningRequest,
    ("certificates.k8s.io", "certificatesigningrequests"),
    "",
    "foo",
);
const BINDING: Resource = Resource::new(
    Kind::ClusterRoleBinding,
    ("rbac.authorization.k8s.io", "clusterrolebindings"),
    "",
    "fooClusterRoleBinding",
);
const ACCOUNT: Resource =
    Resource::new(Kind::ServiceAccount, ("", "serviceaccounts"), "bar", "foo");
const EVERY_VERB: [&str; 8] = [
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
];

#[test]
fn certificate_signing_requests() {
    Table::default()
        .allow([CSR.ask("create"), CSR.ask("create").sub("seedclient")])
        .by_graph([
            CSR.ask("get"),
            CSR.ask("list"),
            CSR.ask("watch"),
            CSR.ask("get").sub("seedclient"),
        ])
        .refuse(
            &verbs("[create get list watch]"),
            CSR.each(&["update", "patch", "delete", "deletecollection"]),
        )
        .refuse(&subresources("[seedclient]"), [CSR.ask("get").sub("foo")])
        .check(Client::Gardenlet);
    Table::default()
        .by_graph(CSR.each(&["get", "list", "watch"]))
        .refuse(
            &verbs("[get list watch]"),
            CSR.each(&["create", "update", "patch", "delete", "deletecollection"]),
        )
        .refuse(&subresources("[]"), [CSR.ask("get").sub("seedclient")])
        .check(Client::Extension);
}

#[test]
fn cluster_role_bindings() {
    Table::default()
        .allow([BINDING
            .ask("delete")
            .named("gardener.cloud:system:seed-bootstrapper:garden:seed")])
        .by_graph([BINDING.ask("get")])
        .allow([BINDING.ask("create")])
        .refuse(
            &verbs("[create get patch update]"),
            BINDING.each(&["list", "watch", "delete", "deletecollection"]),
        )
        .refuse(&subresources("[]"), [BINDING.ask("get").sub("foo")])
        .refuse(NO_NAME, [BINDING.ask("get").named("")])
        .check(Client::Gardenlet);
    Table::default()
        .by_graph([BINDING.ask("get")])
        .refuse(
            &verbs("[get]"),
            BINDING.each(&[
                "create",
                "list",
                "watch",
                "patch",
                "update",
                "delete",
                "deletecollection",
            ]),
        )
        .refuse(&subresources("[]"), [BINDING.ask("get").sub("foo")])
        .refuse(NO_NAME, [BINDING.ask("get").named("")])
        .check(Client::Extension);
}

#[test]
fn leases() {
    let lease = Resource::new(Kind::Lease, ("coordination.k8s.io", "leases"), "bar", "foo");
    Table::default()
        .allow([lease.ask("create")])
        .by_graph(lease.each(&["get", "list", "watch", "update", "patch"]))
        .refuse(
            &verbs("[create get list patch update watch]"),
            lease.each(&["delete", "deletecollection"]),
        )
        .refuse(&subresources("[]"), [lease.ask("get").sub("foo")])
        .check(Client::Gardenlet);
    // Extensions: anything in their seed's namespace, nothing elsewhere, no graph.
    let own = Resource::new(
        Kind::Lease,
        ("coordination.k8s.io", "leases"),
        "seed-seed",
        "foo",
    );
    Table::default()
        .allow([own.ask("create")])
        .allow(own.each(&EVERY_VERB))
        .refuse(
            &verbs("[create get list watch update patch delete deletecollection]"),
            [own.ask("foo")],
        )
        .refuse(
            "lease object is not in seed namespace",
            [own.ask("create")
                .named(SEED)
                .within("gardener-system-seed-lease")],
        )
        .check(Client::Extension);
}

#[test]
fn service_accounts() {
    Table::default()
        .allow([ACCOUNT
            .ask("delete")
            .within("garden")
            .named("gardenlet-bootstrap-seed")])
        .by_graph([ACCOUNT.ask("get")])
        .allow([ACCOUNT.ask("create")])
        .allow(
            ACCOUNT
                .each(&EVERY_VERB)
                .into_iter()
                .map(|ask| ask.within("seed-seed")),
        )
        .allow([ACCOUNT.ask("create").within("seed-seed").sub("token")])
        .refuse(
            &verbs("[create get patch update]"),
            ACCOUNT.each(&["list", "watch", "delete", "deletecollection"]),
        )
        .refuse(&subresources("[]"), [ACCOUNT.ask("get").sub("foo")])
        .refuse(NO_NAME, [ACCOUNT.ask("get").named("")])
        .check(Client::Gardenlet);
    Table::default()
        .by_graph([ACCOUNT.ask("get")])
        .refuse(
            &verbs("[get]"),
            ACCOUNT.each(&[
                "create",
                "list",
                "watch",
                "patch",
                "update",
                "delete",
                "deletecollection",
            ]),
        )
        .refuse(&subresources("[]"), [ACCOUNT.ask("get").sub("token")])
        .refuse(NO_NAME, [ACCOUNT.ask("get").named("")])
        .check(Client::Extension);
}
