//! `--swarm` on a one-node swarm of this machine's engine: the server as a stack (and the
//! stores as another, for business), each level as a job of agents on the stack's network, the
//! tallies merged, the containers watched from beside them, and nothing left behind.
//! The swarm is initialised when the engine is in none (advertising 127.0.0.1: all traffic
//! stays on this machine) and left again only by the test that made it. `#[ignore]`d: they
//! need the engine and the images (`cargo test -- --include-ignored` runs them).

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{bin_dir_args, ladder_failed_once, out_dir, results, turn, BENCH};
use greet_bench::Results;
use greet_model::results::{Mode, SampledBy, Trial};

fn docker(args: &[&str]) -> Output {
    Command::new("docker")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("docker runs")
}

fn text(args: &[&str]) -> String {
    String::from_utf8_lossy(&docker(args).stdout)
        .trim()
        .to_owned()
}

/// The engine in a swarm for the test's length: joined as it was, or initialised here and
/// left when dropped.
struct OneNodeSwarm {
    made_here: bool,
}

impl OneNodeSwarm {
    fn join() -> Self {
        assert!(
            docker(&["info"]).status.success(),
            "no Docker engine answers (docker info): install and start Docker"
        );
        for image in ["greet-hyper:latest", "greet-agent:latest"] {
            assert!(
                docker(&["image", "inspect", image]).status.success(),
                "no {image} image: bash docker/build-offline.sh"
            );
        }
        let state = text(&["info", "--format", "{{.Swarm.LocalNodeState}}"]);
        let made_here = state == "inactive";
        if made_here {
            let init = docker(&["swarm", "init", "--advertise-addr", "127.0.0.1"]);
            assert!(
                init.status.success(),
                "{}",
                String::from_utf8_lossy(&init.stderr)
            );
        }
        Self { made_here }
    }
}

impl Drop for OneNodeSwarm {
    fn drop(&mut self) {
        if self.made_here {
            let _ = docker(&["swarm", "leave", "--force"]);
        }
    }
}

/// What the run left: services, networks and volumes of the server's and the stores' stacks.
fn left_behind() -> String {
    let mut left = vec![text(&[
        "network",
        "ls",
        "--quiet",
        "--filter",
        "name=greet-bench",
    ])];
    for stack in ["greet-bench", "greet-bench-stores"] {
        let label = format!("label=com.docker.stack.namespace={stack}");
        left.push(text(&["service", "ls", "--quiet", "--filter", &label]));
        left.push(text(&["volume", "ls", "--quiet", "--filter", &label]));
    }
    left.join(" ").trim().to_owned()
}

fn swarm_ladder(agents: &str, extra: &[&str]) -> (Output, std::path::PathBuf) {
    let out = out_dir(&format!("swarm-{agents}"));
    let mut args = vec![
        "--quiet",
        "--swarm",
        "--servers",
        "hyper",
        "--agents",
        agents,
        "--out",
        out.to_str().expect("utf-8 path"),
    ];
    args.extend(extra);
    let run = Command::new(BENCH)
        .args(&args)
        .args(bin_dir_args())
        .stdin(Stdio::null())
        .output()
        .expect("greet-bench runs");
    (run, out)
}

/// `greet-bench SCENARIO --quiet --swarm --agents 2 --servers hyper ARGS`, which must succeed
/// and leave nothing behind: what it wrote.
fn on_swarm(scenario: &str, args: &[&str]) -> Results {
    let out = out_dir(&format!("swarm-{scenario}"));
    let run = Command::new(BENCH)
        .args([
            scenario,
            "--quiet",
            "--swarm",
            "--agents",
            "2",
            "--servers",
            "hyper",
        ])
        .args(args)
        .args(["--out", out.to_str().expect("utf-8 path")])
        .args(bin_dir_args())
        .stdin(Stdio::null())
        .output()
        .expect("greet-bench runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(left_behind(), "", "left behind after a {scenario} run");
    results(&out.join("results.json"))
}

fn level_of(out: &std::path::Path, at: usize) -> Trial {
    let ladder = results(&out.join("results.json"))
        .sections
        .ladder
        .expect("ladder");
    assert_eq!(ladder.mode, Mode::Swarm);
    assert!(
        ladder.servers[0].node.is_some(),
        "the server's node recorded"
    );
    ladder.servers[0].levels[at].run.clone()
}

#[test]
#[ignore = "needs a Docker engine and the images: bash docker/build-offline.sh"]
fn two_agents_on_a_swarm_count_every_request_once_and_leave_nothing() {
    let _turn = turn();
    let _swarm = OneNodeSwarm::join();
    let levels = ["--concurrency", "100,300", "--delay-ms", "200"];
    let started = Instant::now();
    let (two, out2) = swarm_ladder("2", &levels);
    let took = started.elapsed();
    let said = String::from_utf8_lossy(&two.stderr);
    assert!(two.status.success(), "{said}");
    assert_eq!(left_behind(), "", "left behind after a run");
    let (one, out1) = swarm_ladder("1", &levels);
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    for (at, concurrency) in [(0, 100u64), (1, 300)] {
        let (a, b) = (level_of(&out1, at), level_of(&out2, at));
        for (run, n) in [(&a, 1), (&b, 2)] {
            assert_eq!(run.load.requests, concurrency, "{n} agents: {:?}", run.load);
            assert_eq!(run.load.success_rate, 100.0, "{n} agents: {:?}", run.load);
            assert_eq!(run.agents.len(), n);
            assert!(
                run.agents.iter().all(|a| a.node.is_some()),
                "{:?}",
                run.agents
            );
            watched_beside(run);
        }
        for (what, x, y) in [
            ("p50", a.load.latency_ms.p50, b.load.latency_ms.p50),
            ("p99", a.load.latency_ms.p99, b.load.latency_ms.p99),
        ] {
            assert!(
                (200.0..600.0).contains(&x) && (200.0..600.0).contains(&y),
                "{what}: {x} {y}"
            );
        }
    }
    eprintln!("two agents, two levels, deploy to teardown: {took:?}");
}

/// The server was watched by the task beside it: CPU, memory and tasks from its container's
/// control group, beside /proc's figures (its process is this host's on a one-node swarm).
fn watched_beside(run: &Trial) {
    let engine = run.engine.as_ref().expect("the watch's figures");
    assert_eq!(engine.from, Some(SampledBy::Watch), "{engine:?}");
    assert!(
        engine.cpu_max_pct.is_some_and(|c| c > 0.0)
            && engine.rss_max_mib.is_some_and(|m| m > 0.5)
            && engine.threads_max.is_some_and(|t| t >= 1),
        "{engine:?}"
    );
}

#[test]
#[ignore = "needs a Docker engine and the images: bash docker/build-offline.sh"]
fn a_soak_on_a_swarm_shares_its_users_and_leaves_nothing() {
    let _turn = turn();
    let _swarm = OneNodeSwarm::join();
    let soak = on_swarm(
        "soak",
        &[
            "--endpoints",
            "/greetings",
            "--concurrency",
            "20",
            "--duration",
            "2s",
        ],
    )
    .sections
    .soak
    .expect("soak");
    let cell = &soak.cells[0];
    let run = &cell.runs[0];
    assert_eq!(run.load.success_rate, 100.0, "{:?}", run.load);
    assert!(run.load.requests > 100, "{:?}", run.load);
    let counted: u64 = run.agents.iter().map(|a| a.requests).sum();
    assert_eq!(counted, run.load.requests, "{:?}", run.agents);
    let users: Vec<usize> = run.agents.iter().map(|a| a.concurrency).collect();
    assert_eq!(users, [10, 10]);
    assert!(
        run.agents.iter().all(|a| a.node.is_some()),
        "{:?}",
        run.agents
    );
    assert!(
        cell.threads_peak.is_some(),
        "threads from /proc on one node"
    );
    watched_beside(run);
}

#[test]
#[ignore = "needs a Docker engine and the images: bash docker/build-offline.sh"]
fn business_on_a_swarm_deploys_the_stores_beside_and_leaves_nothing() {
    let _turn = turn();
    let _swarm = OneNodeSwarm::join();
    for image in ["postgres:15", "redis:7"] {
        assert!(
            docker(&["image", "inspect", image]).status.success(),
            "no {image} image: bash docker/build-offline.sh"
        );
    }
    let business = on_swarm(
        "business",
        &[
            "--quick",
            "--stores",
            "sqlite,postgres",
            "--endpoints",
            "/health,/db",
            "--db-pools",
            "4",
            "--repeats",
            "1",
            "--duration",
            "1s",
        ],
    )
    .sections
    .business
    .expect("business");
    assert!(
        business.frame.failures.is_empty(),
        "{:?}",
        business.frame.failures
    );
    assert!(
        business
            .store_notes
            .iter()
            .any(|n| n.contains("swarm stack greet-bench-stores")),
        "{:?}",
        business.store_notes
    );
    for store in ["sqlite", "postgres+redis"] {
        let db = business
            .cells
            .iter()
            .find(|c| c.store == store && c.endpoint == "/db")
            .expect("a /db cell");
        let run = &db.runs[0];
        assert_eq!(run.load.success_rate, 100.0, "{store}: {:?}", run.load);
        assert!(run.load.requests > 10, "{store}: {:?}", run.load);
        let counted: u64 = run.agents.iter().map(|a| a.requests).sum();
        assert_eq!(
            (run.agents.len(), counted),
            (2, run.load.requests),
            "{store}: {:?}",
            run.agents
        );
        watched_beside(run);
    }
    let on_postgres = business
        .cells
        .iter()
        .find(|c| c.store == "postgres+redis" && c.endpoint == "/db")
        .expect("cell");
    let stores = &on_postgres.store_runs[0];
    assert_eq!(stores.from, Some(SampledBy::Watch), "{stores:?}");
    assert!(
        stores.cpu_avg_pct.is_some_and(|c| c > 0.0) && stores.rss_max_mib.is_some_and(|m| m > 1.0),
        "PostgreSQL and Redis watched through the load: {stores:?}"
    );
}

#[test]
#[ignore = "needs a Docker engine and the images: bash docker/build-offline.sh"]
fn a_killed_agent_on_a_swarm_fails_its_level_and_leaves_nothing() {
    let _turn = turn();
    let _swarm = OneNodeSwarm::join();
    let killer = std::thread::spawn(|| {
        let deadline = Instant::now() + Duration::from_secs(90);
        while Instant::now() < deadline {
            let ids = text(&[
                "ps",
                "--quiet",
                "--filter",
                "label=com.docker.swarm.service.name=greet-bench_load",
            ]);
            if let Some(id) = ids.split_whitespace().next() {
                // Once it runs its share: the level's requests are in flight.
                std::thread::sleep(Duration::from_secs(6));
                return docker(&["kill", id]).status.success();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    });
    let (run, out) = swarm_ladder("2", &["--concurrency", "50", "--delay-ms", "5000"]);
    assert!(
        killer.join().expect("killer"),
        "no agent task was seen to kill"
    );
    ladder_failed_once(&run, &out, &["agent task greet-bench_load."]);
    assert_eq!(left_behind(), "", "left behind after a failed run");
}

#[test]
#[ignore = "needs a Docker engine and the images: bash docker/build-offline.sh"]
fn a_rate_on_a_swarm_is_split_over_its_agents_and_leaves_nothing() {
    let _turn = turn();
    let _swarm = OneNodeSwarm::join();
    let rate = on_swarm("rate", &["--quick", "--rates", "1000", "--duration", "1s"])
        .sections
        .rate
        .expect("rate");
    let level = &rate.servers[0].levels[0];
    assert_eq!(
        (level.requests, level.success_rate),
        (1000, 100.0),
        "{level:?}"
    );
    let agents = &level.runs[0].agents;
    assert_eq!(
        agents.iter().map(|a| a.requests).collect::<Vec<_>>(),
        [500, 500]
    );
    assert!(agents.iter().all(|a| a.node.is_some()), "{agents:?}");
}
