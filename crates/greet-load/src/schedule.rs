//! An open-loop schedule: the target rate over time as stages, each moving linearly from one
//! rate to another (k6's `ramping-arrival-rate`), a constant rate being one flat stage; and
//! the intended send time of every request it holds.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// An open-loop schedule: requests at a target rate that follows `stages`, at most
/// `connections` in flight (wrk2's `-R`, oha's `-q --latency-correction`, k6's ramping arrival
/// rate).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// The target rate, stage after stage.
    pub stages: Vec<Stage>,
    /// Requests in flight at most, one per slot: over HTTP/1.1 each slot is a keep-alive
    /// connection; over HTTP/2 `streams` slots share one (h2load's `-c` is
    /// `connections / streams`, its `-m` is `streams`).
    pub connections: usize,
    /// Over HTTP/2, slots sharing one connection, each with a stream at a time.
    #[serde(default = "one")]
    pub streams: usize,
}

fn one() -> usize {
    1
}

/// A stretch of a schedule: the target rate moves linearly from `from` to `to` requests a
/// second over `duration` (equal rates hold it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    /// Requests a second at the stage's start.
    pub from: f64,
    /// Requests a second at its end.
    pub to: f64,
    /// How long.
    pub duration: Duration,
}

impl Stage {
    /// Requests the stage holds: the area under its rate.
    fn area(&self) -> f64 {
        (self.from + self.to) / 2.0 * self.duration.as_secs_f64()
    }

    /// When, from the stage's start, the `n`th request of it is due (`n` counted from 0,
    /// fractional): where the rate's integral reaches `n`.
    fn time_of(&self, n: f64) -> f64 {
        let t = self.duration.as_secs_f64();
        if n <= 0.0 || t == 0.0 {
            return 0.0;
        }
        // from·t + a·t² = n, with a = (to − from) / 2T; written so that a flat stage (a = 0)
        // and a falling one (a < 0) need no case of their own.
        let a = (self.to - self.from) / (2.0 * t);
        let root = (self.from * self.from + 4.0 * a * n).max(0.0).sqrt();
        (2.0 * n / (self.from + root)).min(t)
    }
}

impl Schedule {
    /// `rate` requests a second for `duration`.
    pub fn constant(rate: f64, duration: Duration, connections: usize) -> Self {
        Self {
            stages: vec![Stage {
                from: rate,
                to: rate,
                duration,
            }],
            connections,
            streams: 1,
        }
    }

    /// The schedule with `streams` of its slots to an HTTP/2 connection.
    pub fn with_streams(self, streams: usize) -> Self {
        Self {
            streams: streams.max(1),
            ..self
        }
    }

    /// From `start` requests a second, to each stage's rate in turn over its duration, as k6's
    /// `ramping-arrival-rate` stages are written.
    pub fn ramp(start: f64, stages: &[(f64, Duration)], connections: usize) -> Self {
        let mut from = start;
        let stages = stages
            .iter()
            .map(|&(to, duration)| {
                let stage = Stage { from, to, duration };
                from = to;
                stage
            })
            .collect();
        Self {
            stages,
            connections,
            streams: 1,
        }
    }

    /// The rate of a constant schedule, `None` when it ramps.
    pub fn constant_rate(&self) -> Option<f64> {
        match self.stages.as_slice() {
            [one] if one.from == one.to => Some(one.from),
            _ => None,
        }
    }

    /// How long the schedule runs.
    pub fn duration(&self) -> Duration {
        self.stages.iter().map(|s| s.duration).sum()
    }

    /// Requests the schedule sends: the area under its rate, rounded, at least one.
    pub fn requests(&self) -> u64 {
        let area: f64 = self.stages.iter().map(Stage::area).sum();
        area.round().max(1.0) as u64
    }

    /// Its mean rate, requests a second.
    pub fn mean_rate(&self) -> f64 {
        let secs = self.duration().as_secs_f64();
        if secs == 0.0 {
            return 0.0;
        }
        self.stages.iter().map(Stage::area).sum::<f64>() / secs
    }

    /// Its highest rate, requests a second.
    pub fn peak_rate(&self) -> f64 {
        self.stages
            .iter()
            .flat_map(|s| [s.from, s.to])
            .fold(0.0, f64::max)
    }

    /// The target rate `at` this long from the start (0 past the end).
    pub fn rate_at(&self, at: Duration) -> f64 {
        let mut begin = Duration::ZERO;
        for s in &self.stages {
            let end = begin + s.duration;
            if at < end {
                let along = (at - begin).as_secs_f64() / s.duration.as_secs_f64();
                return s.from + (s.to - s.from) * along;
            }
            begin = end;
        }
        0.0
    }

    /// The schedule with every rate multiplied by `by` (an agent's share) and `connections`.
    pub fn scaled(&self, by: f64, connections: usize) -> Self {
        Self {
            stages: self
                .stages
                .iter()
                .map(|s| Stage {
                    from: s.from * by,
                    to: s.to * by,
                    duration: s.duration,
                })
                .collect(),
            connections,
            streams: self.streams,
        }
    }

    /// Each request's intended send, from the schedule's start, in order: the first at 0.
    pub fn intended(&self) -> impl Iterator<Item = Duration> + Send + 'static {
        let stages = self.stages.clone();
        let (mut stage, mut begun_at, mut counted) = (0, 0.0_f64, 0.0_f64);
        (0..self.requests()).map(move |i| {
            let i = i as f64;
            // Past the stage's last request, on to the next (the last stage keeps any
            // rounding's extra request, at its end).
            while stage + 1 < stages.len() && i >= counted + stages[stage].area() {
                counted += stages[stage].area();
                begun_at += stages[stage].duration.as_secs_f64();
                stage += 1;
            }
            let at = match stages.get(stage) {
                Some(s) => begun_at + s.time_of(i - counted),
                None => 0.0,
            };
            Duration::from_secs_f64(at)
        })
    }

    /// The schedule as `--ramp` reads it back exactly: the start rate, then `rate:duration`
    /// per stage (a stage that does not start where the one before ended gets a 0 ms jump).
    pub fn ramp_flag(&self) -> String {
        let mut parts = Vec::new();
        let mut at = None;
        for s in &self.stages {
            match at {
                None => parts.push(s.from.to_string()),
                Some(rate) if rate != s.from => parts.push(format!("{}:0ms", s.from)),
                Some(_) => {}
            }
            parts.push(format!("{}:{}ms", s.to, s.duration.as_secs_f64() * 1000.0));
            at = Some(s.to);
        }
        parts.join(",")
    }
}

/// A ramp as `--ramp` gives it, for [`Schedule::ramp`]: where it starts, then `(rate,
/// duration)` stages.
#[derive(Debug, Clone, PartialEq)]
pub struct Ramp {
    /// Requests a second at its start.
    pub start: f64,
    /// Each stage's rate at its end, and how long it takes to get there.
    pub stages: Vec<(f64, Duration)>,
}

impl Ramp {
    /// How long it runs.
    pub fn duration(&self) -> Duration {
        self.stages.iter().map(|s| s.1).sum()
    }
}

/// `--ramp`: an optional start rate, then `rate:duration` stages, comma-separated, rates as
/// `parse_rate` reads them and 0 allowed (`1k:10s,50k:30s,50k:10s`: from 0 to 1000/s over
/// 10 s, to 50,000/s over 30 s, held 10 s).
pub fn parse_ramp(text: &str) -> Result<Ramp, String> {
    let bad = |why: &str| format!("{text:?} is not a ramp ({why}; e.g. 1k:10s,50k:30s,50k:10s)");
    let mut start = None;
    let mut stages = Vec::new();
    for (i, part) in text.split(',').enumerate() {
        match part.split_once(':') {
            Some((rate, d)) => {
                let rate = crate::flags::parse_rate_or_zero(rate).map_err(|e| bad(&e))?;
                let d = greet_cli::parse_any_duration(d).map_err(|e| bad(&e))?;
                stages.push((rate, d));
            }
            None if i == 0 => {
                start = Some(crate::flags::parse_rate_or_zero(part).map_err(|e| bad(&e))?)
            }
            None => return Err(bad("only the first part may be a bare start rate")),
        }
    }
    let total: Duration = stages.iter().map(|s| s.1).sum();
    if total.is_zero() {
        return Err(bad("its stages last no time"));
    }
    if stages.iter().all(|s| s.0 == 0.0) && start.unwrap_or(0.0) == 0.0 {
        return Err(bad("it sends nothing"));
    }
    Ok(Ramp {
        start: start.unwrap_or(0.0),
        stages,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn a_constant_schedule_is_evenly_spaced() {
        let s = Schedule::constant(1000.0, secs(2.0), 8);
        assert_eq!(s.requests(), 2000);
        assert_eq!(s.constant_rate(), Some(1000.0));
        let at: Vec<Duration> = s.intended().collect();
        assert_eq!(at.len(), 2000);
        assert_eq!(at[0], Duration::ZERO);
        assert!((at[1].as_secs_f64() - 0.001).abs() < 1e-9);
        assert!((at[1999].as_secs_f64() - 1.999).abs() < 1e-9);
    }

    #[test]
    fn a_ramp_sends_at_its_rate_in_every_second() {
        // 0 → 1000/s over 10 s, then held at 1000/s for 2 s: 5000 + 2000 requests.
        let s = Schedule::ramp(0.0, &[(1000.0, secs(10.0)), (1000.0, secs(2.0))], 4);
        assert_eq!(s.requests(), 7000);
        assert_eq!(s.constant_rate(), None);
        assert_eq!((s.peak_rate(), s.duration()), (1000.0, secs(12.0)));
        let mut per_second = [0u64; 12];
        let mut last = Duration::ZERO;
        for at in s.intended() {
            assert!(at >= last, "in order");
            last = at;
            per_second[(at.as_secs() as usize).min(11)] += 1;
        }
        for (second, &n) in per_second.iter().enumerate() {
            let mid = s.rate_at(secs(second as f64 + 0.5));
            assert!(
                (n as f64 - mid).abs() <= 1.0,
                "second {second}: {n} sent, {mid}/s"
            );
        }
    }

    #[test]
    fn a_falling_stage_and_a_jump_are_kept() {
        let s = Schedule::ramp(0.0, &[(500.0, secs(0.0)), (100.0, secs(4.0))], 1);
        assert_eq!(s.requests(), 1200);
        let at: Vec<Duration> = s.intended().collect();
        let first_second = at.iter().filter(|a| a.as_secs() == 0).count();
        assert!((first_second as i64 - 450).abs() <= 1, "{first_second}");
        assert!(at.last().unwrap() <= &secs(4.0));
    }

    #[test]
    fn the_flag_reads_back_what_it_wrote() {
        let of = |ramp: Ramp, connections| Schedule::ramp(ramp.start, &ramp.stages, connections);
        let s = of(parse_ramp("1k:10s,50k:30s,50k:10s").unwrap(), 64);
        assert_eq!(s.stages.len(), 3);
        assert_eq!((s.stages[0].from, s.stages[0].to), (0.0, 1000.0));
        assert_eq!((s.stages[1].from, s.stages[1].to), (1000.0, 50_000.0));
        assert_eq!(of(parse_ramp(&s.ramp_flag()).unwrap(), 64), s);
        let half = s.scaled(0.5, 32);
        assert_eq!(of(parse_ramp(&half.ramp_flag()).unwrap(), 32), half);
        let jump = Schedule::ramp(0.0, &[(500.0, Duration::ZERO), (100.0, secs(4.0))], 1);
        assert_eq!(of(parse_ramp(&jump.ramp_flag()).unwrap(), 1), jump);
        let started = of(parse_ramp("5k,50k:30s").unwrap(), 8);
        assert_eq!((started.stages[0].from, started.stages.len()), (5000.0, 1));
        for bad in ["", "1k", "1k:0s", "0:10s", "1k:10s,2k", "x:1s", "1k:-1s"] {
            assert!(parse_ramp(bad).is_err(), "{bad:?}");
        }
    }
}
