//! Garden client identity: key and CSR, certificate issuance, kubeconfig storage, rotation.
//!
//! Entry point: [`GardenIdentity::establish`] obtains a working garden credential (stored kubeconfig, TLS
//! bootstrap with a bootstrap kubeconfig, or a static kubeconfig file), [`GardenIdentity::client`] hands out
//! the hot-swappable [`GardenClient`] every controller uses, and [`GardenIdentity::run`] keeps the certificate
//! valid in place (rotation, `gardener.cloud/operation=renew`, re-bootstrap, Seed status).

pub mod certificate;
pub mod cleanup;
pub mod csr;
pub mod deadline;
mod error;
pub mod garden_client;
mod identity;
pub mod kubeconfig;
pub mod names;
pub mod observer;
pub mod options;
pub mod request;
pub mod rotation;
pub mod seed_status;
pub mod store;

pub use error::{Error, credential_refused};
pub use garden_client::GardenClient;
pub use identity::GardenIdentity;
pub use observer::{BootstrapStep, StepObserver};
pub use options::{BootstrapOptions, BootstrapSource, JitterRange, SecretRef};
