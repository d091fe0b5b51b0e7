//! A server brought up for load: started where the [`Placement`] puts it (a process here, a
//! container with `--docker`, a swarm stack), verified on a process of its own first, then
//! started again to be measured, and stopped gracefully; or a target the harness did not
//! start, checked.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use greet_load::{check_request, Check, Wire};
use greet_server::{Knob, ServerFlag};

use greet_bed::sample::{self, mib};
use greet_bed::server::Wrap;
use greet_bed::server::{self, swarm, Server};
use greet_model::plan::{
    build_of, is_peer, is_reference, knobs_of, package, Base, Containers, Contract, Foreign,
    Placement, Protocol, Target, ANCHOR,
};
use greet_model::results::Mode;

use super::Harness;

/// What a scenario loads: a server it starts, or one already running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Subject {
    /// A server of the workspace (or a JVM peer), by short name.
    Server(String),
    /// A server named again in the same list (`--servers hyper,hyper`), by short name and
    /// its place among those of that name (2 for the second): measured as a server of its
    /// own, an A/A check of the scenario's noise.
    Again(String, usize),
    /// A server someone else started.
    Target(Target),
}

impl Subject {
    /// The servers of a scenario, then its targets; a server named twice is measured twice.
    pub(crate) fn all(base: &Base) -> Vec<Subject> {
        let shorts = base.shorts();
        shorts
            .iter()
            .enumerate()
            .map(
                |(i, short)| match shorts[..i].iter().filter(|s| *s == short).count() {
                    0 => Self::Server(short.clone()),
                    before => Self::Again(short.clone(), before + 1),
                },
            )
            .chain(base.targets().iter().cloned().map(Self::Target))
            .collect()
    }

    /// How it is verified: see [`Contract::for_server`]; a target as `foreign` says.
    pub(crate) fn contract(&self, foreign: &Foreign) -> Contract {
        match self {
            Self::Server(short) | Self::Again(short, _) => Contract::for_server(short),
            Self::Target(_) => foreign.contract,
        }
    }

    /// The server's short name (`hyper`, for each of its copies too); none for a target.
    pub(crate) fn short(&self) -> Option<&str> {
        match self {
            Self::Server(short) | Self::Again(short, _) => Some(short),
            Self::Target(_) => None,
        }
    }

    /// Its name in the tables: `greet-hyper`, the second of them `greet-hyper#2`.
    pub(crate) fn name(&self) -> String {
        match self {
            Self::Server(short) => package(short),
            Self::Again(short, n) => format!("{}#{n}", package(short)),
            Self::Target(t) => t.name.clone(),
        }
    }
}

/// What to bring up, and how to check it.
#[derive(Debug, Clone)]
pub(crate) struct Start<'a> {
    /// The server, or target.
    pub(crate) subject: &'a Subject,
    /// The server's flags.
    pub(crate) args: &'a [String],
    /// What a valid answer is, and how a target is verified.
    pub(crate) foreign: &'a Foreign,
    /// The endpoint the load will GET, which a light check and a protocol check ask for.
    pub(crate) path: &'a str,
    /// A server of this subject has passed its whole check in this scenario already: only a
    /// light check of a target is made again.
    pub(crate) checked: bool,
    /// Containers of the servers' images rather than processes (`--docker`).
    pub(crate) containers: Option<&'a Containers>,
    /// A network a swarm stack's server joins besides its own (the stores').
    pub(crate) join: Option<&'static str>,
    /// The load's protocol, when not the run's (`--protocol`).
    pub(crate) wire: Option<&'a Wire>,
    /// The measured process run under an instrument (a process only; its check is not).
    pub(crate) wrap: Option<&'a Wrap>,
}

impl<'a> Start<'a> {
    /// `subject` started with `args`, checked before its first load on `path`.
    pub(crate) fn new(
        subject: &'a Subject,
        args: &'a [String],
        foreign: &'a Foreign,
        path: &'a str,
    ) -> Self {
        Self {
            subject,
            args,
            foreign,
            path,
            checked: false,
            containers: None,
            join: None,
            wire: None,
            wrap: None,
        }
    }
}

/// A subject ready for load: where it listens, and the server when the harness started it.
#[derive(Debug)]
pub(crate) struct Up {
    /// Where it listens.
    pub(crate) addr: SocketAddr,
    /// The server, when the harness started it (sampled, stopped).
    pub(crate) server: Option<Server>,
}

impl Up {
    /// An error if the harness's server has exited, with its last words.
    pub(crate) fn ensure_alive(&mut self) -> Result<()> {
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
    pub(crate) fn pid(&self) -> Option<u32> {
        self.server
            .as_ref()
            .filter(|s| s.visible())
            .map(Server::pid)
    }

    /// Its resident memory before any load, MiB: /proc's, or the engine's for a container
    /// /proc cannot see.
    pub(crate) fn idle_rss_mib(&self) -> Option<f64> {
        let server = self.server.as_ref()?;
        let kib = if server.visible() {
            sample::read(server.pid()).map(|r| r.rss_kib)
        } else {
            server.engine().and_then(|e| e.latest()).map(|r| r.mem_kib)
        };
        kib.map(mib)
    }

    /// The swarm node its server runs on.
    pub(crate) fn node(&self) -> Option<String> {
        self.server.as_ref()?.node().map(str::to_owned)
    }
}

/// How the servers run, as results.json says: processes, containers, or a swarm stack.
pub(crate) fn mode(place: Placement, containers: Option<&Containers>) -> Mode {
    match (place, containers) {
        (Placement::Swarm(_), _) => Mode::Swarm,
        (_, Some(_)) => Mode::Docker,
        _ => Mode::Process,
    }
}

impl Harness {
    /// Checks before anything runs that the servers `shorts` can be started where `place`
    /// and `containers` put them, and that a swarm loads no `targets`: their binaries (a JVM
    /// peer that cannot run is skipped later, not refused), their images, the swarm.
    pub(crate) fn preflight(
        &self,
        place: Placement,
        shorts: &[&str],
        targets: bool,
        containers: Option<&Containers>,
    ) -> Result<()> {
        let elsewhere = matches!(place, Placement::Swarm(_)) || containers.is_some();
        if let Some(reference) = shorts
            .iter()
            .find(|s| is_reference(s))
            .filter(|_| elsewhere)
        {
            bail!(
                "{reference} runs as a process only (it has no image): leave it out of \
                 --docker and --swarm runs"
            );
        }
        if let Some(built) = shorts
            .iter()
            .find(|s| build_of(s).is_some())
            .filter(|_| elsewhere)
        {
            bail!(
                "{built} runs a build of its own as a process only (the images hold the \
                 workspace's build): leave it out of --docker and --swarm runs"
            );
        }
        match (place, containers) {
            (Placement::Swarm(_), _) => swarm::preflight(shorts, targets),
            (_, Some(containers)) => {
                let mut images: Vec<String> = shorts.iter().map(|s| server::image(s)).collect();
                images.dedup();
                server::check_docker(&images, containers.network.as_deref())
            }
            _ => shorts
                .iter()
                .filter(|s| !is_peer(s) && **s != ANCHOR)
                .try_for_each(|s| self.binaries.locate(s).map(drop)),
        }
    }

    /// Starts `start`'s subject where `place` puts it (or finds it, for a target) and verifies
    /// it. A server the harness starts is verified on a process of its own, stopped before the
    /// one returned starts (the whole contract, or the light check for a JVM peer, a
    /// reference or a crate with runtime knobs: [`Contract::for_server`]): the
    /// contract's cases open the stores, start blocking-pool threads and walk the parsers'
    /// error paths, which the measured process would otherwise carry into its memory and
    /// thread figures. The measured one is then checked to answer over the load's protocol.
    pub(crate) async fn bring_up(&self, place: Placement, start: &Start<'_>) -> Result<Up> {
        let wire = start.wire.unwrap_or(&self.wire);
        let contract = start.subject.contract(start.foreign);
        let (headers, body) = (&self.common.headers, self.common.body.as_ref());
        let check = Check::for_request(start.path, headers, body, &start.foreign.expect);
        let name = start.subject.name();
        match start.subject {
            Subject::Server(short) | Subject::Again(short, _) => {
                if !start.checked {
                    let checked = self
                        .launch(place, start, short, start.args.to_vec(), None)
                        .await?;
                    let base_url = checked.base_url();
                    let at = (checked.addr(), base_url.as_str(), false);
                    self.verify(&name, contract, at, start.path, &check).await?;
                    self.stop(checked).await?;
                }
                let args = measured_args(start.args, wire);
                let server = self.launch(place, start, short, args, start.wrap).await?;
                let addr = server.addr();
                self.check_protocol(&name, (addr, wire), start.path, &check)
                    .await?;
                Ok(Up {
                    addr,
                    server: Some(server),
                })
            }
            Subject::Target(t) => {
                let addr = greet_probe::resolve(&t.url).await?;
                if contract == Contract::Light || !start.checked {
                    let at = (addr, t.url.as_str(), true);
                    self.verify(&name, contract, at, start.path, &check).await?;
                }
                Ok(Up { addr, server: None })
            }
        }
    }

    /// Starts server `short` with `args` where `place` and `start` put it, pinned (a process
    /// under `wrap`'s instrument where there is one), and waits until it answers. A server
    /// with knobs (`hyper+pipeline-flush`) is its crate's binary (its build's, with build
    /// knobs) with `--knob` added.
    async fn launch(
        &self,
        place: Placement,
        start: &Start<'_>,
        short: &str,
        mut args: Vec<String>,
        wrap: Option<&Wrap>,
    ) -> Result<Server> {
        let knobs: Vec<Knob> = knobs_of(short)
            .into_iter()
            .filter_map(Knob::named)
            .collect();
        if !knobs.is_empty() {
            args.extend(ServerFlag::Knobs(knobs).args());
        }
        enum How {
            Stack(Option<&'static str>),
            Container(Option<String>),
            Process(server::Program),
        }
        let how = match (place, start.containers) {
            (Placement::Swarm(_), _) => How::Stack(start.join),
            (_, Some(containers)) => How::Container(containers.network.clone()),
            _ => How::Process(self.binaries.locate(short)?),
        };
        let (cpus, image) = (self.server_cpus.clone(), server::image(short));
        let wrap = wrap.cloned();
        tokio::task::spawn_blocking(move || match how {
            How::Stack(join) => Server::start_swarm(&image, &args, &swarm::Nodes::read()?, join),
            How::Container(network) => {
                Server::start_container(&image, &args, &cpus, network.as_deref())
            }
            How::Process(program) => match wrap {
                Some(wrap) => Server::start(&program.wrapped(&wrap.prefix), &args, &cpus, &wrap),
                None => Server::start(&program, &args, &cpus, &Wrap::NONE),
            },
        })
        .await
        .context("start-up task failed")?
    }

    /// Verifies a server before its load as `contract` says: the whole contract suite at
    /// `base_url`, or the light check of `path` at `addr`. A process the harness started for
    /// the check is in cleartext, and checked over HTTP/1.1; a target (`measured`) is checked
    /// over the load's protocol, and the whole suite, raw HTTP/1.1 in cleartext, cannot run on
    /// it over TLS.
    async fn verify(
        &self,
        who: &str,
        contract: Contract,
        (addr, base_url, measured): (SocketAddr, &str, bool),
        path: &str,
        check: &Check,
    ) -> Result<()> {
        let cleartext = Wire::default();
        let wire = if measured { &self.wire } else { &cleartext };
        match contract {
            Contract::Full if measured && wire.protocol.tls() => bail!(
                "--contract full is raw HTTP/1.1 in cleartext; with --protocol {} use --contract light",
                wire.protocol
            ),
            Contract::Full => {
                greet_conformance::check(base_url)
                    .await
                    .context("contract check failed")?;
                self.say(who, "contract check passed");
                if measured {
                    self.check_protocol(who, (addr, wire), path, check)
                        .await?;
                }
                Ok(())
            }
            Contract::Light => {
                let names = ("light check", "light check passed");
                self.once(who, (addr, wire), path, check, names).await
            }
        }
    }

    /// Checks, unless `wire` is HTTP/1.1 in cleartext, that a measured server answers
    /// `path` over its protocol, as `check` says.
    async fn check_protocol(
        &self,
        who: &str,
        (addr, wire): (SocketAddr, &Wire),
        path: &str,
        check: &Check,
    ) -> Result<()> {
        if wire.protocol == Protocol::Http1 {
            return Ok(());
        }
        let passed = format!("answers over {}", wire.protocol);
        let names = ("protocol check", passed.as_str());
        self.once(who, (addr, wire), path, check, names).await
    }

    /// One request of the load (`GET target`, or a POST of its body) over `wire`, valid as
    /// `check` says; `(what, passed)` name the check
    /// in its error and in its status line.
    async fn once(
        &self,
        who: &str,
        (addr, wire): (SocketAddr, &Wire),
        path: &str,
        check: &Check,
        (what, passed): (&str, &str),
    ) -> Result<()> {
        let request = (path, &self.common.headers[..], self.common.body.as_ref());
        check_request(addr, wire, request, check, Duration::from_secs(10))
            .await
            .with_context(|| format!("{what} failed"))?;
        self.say(who, passed);
        Ok(())
    }

    /// Stops the server of `up`, if the harness started it, with SIGTERM; an unclean exit
    /// is an error.
    pub(crate) async fn release(&self, up: Up) -> Result<()> {
        match up.server {
            Some(server) => self.stop(server).await,
            None => Ok(()),
        }
    }

    /// Stops `server` with SIGTERM; an unclean exit is an error.
    async fn stop(&self, server: Server) -> Result<()> {
        let grace = Duration::from_secs(12) * server.slowdown();
        let exit = tokio::task::spawn_blocking(move || server.stop(grace))
            .await
            .context("stop task failed")??;
        if !exit.success {
            bail!("did not exit cleanly on SIGTERM ({})", exit.text);
        }
        Ok(())
    }
}

/// `args` for a server that is measured over `wire`: with TLS when its protocol has it.
/// The contract checks run on cleartext processes of their own: their raw HTTP/1 cases
/// have no TLS or HTTP/2 spelling (the conformance tests hold every protocol to one
/// contract).
fn measured_args(args: &[String], wire: &Wire) -> Vec<String> {
    let mut args = args.to_vec();
    if wire.protocol.tls() {
        args.extend(ServerFlag::TlsSelfSigned.args());
    }
    args
}
