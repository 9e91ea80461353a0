//! Helm chart archives to Kubernetes manifests via Go-template to minijinja translation.
