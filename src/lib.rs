//! mesh-guard: keeps AI coding agents on a mesh's own tools.

pub mod audit;
pub mod record;
