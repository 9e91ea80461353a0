//! An embedded Kubernetes-compatible API server for seedlet's demo and tests.
//!
//! [`Sandbox::builder`] starts an HTTPS API server on 127.0.0.1 that reports Kubernetes v1.32 and
//! behaves like kube-apiserver for built-in kinds and runtime CRDs (storage, watch, server-side apply, RBAC, CSR signing), with
//! the controllers a cluster needs for it (garbage collection, namespaces, CRD cleanup, signer,
//! optional workload status simulation). [`serve`] runs one for `seedlet sandbox serve`;
//! [`setup`] fills one with CRDs and namespaces (and starts one for controller unit tests).
//!
//! The layout follows k8s.io/apiserver: [`endpoints`](crate::endpoints) turns HTTP requests into
//! typed request info and runs the handlers, `registry` holds the generic create/update/delete and
//! one strategy per kind with rules, `storage` keeps objects, `auth` authenticates and authorizes,
//! `fieldmanager` tracks managedFields, and `controllers` stand in for kube-controller-manager.

pub mod auth;
pub mod faults;
pub mod setup;

mod admission;
mod controllers;
mod endpoints;
mod fieldmanager;
mod kubernetes_service;
mod object;
mod registry;
mod resources;
mod sandbox;
mod selectors;
mod server;
mod stats;
mod status;
mod storage;
mod webhook;

pub use auth::authz::webhook::WebhookConfig;
pub use auth::{authn, authz, pki};
pub use faults::{FaultKind, Faults, Startup};
pub use registry::csr;
pub use sandbox::{Sandbox, SandboxBuilder, SandboxError, ServeOptions, serve};
pub use stats::{Connections, RequestCounts};
