//! `greet-axum`: the Greetings API on axum. See `--help`.

fn main() -> std::process::ExitCode {
    greet_server::cli::main(greet_axum::NAME, |listener, config| {
        greet_axum::run(listener, config, greet_server::shutdown::signal())
    })
}
