//! The gardenlet protocol the backup and bastion controllers share with their extension objects
//! (spec `gardenlet-backup-bastion-seed.md` §0): the operation type of a core object
//! ([`operation`]), the must-deploy / observed-error decision on an extension object
//! ([`decide`]), the "last operation changed" watch trigger ([`trigger`]), writing and deleting
//! extension objects ([`object`]) and the credentials copied into the seed ([`credentials`], what
//! the copy holds for Secret and WorkloadIdentity credentials in [`seed_secret`]).
//!
//! Waiting for an extension object to become ready, be deleted or migrated ([`wait`]) is what the
//! Shoot flows add (spec `gardenlet-shoot-flow.md` §3.2).
//!
//! This is not a controller: it holds what `controllers/backupbucket`, `backupentry`, `bastion`
//! and `shoot` would otherwise each repeat.

pub mod credentials;
pub mod decide;
pub mod object;
pub mod operation;
pub mod seed_secret;
pub mod trigger;
pub mod wait;
