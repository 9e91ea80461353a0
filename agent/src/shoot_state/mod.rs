//! A shoot's garden ShootState as the agent builds it: the entries extension objects and persisted
//! Secrets contribute ([`entries`], [`state`]), the reads of a control-plane namespace and the
//! errors of ShootState reads and writes ([`io`]), and the upsert of a whole namespace's state
//! ([`persist`]). The ShootState sync writes changes and snapshots with it; the Shoot controller's
//! migrate flow persists the state with it and its restore phase reads Secret payloads back.

pub mod entries;
pub mod io;
pub mod persist;
pub mod state;
