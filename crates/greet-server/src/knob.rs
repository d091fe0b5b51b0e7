//! [`Knob`]: a setting a crate documents for speed that this workspace leaves off, because each
//! gives something up. A knob is a flag of the server (`--knob NAME`, several comma-separated),
//! never a code fork: the crates it names honour it, and any other server refuses it at start-up
//! in one line, so a run never measures a knob that did nothing.
//!
//! Each knob says what it buys and what it gives up; both are measured: the harness runs a
//! crate with knobs as a server of its own (`hyper+pipeline-flush`, its cost and timing paired
//! with the crate's defaults), and the contract suite's knob tests name the rows that change.
//!
//! Most knobs are runtime settings. Three are **build** knobs ([`Knob::is_build`]): the
//! allocator, fat LTO and `panic = "abort"` can only be chosen when the binary is compiled
//! ([`Knob::cargo_args`]). A binary takes `--knob` for one of them only when it was built
//! with it ([`Knob::built_in`]), so a name in a table is always what ran.

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
    /// A build (hyper, axum, actix): mimalloc as the global allocator instead of glibc's
    /// malloc, as TechEmpower's axum entry has it. Gives up: a C library compiled in; memory
    /// kept and returned to the system differently; DHAT no longer sees the allocations
    Mimalloc,
    /// A build (hyper, axum, actix): fat LTO with one codegen unit instead of thin LTO with
    /// four, as HttpArena's engine entries have it. Gives up: a release build several times
    /// slower
    FatLto,
    /// A build (hyper, axum, actix): `panic = "abort"`. Gives up: a panic while answering one
    /// request ends the whole process instead of that request's task
    PanicAbort,
}

impl Knob {
    /// Every knob, in the order `--help` lists them.
    pub const ALL: [Knob; 7] = [
        Knob::PipelineFlush,
        Knob::StackHeaders,
        Knob::NoHeadTimeout,
        Knob::OsKeepAlive,
        Knob::Mimalloc,
        Knob::FatLto,
        Knob::PanicAbort,
    ];

    /// Its name on the command line: `pipeline-flush`.
    pub fn name(self) -> &'static str {
        match self {
            Self::PipelineFlush => "pipeline-flush",
            Self::StackHeaders => "stack-headers",
            Self::NoHeadTimeout => "no-head-timeout",
            Self::OsKeepAlive => "os-keep-alive",
            Self::Mimalloc => "mimalloc",
            Self::FatLto => "fat-lto",
            Self::PanicAbort => "panic-abort",
        }
    }

    /// Whether it is chosen when the binary is built, not when it starts.
    pub fn is_build(self) -> bool {
        !self.cargo_args().is_empty()
    }

    /// What `cargo build --release` is given to build a binary with it; none for a runtime
    /// knob. Each build knob also sets `GREET_BUILD_<NAME>`, which [`Knob::built_in`] reads
    /// where the build leaves no other mark (fat LTO).
    pub fn cargo_args(self) -> &'static [&'static str] {
        match self {
            Self::PipelineFlush | Self::StackHeaders | Self::NoHeadTimeout | Self::OsKeepAlive => {
                &[]
            }
            Self::Mimalloc => &["--features", "greet-server/mimalloc"],
            Self::FatLto => &[
                "--config",
                "profile.release.lto=\"fat\"",
                "--config",
                "profile.release.codegen-units=1",
                "--config",
                "env.GREET_BUILD_FAT_LTO=\"1\"",
            ],
            Self::PanicAbort => &["--config", "profile.release.panic=\"abort\""],
        }
    }

    /// Whether this binary was built with it; always true of a runtime knob.
    pub fn built_in(self) -> bool {
        match self {
            Self::Mimalloc => cfg!(feature = "mimalloc"),
            Self::FatLto => option_env!("GREET_BUILD_FAT_LTO").is_some(),
            Self::PanicAbort => cfg!(panic = "abort"),
            _ => true,
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
            Self::Mimalloc | Self::FatLto | Self::PanicAbort => {
                &["greet-hyper", "greet-axum", "greet-actix"]
            }
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
            Self::Mimalloc => "a C library compiled in; DHAT no longer sees the allocations",
            Self::FatLto => "a release build several times slower",
            Self::PanicAbort => "a panic in one request ends the whole process",
        }
    }

    /// The line a binary not built with build knob `self` refuses it with.
    pub fn not_built(self, server: &str) -> String {
        format!(
            "{server} was not built with {self}: build it with `cargo build --release -p \
             {server} {}`, or let greet-bench build it (a server named {}+{self})",
            // As a shell takes them: a quoted TOML string stays quoted.
            self.cargo_args()
                .iter()
                .map(|a| if a.contains('"') {
                    format!("'{a}'")
                } else {
                    (*a).to_owned()
                })
                .collect::<Vec<_>>()
                .join(" "),
            server.trim_start_matches("greet-")
        )
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
    fn a_build_knob_is_taken_only_by_a_binary_built_with_it() {
        let build: Vec<Knob> = Knob::ALL.into_iter().filter(|k| k.is_build()).collect();
        assert_eq!(build, [Knob::Mimalloc, Knob::FatLto, Knob::PanicAbort]);
        assert!(Knob::ALL.iter().all(|k| k.is_build() || k.built_in()));
        // The tests are built without the allocator feature, with thin LTO, unwinding.
        assert!(build.iter().all(|k| !k.built_in()));
        let line = Knob::Mimalloc.not_built("greet-axum");
        assert!(line.contains("--features greet-server/mimalloc"), "{line}");
        assert!(
            line.contains("axum+mimalloc") && !line.contains('\n'),
            "{line}"
        );
        let line = Knob::PanicAbort.not_built("greet-axum");
        assert!(
            line.contains("--config 'profile.release.panic=\"abort\"'"),
            "{line}"
        );
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
