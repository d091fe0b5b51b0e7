//! How the help reads: `-h` short (each command's own flags and the few a first run needs),
//! `--help` long (every flag, in groups), a few examples per scenario, and a flag given to a
//! command it does not belong to named with the commands it does belong to.
//!
//! The flags every scenario shares are defined once (`crate::flags`) and flattened into each
//! scenario's; this module is where they are grouped and shown, by their long names.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, Command};

use crate::scenario::Kind;

/// The shared flags by group, as `--help` heads them; a flag in none is the command's own.
const GROUPS: &[(&str, &[&str])] = &[
    (
        "Servers",
        &[
            "servers",
            "target",
            "expect",
            "contract",
            "delay-ms",
            "workers",
            "blocking-threads",
            "docker",
            "docker-network",
            "swarm",
            "agents",
            "no-pin",
            "bin-dir",
            "no-build",
            "timeout-secs",
        ],
    ),
    (
        "Requests",
        &[
            "endpoint",
            "protocol",
            "streams",
            "tls-resume",
            "pipeline",
            "requests-per-connection",
            "header",
            "body",
        ],
    ),
    (
        "Output and gates",
        &[
            "out",
            "quiet",
            "quick",
            "threshold",
            "save-baseline",
            "baseline",
            "band",
        ],
    ),
];

/// The shared flags `-h` shows too, among the command's own: what a first run reaches for.
const FIRST: &[&str] = &["servers", "repeats", "quick", "out"];

/// The flags of keep-alive users, which a scenario without them does not show.
const KEEP_ALIVE_ONLY: &[&str] = &["pipeline", "requests-per-connection"];

/// `all`'s examples, under its help (each scenario's are its own: `About::examples`).
const ALL_EXAMPLES: &[&str] = &[
    "greet-bench all --quick                       every scenario at smoke size",
    "greet-bench all --servers hyper               every scenario on one server",
];

/// The command line's commands with their help shaped: shared flags grouped, `-h` short,
/// examples under each scenario.
pub(super) fn shape(root: Command) -> Command {
    own(root, Some(Kind::ALL[0])).mut_subcommands(|sub| {
        let name = sub.get_name().to_owned();
        match Kind::named(&name) {
            Some(kind) => own(sub, Some(kind)),
            None if name == super::ALL => own(sub, None),
            None => sub,
        }
    })
}

/// One scenario's command (`kind`; none for `all`) shaped, its examples under it.
fn own(cmd: Command, kind: Option<Kind>) -> Command {
    let keep_alive = kind.is_none_or(|k| k.about().keep_alive);
    let cmd = cmd.mut_args(|arg| {
        let long = arg.get_long().unwrap_or_default().to_owned();
        let arg = short(arg);
        if FIRST.contains(&long.as_str()) {
            return arg;
        }
        let Some((group, _)) = GROUPS
            .iter()
            .find(|(_, flags)| flags.contains(&long.as_str()))
        else {
            return arg;
        };
        let arg = arg.help_heading(*group).hide_short_help(true);
        if !keep_alive && KEEP_ALIVE_ONLY.contains(&long.as_str()) {
            arg.hide(true)
        } else {
            arg
        }
    });
    let examples = kind.map_or(ALL_EXAMPLES, |k| k.about().examples);
    cmd.after_help(format!("Examples:\n  {}", examples.join("\n  ")))
}

/// `arg` with a one-clause help for `-h`: its help up to the first `;`, ` (` or `, e.g.`,
/// with its default; the whole of it for `--help`.
fn short(arg: Arg) -> Arg {
    if arg.get_long_help().is_some() {
        return arg;
    }
    let Some(help) = arg.get_help().map(ToString::to_string) else {
        return arg;
    };
    let (text, default) = match help.rfind(" [default: ") {
        Some(at) => help.split_at(at),
        None => (help.as_str(), ""),
    };
    let head = ["; ", " (", ", e.g."]
        .iter()
        .filter_map(|cut| text.find(cut))
        .min()
        .map_or(text, |at| &text[..at]);
    if head.len() == text.len() {
        return arg;
    }
    let brief = format!("{head}{default}");
    arg.long_help(help.clone()).help(brief)
}

/// For an unknown flag that another command takes: one line naming those commands.
pub(super) fn elsewhere(root: &Command, err: &clap::Error, args: &[String]) -> Option<String> {
    if err.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(given)) = err.get(ContextKind::InvalidArg) else {
        return None;
    };
    let long = given.split(['=', ' ']).next()?.strip_prefix("--")?;
    let used = args
        .iter()
        .skip(1)
        .find(|a| !a.starts_with('-') && root.find_subcommand(a.as_str()).is_some())
        .map_or(Kind::ALL[0].name(), String::as_str);
    let takers: Vec<&str> = root
        .get_subcommands()
        .filter(|sub| sub.get_name() != used)
        .filter(|sub| {
            sub.get_arguments()
                .any(|a| a.get_long() == Some(long) && !a.is_hide_set())
        })
        .map(Command::get_name)
        .collect();
    let first = takers.first()?;
    Some(format!(
        "--{long} is not a flag of {used}: it belongs to {} (e.g. greet-bench {first} --{long} …; \
         see greet-bench {first} -h)",
        takers.join(", ")
    ))
}
