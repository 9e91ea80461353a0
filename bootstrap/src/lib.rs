//! Garden client identity: key and CSR, certificate issuance, kubeconfig storage, rotation.
