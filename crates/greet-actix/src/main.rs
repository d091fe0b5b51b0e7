//! `greet-actix`: the Greetings API on actix-web. See `--help`.

fn main() -> std::process::ExitCode {
    greet_core::cli::main("greet-actix", |listener, config| {
        greet_actix::run(listener, config, greet_core::shutdown::signal())
    })
}
