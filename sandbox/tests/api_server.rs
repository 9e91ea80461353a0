//! The sandbox API server's integration tests in one binary: kube-apiserver transcript
//! conformance, server behaviour, dry runs, webhooks, and kube-rs and kubectl against a running
//! server.
//! Run one part with `cargo test -p seedlet-sandbox --test api_server <module>::`.

// The allocator of the seedlet binary (src/allocator.rs), so memory tests measure what it does.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

mod admission_webhooks;
mod authorization_webhook;
mod conformance;
mod dry_run;
mod kube_client;
mod kubectl;
mod kubectl_create;
mod server_behaviour;
