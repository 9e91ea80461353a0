//! The webhooks `seedlet garden` serves for kube-apiserver so that seeds get least privilege
//! (spec `seed-authorizer.md`): the SeedAuthorizer (`POST /webhooks/auth/seed`, a
//! SubjectAccessReview webhook deciding from a resource-dependency [`graph`]).

pub mod authorizer;
pub mod graph;
pub mod identity;
pub mod review;
