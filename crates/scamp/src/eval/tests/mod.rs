//! The evaluation's own tests: they drive its internals (the counts' arithmetic, the
//! frames of tiled images), which are not the library's surface. What `scamp eval`
//! prints is pinned by the tests beside the command.

mod merge_props;
mod stage_compile;
mod tiling;
