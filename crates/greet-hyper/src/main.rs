//! `greet-hyper`: the Greetings API on raw hyper. See `--help`.

fn main() -> std::process::ExitCode {
    greet_server::cli::main(greet_hyper::NAME, |listener, config| {
        greet_hyper::run(listener, config, greet_server::shutdown::signal())
    })
}
