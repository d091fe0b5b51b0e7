//! The flags several scenarios share, and flag values: `shared` declares each shared flag
//! once (each scenario's `flags.rs` flattens the ones it takes), `values` parses and prints
//! flag values (levels, durations, URLs) and formats the help's defaults. With the scenarios'
//! own `flags.rs` and the CLI, the only code that sees clap.

mod shared;
mod values;

pub(crate) use shared::*;
pub(crate) use values::*;
