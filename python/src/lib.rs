//! `scamp._scamp`: the native half of the Python package `scamp`.
//!
//! Every function here converts Python values to the library's types, calls the
//! library (`scamp::bank` and the parsers), and converts the answer back. The figures,
//! the seeding and the checks all live in the library, so that Python and the command
//! line cannot drift apart.

mod args;
mod compare;
mod errors;
mod evaluate;
mod images;
mod inputs;
mod interrupt;
mod layer;
mod memory;
mod network;
mod numbers;
mod options;
mod profile;
mod program;
mod run;

use pyo3::prelude::*;

/// The code generator's search allocates small vectors at a high rate: the allocator of
/// the `scamp` command, so that a compile's clock budget buys the same search here.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The native module; `scamp/__init__.py` re-exports what it defines.
#[pymodule]
fn _scamp(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<program::PyProgram>()?;
    m.add_class::<profile::PyProfile>()?;
    m.add_function(wrap_pyfunction!(program::parse, m)?)?;
    m.add_function(wrap_pyfunction!(program::load, m)?)?;
    m.add_function(wrap_pyfunction!(run::run, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate::compile, m)?)?;
    m.add("COMPILE_OPTIONS", evaluate::option_names())?;
    m.add_function(wrap_pyfunction!(evaluate::check, m)?)?;
    m.add_function(wrap_pyfunction!(compare::compare, m)?)?;
    m.add_class::<evaluate::PyCompiled>()?;
    m.add_class::<network::PyNetwork>()?;
    m.add_function(wrap_pyfunction!(network::merge_shards, m)?)?;
    m.add("CHECK_OPTIONS", options::declared(&scamp::CHECK_OPTIONS))?;
    m.add("EVAL_OPTIONS", options::declared(&scamp::EVAL_OPTIONS))?;
    m.add_function(wrap_pyfunction!(layer::choose_layer, m)?)?;
    m.add_function(wrap_pyfunction!(images::load_image, m)?)?;
    m.add_function(wrap_pyfunction!(images::load_images, m)?)?;
    Ok(())
}
