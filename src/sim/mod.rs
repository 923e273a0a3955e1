//! The machine: register planes, bus instructions over the whole array, capture,
//! cycle and time accounting.

pub mod machine;
