//! [`Knob`]: a setting a crate documents for speed that this workspace leaves off, because each
//! gives something up. A knob is a flag of the server (`--knob NAME`, several comma-separated),
//! never a code fork: the crates it names honour it, and any other server refuses it at start-up
//! in one line, so a run never measures a knob that did nothing.
//!
//! Each knob says what it buys and what it gives up; both are measured: the harness runs a
//! crate with knobs as a server of its own (`hyper+pipeline-flush`, its cost and timing paired
//! with the crate's defaults), and the contract suite's knob tests name the rows that change.

use std::fmt;

use clap::ValueEnum;

/// A setting one or more crates document for speed, off by default here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum)]
pub enum Knob {
    /// hyper's `pipeline_flush(true)` (hyper, axum): gathers the answers to pipelined requests
    /// into one write. Gives up: hyper calls it experimental; a refused head then closes the
    /// connection without its 431 or 400; it lifts hyper's cap on the write buffer
    PipelineFlush,
    /// hyper's header array at its default (100 fields) instead of `max_headers(96)`, which
    /// hyper's docs say moves it to the heap each request (hyper, axum; counted: it stays on
    /// the stack up to 100, so this buys nothing). Gives up: the parser's limit shared with
    /// actix-web (96 fields)
    StackHeaders,
    /// No head-read timer (hyper, axum): no timer armed for each request's head. Gives up: a
    /// head sent slowly is waited for without end, and an idle HTTP/1.1 connection is never
    /// closed
    NoHeadTimeout,
    /// actix-web as TechEmpower's entry sets it (actix): the OS's keep-alive and no request
    /// timeout (`KeepAlive::Os`, `client_request_timeout(0)`). Gives up: a head sent slowly is
    /// waited for without end, and an idle HTTP/1.1 connection is never closed
    OsKeepAlive,
}

impl Knob {
    /// Every knob, in the order `--help` lists them.
    pub const ALL: [Knob; 4] = [
        Knob::PipelineFlush,
        Knob::StackHeaders,
        Knob::NoHeadTimeout,
        Knob::OsKeepAlive,
    ];

    /// Its name on the command line: `pipeline-flush`.
    pub fn name(self) -> &'static str {
        match self {
            Self::PipelineFlush => "pipeline-flush",
            Self::StackHeaders => "stack-headers",
            Self::NoHeadTimeout => "no-head-timeout",
            Self::OsKeepAlive => "os-keep-alive",
        }
    }

    /// The knob named `name`, if any.
    pub fn named(name: &str) -> Option<Knob> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The server binaries that honour it.
    pub fn servers(self) -> &'static [&'static str] {
        match self {
            Self::PipelineFlush | Self::StackHeaders | Self::NoHeadTimeout => {
                &["greet-hyper", "greet-axum"]
            }
            Self::OsKeepAlive => &["greet-actix"],
        }
    }

    /// Whether server binary `server` honours it.
    pub fn applies_to(self, server: &str) -> bool {
        self.servers().contains(&server)
    }

    /// What it gives up, in a few words.
    pub fn gives_up(self) -> &'static str {
        match self {
            Self::PipelineFlush => {
                "experimental in hyper; a refused head closes the connection unanswered; \
                 hyper's write-buffer cap lifted"
            }
            Self::StackHeaders => "the parser's 96-field limit shared with actix-web",
            Self::NoHeadTimeout | Self::OsKeepAlive => {
                "no limit on a slow head; idle HTTP/1.1 connections never closed"
            }
        }
    }

    /// The line a server that does not honour `self` refuses it with.
    pub fn refusal(self, server: &str) -> String {
        format!(
            "--knob {self} is not {server}'s: it applies to {}",
            self.servers().join(" and ")
        )
    }
}

impl fmt::Display for Knob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_clap_s_and_round_trip() {
        for knob in Knob::ALL {
            let clap_name = knob.to_possible_value().expect("listed");
            assert_eq!(clap_name.get_name(), knob.name());
            assert_eq!(Knob::named(knob.name()), Some(knob));
            assert!(!knob.servers().is_empty() && !knob.gives_up().is_empty());
        }
        assert_eq!(Knob::value_variants().len(), Knob::ALL.len());
    }

    #[test]
    fn a_knob_is_refused_where_it_does_not_apply() {
        assert!(Knob::PipelineFlush.applies_to("greet-axum"));
        assert!(!Knob::PipelineFlush.applies_to("greet-actix"));
        assert!(!Knob::OsKeepAlive.applies_to("greet-floor"));
        assert_eq!(
            Knob::OsKeepAlive.refusal("greet-hyper"),
            "--knob os-keep-alive is not greet-hyper's: it applies to greet-actix"
        );
    }
}
