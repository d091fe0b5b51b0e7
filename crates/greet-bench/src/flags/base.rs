//! The base's flags, one group for every scenario ([`BaseArgs`]): `--servers` and
//! `--repeats`, and those of the base's settings the scenario takes
//! ([`greet_model::plan::Takes`]): the servers' flags, servers the harness did not start, where
//! the load runs. Each help quotes the scenario's own defaults. And [`Own`], what a
//! scenario's own flags are to the command line.

use std::marker::PhantomData;

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

use greet_model::plan::{self, Base, Based, ServerSpec};

use super::shared::{ForeignArgs, PlaceArgs, ServerArgs};
use super::values::{help, help1, list, parse_repeats, parse_server, parse_short};
use super::CommonArgs;

/// A scenario's own flags, those no other scenario takes: clap's, and how they set its plan
/// once the base's flags have. `common` is the run's shared flags, for the scenario that
/// reads one of them its own way.
pub(crate) trait Own<P>: Args {
    /// Sets `plan` as the flags say.
    fn apply(self, plan: &mut P, common: &mut CommonArgs);
}

/// No flags of its own: for a scenario whose plan the base's and the shared flags set alone.
#[derive(Debug, Clone, Args)]
pub(crate) struct NoOwn {}

impl<P> Own<P> for NoOwn {
    fn apply(self, _plan: &mut P, _common: &mut CommonArgs) {}
}

/// The base's flags of scenario plan `P`.
#[derive(Debug, Clone)]
pub(crate) struct BaseArgs<P: Based + Clone + Send + Sync + 'static> {
    servers: Option<Vec<ServerSpec>>,
    repeats: Option<usize>,
    server: Option<ServerArgs<P>>,
    foreign: Option<ForeignArgs>,
    place: Option<PlaceArgs>,
    plan: PhantomData<P>,
}

impl<P: Based + Clone + Send + Sync + 'static> BaseArgs<P> {
    /// Sets `base` as the flags say, over its defaults: only targets, no servers unless
    /// named.
    pub(crate) fn apply(self, base: &mut Base) {
        if let Some(foreign) = self.foreign {
            base.foreign = foreign.plan();
        }
        match self.servers {
            Some(servers) => base.servers = servers,
            None if !base.foreign.targets.is_empty() => base.servers.clear(),
            None => {}
        }
        if let Some(repeats) = self.repeats {
            base.repeats = repeats;
        }
        if let Some(server) = self.server {
            server.apply(&mut base.server);
        }
        if let Some(place) = self.place {
            base.place = place.placement();
        }
    }

    fn servers() -> Arg {
        let takes = P::TAKES;
        let mut text = "Servers, in order".to_owned();
        if takes.endpoint_each {
            text.push_str("; an entry may name its own endpoint, e.g. axum:/greetings/blocking");
        }
        if takes.foreign {
            text.push_str(" (none when only --target is given)");
        }
        text.push_str(
            "; tomcat and jetty are the original's servers (built with the machine's JDK), \
             floor and nginx the references (measured against, never ranked); a crate with \
             knobs on is a server of its own, e.g. hyper+pipeline-flush (each server's \
             --help lists its knobs and what each gives up; build knobs such as mimalloc are \
             built once into target/knobs), and hyper+tuned the crate with the knobs that \
             lowered its counted cost, ranked in a league of its own",
        );
        let arg = Arg::new("servers")
            .long("servers")
            .value_name("SERVERS")
            .value_delimiter(',')
            .action(ArgAction::Append)
            .help(help1(&text, list(&plan::SERVERS)));
        if takes.endpoint_each {
            arg.value_parser(parse_server)
        } else {
            arg.value_parser(|text: &str| parse_short(text).map(|short| ServerSpec::new(&short)))
        }
    }

    fn repeats() -> Arg {
        let (normal, quick) = (P::defaults(false), P::defaults(true));
        let (normal, quick) = (normal.base().repeats, quick.base().repeats);
        let text = if normal == quick {
            help1(P::REPEATS_HELP, normal)
        } else {
            help(P::REPEATS_HELP, normal, quick)
        };
        Arg::new("repeats")
            .long("repeats")
            .value_name("REPEATS")
            .value_parser(parse_repeats)
            .help(text)
    }
}

impl<P: Based + Clone + Send + Sync + 'static> Args for BaseArgs<P> {
    fn augment_args(cmd: Command) -> Command {
        let takes = P::TAKES;
        let mut cmd = cmd.arg(Self::servers()).arg(Self::repeats());
        if takes.server {
            cmd = ServerArgs::<P>::augment_args(cmd);
        }
        if takes.foreign {
            cmd = ForeignArgs::augment_args(cmd);
        }
        if takes.place {
            cmd = PlaceArgs::augment_args(cmd);
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl<P: Based + Clone + Send + Sync + 'static> FromArgMatches for BaseArgs<P> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let takes = P::TAKES;
        Ok(Self {
            servers: matches
                .get_many::<ServerSpec>("servers")
                .map(|given| given.cloned().collect()),
            repeats: matches.get_one::<usize>("repeats").copied(),
            server: takes
                .server
                .then(|| ServerArgs::from_arg_matches(matches))
                .transpose()?,
            foreign: takes
                .foreign
                .then(|| ForeignArgs::from_arg_matches(matches))
                .transpose()?,
            place: takes
                .place
                .then(|| PlaceArgs::from_arg_matches(matches))
                .transpose()?,
            plan: PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}
