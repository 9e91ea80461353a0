//! An embedded Kubernetes-compatible API server for seedlet's demo and tests.
