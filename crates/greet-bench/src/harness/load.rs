//! One load, handed to where the [`Placement`] runs it (the harness's own process, agents
//! here, a swarm job), the server observed throughout (from the instant the load starts, the
//! agents' shared start included), and one merged result back ([`Loaded`]). Scenarios say
//! what to send; where it runs is this module's alone.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::{Instant, SystemTime};

use anyhow::Result;
use greet_load::{
    AgentRun, Check, Counted, Expect, Figures, Header, Load, PacedTally, RequestBody, Shard, Wire,
    Work,
};

use greet_model::plan::Placement;
use greet_probe::procfs::{self, MachineTicks};

use greet_bed::sample::pulse::Pulse;
use greet_bed::sample::{self, EngineStats, Maxima, Sampler};
use greet_bed::server::provision::{Ready, StoreSampling};
use greet_bed::server::Server;
use greet_model::results::{Cores, Machine, RateRun, Sampled, Spectrum, Trial};

use super::agents;
use super::progress::{Bound, Progress};
use super::{Harness, Up};

/// The pause before a load the machine disturbed is measured again ([`Harness::measure`],
/// capacity's levels).
pub(crate) const QUIET: std::time::Duration = std::time::Duration::from_secs(1);

/// What a scenario asks of one load: the endpoint, what a valid answer is, and the work.
#[derive(Debug, Clone)]
pub(crate) struct Ask<'a> {
    /// Path and query to GET.
    pub(crate) path: &'a str,
    /// What a valid answer is.
    pub(crate) expect: &'a Expect,
    /// The shape and size of the load.
    pub(crate) work: Work,
    /// The protocol, when not the run's (`--protocol`).
    pub(crate) wire: Option<&'a Wire>,
    /// The stores the server uses, sampled beside it through the load.
    pub(crate) stores: Option<&'a Ready>,
    /// Header fields and body of each request, when not the run's (`--header`, `--body`).
    pub(crate) message: Option<(&'a [Header], Option<&'a RequestBody>)>,
}

impl<'a> Ask<'a> {
    /// `work` on `path`, answers judged by `expect`, over the run's protocol.
    pub(crate) fn new(path: &'a str, expect: &'a Expect, work: Work) -> Self {
        Self {
            path,
            expect,
            work,
            wire: None,
            stores: None,
            message: None,
        }
    }

    /// Its header fields and body: its own, or the run's.
    fn message<'b>(&'b self, harness: &'b Harness) -> (&'b [Header], Option<&'b RequestBody>) {
        self.message
            .unwrap_or((&harness.common.headers, harness.common.body.as_ref()))
    }
}

/// What one load came to, wherever it ran.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// Everything counted, every agent's merged.
    pub(crate) counted: Counted,
    /// Each agent's own figures (none when the harness loaded).
    pub(crate) agents: Vec<AgentRun>,
    /// What was seen of the server meanwhile.
    pub(crate) observed: Observed,
    /// What was seen of its stores, when asked for.
    pub(crate) stores: Option<Sampled>,
    /// CPU the load generator used: the harness's process, or the agents' in all, seconds.
    pub(crate) client_cpu_s: f64,
    /// How long the load ran, seconds.
    pub(crate) span_s: f64,
    /// The busiest part of the load generator: its CPU, seconds, and the CPUs it had (the
    /// harness's process on the load CPUs, or the busiest agent on one).
    busiest: (f64, usize),
    /// The CPUs the server had.
    server_cpus: usize,
    /// Its place in the run: how many loads ran before it.
    seq: u64,
}

impl Loaded {
    /// The run of this load: its figures, the server's, and each agent's.
    pub(crate) fn run(&self) -> Trial {
        let mut run = self
            .observed
            .run(self.counted.tally().figures(), self.agents.clone());
        run.machine = self.machine(run.server.cpu_avg_pct);
        run.cores = Some(self.cores(run.server.cpu_avg_pct));
        run.seq = Some(self.seq);
        run
    }

    /// How busy each side's CPUs were, the server's from its mean CPU (`server_pct`, percent
    /// of one CPU).
    fn cores(&self, server_pct: Option<f64>) -> Cores {
        let (busiest_s, cpus) = self.busiest;
        Cores {
            client_pct: 100.0 * busiest_s / (self.span_s.max(1e-9) * cpus.max(1) as f64),
            server_pct: server_pct.map(|p| p / self.server_cpus.max(1) as f64),
        }
    }

    /// What the machine did, with what neither the server (`server_pct`) nor the load
    /// generator used.
    fn machine(&self, server_pct: Option<f64>) -> Option<Machine> {
        let client_pct = 100.0 * self.client_cpu_s / self.span_s.max(1e-9);
        (self.observed.machine).map(|m| m.with_others(server_pct, client_pct))
    }

    /// The load generator's CPU, percent of `cpus` CPUs over the load.
    pub(crate) fn client_cpu_pct(&self, cpus: usize) -> f64 {
        100.0 * self.client_cpu_s / (self.span_s.max(1e-9) * cpus.max(1) as f64)
    }

    /// An open loop's run (rate's): its schedule's whole count, and the run's figures with
    /// the load generator's CPU over `load_cpus` CPUs.
    pub(crate) fn paced(self, load_cpus: usize) -> Result<(PacedTally, RateRun)> {
        let client_cpu_pct = self.client_cpu_pct(load_cpus);
        let server = self.observed.server();
        let machine = self.machine(server.cpu_avg_pct);
        let Counted::Paced(tally) = self.counted else {
            anyhow::bail!("an open-loop load came back as a closed loop's");
        };
        let run = RateRun {
            achieved_rps: tally.achieved_rate(),
            late: tally.late,
            latency_ms: Spectrum::of(&tally.corrected),
            service_ms: Spectrum::of(&tally.service),
            success_rate: tally.corrected.figures().success_rate,
            client_cpu_pct,
            server,
            agents: self.agents,
            machine,
        };
        Ok((tally, run))
    }

    /// What /proc saw of the server (nothing when it did not see it).
    pub(crate) fn maxima(&self) -> Maxima {
        self.observed.maxima.clone().unwrap_or_default()
    }

    /// `, over N agents (…)` when agents ran it: each one's requests and start skew.
    pub(crate) fn note(&self) -> String {
        if self.agents.is_empty() {
            return String::new();
        }
        let each: Vec<String> = self
            .agents
            .iter()
            .map(|a| format!("{} req, +{:.1} ms", a.requests, a.start_skew_ms))
            .collect();
        format!(", over {} agents ({})", self.agents.len(), each.join("; "))
    }
}

impl Harness {
    /// Runs `ask` on `up` where `place` says, with a progress bar named `label` when the
    /// harness loads: the harness's own process, or agents starting together, whose failure
    /// is the load's.
    pub(crate) async fn load(
        &self,
        place: Placement,
        up: &Up,
        ask: &Ask<'_>,
        label: String,
    ) -> Result<Loaded> {
        let wire = ask.wire.unwrap_or(&self.wire);
        let loaded = if place == Placement::Harness {
            self.load_here(up, ask, wire, label.clone()).await
        } else {
            self.load_agents(place, up, ask, wire, &label).await?
        };
        let mut loaded = loaded;
        loaded.seq = self.loads.fetch_add(1, Ordering::Relaxed);
        if place != Placement::Harness {
            // Agents start later than the reading, or on other nodes: this host's CPU over
            // the window says nothing of theirs.
            loaded.observed.machine = None;
        }
        let server_pct = loaded.observed.server().cpu_avg_pct;
        if let Some(machine) = loaded.machine(server_pct) {
            let mut log = self.machine.lock().unwrap_or_else(PoisonError::into_inner);
            log.push((label, machine));
        }
        Ok(loaded)
    }

    /// [`Harness::load`] for a load a paired comparison rests on: measured once more, after
    /// [`QUIET`], where the hypervisor's steal was heavy through it
    /// ([`Machine::heavy_steal`]). Steal comes in bursts of seconds here, and a block it
    /// disturbed would be left out of every pair ([`Trial::disturbed`]); the second load
    /// takes the first one's place (labelled `(again)`, counted in the run's noise). Other
    /// programs busy beside the load (a build) last longer than a second: such a load stands,
    /// and its block is left out as before.
    pub(crate) async fn measure(
        &self,
        place: Placement,
        up: &Up,
        ask: &Ask<'_>,
        label: String,
    ) -> Result<Loaded> {
        let loaded = self.load(place, up, ask, label.clone()).await?;
        let stolen = loaded
            .machine(loaded.observed.server().cpu_avg_pct)
            .filter(Machine::heavy_steal);
        let Some(machine) = stolen else {
            return Ok(loaded);
        };
        self.say(
            &label,
            &format!(
                "the hypervisor took {:.0}% of the CPUs: measured again",
                machine.steal_pct
            ),
        );
        tokio::time::sleep(QUIET).await;
        let again = format!("{label} {}", greet_model::results::Noise::AGAIN);
        self.load(place, up, ask, again).await
    }

    /// The load from agents, starting together.
    async fn load_agents(
        &self,
        place: Placement,
        up: &Up,
        ask: &Ask<'_>,
        wire: &Wire,
        label: &str,
    ) -> Result<Loaded> {
        let start = agents::start_instant(place);
        let (headers, body) = ask.message(self);
        let shard = Shard {
            url: agents::url(place, up.addr, ask.path, wire.protocol),
            expect: ask.expect.clone(),
            headers: headers.to_vec(),
            body: body.cloned(),
            protocol: wire.protocol,
            tls_resume: wire.resumes(),
            websocket: wire.is_websocket(),
            timeout: self.timeout(),
            work: ask.work.clone(),
            index: 0,
            agents: place.agents(),
            start_at_ms: greet_load::shard::unix_ms(start),
        };
        let each = match &ask.work {
            Work::Paced(s) => format!(
                ", {:.0}/s each{}",
                s.mean_rate() / place.agents() as f64,
                if s.constant_rate().is_some() {
                    ""
                } else {
                    " on average"
                }
            ),
            _ => String::new(),
        };
        self.say(label, &format!("{} agents{each}", place.agents()));
        let observer = Observer::start(up.server.as_ref(), start);
        let stores = ask.stores.map(|s| StoreSampling::start(s, start));
        let ran = agents::run(place, &shard).await;
        let observed = observer.stop().await;
        let stores = match stores {
            Some(sampling) => sampling.stop().await,
            None => None,
        };
        let ran = ran?;
        let (counted, agents) = ran.merged();
        let span_s = match &counted {
            Counted::Paced(p) => p.span.as_secs_f64(),
            Counted::Closed(t) => t.elapsed.as_secs_f64(),
        };
        let busiest = ran.reports.iter().map(|r| r.cpu_s).fold(0.0, f64::max);
        Ok(Loaded {
            counted,
            agents,
            observed,
            stores,
            client_cpu_s: ran.cpu_s(),
            span_s,
            busiest: (busiest, 1),
            server_cpus: self.server_cpu_count(),
            seq: 0,
        })
    }

    /// The load from the harness's own process, its CPU measured.
    async fn load_here(&self, up: &Up, ask: &Ask<'_>, wire: &Wire, label: String) -> Loaded {
        let now = SystemTime::now();
        let observer = Observer::start(up.server.as_ref(), now);
        let stores = ask.stores.map(|s| StoreSampling::start(s, now));
        let done = Arc::new(AtomicUsize::new(0));
        let bound = match (ask.work.requests(), ask.work.duration()) {
            (Some(n), _) => Bound::Requests(n),
            (None, d) => Bound::Duration(d.unwrap_or_default()),
        };
        let bar = Progress::start(self.common.quiet, label, bound, Arc::clone(&done));
        let (headers, body) = ask.message(self);
        let load = Load {
            addr: up.addr,
            target: ask.path.to_owned(),
            headers: headers.to_vec(),
            body: body.cloned(),
            check: Check::for_request(ask.path, headers, body, ask.expect),
            timeout: self.timeout(),
            wire: wire.clone(),
            work: ask.work.clone(),
        };
        let (cpu, pulse, at) = (own_cpu(), observer.pulse_s(), Instant::now());
        let counted = greet_load::run(&load, done).await;
        // The pulse's units run in this process too, and are not the load generator's.
        let pulse = observer.pulse_s() - pulse;
        let (client_cpu_s, span_s) = (own_cpu() - cpu - pulse, at.elapsed().as_secs_f64());
        bar.finish();
        let observed = observer.stop().await;
        let stores = match stores {
            Some(sampling) => sampling.stop().await,
            None => None,
        };
        Loaded {
            counted,
            agents: Vec::new(),
            observed,
            stores,
            client_cpu_s,
            span_s,
            busiest: (client_cpu_s, self.load_cpu_count()),
            server_cpus: self.server_cpu_count(),
            seq: 0,
        }
    }
}

/// This process's CPU time, seconds. The kernel's own clock, to the nanosecond: /proc's
/// 10 ms ticks read a short, light load as zero.
fn own_cpu() -> f64 {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID)
        .map_or(0.0, |t| t.tv_sec() as f64 + t.tv_nsec() as f64 / 1e9)
}

/// A server observed while a load runs: from /proc where its process is this host's, and
/// from the engine's stats (or a swarm's watch task) for a container, beside /proc's figures
/// or instead of them for one on another host.
#[derive(Debug)]
pub(crate) struct Observer<'a> {
    proc: Option<Sampler>,
    engine: Option<&'a EngineStats>,
    from: Instant,
    machine: Option<MachineTicks>,
    pulse: Pulse,
}

impl<'a> Observer<'a> {
    /// Starts observing `server` (none: a target, not observed) at `at`: now, or when a
    /// load's agents start.
    pub(crate) fn start(server: Option<&'a Server>, at: SystemTime) -> Self {
        let from = sample::instant_at(at);
        Self {
            proc: server
                .filter(|s| s.visible())
                .map(|s| Sampler::start_at(s.pid(), from)),
            engine: server.and_then(Server::engine),
            from,
            machine: procfs::machine_ticks(),
            pulse: Pulse::start(),
        }
    }

    /// The CPU time the machine's pulse took so far, seconds.
    pub(crate) fn pulse_s(&self) -> f64 {
        self.pulse.spent_s()
    }

    /// Stops: what /proc saw, and the engine's figures over the load (waiting up to 2.5 s for
    /// the reading that covers its end: the engine reads about once a second).
    pub(crate) async fn stop(self) -> Observed {
        let maxima = self.proc.map(Sampler::stop);
        let pace_us = self.pulse.stop();
        let machine = sample::machine(self.machine, procfs::machine_ticks())
            .map(|m| Machine { pace_us, ..m });
        let engine = match self.engine {
            Some(stats) => Some(stats.window_covered(self.from, Instant::now()).await),
            None => None,
        };
        Observed {
            maxima,
            engine,
            machine,
        }
    }
}

/// What an [`Observer`] saw.
#[derive(Debug, Default)]
pub(crate) struct Observed {
    /// /proc's, where the server's process is this host's.
    pub(crate) maxima: Option<Maxima>,
    /// The engine's (or the watch task's), for a container.
    pub(crate) engine: Option<Sampled>,
    /// The machine's, from the load's start to its end.
    pub(crate) machine: Option<Machine>,
}

impl Observed {
    /// The server's figures: /proc's, or the engine's where /proc has none.
    pub(crate) fn server(&self) -> Sampled {
        match &self.maxima {
            Some(maxima) => maxima.sampled(),
            None => self.engine.clone().unwrap_or_default(),
        }
    }

    /// A run of `load` (by `agents`, if any): [`Observed::server`], and the engine's figures
    /// beside /proc's.
    pub(crate) fn run(&self, load: Figures, agents: Vec<AgentRun>) -> Trial {
        Trial {
            load,
            server: self.server(),
            engine: self.maxima.as_ref().and(self.engine.clone()),
            agents,
            machine: self.machine,
            cores: None,
            seq: None,
        }
    }
}
