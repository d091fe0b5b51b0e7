//! `greet-axum`: the Greetings API on axum. See `--help`.

fn main() -> std::process::ExitCode {
    greet_server::cli::main(
        greet_axum::NAME,
        greet_server::cli::Speaks::Http1AndHttp2,
        |listener, config| greet_axum::run(listener, config, greet_server::shutdown::signal()),
    )
}
