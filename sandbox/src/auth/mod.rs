//! Who is asking and whether they may: client-certificate and bearer-token authentication
//! ([`authn`]), RBAC authorization ([`authz`]) and the cluster CA that issues certificates ([`pki`]).

pub mod authn;
pub mod authz;
pub mod client_cert;
pub mod pki;
