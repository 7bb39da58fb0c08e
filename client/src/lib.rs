//! # bench-client
//!
//! `bench-run`'s side of the team server: [`push`] sends runs (with their pairings and
//! artifacts) so that none is lost or stored twice, and [`remote`] asks the server for the
//! evidence `gate --server` decides on, with retries under a [`remote::RetryPolicy`].

pub mod push;
pub mod remote;
