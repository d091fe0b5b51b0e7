//! The Greetings API's HTTP contract as code: one suite that every server must pass, over
//! real sockets, identically.
//!
//! - [`client`]: a raw HTTP/1.1 client, able to send what well-behaved clients never do, reading
//!   answers with `greet_probe::http1`.
//! - [`cases`]: the contract, one async function per rule, each against a server address.
//! - [`protocols`]: the same requests over HTTP/1.1, h2c, HTTP/1.1 over TLS and HTTP/2 over
//!   TLS (hyper's client, rustls), answered alike.
//! - [`h2_attacks`]: hostile HTTP/2 clients frame by frame (rapid reset, CONTINUATION,
//!   SETTINGS, PING and HPACK floods, a window overflow, stalled TLS handshakes).
//! - [`bad_input`]: the bad-input table (raw requests and the answer each server gives).
//! - [`knobs`]: the rows of the contract a server fails, the slow head and the idle limit
//!   among them: what a knob ([`greet_server::Knob`]) gives up.
//! - [`for_each_server!`]: the list of the server crates, for code that links them.
//! - [`for_each_case!`]: the list of quick cases, so the test suite (one test per case and
//!   server, in `tests/contract.rs`) and [`check`] cannot drift apart.
//! - [`check`]: runs the quick cases concurrently against a live server; the harness calls it
//!   before loading a server.
//! - [`spawn`]: starts a server in-process on an ephemeral port, on its own thread and
//!   runtime, and stops it gracefully on drop.
//! - [`process`] and [`process_tests!`]: tests of a server *binary* (signals, exit codes, bad
//!   flags), invoked by each server crate with its own executable.
//!
//! A case's [`Outcome`] and the helpers beneath it fail with an [`anyhow::Error`]: one line
//! saying what differed from the contract, for a person; [`check`] collects them into a
//! [`CheckError`].

pub mod bad_input;
pub mod cases;
pub mod client;
pub mod h2_attacks;
pub mod knobs;
pub mod process;
pub mod protocols;
pub mod spawn;

use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;

/// Calls `$callback! { case, case, ... }` with every quick case of [`cases`]: those that work
/// against any server configuration and take at most about one delay.
#[macro_export]
macro_rules! for_each_case {
    ($callback:ident) => {
        $callback! {
            greets_world,
            greets_by_name,
            empty_name_is_world,
            decodes_form_urlencoding,
            joins_repeated_names,
            ignores_other_parameters,
            rejects_bad_encoding,
            rejects_long_names,
            rejects_control_characters,
            head_has_no_body,
            other_methods_get_405,
            post_greets_as_json,
            post_refuses_bad_bodies,
            health_is_ok,
            unknown_paths_get_404,
            blocking_endpoint_greets,
            every_word_appears,
            long_target_gets_414,
            oversized_head_gets_431,
            missing_host_gets_400,
            survives_garbage,
            bad_inputs_get_their_answers,
            db_answers_a_world_row,
            queries_follow_techempower,
            updates_follow_techempower,
            cached_queries_follow_techempower,
            json_says_hello,
            plaintext_says_hello,
            fortunes_are_sorted_and_escaped,
            pipelined_requests_answer_in_order,
            business_greets_and_counts,
            business_refuses_bad_names,
        }
    };
}

/// Calls `$callback! { short => run, … }` with every server crate of the workspace: its short
/// name and its `run(listener, config, shutdown)`. The one list of the servers for code that
/// links them (the contract suite, the generated docs, the benches); the caller depends on
/// the three crates.
#[macro_export]
macro_rules! for_each_server {
    ($callback:ident) => {
        $callback! {
            axum => greet_axum::run,
            actix => greet_actix::run,
            hyper => greet_hyper::run,
        }
    };
}

/// What a case returns: `Err` says what differed from the contract, in one line for a person
/// to read ([`CheckError`] quotes it). An [`anyhow::Error`] is enough: no caller branches on
/// why a case failed, only on whether it did.
pub type Outcome = anyhow::Result<()>;

type CaseFuture = Pin<Box<dyn Future<Output = Outcome> + Send>>;

macro_rules! registry {
    ($($case:ident,)*) => {
        /// The quick cases by name, as [`for_each_case!`] lists them.
        pub const QUICK_CASES: &[(&str, fn(SocketAddr) -> CaseFuture)] =
            &[$((stringify!($case), |addr| Box::pin(cases::$case(addr)))),*];
    };
}
for_each_case!(registry);

/// Why [`check`] failed: each failing case with what differed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckError {
    /// `(case, what differed)` for every failing case, in [`QUICK_CASES`] order.
    pub failures: Vec<(&'static str, String)>,
}

/// Failing cases a [`CheckError`] names; the rest are counted.
const NAMED_FAILURES: usize = 3;

impl fmt::Display for CheckError {
    /// One line of a few hundred bytes at most, however much failed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} contract case(s) failed", self.failures.len())?;
        for (case, why) in self.failures.iter().take(NAMED_FAILURES) {
            let why = why.replace(['\n', '\r'], " ");
            write!(f, "; {case}: {}", cases::elide(&why, 100))?;
        }
        if self.failures.len() > NAMED_FAILURES {
            write!(f, "; and {} more", self.failures.len() - NAMED_FAILURES)?;
        }
        Ok(())
    }
}

impl std::error::Error for CheckError {}

/// Verifies the server at `base_url` (`http://host:port`) against every quick case,
/// concurrently, so a check takes about one greeting delay.
pub async fn check(base_url: &str) -> Result<(), CheckError> {
    let addr = greet_probe::resolve(base_url)
        .await
        .map_err(|why| CheckError {
            failures: vec![("url", why.to_string())],
        })?;
    let failures = failing(quick_cases(addr)).await;
    if failures.is_empty() {
        Ok(())
    } else {
        Err(CheckError { failures })
    }
}

/// A case running on a task of its own, by name.
type Running = (&'static str, tokio::task::JoinHandle<Outcome>);

/// Every quick case against `addr`, each started on a task of its own.
fn quick_cases(addr: SocketAddr) -> Vec<Running> {
    QUICK_CASES
        .iter()
        .map(|(name, case)| (*name, tokio::spawn(case(addr))))
        .collect()
}

/// The cases of `runs` that failed (or panicked), in order, each with what differed.
async fn failing(runs: Vec<Running>) -> Vec<(&'static str, String)> {
    let mut failures = Vec::new();
    for (name, run) in runs {
        match run.await {
            Ok(Ok(())) => {}
            Ok(Err(why)) => failures.push((name, format!("{why:#}"))),
            Err(panic) => failures.push((name, format!("case panicked: {panic}"))),
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn check_fails_without_a_server() {
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let err = check(&format!("http://{addr}")).await.unwrap_err();
        assert_eq!(err.failures.len(), QUICK_CASES.len());
        let line = err.to_string();
        assert!(!line.contains('\n') && line.len() < 600, "{line}");
        assert!(
            line.ends_with(&format!("and {} more", QUICK_CASES.len() - 3)),
            "{line}"
        );
    }
}
