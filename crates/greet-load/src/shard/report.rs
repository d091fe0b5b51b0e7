//! What an agent hands back ([`Report`]), as the lines it prints ([`Report::lines`], each
//! after [`REPORT_PREFIX`]) and read back ([`parse_report`]); every agent's report in a level's
//! output, checked to be one whole level ([`gather_reports`]); and their tallies merged into
//! the level's ([`merge`]).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::count::Tally;
use crate::figures::AgentRun;
use crate::paced::{merge_windows, PacedTally};
use crate::run::Counted;

/// What starts each line of an agent's report on its stdout.
pub const REPORT_PREFIX: &str = "greet-load-report ";

/// Bytes of JSON on one report line at most. A report with its histograms runs to hundreds
/// of KB, and log pipelines split longer lines: Docker's and Kubernetes' at 16 KiB, and a
/// swarm's logs from another node hand the pieces back as lines of their own.
const PART_BYTES: usize = 4096;

/// What an agent hands back.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// Its number.
    pub index: usize,
    /// Agents in all, as it was told.
    pub agents: usize,
    /// Its connections at once (fresh), users (keep-alive) or connections (open loop).
    pub concurrency: usize,
    /// Its requests: its share (fresh), or those it sent (keep-alive; 0 for open loop).
    pub requests: usize,
    /// Its first request's start after the shared start, seconds.
    pub start_skew_s: f64,
    /// When it started, seconds since the Unix epoch: agents not given one start instant
    /// (pods started as they are scheduled) are still laid on one time line.
    pub started_s: f64,
    /// CPU the agent process used in all, seconds.
    pub cpu_s: f64,
    /// Everything it counted.
    pub counted: Counted,
}

impl Report {
    /// Its lines on the agent's stdout, in order, joined by newlines: each is
    /// [`REPORT_PREFIX`], the agent's index, the part's number and how many there are
    /// (`0 2/5`), then that part of the report as JSON.
    pub fn lines(&self) -> String {
        // A report is plain numbers and maps: it always serializes.
        let json = serde_json::to_string(self).unwrap_or_default();
        let mut parts = Vec::new();
        let mut rest = json.as_str();
        while !rest.is_empty() {
            let mut cut = rest.len().min(PART_BYTES);
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            let (part, after) = rest.split_at(cut);
            parts.push(part);
            rest = after;
        }
        let of = parts.len();
        parts
            .iter()
            .enumerate()
            .map(|(k, part)| format!("{REPORT_PREFIX}{} {}/{of} {part}", self.index, k + 1))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Whether `output` (logs, with anything before [`REPORT_PREFIX`] on a line) holds every part
/// of a report from each of agents 0 to `agents` - 1, in whatever order: how a reader of logs
/// knows it has them all, without parsing them.
pub fn all_reports_in(output: &str, agents: usize) -> bool {
    reports_in(output, 0..agents)
}

/// Whether `output` holds every part of agent `index`'s report, as [`all_reports_in`].
pub fn report_in(output: &str, index: usize) -> bool {
    reports_in(output, [index])
}

fn reports_in(output: &str, indices: impl IntoIterator<Item = usize>) -> bool {
    let mut seen: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    for line in output.lines() {
        let part = line
            .find(REPORT_PREFIX)
            .and_then(|at| part_of(&line[at + REPORT_PREFIX.len()..]));
        if let Some((index, _, of, _)) = part {
            let (parts, _) = seen.entry(index).or_insert((0, of));
            *parts += 1;
        }
    }
    indices
        .into_iter()
        .all(|i| seen.get(&i).is_some_and(|&(parts, of)| parts >= of))
}

/// A report line's index, part number, parts and JSON, after the prefix.
fn part_of(rest: &str) -> Option<(usize, usize, usize, &str)> {
    let mut words = rest.splitn(3, ' ');
    let index = words.next()?.parse().ok()?;
    let (k, of) = words.next()?.split_once('/')?;
    let (k, of) = (k.parse().ok()?, of.parse().ok()?);
    (1..=of)
        .contains(&k)
        .then_some((index, k, of, words.next()?))
}

/// Every report in `output`, put together from its lines, in agent order. Lines may come in
/// any order (a swarm's logs do not keep one task's in order): each part says whose it is and
/// where it goes. A part seen twice starts the agent's second report (the caller refuses an
/// agent that reported twice); a part missing tears its report.
fn assemble(output: &str) -> Result<Vec<Report>, ReportsError> {
    // Per agent, per report of it, per part: how many parts, the JSON, and its line.
    type Parts<'a> = BTreeMap<usize, (usize, &'a str, usize)>;
    let mut parts: BTreeMap<usize, Vec<Parts<'_>>> = BTreeMap::new();
    for (n, line) in output.lines().enumerate() {
        let Some(at) = line.find(REPORT_PREFIX) else {
            continue;
        };
        let Some((index, k, of, json)) = part_of(&line[at + REPORT_PREFIX.len()..]) else {
            return Err(ReportsError::Torn { line: n + 1 });
        };
        let copies = parts.entry(index).or_default();
        match copies.iter_mut().find(|c| !c.contains_key(&k)) {
            Some(copy) => {
                copy.insert(k, (of, json, n + 1));
            }
            None => copies.push(BTreeMap::from([(k, (of, json, n + 1))])),
        }
    }
    let mut reports = Vec::new();
    for (index, agent) in parts
        .into_iter()
        .flat_map(|(index, copies)| copies.into_iter().map(move |c| (index, c)))
    {
        let last = agent.values().map(|&(_, _, line)| line).max().unwrap_or(0);
        let of = agent.values().map(|&(of, _, _)| of).max().unwrap_or(0);
        let whole = agent.len() == of
            && agent.keys().copied().eq(1..=of)
            && agent.values().all(|&(o, _, _)| o == of);
        if !whole {
            return Err(ReportsError::Torn { line: last });
        }
        let json: String = agent.values().map(|&(_, json, _)| json).collect();
        let report: Report = serde_json::from_str(&json)
            .map_err(|source| ReportsError::Unreadable { line: last, source })?;
        if report.index != index {
            return Err(ReportsError::Torn { line: last });
        }
        reports.push(report);
    }
    Ok(reports)
}

/// Why reports are not one whole level.
#[derive(Debug)]
pub enum ReportsError {
    /// A report whose lines are out of order, missing or not report lines.
    Torn {
        /// The line number in the output where that shows, from 1.
        line: usize,
    },
    /// A report that does not parse.
    Unreadable {
        /// Its line number in the output, from 1.
        line: usize,
        /// What the JSON reader said.
        source: serde_json::Error,
    },
    /// No report at all.
    None,
    /// Two agents told different numbers of agents.
    TwoLevels {
        /// The agent that differs.
        index: usize,
        /// What it was told.
        told: usize,
        /// What the first was told.
        agents: usize,
    },
    /// An agent with no report.
    Missing {
        /// The agent.
        index: usize,
        /// Agents in all.
        agents: usize,
    },
    /// An agent with several.
    Repeated {
        /// The agent.
        index: usize,
        /// Agents in all.
        agents: usize,
        /// Its reports.
        times: usize,
    },
    /// A report from an agent beyond the level's.
    Stranger {
        /// The agent.
        index: usize,
        /// Agents in all.
        agents: usize,
    },
}

impl fmt::Display for ReportsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Torn { line } => write!(
                f,
                "line {line}: a report whose parts are out of order or missing"
            ),
            Self::Unreadable { line, source } => {
                write!(f, "line {line}: a report that does not parse ({source})")
            }
            Self::None => write!(f, "no agent report (lines starting {REPORT_PREFIX:?})"),
            Self::TwoLevels {
                index,
                told,
                agents,
            } => write!(
                f,
                "agent {index} says {told} agents, another {agents}: reports of two levels"
            ),
            Self::Missing { index, agents } => write!(
                f,
                "agent {index} of {agents} did not report: the level is incomplete, not merged"
            ),
            Self::Repeated {
                index,
                agents,
                times,
            } => write!(f, "agent {index} of {agents} reported {times} times"),
            Self::Stranger { index, agents } => {
                write!(f, "agent {index} of {agents}: no such agent")
            }
        }
    }
}

impl std::error::Error for ReportsError {}

/// Every agent's report in `output` (agents' logs, in any order, other lines between), checked
/// to be one whole level: agents 0 to N-1 each exactly once, all told the same N. A missing
/// or repeated agent is an error: merging the rest would count a smaller level as whole.
pub fn gather_reports(output: &str) -> Result<Vec<Report>, ReportsError> {
    // `docker service logs` and `kubectl logs --prefix` put a source before each line.
    let mut reports = assemble(output)?;
    let Some(agents) = reports.first().map(|r| r.agents) else {
        return Err(ReportsError::None);
    };
    reports.sort_by_key(|r| r.index);
    if let Some(r) = reports.iter().find(|r| r.agents != agents) {
        return Err(ReportsError::TwoLevels {
            index: r.index,
            told: r.agents,
            agents,
        });
    }
    for index in 0..agents {
        match reports.iter().filter(|r| r.index == index).count() {
            1 => {}
            0 => return Err(ReportsError::Missing { index, agents }),
            times => {
                return Err(ReportsError::Repeated {
                    index,
                    agents,
                    times,
                })
            }
        }
    }
    if let Some(r) = reports.iter().find(|r| r.index >= agents) {
        return Err(ReportsError::Stranger {
            index: r.index,
            agents,
        });
    }
    Ok(reports)
}

/// The report in one agent's output (its last, if several): none where it printed none.
pub fn parse_report(output: &str) -> Option<Result<Report, ReportsError>> {
    if !output.lines().any(|l| l.contains(REPORT_PREFIX)) {
        return None;
    }
    Some(assemble(output).and_then(|all| all.into_iter().last().ok_or(ReportsError::None)))
}

/// The shards' counts as one, and each agent's own figures beside: every count summed, the
/// latencies merged, and the elapsed time from the first agent's start to the last one's
/// last answer (by the wall clock: on other machines, as good as their clocks agree). An
/// open loop's schedules merge as one: requests sent late summed, the connections busy at
/// once summed (each agent's are its own).
pub fn merge(reports: &[Report]) -> (Counted, Vec<AgentRun>) {
    let agents = reports.iter().map(agent_run).collect();
    let first = reports
        .iter()
        .map(|r| r.started_s)
        .fold(f64::INFINITY, f64::min);
    let span = |end: fn(&Report) -> f64| {
        let last = reports.iter().map(end).fold(f64::NEG_INFINITY, f64::max);
        Duration::from_secs_f64((last - first).max(0.0))
    };
    let paced: Vec<&PacedTally> = reports.iter().filter_map(|r| r.counted.paced()).collect();
    if paced.is_empty() || paced.len() != reports.len() {
        let mut tally = Tally::default();
        for report in reports {
            tally.merge(report.counted.tally());
        }
        if !reports.is_empty() {
            tally.elapsed = span(|r| r.started_s + r.counted.tally().elapsed.as_secs_f64());
        }
        return (Counted::Closed(tally), agents);
    }
    let mut merged = PacedTally::default();
    for p in &paced {
        merged.corrected.merge(&p.corrected);
        merged.service.merge(&p.service);
        merged.lag.merge(&p.lag);
        merged.late += p.late;
        merged.busy_max += p.busy_max;
        merge_windows(&mut merged.windows, &p.windows);
    }
    merged.span = span(|r| r.started_s + r.counted.paced().map_or(0.0, |p| p.span.as_secs_f64()));
    merged.corrected.elapsed = merged.span;
    merged.service.elapsed = merged.span;
    (Counted::Paced(merged), agents)
}

/// One agent's own figures.
fn agent_run(r: &Report) -> AgentRun {
    let f = r.counted.tally().figures();
    AgentRun {
        index: r.index,
        concurrency: r.concurrency,
        requests: f.requests,
        success_rate: f.success_rate,
        requests_per_s: f.requests_per_s,
        total_s: f.total_s,
        start_skew_ms: r.start_skew_s * 1000.0,
        cpu_s: r.cpu_s,
        node: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::count::Outcome;

    fn report(index: usize, agents: usize) -> Report {
        Report {
            index,
            agents,
            concurrency: 1,
            requests: 0,
            start_skew_s: 0.0,
            started_s: 1_700_000_000.0,
            cpu_s: 0.0,
            counted: Counted::Closed(Tally::default()),
        }
    }

    #[test]
    fn a_level_is_merged_whole_or_not_at_all() {
        let logs = format!(
            "greet_load.2.x@node | {}\nnoise\ngreet_load.1.y@node | {}\n",
            report(1, 2).lines(),
            report(0, 2).lines()
        );
        let reports = gather_reports(&logs).expect("both agents");
        assert_eq!(reports.iter().map(|r| r.index).collect::<Vec<_>>(), [0, 1]);
        let missing = gather_reports(&report(0, 3).lines())
            .unwrap_err()
            .to_string();
        assert!(missing.contains("agent 1 of 3 did not report"), "{missing}");
        let twice = format!("{}\n{}", report(0, 1).lines(), report(0, 1).lines());
        assert!(gather_reports(&twice)
            .unwrap_err()
            .to_string()
            .contains("2 times"));
        let mixed = format!("{}\n{}", report(0, 2).lines(), report(1, 3).lines());
        assert!(gather_reports(&mixed).is_err());
        assert!(gather_reports("nothing").is_err());
    }

    /// A report of many distinct latencies: tens of KB of histogram buckets.
    fn big(index: usize, agents: usize) -> Report {
        let mut tally = Tally::default();
        for us in 0..20_000 {
            tally.push(Outcome::Ok {
                latency: Duration::from_micros(100 + us * 37),
                connect: None,
                bytes: 0,
            });
        }
        Report {
            counted: Counted::Closed(tally),
            ..report(index, agents)
        }
    }

    /// Log pipelines cut lines at 16 KiB: a report goes out in parts well under that, and
    /// comes back whole from agents' lines interleaved, and torn when a part is missing.
    #[test]
    fn a_big_report_goes_in_short_lines_and_comes_back_whole() {
        let (a, b) = (big(0, 2).lines(), big(1, 2).lines());
        let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
        assert!(a.len() > 3, "{} lines", a.len());
        assert!(a.iter().all(|l| l.len() <= PART_BYTES + 40), "short lines");
        let mut mixed = Vec::new();
        for k in 0..a.len().max(b.len()) {
            mixed.extend(a.get(k).map(|l| format!("load.1.x@node1 | {l}")));
            mixed.extend(b.get(k).map(|l| format!("load.2.y@node3 | {l}")));
        }
        // In any order: a swarm's logs do not keep one task's lines in order.
        mixed.reverse();
        mixed.swap(0, 3);
        assert!(all_reports_in(&mixed.join("\n"), 2));
        assert!(!all_reports_in(&mixed[1..].join("\n"), 2));
        let reports = gather_reports(&mixed.join("\n")).expect("both whole");
        assert_eq!(
            reports[1].counted.tally().requests(),
            big(1, 2).counted.tally().requests()
        );
        let mut torn = a.clone();
        torn.remove(1);
        let err = gather_reports(&torn.join("\n")).unwrap_err().to_string();
        assert!(err.contains("a report whose parts"), "{err}");
        let cut_short = a[..a.len() - 1].join("\n");
        assert!(gather_reports(&cut_short).is_err());
        assert!(parse_report(&cut_short).is_some_and(|r| r.is_err()));
    }

    #[test]
    fn merged_elapsed_runs_from_the_first_start_to_the_last_answer() {
        let report = |index, skew, elapsed_ms| {
            let mut tally = Tally::default();
            tally.push(Outcome::Ok {
                latency: Duration::from_millis(5),
                connect: None,
                bytes: 0,
            });
            tally.elapsed = Duration::from_millis(elapsed_ms);
            Report {
                index,
                agents: 2,
                concurrency: 1,
                requests: 1,
                start_skew_s: skew,
                started_s: 1_700_000_000.0 + skew,
                cpu_s: 0.1,
                counted: Counted::Closed(tally),
            }
        };
        let (counted, agents) = merge(&[report(0, 0.002, 1000), report(1, 0.001, 1200)]);
        assert_eq!(counted.tally().requests(), 2);
        // From agent 1's start (1 ms) to its last answer (1201 ms), to a microsecond.
        let elapsed = counted.tally().elapsed.as_secs_f64();
        assert!((elapsed - 1.2).abs() < 1e-6, "{elapsed}");
        assert_eq!(agents.len(), 2);
        assert!((agents[1].start_skew_ms - 1.0).abs() < 1e-9);
        let text = format!("{}\n", report(1, 0.0, 9).lines());
        let parsed = parse_report(&format!("noise\n{text}"))
            .expect("a report line")
            .expect("parses");
        assert_eq!((parsed.index, parsed.counted.tally().requests()), (1, 1));
        assert!(parse_report("nothing here").is_none());
    }

    #[test]
    fn paced_shards_merge_as_one_schedule() {
        let paced = |index: usize, late: u64, busy: usize, span_ms: u64| {
            let mut p = PacedTally::default();
            for _ in 0..10 {
                p.corrected.push(Outcome::Ok {
                    latency: Duration::from_millis(2),
                    connect: None,
                    bytes: 0,
                });
            }
            (p.late, p.busy_max, p.span) = (late, busy, Duration::from_millis(span_ms));
            Report {
                counted: Counted::Paced(p),
                started_s: 1_700_000_000.0 + index as f64 * 0.01,
                ..report(index, 2)
            }
        };
        let (counted, agents) = merge(&[paced(0, 3, 4, 1000), paced(1, 2, 5, 1000)]);
        let merged = counted.paced().expect("an open loop's");
        assert_eq!((merged.late, merged.busy_max), (5, 9));
        assert_eq!(merged.corrected.requests(), 20);
        assert!(
            (merged.span.as_secs_f64() - 1.01).abs() < 1e-6,
            "{:?}",
            merged.span
        );
        assert_eq!(agents.len(), 2);
    }
}
