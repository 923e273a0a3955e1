//! The proofs' and static ranges' own tests: they pin items that are not the library's
//! surface (symbolic execution, the multi-plane proof, intervals and peaks).

mod proof_planes;
mod proof_soundness;
