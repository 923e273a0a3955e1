//! The move set: goals (atoms per offset, bags of goals), instructions at the level of
//! goals, and instructions applied in reverse to a goal bag.

pub mod goal;
pub mod reverse;
pub mod rule;
pub mod step;
