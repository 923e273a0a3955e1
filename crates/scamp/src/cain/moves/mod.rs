//! The move set: goals (atoms per offset, bags of goals), instructions at the level of
//! goals, and instructions applied in reverse to a goal bag.

pub(crate) mod goal;
pub(crate) mod reverse;
pub(crate) mod rule;
pub(crate) mod step;
