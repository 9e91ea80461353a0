//! An embedded Kubernetes-compatible API server for seedlet's demo and tests.
//!
//! [`Sandbox::builder`] starts an HTTPS API server on 127.0.0.1 that behaves like kube-apiserver v1.24
//! for built-in kinds and runtime CRDs (storage, watch, server-side apply, RBAC, CSR signing), with
//! the controllers a cluster needs for it (garbage collection, namespaces, CRD cleanup, signer,
//! optional workload status simulation). [`serve`] runs one for `seedlet sandbox serve`.

pub mod authn;
pub mod authz;
pub mod csr;
pub mod pki;

mod admission;
mod controllers;
mod crd;
pub mod faults;
mod fieldpath;
mod handlers;
mod managed;
mod ops;
mod protobuf;
mod request;
mod resources;
mod sandbox;
mod selectors;
mod server;
mod stats;
mod status;
mod store;
mod validation;

pub use faults::{FaultKind, Faults};
pub use sandbox::{Sandbox, SandboxBuilder, SandboxError, ServeOptions, serve};
pub use stats::RequestCounts;
