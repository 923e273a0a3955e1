//! Driving one compile: the resolved settings, the split of a bank into groups, the
//! constructive fallback and the per-group race between it and the search.

pub mod fallback;
pub mod group;
pub mod race;
pub mod setup;
