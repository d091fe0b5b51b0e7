//! The process-level tests (signals, exit codes, flags) against the `greet-actix` binary.

greet_conformance::process_tests!(env!("CARGO_BIN_EXE_greet-actix"));
