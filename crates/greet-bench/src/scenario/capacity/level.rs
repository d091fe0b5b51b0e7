//! One server and endpoint's levels in capacity: the first round's scouting (the closed-loop
//! probe and the open-loop ramp), a later round's warm-up, and each search, bracket then
//! staircase, with its levels judged ([`judge_level`](super::judge_level)) and run again where the machine
//! was disturbed.

use anyhow::{Context, Result};
use greet_load::{Schedule, Work};

use crate::harness::{Ask, Harness};
use crate::open_loop::{paced_run, probe, Probed, CLIENT_BOUND_PCT};
use greet_model::results::{RateRun, RateWindow, Spectrum};
use greet_stats::median;

use super::{judge, judge_level, Again, CapacityServer, CapacityStep, Outcome, Plan, Slo};

/// The ramp starts at this fraction of its top.
const RAMP_FROM: f64 = 0.05;
/// It ends at this multiple of the probe's rate, unless the client cannot pace that much.
const RAMP_PAST: f64 = 1.2;
/// The searches start this fraction either side of the ramp's knee, and move by it.
const WINDOW: f64 = 0.3;
/// The most times a search moves up past a top that held: from the ramp's knee to 3.7 times
/// it.
const MOVES: usize = 5;
/// The most times a search moves down past a floor that broke: to a thirty-fifth of the ramp's
/// knee, where a server that holds nothing is not worth the search.
const DOWN: usize = 10;
/// The staircase's step: a level that held is followed by one this much higher, one that
/// broke by one this much lower. About the width of the band in which a server at its knee
/// holds a 2 s level in some runs and not in others (axum held 61,846/s once and broke it
/// once, held 59,611/s twice and broke 62,964/s twice): a step as wide as the band crosses
/// it in one level, a narrower one only wanders in it.
const STEP: f64 = 0.04;
/// The ramp's top: [`RAMP_PAST`] times the probe's, and never more than
/// the client can pace when it paces `here` (pacers on nodes of their own are not bounded by
/// the harness's CPU). A probe that was `client_bound` says only that the server does at
/// least that much: the client's limit alone bounds the ramp (it paces for less than the
/// probe's closed loop over h2c).
fn top_of(probed: f64, client_max: f64, here: bool, client_bound: bool) -> f64 {
    let past = probed * RAMP_PAST;
    match (here, client_bound) {
        (true, true) => client_max.max(past),
        (true, false) => past.min(client_max),
        (false, _) => past,
    }
}

/// The geometric mean of `rates` (0 when empty): a staircase's steps are ratios, the same up
/// as down.
fn geometric_mean(rates: &[f64]) -> f64 {
    if rates.is_empty() {
        return 0.0;
    }
    (rates.iter().map(|r| r.ln()).sum::<f64>() / rates.len() as f64).exp()
}

/// What every level of one server and endpoint shares.
pub(super) struct Level<'a> {
    pub(super) harness: &'a Harness,
    pub(super) up: &'a mut crate::harness::Up,
    pub(super) plan: &'a Plan,
    pub(super) name: &'a str,
    pub(super) endpoint: &'a str,
    /// Over HTTP/2, slots to a connection.
    pub(super) streams: usize,
    /// The endpoint, and the streams when more than one: what the levels are labelled.
    pub(super) case: String,
}

impl Level<'_> {
    /// The first round's scouting of `record`'s server and endpoint: the closed-loop probe
    /// sets the scale, and the open-loop ramp finds the knee the searches start from.
    pub(super) async fn scout(&mut self, mut record: CapacityServer) -> Result<CapacityServer> {
        let (plan, name) = (self.plan, self.name);
        let Probed {
            capacity: probed,
            client_max,
            client_share,
        } = probe(
            self.harness,
            self.up,
            (name, self.endpoint),
            &plan.base.foreign,
            (plan.paced.probe, plan.paced.connections, self.streams),
        )
        .await?;
        let client_bound = client_share * 100.0 >= CLIENT_BOUND_PCT;
        let here = Harness::loads_here(plan.base.place);
        let top = top_of(probed, client_max, here, client_bound);
        record.probe_rps = probed;
        record.client_max_rps = client_max;
        record.top_rps = top;
        record.ceiling_rps = if here { top.max(client_max) } else { top };
        let ramp = Schedule::ramp(top * RAMP_FROM, &[(top, plan.ramp)], plan.paced.connections)
            .with_streams(self.streams);
        let (tally, _) = self.run(ramp, "ramp").await?;
        record.ramp = seconds(&tally.seconds());
        // The last second that held: past a server's knee the queue grows and every second
        // after breaks; a second broken before it was a stall, not the knee.
        record.ramp_knee_rps = record
            .ramp
            .iter()
            .rev()
            .find(|w| broke(w, &plan.slo).is_none())
            .map(|w| w.offered_rps);
        let knee = start_of(&record);
        let held = match record.ramp_knee_rps {
            Some(_) => format!("up to about {knee:.0}/s"),
            None => format!("in no second: the searches start from the probe's {knee:.0}/s"),
        };
        self.harness.say(
            name,
            &format!(
                "{}: the ramp to {top:.0}/s held {} {held}",
                self.case, plan.slo
            ),
        );
        Ok(record)
    }

    /// A level at half the ramp's knee, not judged: a server started afresh for a later round
    /// (a JVM's code not yet compiled, its pools empty) is warmed as the first round's was by
    /// its probe and ramp.
    pub(super) async fn warm_up(&mut self, record: &CapacityServer) -> Result<()> {
        let knee = start_of(record);
        let schedule = Schedule::constant(
            (knee * 0.5).max(1.0),
            self.plan.duration,
            self.plan.paced.connections,
        )
        .with_streams(self.streams);
        self.run(schedule, "warm-up").await.map(|_| ())
    }

    /// Search `search` of `record`, and what follows from every search so far: the capacity,
    /// and the CPU per request at the highest level held under it; in the `last` round, the
    /// latency at half and 90% of the capacity.
    pub(super) async fn next_search(
        &mut self,
        search: usize,
        last: bool,
        record: &mut CapacityServer,
    ) -> Result<()> {
        let (plan, name, case) = (self.plan, self.name, self.case.clone());
        let knee = start_of(record);
        let found = self
            .search(search, knee, record.ceiling_rps, &mut record.steps)
            .await?;
        record.searches.push(found);
        record.capacity_rps = median(&record.searches);
        let paces: Vec<f64> = (record.steps.iter())
            .filter(|s| s.search == search)
            .filter_map(|s| s.machine.and_then(|m| m.pace_us))
            .collect();
        if paces.is_empty() {
            record.paces_us.clear();
        } else if record.paces_us.len() + 1 == record.searches.len() {
            record.paces_us.push(median(&paces));
        }
        record.at_top = record.capacity_rps >= record.ceiling_rps * 0.999;
        let capacity = record.capacity_rps;
        if let Some(at_knee) = record
            .standing()
            .filter(|s| s.held && s.target_rps <= capacity)
            .max_by(|a, b| a.target_rps.total_cmp(&b.target_rps))
            .cloned()
        {
            let per_request = |pct: f64| pct / 100.0 / at_knee.achieved_rps.max(1.0) * 1e6;
            record.server_us_per_request = at_knee.server_cpu_pct.map(per_request);
            let load_cpus = self.harness.load_cpu_count() as f64;
            record.client_us_per_request = Some(per_request(at_knee.client_cpu_pct * load_cpus));
        }
        self.harness.say(
            name,
            &format!(
                "{case}: search {} of {} settled at {found:.0}/s",
                search, plan.base.repeats
            ),
        );
        if !last {
            return Ok(());
        }
        for (fraction, at) in [(0.5, &mut record.at_half), (0.9, &mut record.at_ninety)] {
            let rate = record.capacity_rps * fraction;
            if rate >= 1.0 {
                let schedule = Schedule::constant(rate, plan.duration, plan.paced.connections)
                    .with_streams(self.streams);
                let (_, run) = self
                    .run(schedule, &format!("{:.0}%", fraction * 100.0))
                    .await?;
                *at = Some(run.latency_ms);
            }
        }
        self.harness.say(
            name,
            &format!(
                "{case}: capacity {:.0}/s at {} ({} search(es): {})",
                record.capacity_rps,
                plan.slo,
                record.searches.len(),
                record
                    .searches
                    .iter()
                    .map(|s| format!("{s:.0}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
        Ok(())
    }

    /// One run of `schedule`, labelled `label`.
    async fn run(
        &mut self,
        schedule: Schedule,
        label: &str,
    ) -> Result<(greet_load::PacedTally, RateRun)> {
        let ask = Ask::new(
            self.endpoint,
            &self.plan.base.foreign.expect,
            Work::Paced(schedule),
        );
        let label = format!("{} {} {label}", self.name, self.case);
        let ran = paced_run(
            self.harness,
            (&*self.up, self.plan.base.place),
            &ask,
            label.clone(),
        )
        .await
        .with_context(|| label)?;
        self.up.ensure_alive()?;
        crate::scenario::kit::settle(crate::scenario::kit::Leftover::KeepAlive).await;
        Ok(ran)
    }

    /// Search `search` from the ramp's `knee`, under `ceiling`: the rate its staircase settles
    /// on. It first brackets the capacity: from the knee's window of ±[`WINDOW`], the top is
    /// run, and while it holds the window moves up (the ramp's seconds are short and may
    /// break early); when it broke, the floor is run, and while it breaks the window moves
    /// down. It halves the bracket until it is two [`STEP`]s wide, then runs the plan's steps
    /// as a staircase from its middle (up a step after a level that held, down one after a
    /// level that broke): the geometric mean of the staircase's rates, and of the rate it
    /// would run next, is the search's capacity. A level that held reaches the ceiling, and
    /// the capacity is the ceiling (at least that much).
    ///
    /// Near its knee a server holds a level in some runs and not in others, and a bisection
    /// kept its first verdict there for good: one level broken by chance cost it the rest of
    /// the band, and its highest level held landed anywhere in the band (axum's four at
    /// 61,846, 41,337, 77,494 and 59,611/s in one run). The staircase walks back from such a
    /// verdict, and settles where the server holds as often as not (Dixon and Mood's
    /// up-and-down method).
    async fn search(
        &mut self,
        search: usize,
        knee: f64,
        ceiling: f64,
        steps: &mut Vec<CapacityStep>,
    ) -> Result<f64> {
        let mut high = (knee * (1.0 + WINDOW)).min(ceiling);
        let mut low = knee * (1.0 - WINDOW);
        if self.holds(search, high, steps).await? {
            let mut moves = 1;
            loop {
                if high >= ceiling {
                    return Ok(ceiling);
                }
                if moves == MOVES {
                    return Ok(high);
                }
                (low, high) = (high, (high * (1.0 + WINDOW)).min(ceiling));
                moves += 1;
                if !self.holds(search, high, steps).await? {
                    break;
                }
            }
        } else {
            let mut moves = 0;
            while !self.holds(search, low, steps).await? {
                moves += 1;
                if moves == DOWN || low * (1.0 - WINDOW) < 1.0 {
                    return Ok(0.0);
                }
                (high, low) = (low, low * (1.0 - WINDOW));
            }
        }
        // `low` held, `high` broke.
        while high / low > (1.0 + STEP).powi(2) {
            let rate = (low * high).sqrt();
            if self.holds(search, rate, steps).await? {
                low = rate;
            } else {
                high = rate;
            }
        }
        let mut rate = (low * high).sqrt();
        let mut ran = Vec::with_capacity(self.plan.steps + 1);
        for _ in 0..self.plan.steps {
            ran.push(rate);
            let held = self.holds(search, rate, steps).await?;
            if held && rate >= ceiling {
                return Ok(ceiling);
            }
            rate = if held {
                (rate * (1.0 + STEP)).min(ceiling)
            } else {
                rate / (1.0 + STEP)
            };
        }
        ran.push(rate);
        Ok(geometric_mean(&ran))
    }

    /// Whether a level of search `search` at `rate` held, its runs recorded in `steps`. A
    /// level run while the machine was busy with something else is run again, held or broken,
    /// after a pause, up to [`DISTURBED_AGAIN`](super::DISTURBED_AGAIN) times; one the judge
    /// was unsure of, once. The last run stands.
    async fn holds(
        &mut self,
        search: usize,
        rate: f64,
        steps: &mut Vec<CapacityStep>,
    ) -> Result<bool> {
        let mut left = Again::default();
        let mut again = false;
        loop {
            let step = self.step(search, rate, again, left.unsure > 0).await?;
            let next = left.after(&step);
            let held = step.held;
            steps.push(step);
            match next {
                Some(pause) => tokio::time::sleep(pause).await,
                None => return Ok(held),
            }
            again = true;
        }
    }

    /// A level of search `search` at `rate`, judged; `again` when it is a run again, and
    /// `unsure_left` when a verdict the judge is unsure of may still be run again.
    async fn step(
        &mut self,
        search: usize,
        rate: f64,
        again: bool,
        unsure_left: bool,
    ) -> Result<CapacityStep> {
        let schedule = Schedule::constant(rate, self.plan.duration, self.plan.paced.connections)
            .with_streams(self.streams);
        let label = format!("{rate:.0}/s{}", if again { " again" } else { "" });
        let (tally, run) = self.run(schedule, &label).await?;
        let requests = tally.corrected.requests();
        let lag = Spectrum::of(&tally.lag);
        let judged = judge_level(&tally.windows, &run, lag.p99, &self.plan.slo);
        let disturbed = run.machine.and_then(|m| m.disturbance());
        let (broke, unsure) = match judged.outcome {
            Outcome::Held => (None, false),
            Outcome::Broke(why) => (Some(why), false),
            Outcome::Unsure(why) if unsure_left => (Some(format!("{why}: run again")), true),
            Outcome::Unsure(why) => (Some(why), false),
        };
        let said = match (&broke, judged.broken.len(), &disturbed) {
            (Some(why), _, Some(busy)) => format!("{why}, while {busy}"),
            (Some(why), _, None) => why.clone(),
            (None, 0, _) => "held".to_owned(),
            (None, n, _) => format!("held ({n} of {} quarter seconds excused)", judged.quarters),
        };
        self.harness
            .say(self.name, &format!("{} {label}: {said}", self.case));
        let split = CapacityStep::split_as(&run);
        Ok(CapacityStep {
            search,
            target_rps: rate,
            achieved_rps: run.achieved_rps,
            held: broke.is_none(),
            broke,
            unsure,
            again,
            disturbed,
            broken_quarters: judged.broken,
            quarters: judged.quarters,
            machine: run.machine,
            success_rate: run.success_rate,
            late: run.late,
            lag_p99_ms: lag.p99,
            own_lag_p99_ms: Spectrum::of(&tally.own_lag).p99,
            requests,
            latency_ms: run.latency_ms,
            client_cpu_pct: run.client_cpu_pct,
            server_cpu_pct: run.server.cpu_avg_pct,
            ..split
        })
    }
}
/// The ramp's seconds, those in which requests were due.
fn seconds(windows: &[greet_load::Window]) -> Vec<RateWindow> {
    windows
        .iter()
        .enumerate()
        .filter(|(_, w)| w.corrected.requests() > 0)
        .map(|(at, w)| RateWindow::of(at, w, 1.0))
        .collect()
}

/// Where `record`'s searches start: the ramp's knee, or where no second of the ramp held,
/// the probe's closed-loop rate. A ramp broken from its first second, far below what the probe
/// served (a stall, a machine busy beside it), says nothing of the knee; started from the
/// ramp's bottom instead, a search could climb only its few moves and stop there, "at least"
/// a fifth of the server's capacity. From the probe's rate it moves down as far as it must.
fn start_of(record: &CapacityServer) -> f64 {
    match record.ramp_knee_rps {
        Some(knee) => knee,
        None if record.probe_rps > 0.0 => record.probe_rps,
        None => record.top_rps * RAMP_FROM,
    }
}

/// Why a second of the ramp broke the objective, if it did.
fn broke(w: &RateWindow, slo: &Slo) -> Option<String> {
    judge(w.success_rate, 0.0, w.latency_ms.at(slo.percentile), slo)
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_staircase_settles_on_the_geometric_mean_of_its_rates() {
        let up = 100.0 * (1.0 + STEP);
        let mean = geometric_mean(&[100.0, up, 100.0, up]);
        assert!((mean - (100.0 * up).sqrt()).abs() < 1e-9, "{mean}");
        assert_eq!(geometric_mean(&[]), 0.0);
    }

    /// A ramp that held no second starts the searches from the probe's rate, not from the
    /// ramp's bottom; one that held starts them from its knee.
    #[test]
    fn a_ramp_broken_throughout_starts_the_search_from_the_probe() {
        let record = |knee: Option<f64>, probe: f64| CapacityServer {
            ramp_knee_rps: knee,
            probe_rps: probe,
            top_rps: 356.0,
            ..CapacityServer::default()
        };
        assert_eq!(start_of(&record(Some(310.0), 296.0)), 310.0);
        assert_eq!(start_of(&record(None, 296.0)), 296.0);
        assert_eq!(start_of(&record(None, 0.0)), 356.0 * RAMP_FROM);
    }

    #[test]
    fn no_level_beyond_what_the_client_can_pace_is_run() {
        assert_eq!(top_of(100_000.0, 90_000.0, true, false), 90_000.0);
        assert_eq!(top_of(50_000.0, 90_000.0, true, false), 60_000.0);
        assert_eq!(top_of(100_000.0, 90_000.0, false, false), 120_000.0);
        // A client-bound probe (h2c's tasks) under a client that paces for less.
        assert_eq!(top_of(100_000.0, 180_000.0, true, true), 180_000.0);
        assert_eq!(top_of(100_000.0, 180_000.0, false, true), 120_000.0);
    }
}
