//! What kube-runtime and a controller manager are to seedlet's two daemons, the seed agent and
//! the garden controller, which build on this crate as peers:
//!
//! - [`process`]: signals, supervised controllers, the leadership loop, client building;
//! - [`server`], [`health`], [`metrics`]: `/healthz`, `/readyz` and `/metrics`;
//! - [`leader_election`]: the Lease lock; [`logging`]: log lines in Gardener's shape;
//! - [`watch`]: per-watch backoff, slim caches and [`watch::Runner`], which runs every controller;
//! - [`cache`]: one watch and one store per kind and scope, shared by the controllers reading it;
//! - [`controller`]: a controller as one type ([`controller::Reconciler`]) and what runs it;
//! - [`resync`]: a controller's periodic resync of every stored object, without a timer each;
//! - [`spacing`]: at most one start of work per object and period, the first one at once;
//! - [`status`]: the one conditions writer; [`finalizer`]: adding and removing a finalizer;
//! - [`triggers`]: watch streams passing only relevant changes (and deletions);
//! - [`systemd`]: the sd_notify protocol (READY, STOPPING, STATUS, WATCHDOG);
//! - [`flow`]: a task-graph runner with retries and progress, for long multi-step operations;
//! - [`events`]: Kubernetes Events, correlated like client-go's recorder;
//! - [`retry`]: in-place retries of idempotent requests; [`clock`]; [`error`]: error chains;
//! - [`budget`]: a write budget per controller and object, against writers undoing each other;
//! - [`repeated`]: logging a failure a retry loop meets again and again once, not every time.

pub mod budget;
pub mod cache;
pub mod client;
pub mod clock;
pub mod controller;
pub mod error;
pub mod events;
pub mod finalizer;
pub mod flow;
pub mod health;
pub mod leader_election;
pub mod logging;
pub mod metrics;
pub mod periodic;
pub mod policy;
pub mod process;
pub mod repeated;
pub mod resync;
pub mod retry;
pub mod server;
pub mod spacing;
pub mod status;
pub mod systemd;
pub mod triggers;
pub mod watch;

pub use error::error_chain;
