//! Capacity: per server and endpoint, the highest open-loop rate it holds within a latency
//! objective. A closed-loop probe sets the scale; an open-loop ramp from a twentieth of the
//! probe's rate to 1.2 times it (or the client's limit, if lower) finds where the objective
//! first breaks, second by second; then each of `repeats` searches brackets the knee, a rate
//! that held under a rate that broke, from a window of ±30% around the ramp's knee moved up
//! or down until it does, halves that bracket to two steps of 4%, and runs `steps` constant
//! levels as a staircase from there: the rate it settles on is its capacity. Servers are
//! compared on those capacities, paired by round ([`paired`]). At half and 90% of the
//! median capacity the latency is measured once more; at the highest level held under it,
//! the CPU each side spent per request.
//!
//! The searches go in rounds that take the servers in turn, in a Williams order ([`in_order`]:
//! A B C, B C A, C A B, then the same reversed), each on a server
//! started afresh: the first round probes and ramps each server before its first search, the
//! last measures the latency under its capacity. A drift of the machine over the minutes of
//! a run then falls on every server alike, where one server's searches back to back handed
//! it to the comparison between servers (this machine's speed was seen to move by half
//! within fifteen minutes, with no steal).
//!
//! A level holds when every answer is valid, and the objective holds in its quarter seconds
//! but for a stall or two ([`judge_level`](super::judge_level)): at most 1% of their requests went out late, and the
//! objective's percentile of the latency from the intended send is within its bound.
//! Late here means later than the objective's bound: the 1 ms the rate scenario counts by
//! measures this machine's own wake-ups (0.1% of 100 µs sleeps on an idle core wake over 1 ms
//! late, the worst 4–5 ms), which alone put 1.7% of the requests of a 13k/s level past 1 ms
//! with the server at an eighth of its capacity. A second of the ramp is judged on validity
//! and the objective alone (its latency counts from the intended send, lag included). A rate
//! beyond what the client can pace is never run: the search stops under it and says so
//! (`at_top`), so a capacity found is never the client's. A search may climb past the ramp's
//! top to that limit: the closed-loop probe is bound by its connections' round trips, and a
//! server with short ones holds more open-loop than it answered closed-loop (actix-web held
//! 1.2 times its probe in every search, the old ceiling).
//!
//! A level run while the machine was disturbed (other programs on a tenth of its CPUs or more,
//! or heavy steal) is not the server's verdict, whether it held or broke: it is set aside and
//! the level run again after a pause, up to three times, the last run standing, each recorded
//! with what disturbed it. A build started beside a run took 62% of the CPUs and drove two of
//! axum's four searches to nothing before levels were run again. Only the broken ones were,
//! once: a retry that follows only one outcome pushes capacities up, each by how its server's
//! tail varies near its knee.
//!
//! Over HTTP/2 a server and endpoint are measured at each of `--streams` (`1,10,100`) in
//! turn, their records and comparisons apart.

use anyhow::Result;

use crate::harness::{Harness, Start, Subject};
use crate::scenario::kit::{in_order, Book, Run};
use greet_model::results::{us_per_request_at, Frame};
use greet_stats::distinct;
use greet_stats::paired::{self, Figure};

use super::level::Level;
use super::{Capacity, CapacityServer, CapacityStep, Plan, Section, LATE_SHARE_MAX};

impl Run for Capacity {
    /// Runs capacity: each search a round over every server, in a Williams order.
    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        let (args, workers) = harness.server_args(&plan.base.server);
        book.open(Section {
            transport: harness.transport(),
            frame: Frame::new(plan.base.repeats),
            delay_ms: plan.base.server.delay_ms,
            workers,
            slo: plan.slo.to_string(),
            slo_percentile: plan.slo.percentile,
            slo_ms: plan.slo.ms,
            late_share_max: LATE_SHARE_MAX,
            ramp_s: plan.ramp.as_secs_f64(),
            duration_s: plan.duration.as_secs_f64(),
            steps: plan.steps,
            connections: plan.paced.connections,
            ..Section::default()
        });
        let subjects = Subject::all(&plan.base);
        for search in 1..=plan.base.repeats.max(1) {
            for subject in in_order(&subjects, search - 1) {
                let name = subject.name();
                let round = Round {
                    subject,
                    name: &name,
                    search,
                };
                book.step(&name, async |book| {
                    run_round(harness, plan, &round, &args, book).await
                })
                .await?;
            }
        }
        Ok(())
    }

    fn compare(section: &mut Section) {
        section.comparisons = comparisons(&section.servers);
    }
}

/// One server's turn in a round: search `search` of each of its endpoints (and stream
/// counts).
struct Round<'a> {
    subject: &'a Subject,
    name: &'a str,
    search: usize,
}

impl Round<'_> {
    /// Whether it is the last round, which measures the latency below the capacity (the first
    /// probes and ramps).
    fn last(&self, plan: &Plan) -> bool {
        self.search >= plan.base.repeats
    }
}

/// `round` on a server started afresh (checked whole in the first round only).
async fn run_round(
    harness: &Harness,
    plan: &Plan,
    round: &Round<'_>,
    args: &[String],
    book: &mut Book<'_, Capacity>,
) -> Result<()> {
    let first = plan.endpoints.first().map_or("/greetings", String::as_str);
    let start = Start {
        checked: round.search > 1,
        ..Start::new(round.subject, args, &plan.base.foreign, first)
    };
    let mut up = harness.bring_up(plan.base.place, &start).await?;
    let streams_each = if harness.transport().protocol.http2() {
        harness.common.streams_each.clone()
    } else {
        vec![1]
    };
    let cases = plan
        .endpoints
        .iter()
        .flat_map(|e| streams_each.iter().map(move |&s| (e, s)));
    for (endpoint, streams) in cases {
        let blank = CapacityServer {
            server: round.name.to_owned(),
            endpoint: endpoint.clone(),
            streams,
            node: up.node(),
            ..CapacityServer::default()
        };
        let same = |s: &CapacityServer| {
            s.server == round.name && &s.endpoint == endpoint && s.streams == streams
        };
        let before = book.section().servers.iter().find(|s| same(s)).cloned();
        let mut level = Level {
            harness,
            up: &mut up,
            plan,
            name: round.name,
            endpoint,
            streams,
            case: blank.case(),
        };
        let mut record = match before {
            Some(record) => {
                level.warm_up(&record).await?;
                record
            }
            None => level.scout(blank).await?,
        };
        level
            .next_search(round.search, round.last(plan), &mut record)
            .await?;
        let servers = &mut book.section().servers;
        match servers.iter().position(same) {
            Some(at) => servers[at] = record,
            None => servers.push(record),
        }
        book.save()?;
    }
    harness.release(up).await
}
impl CapacityServer {
    /// How far its searches spread around its capacity: the lowest and the highest as
    /// fractions of it, below 1 and above (`0.92, 1.05`); none without a capacity.
    pub fn spread(&self) -> Option<(f64, f64)> {
        let lowest = self.searches.iter().copied().reduce(f64::min)?;
        let highest = self.searches.iter().copied().reduce(f64::max)?;
        (self.capacity_rps > 0.0).then(|| (lowest / self.capacity_rps, highest / self.capacity_rps))
    }

    /// Each search's server CPU per request at the highest level it held under its capacity,
    /// microseconds; none unless every search has it.
    pub fn server_us_each(&self) -> Vec<f64> {
        let each: Option<Vec<f64>> = (1..=self.searches.len())
            .zip(&self.searches)
            .map(|(search, &found)| {
                let top = self
                    .standing()
                    .filter(|s| s.search == search && s.held && s.target_rps <= found)
                    .max_by(|a, b| a.target_rps.total_cmp(&b.target_rps))?;
                us_per_request_at(top.server_cpu_pct?, top.achieved_rps)
            })
            .collect();
        each.unwrap_or_default()
    }

    /// How close two capacities can be and still be told apart: over its searches, the
    /// (lower) median last bracket, the lowest level that broke above the capacity found as
    /// a share of it, less one (0.02: the search could not tell its capacity from 2% more).
    /// A search that held to the top has no bracket. The median, not the widest: a search
    /// whose staircase held all the way up has only the ramp's top above it (actix-web's
    /// eighth of nine: 72%), and the widest would have called 0.86× [0.76, 0.99] equal; its
    /// low capacity widens the interval instead.
    pub fn resolution(&self) -> f64 {
        let mut brackets: Vec<f64> = (1..=self.searches.len())
            .zip(&self.searches)
            .filter_map(|(search, &found)| {
                let above = self
                    .standing()
                    .filter(|s| s.search == search && !s.held && !s.unsure)
                    .map(|s| s.target_rps)
                    .filter(|&rate| rate > found)
                    .reduce(f64::min)?;
                (found > 0.0).then(|| above / found - 1.0)
            })
            .collect();
        // The lower median: of two brackets, the narrower, never their mean with a wide one.
        brackets.sort_by(f64::total_cmp);
        brackets
            .get(brackets.len().saturating_sub(1) / 2)
            .copied()
            .unwrap_or(0.0)
    }

    /// The runs that stand, one a level: each level's last (those before it were set aside,
    /// disturbed or unsure).
    pub fn standing(&self) -> impl Iterator<Item = &CapacityStep> {
        let run_again = (self.steps.iter().skip(1))
            .map(|next| next.again)
            .chain([false]);
        self.steps
            .iter()
            .zip(run_again)
            .filter(|(_, again)| !again)
            .map(|(s, _)| s)
    }

    /// Its levels whose standing run was on a disturbed machine, every run again too: verdicts
    /// that may be the machine's rather than the server's, held or broken.
    pub fn disturbed_verdicts(&self) -> usize {
        self.standing().filter(|s| s.disturbed.is_some()).count()
    }

    /// What it was measured on: the endpoint, and over more than one stream to a connection,
    /// how many (`/health, 10 streams`).
    pub fn case(&self) -> String {
        if self.streams > 1 {
            format!("{}, {} streams", self.endpoint, self.streams)
        } else {
            self.endpoint.clone()
        }
    }
}

/// Every pair of servers per endpoint (and streams), on their searches' capacities.
fn comparisons(servers: &[CapacityServer]) -> Vec<paired::Comparison> {
    let mut out = Vec::new();
    for case in distinct(servers.iter().map(CapacityServer::case)) {
        let samples: Vec<(String, Vec<f64>)> = servers
            .iter()
            .filter(|s| s.case() == case && !s.searches.is_empty())
            .map(|s| (format!("{} {case}", s.server), s.searches.clone()))
            .collect();
        // Two capacities closer than either search could resolve are one capacity.
        let resolution = |label: &str| {
            servers
                .iter()
                .find(|s| s.case() == case && label == format!("{} {case}", s.server))
                .map_or(0.0, CapacityServer::resolution)
        };
        out.extend(
            crate::scenario::kit::contenders_pairwise(Figure::CapacityRps, &samples)
                .into_iter()
                .map(|c| {
                    let r = resolution(&c.a).max(resolution(&c.b));
                    c.resolved(r)
                }),
        );
        let cpu: Vec<(String, Vec<f64>)> = servers
            .iter()
            .filter(|s| s.case() == case)
            .map(|s| (format!("{} {case}", s.server), s.server_us_each()))
            .filter(|(_, each)| !each.is_empty())
            .collect();
        out.extend(crate::scenario::kit::contenders_pairwise(
            Figure::ServerUsPerRequest,
            &cpu,
        ));
    }
    out
}
#[cfg(test)]
mod tests {
    use super::super::CapacityStep;
    use super::*;

    /// One search whose staircase held all the way up, with only the ramp's top broken
    /// above it, does not widen the band of every comparison of its server to that top.
    #[test]
    fn a_server_resolves_to_its_searches_median_bracket() {
        let level = |search, target_rps, held| CapacityStep {
            search,
            target_rps,
            held,
            ..CapacityStep::default()
        };
        let server = CapacityServer {
            searches: vec![100.0, 100.0, 100.0],
            steps: vec![
                level(1, 100.0, true),
                level(1, 102.0, false),
                level(2, 100.0, true),
                level(2, 103.0, false),
                level(3, 100.0, true),
                level(3, 172.0, false),
            ],
            ..CapacityServer::default()
        };
        assert!(
            (server.resolution() - 0.03).abs() < 1e-9,
            "{}",
            server.resolution()
        );
        let held_to_the_top = CapacityServer {
            searches: vec![100.0],
            steps: vec![level(1, 100.0, true)],
            ..CapacityServer::default()
        };
        assert_eq!(held_to_the_top.resolution(), 0.0);
    }
}
