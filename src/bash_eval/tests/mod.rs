//! Unit tests by class, and differential tests against the real bash.

mod arith;
mod brace;
mod differential;
mod differential_values;
mod escape;
mod oracle;
mod param;
mod printf;
