//! Tests across the library's modules: every file reader's size limit, measured with a
//! counting allocator (this test binary's global allocator).

mod file_limits;
