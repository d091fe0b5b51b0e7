//! `greet-axum`: the Greetings API on axum. See `--help`.

fn main() -> std::process::ExitCode {
    greet_core::cli::main("greet-axum", |listener, config| {
        greet_axum::run(listener, config, greet_core::shutdown::signal())
    })
}
