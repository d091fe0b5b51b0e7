//! Capacity: per server and endpoint, the highest open-loop rate it holds within a latency
//! objective, found by a closed-loop probe, an open-loop ramp and searches around its knee.
//!
//! When a level holds is judged here, beside the objective it holds (`judge_level`): on its
//! quarter seconds, so that one stall of a shared machine cannot break it while a queue
//! building in the server always does; and when one that broke is run again (`Again`).
//!
//! A level's requests are counted by the quarter second they were due in
//! ([`greet_load::WINDOW`]), each quarter judged on its requests' latency less the client's
//! own lateness ([`greet_load::Window::charged`]): a request the client was slow to send
//! with a connection free is not the server's. A stall (the hypervisor taking a CPU away, a
//! wake-up late by milliseconds) delays the requests due during it and shortly after: it
//! breaks one or two quarters, and the ones after it hold again. A server past its capacity falls further
//! behind with every request: once a quarter breaks, every one after it breaks too, to the
//! level's end. So a level:
//!
//! - **breaks** on any invalid answer, or when more than a quarter of its quarters broke the
//!   objective and its last half-second did not hold (a queue that built for the last
//!   quarter of the level at least, and was still there at its end);
//! - **holds** when every quarter held, or when the few that broke (a quarter of them at
//!   most) were followed by ones that held again: those are excused, and recorded;
//! - is **run again**, once, when its last quarters broke, a quarter of all at most: a stall
//!   at the end and a queue that began late look alike, and a second run tells them apart (a
//!   queue breaks it again; a stall seldom strikes the same place twice);
//! - is **run again**, once, too, when more broke than may be excused but the rate held again
//!   for half a second after them: a queue past the capacity never drains at the rate that
//!   built it, so the server caught up, and what broke it was a stall too long to excuse
//!   (one of 750 ms put a level 10% under axum's capacity at p99 48 ms, and the search that
//!   ran it 12% under the others).

mod flags;
mod level;
mod report;
mod run;

use std::fmt;
use std::time::Duration;

use greet_load::Window;

use crate::harness::QUIET;
use greet_model::plan::{Base, Based, Paced, ServerSettings, Takes};
use greet_model::results::{RateRun, Spectrum};

pub(crate) use flags::Flags;
pub use report::*;

use super::kit::{About, Scenario};

/// The capacity scenario.
#[derive(Debug)]
pub(crate) struct Capacity;

impl Scenario for Capacity {
    const ABOUT: About = About {
        name: "capacity",
        block: "a round: one search of each server, started afresh",
        title: "Capacity (open loop: the highest rate held within a latency objective)",
        summary: "The highest rate each server holds within a latency objective",
        detail: "The highest open-loop rate held within --slo (p99<5ms by default), every answer \
                 valid and at most 1% sent late: a closed-loop probe, an open-loop ramp to past \
                 it (where the objective first breaks is the knee), then searches that settle \
                 around the knee, whose capacities the servers are compared on",
        examples: &[
            "greet-bench capacity --slo 'p99<5ms'          the highest rate each server holds",
            "greet-bench capacity --protocol h2c --streams 1,10",
        ],
        references: true,
        streams_list: true,
        keep_alive: false,
        ..About::DEFAULT
    };
    type Plan = Plan;
    type Flags = Flags;
    type Section = Section;
}

/// A latency objective: a percentile of the latency from each request's intended send, under
/// a bound (`p99<5ms`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slo {
    /// The percentile: 50, 90, 99 or 99.9.
    pub percentile: f64,
    /// Its bound, milliseconds.
    pub ms: f64,
}

impl Slo {
    /// `p99<5ms`: five times the p99 a one-core server keeps on loopback until it saturates
    /// (0.5–1 ms here), and above the 2–4 ms this machine's own noise puts at p99.9, so that
    /// what breaks it is a queue building in the server, not a stray stall; and a bound a web
    /// service behind a proxy would still call fast.
    pub const DEFAULT: Slo = Slo {
        percentile: 99.0,
        ms: 5.0,
    };

    /// The percentiles an objective may name.
    pub const PERCENTILES: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

    /// Percentile `p` as an objective names it: `p50`, `p99`, `p999`.
    pub fn percentile_name(p: f64) -> String {
        format!("p{}", format!("{p}").replace('.', ""))
    }

    /// The percentile an objective names (`p99`; `p99.9` as well as `p999`), if it may.
    pub fn percentile_named(name: &str) -> Option<f64> {
        Self::PERCENTILES
            .into_iter()
            .find(|&p| name == Self::percentile_name(p) || name == format!("p{p}"))
    }
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = Self::percentile_name(self.percentile);
        write!(f, "{p}<{}ms", self.ms)
    }
}

/// Capacity: per server and endpoint, a closed-loop probe, an open-loop ramp to past the
/// probe's rate (where the objective first breaks is the knee), then `repeats` searches
/// around the knee, each ending in a staircase of `steps` levels; the median of the rates
/// they settle on is the capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What every scenario's plan holds; its repeats are searches, whose capacities are
    /// what servers are compared on.
    pub base: Base,
    /// Paths loaded, one after another on each server.
    pub endpoints: Vec<String>,
    /// What a level must hold, beside every answer valid and at most 1% sent late.
    pub slo: Slo,
    /// How long the ramp runs.
    pub ramp: Duration,
    /// How long each level of a search runs.
    pub duration: Duration,
    /// Levels of each search's staircase.
    pub steps: usize,
    /// The probe, and the connections of the probe and every level.
    pub paced: Paced,
}

impl Plan {
    /// The ramp's length.
    pub const RAMP: Duration = Duration::from_secs(10);
    /// `--quick` ramp.
    pub const QUICK_RAMP: Duration = Duration::from_secs(1);
    /// A search level's length.
    pub const DURATION: Duration = Duration::from_secs(2);
    /// `--quick` level.
    pub const QUICK_DURATION: Duration = Duration::from_millis(300);
    /// Levels of each search's staircase: five 4% steps from the halved bracket, the rates
    /// of which (and of the next) average to the search's capacity.
    pub const STEPS: usize = 5;
    /// `--quick` steps.
    pub const QUICK_STEPS: usize = 2;
    /// Searches, a block each (every server once a round): nine, whose paired ratio can
    /// reach a p-value of 1/256, so that capacity decides inside a whole run's family too
    /// (a default `all` asks about 0.8% of its first verdicts; six rounds give 1/32 at best).
    pub const REPEATS: usize = 9;
    /// `--quick` searches.
    pub const QUICK_REPEATS: usize = 1;
}

impl Based for Plan {
    const TAKES: Takes = Takes::ANYWHERE;
    const REPEATS_HELP: &'static str =
        "Searches per server and endpoint, a block each; 6 or more can decide a verdict, 9 \
         within a whole run";

    fn defaults(quick: bool) -> Self {
        let (ramp, duration, steps, repeats) = if quick {
            (
                Self::QUICK_RAMP,
                Self::QUICK_DURATION,
                Self::QUICK_STEPS,
                Self::QUICK_REPEATS,
            )
        } else {
            (Self::RAMP, Self::DURATION, Self::STEPS, Self::REPEATS)
        };
        Self {
            base: Base::new(ServerSettings::delayed(0), repeats),
            endpoints: vec![greet_core::paths::GREETINGS.to_owned()],
            slo: Slo::DEFAULT,
            ramp,
            duration,
            steps,
            paced: Paced::defaults(quick),
        }
    }
}

/// The most requests a holding level may send later than the objective's bound: judged as
/// the sends' lag at p99 against the bound.
const LATE_SHARE_MAX: f64 = 0.01;

/// Of a level's quarters, the share that may break and be excused: a quarter of them, two of
/// a 2 s level's eight. A queue that breaks more than that built over the level's last
/// half-second or longer.
const EXCUSED_SHARE: f64 = 0.25;

/// The quarters that must hold after a level's last broken one for a break longer than
/// [`EXCUSED_SHARE`] to count as recovered: half a second of the same rate held again.
const RECOVERED: usize = 2;

/// What a level came to.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// It held the objective.
    Held,
    /// It broke it, and why.
    Broke(String),
    /// Its last quarters broke (a quarter of all at most), or more than may be excused broke
    /// and the rate held again after them: a stall or a queue, which a second run tells.
    Unsure(String),
}

/// A level's outcome, and which of its quarters broke the objective.
#[derive(Debug, Clone, PartialEq)]
struct Judged {
    /// What it came to.
    pub outcome: Outcome,
    /// The quarters that broke, counted from 0.
    pub broken: Vec<usize>,
    /// Its quarters, those in which requests were due.
    pub quarters: usize,
}

/// Judges a level from its quarter-second `windows` and its whole `run` (its sends' lag at
/// p99, `lag_p99_ms`, says whether the client or the server fell behind).
fn judge_level(windows: &[Window], run: &RateRun, lag_p99_ms: f64, slo: &Slo) -> Judged {
    let quarters: Vec<(f64, f64)> = windows
        .iter()
        .filter(|w| w.charged.requests() > 0)
        .map(|w| {
            let figures = w.charged.figures();
            let latency = Spectrum::of(&w.charged).at(slo.percentile);
            (figures.success_rate, latency)
        })
        .collect();
    let broken: Vec<usize> = quarters
        .iter()
        .enumerate()
        .filter(|(_, &(ok, ms))| judge(ok, 0.0, ms, slo).is_some())
        .map(|(i, _)| i)
        .collect();
    let n = quarters.len();
    let outcome = outcome(run, lag_p99_ms, slo, &broken, n);
    Judged {
        outcome,
        broken,
        quarters: n,
    }
}

/// The rule of the module's docs, on the quarters that `broken` names of `n`.
fn outcome(run: &RateRun, lag_p99_ms: f64, slo: &Slo, broken: &[usize], n: usize) -> Outcome {
    let whole = judge(
        run.success_rate,
        lag_p99_ms,
        run.latency_ms.at(slo.percentile),
        slo,
    );
    if run.success_rate < 100.0 {
        return Outcome::Broke(whole.unwrap_or_default());
    }
    if broken.is_empty() {
        return Outcome::Held;
    }
    let excusable = (n as f64 * EXCUSED_SHARE).floor() as usize;
    // The broken quarters that run to the level's end.
    let tail = broken
        .iter()
        .rev()
        .zip((0..n).rev())
        .take_while(|(b, i)| b == &i)
        .count();
    let why = || {
        let of = format!("{} of {n} quarter seconds", broken.len());
        match whole {
            Some(why) => format!("{why}; {of}"),
            None => format!("{slo} broken in {of}"),
        }
    };
    // The quarters that held after the last that broke.
    let after = broken.last().map_or(n, |&last| n - 1 - last);
    let few = broken.len() <= excusable;
    match (tail, few) {
        (0, true) => Outcome::Held,
        (0, false) if after >= RECOVERED => Outcome::Unsure(format!("{}, then held again", why())),
        (1.., true) => Outcome::Unsure(format!("{}, at its end", why())),
        _ => Outcome::Broke(why()),
    }
}

/// Why figures break `slo`, if they do: any invalid answer; more than 1%
/// ([`LATE_SHARE_MAX`]) of the requests sent later than its bound (the sends' lag at p99
/// past it); its percentile past its bound.
fn judge(success_rate: f64, lag_p99_ms: f64, latency_ms: f64, slo: &Slo) -> Option<String> {
    if success_rate < 100.0 {
        Some(format!("{success_rate:.2}% valid"))
    } else if lag_p99_ms > slo.ms {
        Some(format!(
            "over 1% sent more than {} ms late (lag p99 {lag_p99_ms:.3} ms)",
            slo.ms
        ))
    } else if latency_ms > slo.ms {
        Some(format!("{slo}: {latency_ms:.3} ms"))
    } else {
        None
    }
}

/// The most times a level run on a disturbed machine
/// ([`greet_model::results::Machine::disturbance`]) is run again, whether it held or broke: a
/// build that takes the CPUs for minutes then costs a level four runs, and its verdict is
/// recorded as disturbed.
const DISTURBED_AGAIN: usize = 3;

/// The runs again a level has left.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Again {
    /// After a run on a disturbed machine.
    disturbed: usize,
    /// After a run whose last quarters alone broke.
    unsure: usize,
}

impl Default for Again {
    fn default() -> Self {
        Self {
            disturbed: DISTURBED_AGAIN,
            unsure: 1,
        }
    }
}

impl Again {
    /// Whether the level whose run was `step` is run again, and the pause before it: a
    /// disturbed machine is given [`QUIET`] to settle first. A run on a disturbed machine is
    /// set aside whatever it came to, held or broke, so the retries cannot push a capacity
    /// up: the run again stands in its place. A run the judge was unsure of (only its last
    /// quarters broke) is run again once. An invalid answer is the server's, whatever the
    /// machine did: that level stands.
    fn after(&mut self, step: &CapacityStep) -> Option<std::time::Duration> {
        let pause = if step.disturbed.is_some() {
            QUIET
        } else {
            std::time::Duration::ZERO
        };
        if step.success_rate < 100.0 {
            None
        } else if step.disturbed.is_some() && self.disturbed > 0 {
            self.disturbed -= 1;
            Some(pause)
        } else if step.unsure && self.unsure > 0 {
            self.unsure -= 1;
            Some(pause)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(success_rate: f64, p99: f64) -> RateRun {
        RateRun {
            success_rate,
            latency_ms: Spectrum {
                p99,
                ..Spectrum::default()
            },
            ..RateRun::default()
        }
    }

    fn on(broken: &[usize], n: usize) -> Outcome {
        outcome(&run(100.0, 9.0), 0.1, &Slo::DEFAULT, broken, n)
    }

    #[test]
    fn a_level_holds_only_valid_on_time_and_within_the_objective() {
        let slo = Slo::DEFAULT;
        assert_eq!(judge(100.0, 4.9, 4.9, &slo), None);
        assert!(judge(99.9, 0.1, 1.0, &slo)
            .unwrap()
            .contains("99.90% valid"));
        assert!(judge(100.0, 5.2, 1.0, &slo)
            .unwrap()
            .contains("more than 5 ms late"));
        assert!(judge(100.0, 0.1, 5.1, &slo)
            .unwrap()
            .contains("p99<5ms: 5.100 ms"));
    }

    #[test]
    fn a_stall_that_passes_is_excused_and_a_queue_is_not() {
        assert_eq!(on(&[], 8), Outcome::Held);
        // One stall, or two, followed by quarters that held again.
        assert_eq!(on(&[2], 8), Outcome::Held);
        assert_eq!(on(&[0, 5], 8), Outcome::Held);
        // A queue from the middle on: every quarter after its first broke.
        assert!(matches!(on(&[4, 5, 6, 7], 8), Outcome::Broke(_)));
        assert!(matches!(
            on(&[0, 1, 2, 3, 4, 5, 6, 7], 8),
            Outcome::Broke(_)
        ));
        // Too long to excuse, but the rate held again for half a second: run again.
        let recovered = on(&[3, 4, 5], 8);
        assert!(
            matches!(&recovered, Outcome::Unsure(why) if why.ends_with("then held again")),
            "{recovered:?}"
        );
        assert!(matches!(on(&[1, 2, 3], 8), Outcome::Unsure(_)));
        // Held again for a quarter only: too short to tell from a queue's noise.
        assert!(matches!(on(&[3, 4, 5, 6], 8), Outcome::Broke(_)));
        // Broken at the end, with a stall before: two stalls, or a stall and a late queue.
        assert!(matches!(on(&[2, 7], 8), Outcome::Unsure(_)));
        assert!(matches!(on(&[5, 6, 7], 8), Outcome::Broke(_)));
        // Only the last quarters: a stall at the end or a queue begun late.
        let unsure = on(&[6, 7], 8);
        assert!(
            matches!(&unsure, Outcome::Unsure(why) if why.contains("2 of 8 quarter") && why.ends_with("at its end"))
        );
        assert!(matches!(on(&[7], 8), Outcome::Unsure(_)));
        // A level of 300 ms (--quick) has two quarters and excuses none.
        assert!(matches!(on(&[0], 2), Outcome::Broke(_)));
    }

    #[test]
    fn an_invalid_answer_breaks_a_level_whatever_its_quarters() {
        let v = outcome(&run(99.5, 1.0), 0.1, &Slo::DEFAULT, &[], 8);
        assert!(matches!(&v, Outcome::Broke(why) if why.contains("99.50% valid")));
    }

    /// Of a level's runs the last stands; a level whose standing run was disturbed is a
    /// disturbed verdict, held or broken.
    #[test]
    fn the_last_run_of_a_level_stands_and_a_disturbed_one_is_named() {
        let step = |rate, held, again, disturbed: bool| CapacityStep {
            search: 1,
            target_rps: rate,
            held,
            again,
            disturbed: disturbed.then(|| "other programs used 40% of the CPUs".to_owned()),
            success_rate: 100.0,
            ..CapacityStep::default()
        };
        let server = CapacityServer {
            steps: vec![
                step(100.0, true, false, true),
                step(100.0, false, true, false),
                step(90.0, false, false, true),
                step(90.0, true, true, true),
                step(80.0, true, false, false),
            ],
            ..CapacityServer::default()
        };
        let standing: Vec<(f64, bool)> = (server.standing())
            .map(|s| (s.target_rps, s.held))
            .collect();
        assert_eq!(standing, [(100.0, false), (90.0, true), (80.0, true)]);
        assert_eq!(server.disturbed_verdicts(), 1, "90/s, held while disturbed");
    }

    #[test]
    fn a_level_on_a_busy_machine_runs_again_held_or_broken_and_a_stall_at_its_end_once() {
        let broke = |disturbed: bool, unsure: bool| CapacityStep {
            disturbed: disturbed.then(|| "other programs used 62% of the CPUs".to_owned()),
            unsure,
            success_rate: 100.0,
            ..CapacityStep::default()
        };
        let mut left = Again::default();
        for _ in 0..DISTURBED_AGAIN {
            assert_eq!(left.after(&broke(true, true)), Some(QUIET));
        }
        // Disturbed still, after three runs again: as any level that broke, but for the one
        // run again the judge's doubt may have.
        assert_eq!(left.after(&broke(true, true)), Some(QUIET));
        assert_eq!(left.after(&broke(true, false)), None);

        let mut left = Again::default();
        assert_eq!(left.after(&broke(false, false)), None, "a queue stands");
        assert_eq!(
            left.after(&broke(false, true)),
            Some(std::time::Duration::ZERO)
        );
        assert_eq!(left.after(&broke(false, true)), None, "once only");
        // A level that held on a disturbed machine is run again as one that broke: a retry
        // that followed only breaks would push the capacity up.
        let held = CapacityStep {
            held: true,
            disturbed: Some("the hypervisor took 12% of the CPUs".to_owned()),
            success_rate: 100.0,
            ..CapacityStep::default()
        };
        let mut left = Again::default();
        for _ in 0..DISTURBED_AGAIN {
            assert_eq!(left.after(&held), Some(QUIET), "held, disturbed");
        }
        assert_eq!(left.after(&held), None, "the last run stands");
        let quiet = CapacityStep {
            held: true,
            success_rate: 100.0,
            ..CapacityStep::default()
        };
        assert_eq!(
            Again::default().after(&quiet),
            None,
            "held on a quiet machine"
        );
        let invalid = CapacityStep {
            success_rate: 99.5,
            ..broke(true, false)
        };
        assert_eq!(
            Again::default().after(&invalid),
            None,
            "an invalid answer stands"
        );
    }
}
