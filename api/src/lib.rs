//! Gardener API types, conditions and well-known names used by seedlet.
