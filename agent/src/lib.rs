//! The seedlet seed agent: controllers, health and metrics server, leader election.
