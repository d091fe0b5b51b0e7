//! Command-line parsing and the binary's `main`: flags in, exit code out.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::runner;
use crate::server::KNOWN;

/// Reproduces the Greetings API experiment (Spring Boot's Tomcat / Jetty / Undertow under oha
/// at 100, 300, 900 and 2700 concurrent requests) for the axum, actix-web and hyper servers.
#[derive(Debug, Parser)]
#[command(name = "greet-bench", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    ladder: LadderArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The original experiment, and the default: each server in turn, started, verified,
    /// loaded at each concurrency level (one request per fresh connection), sampled, stopped
    Ladder(LadderArgs),
    /// Verify running servers against the contract (the quick cases) and exit 0 if all pass
    Check {
        /// Base URLs, e.g. http://127.0.0.1:8081
        #[arg(required = true, value_name = "URL")]
        urls: Vec<String>,
    },
}

/// The settings of a ladder run.
#[derive(Debug, Clone, Args)]
pub struct LadderArgs {
    /// Servers to start, in order; an entry may name its own endpoint, e.g.
    /// `axum:/greetings/blocking` [default: axum,actix,hyper, or none when --target is given]
    #[arg(long, value_delimiter = ',', value_parser = parse_server)]
    pub servers: Option<Vec<ServerSpec>>,

    /// Concurrency levels; each sends as many requests as its concurrency
    #[arg(long, value_delimiter = ',', default_value = "100,300,900,2700", value_parser = parse_level)]
    pub concurrency: Vec<usize>,

    /// Path loaded (and validated) on every server without an endpoint of its own
    #[arg(long, default_value = greet_core::paths::GREETINGS, value_parser = parse_path)]
    pub endpoint: String,

    /// --delay-ms passed to the servers
    #[arg(long, default_value_t = 1000)]
    pub delay_ms: u64,

    /// --workers passed to the servers [default: the CPUs each server is pinned to]
    #[arg(long)]
    pub workers: Option<NonZeroUsize>,

    /// --blocking-threads passed to the servers
    #[arg(long, default_value_t = NonZeroUsize::new(200).expect("non-zero"))]
    pub blocking_threads: NonZeroUsize,

    /// Runs of each level; with more than one, figures are medians with their min–max
    #[arg(long, default_value_t = NonZeroUsize::MIN)]
    pub repeats: NonZeroUsize,

    /// Benchmark a server the harness did not start, as NAME=URL (repeatable); it gets the
    /// contract check and the ladder, but no start-up or /proc figures
    #[arg(long = "target", value_name = "NAME=URL", value_parser = parse_target)]
    pub targets: Vec<Target>,

    /// Directory for results.json, the CSVs, the charts and report.html
    /// [default: results/<UTC timestamp>]
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// Do not pin servers and load generator to separate CPUs
    #[arg(long)]
    pub no_pin: bool,

    /// No progress bars or status lines; the tables still go to stdout
    #[arg(long)]
    pub quiet: bool,

    /// Per-request timeout, connect included, in seconds
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_secs: u64,

    /// Directory holding prebuilt release server binaries (skips building them)
    #[arg(long)]
    pub bin_dir: Option<PathBuf>,

    /// Do not run `cargo build --release` for the servers first
    #[arg(long)]
    pub no_build: bool,

    /// Run each server as a container of its image (greet-axum:latest…, built by
    /// docker/build-offline.sh) with compose.yaml's limits, on the host's network
    #[arg(long)]
    pub docker: bool,
}

/// A server to start: its short name and, optionally, its own endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// `axum`, `actix` or `hyper`.
    pub short: String,
    /// Path to load instead of `--endpoint`.
    pub endpoint: Option<String>,
}

/// A server someone else started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Its name in the tables.
    pub name: String,
    /// Its base URL, `http://host:port`.
    pub url: String,
}

fn parse_server(text: &str) -> Result<ServerSpec, String> {
    let (short, endpoint) = match text.split_once(':') {
        Some((short, endpoint)) => (short, Some(parse_path(endpoint)?)),
        None => (text, None),
    };
    let short = short.strip_prefix("greet-").unwrap_or(short);
    if !KNOWN.contains(&short) {
        return Err(format!(
            "unknown server {short:?}: known are {}",
            KNOWN.join(", ")
        ));
    }
    Ok(ServerSpec {
        short: short.to_owned(),
        endpoint,
    })
}

fn parse_path(text: &str) -> Result<String, String> {
    if text.starts_with('/') && !text.contains(char::is_whitespace) {
        Ok(text.to_owned())
    } else {
        Err(format!("{text:?} is not a path (it must start with /)"))
    }
}

fn parse_level(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=100_000).contains(&n) => Ok(n),
        _ => Err(format!("{text:?} is not a concurrency from 1 to 100000")),
    }
}

fn parse_target(text: &str) -> Result<Target, String> {
    let (name, url) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?} is not NAME=URL"))?;
    if name.is_empty() {
        return Err(format!("{text:?} has an empty NAME"));
    }
    if !url.starts_with("http://") {
        return Err(format!("{url:?} is not an http:// URL"));
    }
    Ok(Target {
        name: name.to_owned(),
        url: url.trim_end_matches('/').to_owned(),
    })
}

/// The binary's `main`: parses flags, runs, and turns the outcome into an exit code
/// (0 all servers measured, 1 a server failed or the run could not be made, 2 bad flags,
/// 130 interrupted).
pub fn main() -> ExitCode {
    let cli: Cli = match greet_core::cli::parse_args("greet-bench") {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let args = match cli.command {
        Some(Command::Ladder(args)) => args,
        Some(Command::Check { urls }) => return check(&urls),
        None => cli.ladder,
    };
    match runner::ladder(args) {
        Ok(runner::Verdict::AllMeasured) => ExitCode::SUCCESS,
        Ok(runner::Verdict::SomeFailed) => ExitCode::FAILURE,
        Ok(runner::Verdict::Interrupted) => ExitCode::from(130),
        Err(err) => {
            eprintln!("greet-bench: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// `greet-bench check URL…`: one line per server, exit 1 if any fails.
fn check(urls: &[String]) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("greet-bench: error: {err}");
            return ExitCode::FAILURE;
        }
    };
    let mut ok = true;
    for url in urls {
        match runtime.block_on(greet_conformance::check(url)) {
            Ok(()) => println!("{url}: contract check passed"),
            Err(err) => {
                ok = false;
                println!("{url}: {err}");
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<LadderArgs, clap::Error> {
        let cli = Cli::try_parse_from(std::iter::once("greet-bench").chain(args.iter().copied()))?;
        Ok(match cli.command {
            Some(Command::Ladder(args)) => args,
            Some(Command::Check { .. }) => panic!("not a ladder"),
            None => cli.ladder,
        })
    }

    #[test]
    fn defaults_are_the_original_experiment() {
        let args = parse(&[]).unwrap();
        assert_eq!(args.concurrency, [100, 300, 900, 2700]);
        assert_eq!(args.servers, None);
        assert_eq!(
            (args.endpoint.as_str(), args.delay_ms),
            ("/greetings", 1000)
        );
        assert_eq!(parse(&["ladder"]).unwrap().concurrency, args.concurrency);
    }

    #[test]
    fn servers_with_endpoints() {
        let args = parse(&["--servers", "axum,greet-hyper,axum:/greetings/blocking"]).unwrap();
        let servers = args.servers.unwrap();
        assert_eq!(servers.len(), 3);
        assert_eq!(servers[1].short, "hyper");
        assert_eq!(servers[2].endpoint.as_deref(), Some("/greetings/blocking"));
    }

    #[test]
    fn rejects_bad_input() {
        for bad in [
            &["--servers", "tomcat"][..],
            &["--servers", "axum:greetings"],
            &["--concurrency", "0"],
            &["--concurrency", "10,x"],
            &["--target", "nourl"],
            &["--target", "a=https://x"],
            &["--repeats", "0"],
            &["--timeout-secs", "0"],
            &["--endpoint", "greetings"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn targets() {
        let args = parse(&["--target", "jvm=http://127.0.0.1:9000/"]).unwrap();
        assert_eq!(
            args.targets,
            [Target {
                name: "jvm".into(),
                url: "http://127.0.0.1:9000".into()
            }]
        );
    }
}
