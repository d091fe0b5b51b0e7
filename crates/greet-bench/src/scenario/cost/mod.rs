//! Cost: what a request costs each server, counted rather than timed, so that it comes back
//! to the percent on any run and any machine that has the same binaries. For each server and
//! each kind of request ([`Cell`]), the server is started under each instrument
//! (`greet_bed::sample::count`: callgrind, DHAT, perf) and loaded with N/4 requests, then started
//! again and loaded with N/4 + N: the difference over N is what one request costs, start-up,
//! warm-up and shutdown cancelled ([`warm_up`]). Only the server runs under an instrument.
//! Beside the counts, the CPU time per request the kernel charged under perf, and what
//! choosing the crate costs: its binary's size, its dependencies, its memory per idle
//! keep-alive connection and, with `--build`, its build times.

mod flags;
mod report;
mod run;
mod table;

use greet_load::{Header, RequestBody};

use greet_model::plan::{self, Base, Based, Profile, Protocol, ServerSettings, ServerSpec, Takes};

pub(crate) use flags::Flags;
pub use report::*;

use super::kit::{About, Part, Scenario, Study};

/// The cost scenario.
#[derive(Debug)]
pub(crate) struct Cost;

impl Scenario for Cost {
    const ABOUT: About = About {
        name: "cost",
        title: "Cost (what a request costs, counted: instructions, allocations, syscalls)",
        summary: "What a request costs, counted: instructions, allocations, syscalls",
        detail: "Each server under valgrind (callgrind, DHAT) and perf, loaded with N/4 and then \
                 N/4 + N keep-alive requests of each kind: user-space instructions and estimated \
                 cycles, heap allocations and bytes, syscalls and context switches per \
                 request, the same on every run; the CPU per request beside them; and what \
                 choosing the crate costs (binary size, dependencies, memory per idle \
                 connection, and with --build its build times)",
        examples: &[
            "greet-bench cost --cells baseline,plaintext  two kinds of request on every server",
            "greet-bench cost --servers hyper,hyper        the same server twice: counts repeat",
        ],
        // Each cell sets its own protocol, pipeline, header fields and body.
        own_protocols: true,
        keep_alive: false,
        references: true,
        ..About::DEFAULT
    };
    type Plan = Plan;
    type Flags = Flags;
    type Section = Section;

    /// A study's counted part: a plain request, and plaintext pipelined (where batching
    /// answers, as pipeline-flush does, shows).
    fn part(study: &Study) -> Option<(Part, Plan)> {
        let mut plan = Plan::defaults(study.quick);
        plan.base.set_servers(&study.servers);
        plan.cells = vec![Cell::Profile(Profile::Baseline), Cell::Plaintext];
        Some((Part::Counted, plan))
    }
}

/// One kind of request whose cost is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// One of HttpArena's profiles, as workloads loads it.
    Profile(Profile),
    /// TechEmpower's `/json`.
    Json,
    /// TechEmpower's `/plaintext`, pipelined 16 deep.
    Plaintext,
    /// TechEmpower's `/db` on the embedded store.
    Db,
    /// TechEmpower's `/fortunes` on the embedded store.
    Fortunes,
    /// `GET /greetings` at zero delay: the original's route.
    Greetings,
    /// The baseline over another protocol (h2c, HTTPS).
    Over(Protocol),
}

impl Cell {
    /// Every cell, in table order.
    pub const ALL: [Cell; 15] = [
        Cell::Profile(Profile::Baseline),
        Cell::Profile(Profile::ShortLived),
        Cell::Profile(Profile::PostJson),
        Cell::Profile(Profile::Compressed),
        Cell::Profile(Profile::Upload),
        Cell::Profile(Profile::Static),
        Cell::Profile(Profile::JsonTls),
        Cell::Profile(Profile::Websocket),
        Cell::Json,
        Cell::Plaintext,
        Cell::Db,
        Cell::Fortunes,
        Cell::Greetings,
        Cell::Over(Protocol::H2c),
        Cell::Over(Protocol::Https),
    ];
    /// `--quick`'s: a plain request, a pipelined one, and one over TLS.
    pub const QUICK: [Cell; 3] = [
        Cell::Profile(Profile::Baseline),
        Cell::Plaintext,
        Cell::Profile(Profile::JsonTls),
    ];
    /// Requests each connection of a pipelined load has in flight: TechEmpower's depth.
    pub const PIPELINE: usize = 16;

    /// Its name in flags, tables and results.json.
    pub fn name(self) -> String {
        match self {
            Self::Profile(p) => p.name().to_owned(),
            Self::Json => "json".to_owned(),
            Self::Plaintext => "plaintext".to_owned(),
            Self::Db => "db".to_owned(),
            Self::Fortunes => "fortunes".to_owned(),
            Self::Greetings => "greetings".to_owned(),
            Self::Over(protocol) => format!("baseline-{protocol}"),
        }
    }

    /// The path and query each request asks for.
    pub fn path(self) -> &'static str {
        match self {
            Self::Profile(p) => p.path(),
            Self::Json => greet_core::paths::JSON,
            Self::Plaintext => greet_core::paths::PLAINTEXT,
            Self::Db => greet_core::paths::DB,
            Self::Fortunes => greet_core::paths::FORTUNES,
            Self::Greetings => greet_core::paths::GREETINGS,
            Self::Over(_) => Profile::Baseline.path(),
        }
    }

    /// The protocol it goes over.
    pub fn protocol(self) -> Protocol {
        match self {
            Self::Profile(p) => p.protocol(),
            Self::Over(protocol) => protocol,
            _ => Protocol::Http1,
        }
    }

    /// The header fields each request carries.
    pub fn headers(self) -> Vec<Header> {
        match self {
            Self::Profile(p) => p.headers(),
            _ => Vec::new(),
        }
    }

    /// The body each request sends, an upload of `upload_bytes`.
    pub fn body(self, upload_bytes: u64) -> Option<RequestBody> {
        match self {
            Self::Profile(p) => p.body(upload_bytes),
            _ => None,
        }
    }

    /// Requests each connection has in flight.
    pub fn pipeline(self) -> usize {
        if self == Self::Plaintext {
            Self::PIPELINE
        } else {
            1
        }
    }

    /// Whether each connection is a WebSocket, each request a message echoed on it.
    pub fn websocket(self) -> bool {
        self == Self::Profile(Profile::Websocket)
    }

    /// Requests on a connection before the user opens another; none: one for the load.
    pub fn requests_per_connection(self) -> Option<usize> {
        match self {
            Self::Profile(p) => p.requests_per_connection(),
            _ => None,
        }
    }

    /// Whether a reference server (the floor, nginx) serves it: a route of theirs, in
    /// cleartext HTTP/1.1.
    pub fn for_references(self) -> bool {
        matches!(self, Self::Json | Self::Plaintext | Self::Greetings)
    }

    /// Its load's size, `(connections, requests each counts over)` ([`warm_up`]): the plan's,
    /// but where what varies from load to load would show in N requests' difference.
    ///
    /// - An upload moves a megabyte a request: at most [`Plan::FEW`] connections and 16
    ///   requests each. Its body arrives in as many reads as the kernel hands it over in,
    ///   each an allocation or more, so its count needs that many requests to settle.
    /// - Four times the requests, on [`Plan::FEW`] connections, where a cost paid in both
    ///   loads varies by more than 1% of N requests' own: over TLS each connection's
    ///   handshake; on SQLite the 20,000 rows the first query seeds; for static files the
    ///   threads tokio's blocking pool starts for the reads, as many as the load's timing
    ///   asks for. Measured at N: 2 to 8% between runs; at 4 N, under 1%. Few connections,
    ///   because what such a request holds (a TLS session's buffers, a pooled query, a file
    ///   read) goes through the allocator in an order that follows how the connections
    ///   interleave: json-tls moved 0.6-0.8% between runs on 16, 0.1-0.4% on 4.
    /// - N, on [`Plan::FEW`] connections, where the store answers: as many as its pool's
    ///   connections, so that no request waits its turn (under valgrind, 1 to 14 of 256
    ///   compressed fortunes on 16 connections waited past the pool's 2 s and were
    ///   answered 503).
    pub fn size(self, plan: &Plan) -> (usize, usize) {
        let settles_slowly = self.protocol().tls()
            || matches!(
                self,
                Self::Db | Self::Fortunes | Self::Profile(Profile::Static)
            );
        let (few, n) = (
            plan.connections.min(Plan::FEW),
            plan.connections * plan.each,
        );
        match self {
            Self::Profile(Profile::Upload) => (few, plan.each.min(Plan::UPLOAD_EACH)),
            _ if settles_slowly => (few, 4 * n / few),
            _ if self.stored() => (few, n / few),
            _ => (plan.connections, plan.each),
        }
    }

    /// Whether its requests query the store (SQLite by default), whose pool a request may
    /// wait for.
    pub fn stored(self) -> bool {
        matches!(
            self,
            Self::Db | Self::Fortunes | Self::Profile(Profile::Compressed)
        )
    }
}

/// The requests each connection sends in the smaller load, where the larger sends `each`
/// more: a quarter as many, at least one. The smaller load pays what both pay once (start-up,
/// each connection's set-up, what the first requests warm), so the difference is `each`
/// requests' own. Its size is the noise's: what follows the machine's timing (how often the
/// event loop goes idle between requests) grows with a load, and loads of N and 2N put three
/// loads' worth of it into one N's difference, loads of N/4 and N/4 + N one and a half.
pub fn warm_up(each: usize) -> usize {
    (each / 4).max(1)
}

impl std::str::FromStr for Cell {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|c| c.name() == text.trim())
            .ok_or_else(|| {
                let names: Vec<String> = Self::ALL.iter().map(|c| c.name()).collect();
                format!("{text:?} is no cell: {}", names.join(", "))
            })
    }
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// Cost: every cell on every server, counted.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What every scenario's plan holds; its repeats count each cell again (the counts
    /// repeat: a server named twice is the check that they do).
    pub base: Base,
    /// The kinds of request, in order.
    pub cells: Vec<Cell>,
    /// Keep-alive connections of each load.
    pub connections: usize,
    /// Requests each connection counts over (N = connections × each): the larger load sends
    /// these beyond the smaller's ([`warm_up`]).
    pub each: usize,
    /// Each upload's size, bytes.
    pub upload_bytes: u64,
    /// Idle keep-alive connections opened to weigh the memory each holds.
    pub idle: usize,
    /// Also time a clean release build of each server, and a rebuild after touching it.
    pub build: bool,
}

impl Plan {
    /// Connections: enough that the server always has a request waiting. Under valgrind a
    /// request takes the server milliseconds and the client microseconds, yet on 4 the
    /// event loop still went idle between requests whenever the client was slow to send the
    /// next, most of all when the machine was busy; each time it parks and wakes it runs
    /// some thousand instructions of the runtime's, as many times as the client's timing
    /// asks. With the machine busy beside it, a baseline request's count moved 0.5% (axum)
    /// to 1.5% (actix-web) between runs on 4, 0.1-0.4% on 16. A cell whose request holds
    /// state the allocator churns through, or queries the store, counts on [`Plan::FEW`]
    /// ([`Cell::size`]).
    pub const CONNECTIONS: usize = 16;
    /// `--quick` connections: the same, for the same reason.
    pub const QUICK_CONNECTIONS: usize = 16;
    /// Connections of the cells whose count follows how connections interleave, of those
    /// that query the store (its pool's size), and of an upload ([`Cell::size`]).
    pub const FEW: usize = 4;
    /// Requests each connection counts over: N = 1024.
    pub const EACH: usize = 64;
    /// An upload's requests per connection: 1 MiB bodies under valgrind, so fewer of them
    /// (64 on [`Plan::FEW`] connections), which still settle.
    pub(crate) const UPLOAD_EACH: usize = 16;
    /// `--quick`: N = 64, a smoke size. A fixed cost the two loads pay unevenly (some
    /// 50,000 instructions) is about 1% of a request's count there, 0.3% at the default N.
    pub const QUICK_EACH: usize = 4;
    /// An upload under valgrind: 1 MiB, not HttpArena's 20 MB.
    pub const UPLOAD_BYTES: u64 = 1 << 20;
    /// Idle connections weighed.
    pub const IDLE: usize = 1000;
    /// `--quick` idle connections.
    pub const QUICK_IDLE: usize = 100;
}

impl Based for Plan {
    const TAKES: Takes = Takes::SERVERS_ONLY;
    const REPEATS_HELP: &'static str =
        "Counts of each cell per server; they repeat, so one is enough but for a check";

    fn defaults(quick: bool) -> Self {
        let mut base = Base::new(ServerSettings::delayed(0), 1);
        base.servers.push(ServerSpec::new(plan::FLOOR));
        Self {
            base,
            cells: if quick {
                Cell::QUICK.to_vec()
            } else {
                Cell::ALL.to_vec()
            },
            connections: if quick {
                Self::QUICK_CONNECTIONS
            } else {
                Self::CONNECTIONS
            },
            each: if quick { Self::QUICK_EACH } else { Self::EACH },
            upload_bytes: Self::UPLOAD_BYTES,
            idle: if quick { Self::QUICK_IDLE } else { Self::IDLE },
            build: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_names_itself_and_asks_for_a_route() {
        for cell in Cell::ALL {
            assert_eq!(cell.name().parse(), Ok(cell));
            let path = cell.path().split('?').next().unwrap_or_default();
            let routed = greet_core::paths::ALL.contains(&path)
                || path.starts_with(greet_core::paths::STATIC);
            assert!(routed, "{cell}: {path}");
        }
        assert!("nope".parse::<Cell>().is_err());
        assert_eq!(Cell::Over(Protocol::H2c).name(), "baseline-h2c");
        assert_eq!(Cell::Plaintext.pipeline(), 16);
        let plan = Plan::defaults(false);
        assert_eq!(Cell::Json.size(&plan), (16, 64));
        assert_eq!(Cell::Profile(Profile::Upload).size(&plan), (4, 16));
        // Four times N, on few connections.
        assert_eq!(Cell::Profile(Profile::JsonTls).size(&plan), (4, 1024));
        let few = Plan {
            connections: 2,
            ..Plan::defaults(true)
        };
        assert_eq!(Cell::Db.size(&few), (2, 16));
        // The store's pool of 4: no more connections than it has.
        assert_eq!(Cell::Profile(Profile::Compressed).size(&plan), (4, 256));
        assert!(plan.base.shorts().contains(&"floor".to_owned()));
    }
}
