//! Driving one compile: the resolved settings, the split of a bank into groups, the
//! constructive fallback, the per-group race between it and the search, and telling a
//! group no program can compute from one the search ran out of time on.

pub(crate) mod choice;
pub(crate) mod fallback;
pub(crate) mod feasible;
pub(crate) mod group;
pub(crate) mod phase;
pub(crate) mod pipeline;
pub(crate) mod race;
pub(crate) mod setup;
