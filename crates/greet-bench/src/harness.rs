//! [`Harness`]: what every scenario shares. The CPU split, where the server binaries are and where
//! results go; starting, checking, stopping and sampling a server; keep-alive load with a
//! progress bar; writing every output file.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{bail, Context, Result};
use greet_server::ServerFlag;
use indicatif::{ProgressBar, ProgressStyle};

use crate::agents::{self, Shard, Spread, Work};
use crate::load::{self, Expect, Sessions, Stop, Wire};
use crate::plan::{package, Common, Contract, Foreign, Target};
use crate::report;
use crate::results::{AgentRun, Figures, Results, Run, Sampled, Transport};
use crate::sample::{self, EngineStats, Maxima, Sampler};
use crate::server::{self, Binaries, Server};

/// What every scenario shares.
#[derive(Debug)]
pub struct Harness {
    /// The shared settings.
    pub common: Common,
    /// CPUs the servers are pinned to (empty: not pinned).
    pub server_cpus: Vec<usize>,
    /// CPUs the load generator is pinned to (empty: not pinned).
    pub load_cpus: Vec<usize>,
    /// Every CPU the harness may use.
    pub cpus: Vec<usize>,
    /// Where the server binaries are.
    pub binaries: Binaries,
    /// Where results go.
    pub out: PathBuf,
    /// What the load goes over (`--protocol`): over TLS, any certificate is trusted (the
    /// servers make their own; a `--target`'s is its owner's), signatures still checked.
    pub wire: Wire,
}

impl Harness {
    /// `--workers` for a server: `chosen`, or the CPUs a server runs on.
    pub fn workers(&self, chosen: Option<usize>) -> usize {
        chosen.unwrap_or(if self.server_cpus.is_empty() {
            self.cpus.len()
        } else {
            self.server_cpus.len()
        })
    }

    /// The CPUs the stores the harness starts are pinned to: the load generator's (on two
    /// cores there is no third place; the server's own CPUs stay its alone).
    pub fn store_cpus(&self) -> &[usize] {
        &self.load_cpus
    }

    /// The CPUs the load generator runs on.
    pub fn load_cpu_count(&self) -> usize {
        if self.load_cpus.is_empty() {
            self.cpus.len().max(1)
        } else {
            self.load_cpus.len()
        }
    }

    /// A status line on stderr, unless quiet.
    pub fn say(&self, who: &str, line: &str) {
        if !self.common.quiet {
            eprintln!("greet-bench: {who}: {line}");
        }
    }

    /// The per-request timeout.
    pub fn timeout(&self) -> Duration {
        self.common.timeout
    }

    /// The protocol a scenario's section records.
    pub fn transport(&self) -> Transport {
        Transport {
            protocol: self.common.protocol.name().to_owned(),
            streams: self.common.streams,
        }
    }

    /// `args` for a server that is measured over `wire`: with TLS when its protocol has it.
    /// The contract checks run on cleartext processes of their own: their raw HTTP/1 cases
    /// have no TLS or HTTP/2 spelling (the conformance tests hold every protocol to one
    /// contract).
    pub fn measured_args(args: &[String], wire: &Wire) -> Vec<String> {
        let mut args = args.to_vec();
        if wire.protocol.tls() {
            args.extend(ServerFlag::TlsSelfSigned.args());
        }
        args
    }

    /// Checks, unless `wire` is HTTP/1.1 in cleartext, that a measured server answers
    /// `target` over its protocol, as `expect` says.
    pub async fn check_protocol(
        &self,
        who: &str,
        (addr, wire): (SocketAddr, &Wire),
        target: &str,
        expect: &Expect,
    ) -> Result<()> {
        if wire.protocol == crate::plan::Protocol::Http1 {
            return Ok(());
        }
        let passed = format!("answers over {}", wire.protocol);
        self.once(
            who,
            (addr, wire),
            target,
            expect,
            ("protocol check", &passed),
        )
        .await
    }

    /// One `GET target` over `wire`, valid as `expect` says; `(what, passed)` name the check
    /// in its error and in its status line.
    async fn once(
        &self,
        who: &str,
        (addr, wire): (SocketAddr, &Wire),
        target: &str,
        expect: &Expect,
        (what, passed): (&str, &str),
    ) -> Result<()> {
        load::check_once(addr, wire, target, expect, Duration::from_secs(10))
            .await
            .map_err(|why| anyhow::anyhow!("{what} failed: {why}"))?;
        self.say(who, passed);
        Ok(())
    }

    /// Starts server `short` with `args`, pinned, and waits until it answers.
    pub async fn start(&self, short: &str, args: Vec<String>) -> Result<Server> {
        let program = self.binaries.locate(short)?;
        let cpus = self.server_cpus.clone();
        tokio::task::spawn_blocking(move || Server::start(&program, &args, &cpus))
            .await
            .context("start-up task failed")?
    }

    /// Verifies a freshly started server against the contract.
    pub async fn check(&self, who: &str, base_url: &str) -> Result<()> {
        greet_conformance::check(base_url)
            .await
            .context("contract check failed")?;
        self.say(who, "contract check passed");
        Ok(())
    }

    /// The light check of a server the harness did not build: `GET target` answers as
    /// `expect` says, over `wire`.
    pub async fn light_check(
        &self,
        who: &str,
        (addr, wire): (SocketAddr, &Wire),
        target: &str,
        expect: &Expect,
    ) -> Result<()> {
        let names = ("light check", "light check passed");
        self.once(who, (addr, wire), target, expect, names).await
    }

    /// Verifies a server before its load as `contract` says: the whole contract suite at
    /// `base_url`, or the light check of `target` at `addr` with `expect`. A process the
    /// harness started for the check is in cleartext, and checked over HTTP/1.1; a target
    /// (`measured`) is checked over the load's protocol, and the whole suite, raw HTTP/1.1 in
    /// cleartext, cannot run on it over TLS.
    pub async fn verify(
        &self,
        who: &str,
        contract: Contract,
        (addr, base_url, measured): (SocketAddr, &str, bool),
        target: &str,
        expect: &Expect,
    ) -> Result<()> {
        let cleartext = Wire::default();
        let wire = if measured { &self.wire } else { &cleartext };
        match contract {
            Contract::Full if measured && wire.protocol.tls() => bail!(
                "--contract full is raw HTTP/1.1 in cleartext; with --protocol {} use --contract light",
                wire.protocol
            ),
            Contract::Full => {
                self.check(who, base_url).await?;
                if measured {
                    self.check_protocol(who, (addr, wire), target, expect).await?;
                }
                Ok(())
            }
            Contract::Light => self.light_check(who, (addr, wire), target, expect).await,
        }
    }

    /// Starts `subject` (or finds it, for a target) and verifies it on `target` as
    /// [`Subject::contract`] says. `again`: a server of this subject has passed the whole
    /// contract already in this scenario (only a light check, which is of one endpoint,
    /// is made again). The whole contract runs on a process of its own, stopped before the
    /// one returned starts: its cases open the stores, start blocking-pool threads and walk
    /// the parsers' error paths, which the measured process would otherwise carry.
    pub async fn bring_up(
        &self,
        subject: &Subject,
        args: &[String],
        foreign: &Foreign,
        target: &str,
        again: bool,
    ) -> Result<Up> {
        self.bring_up_over(subject, (args, &self.wire), foreign, target, again)
            .await
    }

    /// [`Harness::bring_up`] for a load over `wire` rather than the run's `--protocol` (a
    /// server of the workspace; a target is loaded as it is).
    pub async fn bring_up_over(
        &self,
        subject: &Subject,
        (args, wire): (&[String], &Wire),
        foreign: &Foreign,
        target: &str,
        again: bool,
    ) -> Result<Up> {
        let contract = subject.contract(foreign);
        let expect = Expect::for_target(target, &foreign.expect);
        let name = subject.name();
        match subject {
            Subject::Server(short) => {
                if contract == Contract::Full && !again {
                    let checked = self.start(short, args.to_vec()).await?;
                    let base_url = format!("http://{}", checked.addr());
                    let at = (checked.addr(), base_url.as_str(), false);
                    self.verify(&name, contract, at, target, &expect).await?;
                    self.stop(checked).await?;
                }
                let server = self.start(short, Self::measured_args(args, wire)).await?;
                let addr = server.addr();
                if contract == Contract::Light {
                    let base_url = format!("http://{addr}");
                    self.verify(&name, contract, (addr, &base_url, true), target, &expect)
                        .await?;
                } else {
                    self.check_protocol(&name, (addr, wire), target, &expect)
                        .await?;
                }
                Ok(Up {
                    addr,
                    server: Some(server),
                })
            }
            Subject::Target(t) => {
                let addr = greet_conformance::resolve(&t.url)
                    .await
                    .map_err(anyhow::Error::msg)?;
                if contract == Contract::Light || !again {
                    self.verify(&name, contract, (addr, &t.url, true), target, &expect)
                        .await?;
                }
                Ok(Up { addr, server: None })
            }
        }
    }

    /// [`Harness::bring_up`] on a swarm: server `subject` (of the workspace) deployed as the
    /// stack's server (on the stores' network too when `join` names it), measured over the
    /// run's protocol, light-checked on `target` where the harness reaches it (its published
    /// port).
    pub async fn bring_up_swarm(
        &self,
        (subject, join): (&Subject, Option<&'static str>),
        args: &[String],
        foreign: &Foreign,
        target: &str,
    ) -> Result<Up> {
        let Subject::Server(short) = subject else {
            bail!("--swarm loads only the servers it deploys");
        };
        let (image, args) = (server::image(short), Self::measured_args(args, &self.wire));
        let server = tokio::task::spawn_blocking(move || {
            Server::start_swarm(&image, &args, &server::swarm::Nodes::read()?, join)
        })
        .await
        .context("start-up task failed")??;
        let addr = server.addr();
        let expect = Expect::for_target(target, &foreign.expect);
        let base_url = format!("http://{addr}");
        let at = (addr, base_url.as_str(), true);
        self.verify(&subject.name(), Contract::Light, at, target, &expect)
            .await?;
        Ok(Up {
            addr,
            server: Some(server),
        })
    }

    /// Stops the server of `up`, if the harness started it, with SIGTERM; an unclean exit
    /// is an error.
    pub async fn release(&self, up: Up) -> Result<()> {
        match up.server {
            Some(server) => self.stop(server).await,
            None => Ok(()),
        }
    }

    /// Stops `server` with SIGTERM; an unclean exit is an error.
    pub async fn stop(&self, server: Server) -> Result<()> {
        let grace = Duration::from_secs(12);
        let exit = tokio::task::spawn_blocking(move || server.stop(grace))
            .await
            .context("stop task failed")??;
        if !exit.success {
            bail!("did not exit cleanly on SIGTERM ({})", exit.text);
        }
        Ok(())
    }

    /// Writes every output file.
    pub fn save(&self, results: &Results) -> Result<()> {
        report::write_all(&self.out, results)
    }

    /// Runs keep-alive load on `up` while watching it (when the harness started it), with a
    /// progress bar named `label`: the run's figures, and everything /proc saw.
    pub async fn keep_alive(&self, up: &Up, sessions: &Sessions, label: String) -> (Run, Maxima) {
        let watch = Watch::start(up.server.as_ref(), SystemTime::now());
        let done = Arc::new(AtomicUsize::new(0));
        let bound = match sessions.stop {
            Stop::Each(n) => Bound::Requests((n * sessions.users) as u64),
            Stop::Total(n) => Bound::Requests(n as u64),
            Stop::After(d) => Bound::Duration(d),
        };
        let bar = self.progress(label, bound, Arc::clone(&done));
        let tally = load::sessions(sessions, done).await;
        bar.finish();
        let watched = watch.stop().await;
        let run = watched.run(tally.figures(), Vec::new());
        (run, watched.maxima.unwrap_or_default())
    }

    /// [`Harness::keep_alive`] from `spread`'s agents (processes here, or a swarm job)
    /// starting at `start` ([`agents::start_instant`]), its users and requests shared out
    /// among them; `url` is the server's as they reach it and `rule` what a valid answer is.
    /// An agent's failure is the run's.
    pub async fn keep_alive_spread(
        &self,
        up: &Up,
        (sessions, url, rule): (&Sessions, String, &crate::plan::Expect),
        (spread, start): (Spread, SystemTime),
        label: String,
    ) -> Result<(Run, Maxima)> {
        let shard = Shard {
            url,
            expect: rule.clone(),
            protocol: sessions.wire.protocol,
            timeout: sessions.timeout,
            work: Work::Sessions {
                users: sessions.users,
                stop: sessions.stop,
                streams: sessions.streams,
            },
            index: 0,
            agents: spread.agents,
            start_at_ms: agents::unix_ms(start),
        };
        self.say(&label, &format!("{} agents", spread.agents));
        let watch = Watch::start(up.server.as_ref(), start);
        let ran = agents::run(&shard, spread.agents, spread.swarm).await;
        let watched = watch.stop().await;
        let (tally, runs) = ran?.merged();
        let run = watched.run(tally.figures(), runs);
        Ok((run, watched.maxima.unwrap_or_default()))
    }

    /// A progress bar on stderr fed from `done`, unless quiet (indicatif draws nothing when
    /// stderr is not a terminal). Stop it with [`Progress::finish`].
    pub fn progress(&self, label: String, bound: Bound, done: Arc<AtomicUsize>) -> Progress {
        if self.common.quiet {
            return Progress(None);
        }
        let bar = bar(label, bound);
        let feed = bar.clone();
        let started = Instant::now();
        let ticker = tokio::spawn(async move {
            loop {
                update(
                    &feed,
                    bound,
                    done.load(Ordering::Relaxed),
                    started.elapsed(),
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        Progress(Some((bar, ticker)))
    }
}

/// A server watched while a load runs: from /proc where its process is this host's, and from
/// the engine's stats (or a swarm's sampler task) for a container, beside /proc's figures or
/// instead of them for one on another host.
#[derive(Debug)]
pub struct Watch<'a> {
    proc: Option<Sampler>,
    engine: Option<&'a EngineStats>,
    from: Instant,
}

impl<'a> Watch<'a> {
    /// Starts watching `server` (none: a target, not watched) at `at`: now, or when a level's
    /// agents start ([`crate::agents::start_instant`]).
    pub fn start(server: Option<&'a Server>, at: SystemTime) -> Self {
        let from = sample::instant_at(at);
        Self {
            proc: server
                .filter(|s| s.visible())
                .map(|s| Sampler::start_at(s.pid(), from)),
            engine: server.and_then(Server::engine),
            from,
        }
    }

    /// Stops watching: what /proc saw, and the engine's figures over the load (waiting up to
    /// 2.5 s for the reading that covers its end: the engine reads about once a second).
    pub async fn stop(self) -> Watched {
        let maxima = self.proc.map(Sampler::stop);
        let engine = match self.engine {
            Some(stats) => Some(stats.window_covered(self.from, Instant::now()).await),
            None => None,
        };
        Watched { maxima, engine }
    }
}

/// What a [`Watch`] saw.
#[derive(Debug, Default)]
pub struct Watched {
    /// /proc's, where the server's process is this host's.
    pub maxima: Option<Maxima>,
    /// The engine's (or the sampler task's), for a container.
    pub engine: Option<Sampled>,
}

impl Watched {
    /// The server's figures: /proc's, or the engine's where /proc has none.
    pub fn server(&self) -> Sampled {
        match &self.maxima {
            Some(maxima) => maxima.sampled(),
            None => self.engine.clone().unwrap_or_default(),
        }
    }

    /// A run of `load` (by `agents`, if any): [`Watched::server`], and the engine's figures
    /// beside /proc's.
    pub fn run(&self, load: Figures, agents: Vec<AgentRun>) -> Run {
        Run {
            load,
            server: self.server(),
            engine: self.maxima.as_ref().and(self.engine.clone()),
            agents,
        }
    }
}

/// What a scenario loads: a server it starts, or one already running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A server of the workspace, by short name.
    Server(String),
    /// A server someone else started.
    Target(Target),
}

impl Subject {
    /// The servers of a scenario, then its targets.
    pub fn all(servers: &[String], foreign: &Foreign) -> Vec<Subject> {
        servers
            .iter()
            .cloned()
            .map(Self::Server)
            .chain(foreign.targets.iter().cloned().map(Self::Target))
            .collect()
    }

    /// How it is verified: see [`Contract::for_server`]; a target as `foreign` says.
    pub fn contract(&self, foreign: &Foreign) -> Contract {
        match self {
            Self::Server(short) => Contract::for_server(short),
            Self::Target(_) => foreign.contract,
        }
    }

    /// Its name in the tables.
    pub fn name(&self) -> String {
        match self {
            Self::Server(short) => package(short),
            Self::Target(t) => t.name.clone(),
        }
    }
}

/// A subject ready for load: where it listens, and the server when the harness started it.
#[derive(Debug)]
pub struct Up {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The server, when the harness started it (sampled, stopped).
    pub server: Option<Server>,
}

impl Up {
    /// An error if the harness's server has exited, with its last words.
    pub fn ensure_alive(&mut self) -> Result<()> {
        if let Some(server) = &mut self.server {
            if let Some(exit) = server.exited() {
                bail!(
                    "server exited mid-run ({}); stderr: {}",
                    exit.text,
                    server.stderr_tail()
                );
            }
        }
        Ok(())
    }

    /// The pid of the harness's server, where its process is this host's.
    pub fn pid(&self) -> Option<u32> {
        self.server
            .as_ref()
            .filter(|s| s.visible())
            .map(Server::pid)
    }
}

/// What a progress bar measures progress against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// A number of requests.
    Requests(u64),
    /// A duration: the bar shows time, and the requests so far beside it.
    Duration(Duration),
}

fn bar(label: String, bound: Bound) -> ProgressBar {
    let (len, template) = match bound {
        Bound::Requests(n) => (n, "{prefix:>28} {bar:40} {pos}/{len} {elapsed}"),
        Bound::Duration(d) => (millis(d), "{prefix:>28} {bar:40} {msg}"),
    };
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(label);
    bar
}

fn update(bar: &ProgressBar, bound: Bound, done: usize, elapsed: Duration) {
    match bound {
        Bound::Requests(_) => bar.set_position(done as u64),
        Bound::Duration(d) => {
            bar.set_position(millis(elapsed).min(millis(d)));
            bar.set_message(format!(
                "{:.1}/{:.1} s, {done} requests",
                elapsed.min(d).as_secs_f64(),
                d.as_secs_f64()
            ));
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A progress bar and the task feeding it.
#[derive(Debug)]
pub struct Progress(Option<(ProgressBar, tokio::task::JoinHandle<()>)>);

impl Progress {
    /// Removes the bar.
    pub fn finish(self) {
        if let Some((bar, ticker)) = self.0 {
            ticker.abort();
            bar.finish_and_clear();
        }
    }
}

/// The server flags every scenario passes: the delay and the thread counts.
pub fn server_args(delay_ms: u64, workers: usize, blocking_threads: usize) -> Vec<String> {
    ServerFlag::command_line(&[
        ServerFlag::DelayMs(delay_ms),
        ServerFlag::Workers(workers),
        ServerFlag::BlockingThreads(blocking_threads),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_bar_shows_time_not_a_count_against_zero() {
        let bound = Bound::Duration(Duration::from_secs(10));
        let bar = bar("soak".into(), bound);
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        update(&bar, bound, 42, Duration::from_millis(2500));
        assert_eq!((bar.position(), bar.length()), (2500, Some(10_000)));
        assert_eq!(bar.message(), "2.5/10.0 s, 42 requests");
        // Past the deadline (the last requests finishing), the bar stays full.
        update(&bar, bound, 50, Duration::from_millis(10_300));
        assert_eq!(bar.position(), 10_000);
        let counted = Bound::Requests(300);
        let bar = bar_of(counted);
        update(&bar, counted, 120, Duration::from_secs(1));
        assert_eq!((bar.position(), bar.length()), (120, Some(300)));
    }

    fn bar_of(bound: Bound) -> ProgressBar {
        let bar = bar("ladder".into(), bound);
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        bar
    }
}
