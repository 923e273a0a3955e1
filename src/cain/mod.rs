//! The embedded Cain code generator: filter specs in, shortest SCAMP-5 programs out.
