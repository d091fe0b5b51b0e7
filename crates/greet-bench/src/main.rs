//! `greet-bench`: see `--help`, or the crate docs.

fn main() -> std::process::ExitCode {
    greet_bench::cli::main()
}
