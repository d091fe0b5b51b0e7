//! The process-level tests (signals, exit codes, flags) against the `greet-hyper` binary.

greet_conformance::process_tests!(env!("CARGO_BIN_EXE_greet-hyper"));

/// The visit counters' bound is greet-store's, shared by every server: one of them shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_million_unique_names_level_off() {
    let bin = env!("CARGO_BIN_EXE_greet-hyper");
    if let Err(why) = greet_conformance::process::unique_names_level_off(bin).await {
        panic!("{why:#}");
    }
}
