//! The open-loop toolkit the rate and capacity scenarios share: a closed-loop probe that
//! sets the scale and bounds the client ([`probe`]), the client's limit as a refusal
//! ([`beyond_the_client`]), and one paced run where the placement says ([`paced_run`]).

use std::time::Duration;

use anyhow::Result;
use greet_load::{PacedTally, Stop, Work};

use crate::harness::{Ask, Harness, Up};
use greet_model::plan::{Foreign, Placement, Protocol};
use greet_model::results::RateRun;

/// The load generator is trusted up to this fraction of the rate its CPU would allow at the
/// probe's cost per request, over cleartext HTTP/1.1: there pacing costs about 0.85 of the
/// probe's closed loop a request (hyper's `/health` at its capacity, one core each: 8.0–8.3 µs
/// of client CPU paced against 9.1–10.2 µs closed-loop), and the margin keeps a level off the
/// last tenth of the client's CPU, where its schedule slips.
const CLIENT_HEADROOM: f64 = 0.9;
/// [`CLIENT_HEADROOM`] over HTTPS, where pacing costs about what the probe does a request
/// (hyper's `/health` at 60k/s, one core each: 13.5 µs of client CPU paced against 14.3 µs
/// closed-loop), not 0.85 of it as in cleartext: each request's TLS records cost the client
/// as much as the server.
const CLIENT_HEADROOM_HTTPS: f64 = CLIENT_HEADROOM * 0.85 / 0.95;
/// [`CLIENT_HEADROOM`] over HTTP/2 (h2c and h2), where the event loop paces for half the
/// probe's cost a request or less from 130k/s up (60k/s over TLS), less the faster it goes
/// (hyper's `/health`, 10 streams a connection: the h2c probe 9.3–9.7 µs, paced 5.4 at
/// 130k/s and 2.5 at 200k/s using 49% of its core; the h2 probe 15.6 µs, paced 6.2 at
/// 60k/s), while the probe's h2 tasks are the first to run out of CPU.
const CLIENT_HEADROOM_HTTP2: f64 = CLIENT_HEADROOM / 0.5;
/// A probe that used less of the client's CPUs than this is read as having used this much:
/// extrapolating a near-idle probe a thousandfold says nothing, and an unbounded estimate
/// would let a level schedule more requests than it could send in hours.
const MIN_PROBE_SHARE: f64 = 0.001;
/// A level that used this much of the load generator's CPU measured the client as much as the
/// server.
pub(crate) const CLIENT_BOUND_PCT: f64 = 90.0;

/// What a closed-loop probe found of a server, and of the client beside it.
pub(crate) struct Probed {
    /// Valid responses a second: the server's capacity, closed-loop.
    pub(crate) capacity: f64,
    /// The load generator's CPU in the probe, a fraction of its CPUs.
    pub(crate) client_share: f64,
    /// The rate the client could pace with all of its CPUs, as fast as it sent in the probe,
    /// less the headroom pacing needs.
    pub(crate) client_max: f64,
}

/// A closed-loop probe of `name`'s `endpoint` for `duration` on `connections`, always from
/// the harness; measured again after heavy steal ([`Harness::measure`]), since every level
/// after it is scaled by it.
pub(crate) async fn probe(
    harness: &Harness,
    up: &Up,
    (name, endpoint): (&str, &str),
    foreign: &Foreign,
    (duration, connections, streams): (Duration, usize, usize),
) -> Result<Probed> {
    let work = Work::Sessions {
        users: connections,
        stop: Stop::After(duration),
        streams,
        pipeline: 1,
        requests_per_connection: None,
    };
    let probe = Ask::new(endpoint, &foreign.expect, work);
    let label = format!("{name} {endpoint} probe");
    let probed = harness
        .measure(Placement::Harness, up, &probe, label)
        .await?;
    let client_share = probed.client_cpu_pct(harness.load_cpu_count()) / 100.0;
    let capacity = probed.run().load.requests_per_s;
    let protocol = harness.transport().protocol;
    let headroom = match protocol {
        _ if protocol.http2() => CLIENT_HEADROOM_HTTP2,
        Protocol::Https => CLIENT_HEADROOM_HTTPS,
        _ => CLIENT_HEADROOM,
    };
    let client_max = capacity / client_share.max(MIN_PROBE_SHARE) * headroom;
    harness.say(
        name,
        &format!(
            "{endpoint}: capacity {capacity:.0}/s closed-loop, {:.0}% of the load generator's CPU",
            client_share * 100.0
        ),
    );
    Ok(Probed {
        capacity,
        client_share,
        client_max,
    })
}

/// Why a level of `target` requests a second is refused: more than the load generator can
/// send on its `load_cpus` CPUs (`client_max`, from the probe), when it paces `here`, on this
/// machine's load CPUs. Pacers on nodes of their own are not bounded by the harness's CPU: a
/// level they could not pace shows as late requests and a rate short of its target.
pub(crate) fn beyond_the_client(
    target: f64,
    client_max: f64,
    load_cpus: usize,
    here: bool,
) -> Option<String> {
    (target > client_max && here).then(|| {
        format!(
            "{target:.0}/s is more than the load generator can send on its {load_cpus} CPU(s): \
             about {client_max:.0}/s, from the probe"
        )
    })
}

/// One run of one level where `place` paces it, the server sampled and the load generator's
/// CPU measured; a failure of its pacers fails the level.
pub(crate) async fn paced_run(
    harness: &Harness,
    (up, place): (&Up, Placement),
    ask: &Ask<'_>,
    label: String,
) -> Result<(PacedTally, RateRun)> {
    let loaded = harness.load(place, up, ask, label).await?;
    loaded.paced(harness.load_cpu_count())
}
