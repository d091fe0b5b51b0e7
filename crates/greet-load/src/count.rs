//! Counting: what one request came to ([`Outcome`]), and the [`Tally`] every load pushes
//! its outcomes into and turns into [`Figures`]. A tally serializes losslessly (an agent's
//! shard crosses a process boundary as JSON and merges as if it had been counted here).

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::figures::{percent, rate, Connect, Figures, Handshakes, Latency};

/// Why a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorKind {
    /// No connection could be established.
    Connect,
    /// No complete response within the per-request timeout.
    Timeout,
    /// The connection failed after it was established, or the answer was not HTTP.
    Io,
    /// The server settled on another protocol than the one asked for: ALPN agreed on another
    /// (or none), or an h2c client's preface got no HTTP/2 answer. A failure, not a result.
    Protocol,
    /// A status other than the endpoint's.
    Status,
    /// The endpoint's status with a body it would not send.
    Body,
    /// The harness itself panicked on this request: counted, never dropped.
    Panic,
}

impl ErrorKind {
    /// The name in `results.json` and the CSVs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::Timeout => "timeout",
            Self::Io => "io",
            Self::Protocol => "protocol",
            Self::Status => "status",
            Self::Body => "body",
            Self::Panic => "panic",
        }
    }
}

/// How a request opened its connection: start → TCP established, and over TLS the
/// handshake after it (a full handshake, unless the load resumes sessions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Opened {
    /// Start → connection established.
    pub tcp: Duration,
    /// Established → TLS handshake done, over TLS.
    pub tls: Option<Duration>,
    /// The handshake resumed an earlier connection's session.
    pub resumed: bool,
}

impl Opened {
    /// A cleartext connection established after `tcp`.
    pub fn tcp(tcp: Duration) -> Self {
        Self {
            tcp,
            tls: None,
            resumed: false,
        }
    }
}

/// One request's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// A valid response after `latency` (clock started before the connect, when there was
    /// one); `connect` when this request opened its connection.
    Ok {
        /// Start → last body byte.
        latency: Duration,
        /// How this request opened its connection, when it did.
        connect: Option<Opened>,
        /// The answer's body as it came (compressed, when it was).
        bytes: u64,
    },
    /// A failure; `connect` when this request opened a connection.
    Failed {
        /// What went wrong.
        kind: ErrorKind,
        /// How this request opened its connection, when it did.
        connect: Option<Opened>,
    },
}

impl Outcome {
    /// A request lost to a panic in the load generator itself, outside `caught` when a
    /// whole worker was lost.
    pub(crate) const PANICKED: Outcome = Outcome::Failed {
        kind: ErrorKind::Panic,
        connect: None,
    };
}

/// Latencies are recorded in microseconds, from 1 µs to an hour, at 3 significant digits.
fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds")
}

/// The quantiles of a latency spectrum (HdrHistogram's percentile distribution, by nines);
/// the maximum follows them.
pub const SPECTRUM: [f64; 10] = [
    0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99999,
];

/// Latencies (µs) kept as a list until there are more than this many, then in a histogram.
const FEW: usize = 4096;

/// A tally's latencies. A histogram of that range and precision is 180 KB of counters: one
/// per task of a 2700-connection level (a task each, one request each) cost the load
/// generator a third of a second of its CPU and stretched the level; a list costs 8 bytes a
/// request.
#[derive(Debug, Clone)]
enum Latencies {
    Few(Vec<u64>),
    Many(Box<Histogram<u64>>),
}

/// [`Latencies`] as they serialize: the list, or each recorded bucket of the histogram as
/// (its highest value, its count). A bucket's highest value records into the same bucket, so
/// the copy reads every quantile as the original does.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum LatenciesWire {
    Few(Vec<u64>),
    Buckets(Vec<(u64, u64)>),
}

impl Serialize for Latencies {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Few(values) => LatenciesWire::Few(values.clone()),
            Self::Many(histogram) => LatenciesWire::Buckets(
                histogram
                    .iter_recorded()
                    .map(|v| (v.value_iterated_to(), v.count_at_value()))
                    .collect(),
            ),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Latencies {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match LatenciesWire::deserialize(deserializer)? {
            LatenciesWire::Few(values) => Self::Few(values),
            LatenciesWire::Buckets(buckets) => {
                let mut histogram = histogram();
                for (value, count) in buckets {
                    histogram
                        .record_n(value, count)
                        .map_err(serde::de::Error::custom)?;
                }
                Self::Many(Box::new(histogram))
            }
        })
    }
}

impl Latencies {
    fn record(&mut self, micros: u64) {
        match self {
            Self::Few(values) if values.len() < FEW => values.push(micros),
            Self::Few(_) => {
                self.spill();
                self.record(micros);
            }
            Self::Many(histogram) => histogram.saturating_record(micros),
        }
    }

    /// Moves the list into a histogram.
    fn spill(&mut self) {
        if let Self::Few(values) = self {
            let mut histogram = histogram();
            for &v in values.iter() {
                histogram.saturating_record(v);
            }
            *self = Self::Many(Box::new(histogram));
        }
    }

    fn merge(&mut self, other: &Latencies) {
        match other {
            Self::Few(values) => values.iter().for_each(|&v| self.record(v)),
            Self::Many(other) => {
                self.spill();
                if let Self::Many(histogram) = self {
                    // Same bounds on both sides: adding cannot fail.
                    let _ = histogram.add(other.as_ref());
                }
            }
        }
    }

    /// The latencies at quantiles `qs`, µs, as a histogram reads them.
    fn quantiles<const N: usize>(&self, qs: [f64; N]) -> [u64; N] {
        let mut all = self.clone();
        all.spill();
        match all {
            Self::Many(histogram) => qs.map(|q| histogram.value_at_quantile(q)),
            Self::Few(_) => unreachable!("spilled"),
        }
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1)
}

/// Everything a load did, from its outcomes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tally {
    ok: u64,
    errors: BTreeMap<ErrorKind, u64>,
    latency: Latencies,
    latency_sum: Duration,
    fastest: Duration,
    slowest: Duration,
    connects: u64,
    connect_sum: Duration,
    connect_max: Duration,
    handshakes: u64,
    handshake: Latencies,
    handshake_sum: Duration,
    handshake_max: Duration,
    /// Of the handshakes, those that resumed a session.
    #[serde(default)]
    resumed: u64,
    /// The valid answers' body bytes, as they came.
    #[serde(default)]
    bytes: u64,
    /// First request to last response.
    pub elapsed: Duration,
}

impl Default for Tally {
    fn default() -> Self {
        Self {
            ok: 0,
            errors: BTreeMap::new(),
            latency: Latencies::Few(Vec::new()),
            latency_sum: Duration::ZERO,
            fastest: Duration::MAX,
            slowest: Duration::ZERO,
            connects: 0,
            connect_sum: Duration::ZERO,
            connect_max: Duration::ZERO,
            handshakes: 0,
            handshake: Latencies::Few(Vec::new()),
            handshake_sum: Duration::ZERO,
            handshake_max: Duration::ZERO,
            resumed: 0,
            bytes: 0,
            elapsed: Duration::ZERO,
        }
    }
}

impl Tally {
    /// Adds one request's outcome.
    pub fn push(&mut self, outcome: Outcome) {
        let connect = match outcome {
            Outcome::Ok {
                latency,
                connect,
                bytes,
            } => {
                self.ok += 1;
                self.bytes += bytes;
                self.latency_sum += latency;
                self.fastest = self.fastest.min(latency);
                self.slowest = self.slowest.max(latency);
                self.latency.record(micros(latency));
                connect
            }
            Outcome::Failed { kind, connect } => {
                *self.errors.entry(kind).or_insert(0) += 1;
                connect
            }
        };
        if let Some(opened) = connect {
            self.opened(opened);
        }
    }

    /// Counts a connection opened with no request of its own to carry it (an open loop's
    /// warm-up).
    pub(crate) fn opened(&mut self, Opened { tcp, tls, resumed }: Opened) {
        self.connects += 1;
        self.connect_sum += tcp;
        self.connect_max = self.connect_max.max(tcp);
        if let Some(tls) = tls {
            self.handshakes += 1;
            self.handshake.record(micros(tls));
            self.handshake_sum += tls;
            self.handshake_max = self.handshake_max.max(tls);
            self.resumed += u64::from(resumed);
        }
    }

    /// Adds another tally's outcomes (its elapsed time is not added: loads run side by side).
    pub fn merge(&mut self, other: &Tally) {
        self.ok += other.ok;
        for (kind, n) in &other.errors {
            *self.errors.entry(*kind).or_insert(0) += n;
        }
        self.latency.merge(&other.latency);
        self.latency_sum += other.latency_sum;
        self.fastest = self.fastest.min(other.fastest);
        self.slowest = self.slowest.max(other.slowest);
        self.connects += other.connects;
        self.connect_sum += other.connect_sum;
        self.connect_max = self.connect_max.max(other.connect_max);
        self.handshakes += other.handshakes;
        self.handshake.merge(&other.handshake);
        self.handshake_sum += other.handshake_sum;
        self.handshake_max = self.handshake_max.max(other.handshake_max);
        self.resumed += other.resumed;
        self.bytes += other.bytes;
    }

    /// The valid responses' latencies at the quantiles of [`SPECTRUM`], milliseconds, the
    /// slowest last (empty when none was valid).
    pub fn spectrum_ms(&self) -> Vec<f64> {
        if self.ok == 0 {
            return Vec::new();
        }
        // A histogram reads a bucket's highest value: never above the exact maximum.
        let max = self.slowest.as_secs_f64() * 1000.0;
        let mut out: Vec<f64> = self
            .latency
            .quantiles(SPECTRUM)
            .iter()
            .map(|&us| (us as f64 / 1000.0).min(max))
            .collect();
        out.push(max);
        out
    }

    /// Requests counted, valid or not.
    pub fn requests(&self) -> u64 {
        self.ok + self.errors.values().sum::<u64>()
    }

    /// The figures of the load, valid responses only in every latency and in the throughput.
    pub fn figures(&self) -> Figures {
        let ok = self.ok;
        let total_s = self.elapsed.as_secs_f64();
        let when_ok = |d: Duration| if ok == 0 { 0.0 } else { d.as_secs_f64() };
        let max_ms = when_ok(self.slowest) * 1000.0;
        let [p50, p90, p99, p999] = if ok == 0 {
            [0.0; 4]
        } else {
            // A histogram reads a bucket's highest value: never above the exact maximum.
            self.latency
                .quantiles([0.50, 0.90, 0.99, 0.999])
                .map(|us| (us as f64 / 1000.0).min(max_ms))
        };
        Figures {
            requests: self.requests(),
            success_rate: percent(ok, self.requests()),
            total_s,
            requests_per_s: rate(ok, total_s),
            fastest_s: when_ok(self.fastest),
            slowest_s: when_ok(self.slowest),
            average_s: if ok == 0 {
                0.0
            } else {
                self.latency_sum.as_secs_f64() / ok as f64
            },
            latency_ms: Latency {
                p50,
                p90,
                p99,
                p999,
                max: when_ok(self.slowest) * 1000.0,
            },
            connects: self.connects,
            connect_ms: Connect {
                avg: if self.connects == 0 {
                    0.0
                } else {
                    self.connect_sum.as_secs_f64() * 1000.0 / self.connects as f64
                },
                max: self.connect_max.as_secs_f64() * 1000.0,
            },
            handshake_ms: self.handshake_figures(),
            bytes_per_answer: (ok > 0).then(|| self.bytes as f64 / ok as f64),
            errors: self
                .errors
                .iter()
                .map(|(kind, n)| (kind.as_str().to_owned(), *n))
                .collect(),
        }
    }

    /// The TLS handshakes' figures, milliseconds, when there were any.
    fn handshake_figures(&self) -> Option<Handshakes> {
        let n = self.handshakes;
        if n == 0 {
            return None;
        }
        let max = self.handshake_max.as_secs_f64() * 1000.0;
        let [p50, p99] = self
            .handshake
            .quantiles([0.50, 0.99])
            .map(|us| (us as f64 / 1000.0).min(max));
        Some(Handshakes {
            count: n,
            resumed: self.resumed,
            avg: self.handshake_sum.as_secs_f64() * 1000.0 / n as f64,
            p50,
            p99,
            max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(ms: u64, connect_ms: u64) -> Outcome {
        Outcome::Ok {
            latency: Duration::from_millis(ms),
            connect: Some(Opened::tcp(Duration::from_millis(connect_ms))),
            bytes: ms % 7,
        }
    }

    /// A tally that went through JSON merges as the original does: the same counts, and every
    /// quantile the same, from a list and from a histogram.
    #[test]
    fn a_tally_survives_json_exactly() {
        for n in [10u64, 10_000] {
            let mut tally = Tally::default();
            for i in 0..n {
                let outcome = if i % 97 == 0 {
                    Outcome::Failed {
                        kind: ErrorKind::Timeout,
                        connect: None,
                    }
                } else {
                    ok(1 + i * 7 % 1500, i % 5)
                };
                tally.push(outcome);
            }
            tally.elapsed = Duration::from_millis(1234);
            let json = serde_json::to_string(&tally).expect("serializes");
            let copy: Tally = serde_json::from_str(&json).expect("deserializes");
            let (mut a, mut b) = (Tally::default(), Tally::default());
            a.merge(&tally);
            b.merge(&copy);
            a.elapsed = tally.elapsed;
            b.elapsed = copy.elapsed;
            assert_eq!(format!("{:?}", a.figures()), format!("{:?}", b.figures()));
            assert_eq!(a.spectrum_ms(), b.spectrum_ms());
            assert_eq!(copy.errors.get(&ErrorKind::Timeout), Some(&n.div_ceil(97)));
        }
    }

    #[test]
    fn handshakes_are_counted_apart_from_connects() {
        let mut tally = Tally::default();
        assert_eq!(tally.figures().handshake_ms, None);
        for tls_ms in 1..=100 {
            tally.push(Outcome::Ok {
                latency: Duration::from_millis(500),
                connect: Some(Opened {
                    tcp: Duration::from_millis(2),
                    tls: Some(Duration::from_millis(tls_ms)),
                    resumed: tls_ms % 4 == 0,
                }),
                bytes: 0,
            });
        }
        let mut other = Tally::default();
        other.push(ok(500, 4));
        tally.merge(&other);
        let f = tally.figures();
        assert_eq!(f.connects, 101);
        assert!((f.connect_ms.avg - (2.0 * 100.0 + 4.0) / 101.0).abs() < 1e-9);
        let h = f.handshake_ms.expect("handshakes");
        assert_eq!(h.count, 100, "a cleartext connect is no handshake");
        assert_eq!(h.resumed, 25, "{h:?}");
        assert!((h.avg - 50.5).abs() < 1e-9, "{h:?}");
        assert!(
            (49.9..=50.1).contains(&h.p50) && (98.9..=99.1).contains(&h.p99),
            "{h:?}"
        );
        assert_eq!(h.max, 100.0);
    }

    #[test]
    fn figures_of_a_level() {
        let mut tally = Tally::default();
        for i in 1..=100 {
            tally.push(ok(1000 + i, i % 4));
        }
        tally.push(Outcome::Failed {
            kind: ErrorKind::Status,
            connect: Some(Opened::tcp(Duration::from_millis(8))),
        });
        tally.push(Outcome::Failed {
            kind: ErrorKind::Connect,
            connect: None,
        });
        tally.elapsed = Duration::from_millis(1250);
        let f = tally.figures();
        assert_eq!(f.requests, 102);
        assert!((f.success_rate - 100.0 * 100.0 / 102.0).abs() < 1e-9);
        assert_eq!((f.total_s, f.fastest_s, f.slowest_s), (1.25, 1.001, 1.100));
        assert!((f.average_s - 1.0505).abs() < 1e-9);
        // Valid responses only: 100 over 1.25 s, not the 102 sent.
        assert!((f.requests_per_s - 100.0 / 1.25).abs() < 1e-9);
        // HDR histogram at 3 significant digits: within 0.1%.
        for (got, want) in [
            (f.latency_ms.p50, 1050.0),
            (f.latency_ms.p90, 1090.0),
            (f.latency_ms.p99, 1099.0),
        ] {
            assert!((got - want).abs() <= 1.1, "{got} vs {want}");
        }
        assert_eq!(f.latency_ms.max, 1100.0);
        // 100 successes (connect 0..3 ms, mean 1.5) and one status failure that connected in 8.
        assert_eq!(f.connects, 101);
        assert!((f.connect_ms.avg - (150.0 + 8.0) / 101.0).abs() < 1e-9);
        assert_eq!(f.connect_ms.max, 8.0);
        assert_eq!(f.errors.get("status"), Some(&1));
        assert_eq!(f.errors.get("connect"), Some(&1));
        assert_eq!(f.ok(), 100);
    }

    #[test]
    fn many_latencies_move_to_a_histogram_with_the_same_quantiles() {
        let (mut few, mut many) = (Tally::default(), Tally::default());
        for i in 0..FEW as u64 * 2 {
            let outcome = ok(1 + i % 1000, 1);
            many.push(outcome);
            if i < 100 {
                few.push(outcome);
            }
        }
        assert!(matches!(few.latency, Latencies::Few(_)));
        assert!(matches!(many.latency, Latencies::Many(_)));
        let mut merged = few.clone();
        merged.merge(&many);
        let mut other_way = many.clone();
        other_way.merge(&few);
        for t in [&mut merged, &mut other_way] {
            t.elapsed = Duration::from_secs(1);
        }
        assert_eq!(merged.figures(), other_way.figures());
        assert_eq!(merged.requests(), FEW as u64 * 2 + 100);
    }

    #[test]
    fn merged_tallies_are_one() {
        let (mut a, mut b, mut both) = (Tally::default(), Tally::default(), Tally::default());
        for (i, outcome) in [ok(5, 1), ok(9, 2), ok(7, 3)].into_iter().enumerate() {
            both.push(outcome);
            if i == 0 { &mut a } else { &mut b }.push(outcome);
        }
        a.merge(&b);
        (a.elapsed, both.elapsed) = (Duration::from_secs(1), Duration::from_secs(1));
        assert_eq!(a.figures(), both.figures());
    }

    #[test]
    fn a_level_with_no_success_has_zero_latencies() {
        let mut tally = Tally::default();
        tally.push(Outcome::Failed {
            kind: ErrorKind::Timeout,
            connect: None,
        });
        tally.elapsed = Duration::from_secs(1);
        let f = tally.figures();
        assert_eq!(
            (
                f.success_rate,
                f.fastest_s,
                f.latency_ms.p50,
                f.requests_per_s
            ),
            (0.0, 0.0, 0.0, 0.0)
        );
        assert_eq!(f.errors.get("timeout"), Some(&1));
    }
}
