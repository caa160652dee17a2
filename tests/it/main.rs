//! The integration tests against a real server, as one test binary: its tests share one server
//! (`TestServer::shared_or_panic`, started on first use and stopped when the binary exits),
//! each in a database of its own; the tests that need a server of another kind (with `--auth`,
//! standalone, a 3-node replica set, a second deployment, a fail point of their own) start it
//! themselves. One module per concern: `cargo test --test it gapless::` runs one of them.

mod backend;
mod checker;
mod common;
mod reliability_support;

mod adoption;
mod allocator;
mod allocator_load;
mod bulk;
mod claims;
mod conventions;
mod deployments;
mod first_values;
mod formats;
mod foundation;
mod gapless;
mod indexes;
mod injection;
mod mongoose;
mod periods;
mod proxy;
mod readable;
mod records;
mod reliability_bad_input;
mod reliability_clock;
mod reliability_counter_errors;
mod reliability_failover;
mod reliability_faults;
mod reliability_limits;
mod reliability_nemesis;
mod reliability_partition;
mod reliability_processes;
mod reliability_repair_race;
mod reliability_rollback;
mod reliability_security;
mod scoped;
mod snapshot;
mod strategies;
mod upsert;
