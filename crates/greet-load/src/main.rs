//! `greet-agent`: see `--help`, or `greet_load::agent`.

fn main() -> std::process::ExitCode {
    greet_load::agent::main()
}
