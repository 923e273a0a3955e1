//! Driving one compile: the resolved settings, the split of a bank into groups, the
//! constructive fallback, the per-group race between it and the search, and telling a
//! group no program can compute from one the search ran out of time on.

pub mod choice;
pub mod fallback;
pub mod feasible;
pub mod group;
pub mod phase;
pub mod pipeline;
pub mod race;
pub mod setup;
