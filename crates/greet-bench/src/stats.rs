//! From the outcomes of one level's requests to the figures of a [`Run`].

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::results::{Connect, Latency, LoadRun, Run, Spread, Summary};

/// Why a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ErrorKind {
    /// No connection could be established.
    Connect,
    /// No complete response within the per-request timeout.
    Timeout,
    /// The connection failed after it was established.
    Io,
    /// A status other than 200.
    Status,
    /// A 200 whose body is not `<word> World!`.
    Body,
}

impl ErrorKind {
    /// The name in `results.json` and the CSV.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::Timeout => "timeout",
            Self::Io => "io",
            Self::Status => "status",
            Self::Body => "body",
        }
    }
}

/// One request's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// A valid response: latency (clock started before connect) and connect time.
    Ok {
        /// Start → last body byte.
        latency: Duration,
        /// Start → connection established.
        connect: Duration,
    },
    /// A failure; `connect` is set when the connection was established.
    Failed {
        /// What went wrong.
        kind: ErrorKind,
        /// Start → connection established, when it was.
        connect: Option<Duration>,
    },
}

/// Summarises one level: `outcomes` of every request, `total` from first connect to last
/// response.
pub fn summarize(concurrency: usize, outcomes: &[Outcome], total: Duration) -> Run {
    let mut latencies =
        Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds");
    let (mut sum, mut min, mut max) = (Duration::ZERO, Duration::MAX, Duration::ZERO);
    let (mut connect_sum, mut connect_max, mut connects) = (Duration::ZERO, Duration::ZERO, 0u32);
    let mut errors = BTreeMap::new();
    let mut ok = 0usize;
    for outcome in outcomes {
        let connect = match *outcome {
            Outcome::Ok { latency, connect } => {
                ok += 1;
                sum += latency;
                min = min.min(latency);
                max = max.max(latency);
                latencies.saturating_record(micros(latency));
                Some(connect)
            }
            Outcome::Failed { kind, connect } => {
                *errors.entry(kind.as_str().to_owned()).or_insert(0) += 1;
                connect
            }
        };
        if let Some(connect) = connect {
            connect_sum += connect;
            connect_max = connect_max.max(connect);
            connects += 1;
        }
    }
    let requests = outcomes.len();
    let ms = |micros: u64| micros as f64 / 1000.0;
    let pct = |q: f64| {
        if ok == 0 {
            0.0
        } else {
            ms(latencies.value_at_quantile(q))
        }
    };
    Run {
        concurrency,
        requests,
        success_rate: if requests == 0 {
            0.0
        } else {
            100.0 * ok as f64 / requests as f64
        },
        total_s: total.as_secs_f64(),
        slowest_s: if ok == 0 { 0.0 } else { max.as_secs_f64() },
        fastest_s: if ok == 0 { 0.0 } else { min.as_secs_f64() },
        average_s: if ok == 0 {
            0.0
        } else {
            sum.as_secs_f64() / ok as f64
        },
        requests_per_s: if total.is_zero() {
            0.0
        } else {
            requests as f64 / total.as_secs_f64()
        },
        latency_ms: Latency {
            p50: pct(0.50),
            p90: pct(0.90),
            p99: pct(0.99),
            p999: pct(0.999),
            max: if ok == 0 {
                0.0
            } else {
                max.as_secs_f64() * 1000.0
            },
        },
        connect_ms: Connect {
            avg: if connects == 0 {
                0.0
            } else {
                connect_sum.as_secs_f64() * 1000.0 / f64::from(connects)
            },
            max: connect_max.as_secs_f64() * 1000.0,
        },
        errors,
        ..Run::default()
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1)
}

/// The median of `values` (the mean of the two middle ones for an even count).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// `part` as a percentage of `whole` (0 when there is no whole).
pub fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// The larger of two optional figures, or whichever there is.
pub fn max_of(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// Each run's throughput, in order: the sample servers are compared on.
pub fn throughputs(runs: &[LoadRun]) -> Vec<f64> {
    runs.iter().map(|r| r.requests_per_s).collect()
}

/// What repeated keep-alive runs add up to.
#[derive(Debug, Clone, PartialEq)]
pub struct Repeated {
    /// Throughput over the runs.
    pub requests_per_s: Summary,
    /// Valid responses over all runs.
    pub hits: u64,
    /// Valid responses, percent of all requests over all runs.
    pub success_rate: f64,
    /// Median of the runs' mean latencies, milliseconds.
    pub average_ms: f64,
    /// Median of the runs' mean server CPU, when sampled.
    pub cpu_avg_pct: Option<f64>,
}

/// Sums and medians of `runs`.
pub fn repeated(runs: &[LoadRun]) -> Repeated {
    let hits = runs.iter().map(LoadRun::ok).sum();
    let requests = runs.iter().map(|r| r.requests).sum();
    let cpu: Vec<f64> = runs.iter().filter_map(|r| r.cpu_avg_pct).collect();
    Repeated {
        requests_per_s: Summary::of(&throughputs(runs)),
        hits,
        success_rate: percent(hits, requests),
        average_ms: median(&runs.iter().map(|r| r.average_ms).collect::<Vec<_>>()),
        cpu_avg_pct: (!cpu.is_empty()).then(|| median(&cpu)),
    }
}

/// Combines repeated runs of one level: every figure is the median over the runs, errors are
/// summed, resource maxima are maxima, and the spread of the main figures is kept.
pub fn combine(runs: &[Run]) -> Run {
    if runs.len() <= 1 {
        return runs.first().cloned().unwrap_or_default();
    }
    let med = |f: fn(&Run) -> f64| median(&runs.iter().map(f).collect::<Vec<_>>());
    let range = |f: fn(&Run) -> f64| {
        let values = runs.iter().map(f);
        [
            values.clone().fold(f64::INFINITY, f64::min),
            values.fold(f64::NEG_INFINITY, f64::max),
        ]
    };
    let max_f = |f: fn(&Run) -> Option<f64>| runs.iter().map(f).fold(None, max_of);
    let mut errors = BTreeMap::new();
    for run in runs {
        for (kind, n) in &run.errors {
            *errors.entry(kind.clone()).or_insert(0) += n;
        }
    }
    Run {
        concurrency: runs[0].concurrency,
        requests: runs[0].requests,
        success_rate: med(|r| r.success_rate),
        total_s: med(|r| r.total_s),
        slowest_s: med(|r| r.slowest_s),
        fastest_s: med(|r| r.fastest_s),
        average_s: med(|r| r.average_s),
        requests_per_s: med(|r| r.requests_per_s),
        latency_ms: Latency {
            p50: med(|r| r.latency_ms.p50),
            p90: med(|r| r.latency_ms.p90),
            p99: med(|r| r.latency_ms.p99),
            p999: med(|r| r.latency_ms.p999),
            max: med(|r| r.latency_ms.max),
        },
        connect_ms: Connect {
            avg: med(|r| r.connect_ms.avg),
            max: med(|r| r.connect_ms.max),
        },
        errors,
        max_cpu_pct: max_f(|r| r.max_cpu_pct),
        max_rss_mib: max_f(|r| r.max_rss_mib),
        max_threads: runs.iter().filter_map(|r| r.max_threads).max(),
        repeats: Some(Spread {
            n: runs.len(),
            total_s: range(|r| r.total_s),
            average_s: range(|r| r.average_s),
            requests_per_s: range(|r| r.requests_per_s),
            total_s_runs: runs.iter().map(|r| r.total_s).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(ms: u64, connect_ms: u64) -> Outcome {
        Outcome::Ok {
            latency: Duration::from_millis(ms),
            connect: Duration::from_millis(connect_ms),
        }
    }

    #[test]
    fn summary_of_a_level() {
        let mut outcomes: Vec<_> = (1..=100).map(|i| ok(1000 + i, i % 4)).collect();
        outcomes.push(Outcome::Failed {
            kind: ErrorKind::Status,
            connect: Some(Duration::from_millis(8)),
        });
        outcomes.push(Outcome::Failed {
            kind: ErrorKind::Connect,
            connect: None,
        });
        let run = summarize(102, &outcomes, Duration::from_millis(1250));
        assert_eq!(run.requests, 102);
        assert!((run.success_rate - 100.0 * 100.0 / 102.0).abs() < 1e-9);
        assert_eq!(run.total_s, 1.25);
        assert_eq!(run.fastest_s, 1.001);
        assert_eq!(run.slowest_s, 1.100);
        assert!((run.average_s - 1.0505).abs() < 1e-9);
        assert!((run.requests_per_s - 102.0 / 1.25).abs() < 1e-9);
        // HDR histogram at 3 significant digits: within 0.1%.
        assert!(
            (run.latency_ms.p50 - 1050.0).abs() <= 1.1,
            "{}",
            run.latency_ms.p50
        );
        assert!(
            (run.latency_ms.p90 - 1090.0).abs() <= 1.1,
            "{}",
            run.latency_ms.p90
        );
        assert!(
            (run.latency_ms.p99 - 1099.0).abs() <= 1.1,
            "{}",
            run.latency_ms.p99
        );
        assert_eq!(run.latency_ms.max, 1100.0);
        // 100 successes (connect 0..3 ms, mean 1.5) and one status failure that connected in 8.
        assert!((run.connect_ms.avg - (150.0 + 8.0) / 101.0).abs() < 1e-9);
        assert_eq!(run.connect_ms.max, 8.0);
        assert_eq!(run.errors.get("status"), Some(&1));
        assert_eq!(run.errors.get("connect"), Some(&1));
    }

    #[test]
    fn a_level_with_no_success_has_zero_latencies() {
        let outcomes = [Outcome::Failed {
            kind: ErrorKind::Timeout,
            connect: None,
        }];
        let run = summarize(1, &outcomes, Duration::from_secs(1));
        assert_eq!(
            (run.success_rate, run.fastest_s, run.latency_ms.p50),
            (0.0, 0.0, 0.0)
        );
        assert_eq!(run.errors.get("timeout"), Some(&1));
    }

    #[test]
    fn repeated_runs_add_up() {
        let run = |requests, failed, rps, avg, cpu| LoadRun {
            requests,
            requests_per_s: rps,
            average_ms: avg,
            cpu_avg_pct: cpu,
            errors: BTreeMap::from([("io".to_owned(), failed)]),
            ..LoadRun::default()
        };
        let r = repeated(&[
            run(100, 0, 10.0, 1.0, Some(50.0)),
            run(100, 10, 30.0, 3.0, None),
            run(200, 0, 20.0, 2.0, Some(70.0)),
        ]);
        assert_eq!((r.hits, r.success_rate), (390, 97.5));
        assert_eq!(
            (r.requests_per_s.median, r.requests_per_s.min),
            (20.0, 10.0)
        );
        assert_eq!((r.average_ms, r.cpu_avg_pct), (2.0, Some(60.0)));
        assert_eq!(percent(1, 0), 0.0);
        assert_eq!(max_of(None, Some(1.0)), Some(1.0));
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn combining_repeats_takes_medians_and_keeps_spread() {
        let run = |total_s, rps, cpu| Run {
            concurrency: 10,
            requests: 10,
            total_s,
            requests_per_s: rps,
            max_cpu_pct: Some(cpu),
            errors: BTreeMap::from([("io".to_owned(), 1)]),
            ..Run::default()
        };
        let combined = combine(&[
            run(1.2, 8.0, 50.0),
            run(1.0, 10.0, 70.0),
            run(1.1, 9.0, 60.0),
        ]);
        assert_eq!(combined.total_s, 1.1);
        assert_eq!(combined.requests_per_s, 9.0);
        assert_eq!(combined.max_cpu_pct, Some(70.0));
        assert_eq!(combined.errors.get("io"), Some(&3));
        let spread = combined.repeats.unwrap();
        assert_eq!(
            (spread.n, spread.total_s, spread.requests_per_s),
            (3, [1.0, 1.2], [8.0, 10.0])
        );
        assert_eq!(spread.total_s_runs, [1.2, 1.0, 1.1]);
    }
}
