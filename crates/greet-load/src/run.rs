//! The one entry point that runs any load ([`run`]), and what it counted ([`Counted`]).

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::count::Tally;
use crate::paced::PacedTally;
use crate::work::{Load, Work};

/// What a load counted. One a load, never one a request: its size costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Counted {
    /// A closed loop's (fresh connections, sessions): every request's outcome.
    Closed(Tally),
    /// An open loop's: the corrected latencies, the service times, and the schedule's lag.
    Paced(PacedTally),
}

impl Counted {
    /// Every request's outcome (an open loop's latencies from the intended sends).
    pub fn tally(&self) -> &Tally {
        match self {
            Self::Closed(tally) => tally,
            Self::Paced(paced) => &paced.corrected,
        }
    }

    /// An open loop's whole count.
    pub fn paced(&self) -> Option<&PacedTally> {
        match self {
            Self::Closed(_) => None,
            Self::Paced(paced) => Some(paced),
        }
    }
}

/// Runs `load`; `done` is bumped after each request (for progress bars).
pub async fn run(load: &Load, done: Arc<AtomicUsize>) -> Counted {
    match load.work {
        Work::Fresh {
            concurrency,
            requests,
        } => Counted::Closed(crate::fresh::fresh(load, concurrency, requests, done).await),
        Work::Sessions {
            users,
            stop,
            streams,
            pipeline,
            requests_per_connection,
        } => {
            let shape = crate::sessions::Shape {
                users,
                stop,
                streams,
                pipeline,
                requests_per_connection,
            };
            Counted::Closed(crate::sessions::sessions(load, shape, done).await)
        }
        Work::Paced(ref schedule) => {
            Counted::Paced(crate::paced::paced(load, schedule, done).await)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use greet_conformance::spawn::{quick, spawn};
    use greet_core::records::FORTUNES_PAGE;
    use greet_probe::tls::Trust;
    use greet_probe::Protocol;

    use super::*;
    use crate::expect::{Check, Expect};
    use crate::schedule::Schedule;
    use crate::work::{Load, Stop};
    use crate::Wire;

    fn works() -> [Work; 4] {
        [
            Work::Fresh {
                concurrency: 2,
                requests: 10,
            },
            Work::Sessions {
                users: 2,
                stop: Stop::Total(20),
                streams: 1,
                pipeline: 1,
                requests_per_connection: None,
            },
            Work::Sessions {
                users: 2,
                stop: Stop::Total(20),
                streams: 2,
                pipeline: 4,
                requests_per_connection: Some(8),
            },
            Work::Paced(Schedule::constant(100.0, Duration::from_millis(200), 2)),
        ]
    }

    /// Every loop, over HTTP/1.1 and h2c, sends the load's header fields, and counts the
    /// bytes of each answer as they came: `/fortunes` whole without `accept-encoding`, and
    /// compressed (fewer bytes) with `accept-encoding: gzip`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_loop_sends_the_headers_and_counts_the_bytes() {
        let server = spawn(greet_hyper::run, quick()).expect("greet-hyper starts");
        let page = FORTUNES_PAGE.len() as f64;
        for work in works() {
            for protocol in [Protocol::Http1, Protocol::H2c] {
                for gzip in [false, true] {
                    let load = Load {
                        addr: server.addr(),
                        target: "/fortunes".into(),
                        headers: if gzip {
                            vec!["accept-encoding: gzip".parse().expect("a header")]
                        } else {
                            Vec::new()
                        },
                        body: None,
                        check: Check::for_target("/fortunes", &Expect::Any),
                        timeout: Duration::from_secs(5),
                        wire: Wire::new(protocol, &Trust::Any).expect("a wire"),
                        work: work.clone(),
                    };
                    let f = run(&load, Arc::default()).await.tally().figures();
                    let what = format!("{protocol} {work:?}, gzip {gzip}");
                    assert_eq!(f.success_rate, 100.0, "{what}: {f:?}");
                    let bytes = f.bytes_per_answer.expect("answers");
                    if gzip {
                        assert!(bytes > 100.0 && bytes < page * 0.7, "{what}: {bytes} bytes");
                    } else {
                        assert_eq!(bytes, page, "{what}");
                    }
                }
            }
        }
    }

    /// Every loop, over HTTP/1.1 and h2c, POSTs the load's body: a JSON name to
    /// `/greetings`, greeted by it, and 100 kB to `/upload` with its length declared and in
    /// chunks of 7000 bytes, counted whole (the greeting's rule checks every answer).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_loop_posts_the_body() {
        let server = spawn(greet_hyper::run, quick()).expect("greet-hyper starts");
        let json: crate::Header = "content-type: application/json".parse().expect("a header");
        for work in works() {
            for protocol in [Protocol::Http1, Protocol::H2c] {
                for (target, headers, body) in [
                    ("/greetings", vec![json.clone()], r#"text:{"name":"Ana"}"#),
                    ("/upload", Vec::new(), "size:100000"),
                    ("/upload", Vec::new(), "chunked:100000/7000"),
                ] {
                    let body: crate::RequestBody = body.parse().expect("a body");
                    let load = Load {
                        addr: server.addr(),
                        target: target.into(),
                        check: Check::for_request(target, &headers, Some(&body), &Expect::Greeting),
                        headers,
                        body: Some(body),
                        timeout: Duration::from_secs(5),
                        wire: Wire::new(protocol, &Trust::Any).expect("a wire"),
                        work: work.clone(),
                    };
                    let http1 = load.request().http1().to_vec();
                    let chunked = http1.windows(8).any(|w| w == b"\r\n1b58\r\n");
                    assert_eq!(
                        chunked,
                        load.body.as_ref().and_then(|b| b.chunk()).is_some()
                    );
                    let f = run(&load, Arc::default()).await.tally().figures();
                    let what = format!("{protocol} {work:?}, POST {target}");
                    assert_eq!(f.success_rate, 100.0, "{what}: {f:?}");
                }
            }
        }
        // The rule can fail: a name the body does not give.
        let load = Load {
            addr: server.addr(),
            target: "/greetings".into(),
            check: Check::for_request(
                "/greetings",
                &[],
                Some(&r#"text:{"name":"Bo"}"#.parse().expect("a body")),
                &Expect::Greeting,
            ),
            headers: vec![json],
            body: Some(r#"text:{"name":"Ana"}"#.parse().expect("a body")),
            timeout: Duration::from_secs(5),
            wire: Wire::default(),
            work: works()[1].clone(),
        };
        let f = run(&load, Arc::default()).await.tally().figures();
        assert_eq!(f.success_rate, 0.0, "{f:?}");
    }
}
