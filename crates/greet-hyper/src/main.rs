//! `greet-hyper`: the Greetings API on raw hyper. See `--help`.

fn main() -> std::process::ExitCode {
    greet_server::cli::main(
        greet_hyper::NAME,
        greet_server::cli::Speaks::Http1AndHttp2,
        |listener, config| greet_hyper::run(listener, config, greet_server::shutdown::signal()),
    )
}
