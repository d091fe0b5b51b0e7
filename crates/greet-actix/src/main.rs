//! `greet-actix`: the Greetings API on actix-web. See `--help`.

fn main() -> std::process::ExitCode {
    greet_server::cli::main(
        greet_actix::NAME,
        greet_server::cli::Speaks::Http1AndHttp2,
        |listener, config| greet_actix::run(listener, config, greet_server::shutdown::signal()),
    )
}
