//! The flags, and flag values: `base` is the group every scenario takes (its servers,
//! repeats, and those of the base's settings it takes), `shared` declares each other flag
//! several scenarios share once (each scenario's `flags.rs` flattens the ones it takes),
//! `values` parses and prints flag values (levels, durations, URLs) and formats the help's
//! defaults. With the scenarios' own `flags.rs` and the CLI, the only code that sees clap.

mod base;
mod shared;
mod values;

pub(crate) use base::*;
pub(crate) use shared::*;
pub(crate) use values::*;
