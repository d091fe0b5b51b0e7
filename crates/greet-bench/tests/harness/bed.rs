//! `--swarm` across three engines: docker/swarm-bed.sh brings up three Docker engines on this
//! host, each in namespaces of its own, joined in one swarm and labelled so that the load
//! (node1, the manager, beside the harness), the server (node2) and the stores (node3) each
//! have a node. The harness runs in node1's network namespace and reaches the others over the
//! bed's switch; the tasks talk over the swarm's overlays. `#[ignore]`d: it needs root, a
//! Docker engine, iproute2, util-linux and the images (`cargo test -- --include-ignored` runs
//! it, as CI does).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{bin_dir_args, ladder_failed_once, out_dir, results, said, turn, BENCH};
use greet_bench::Results;
use greet_model::results::SampledBy;

/// What every node holds: the server's stack and the agents' job (and the watch tasks).
const IMAGES: [&str; 2] = ["greet-hyper:latest", "greet-agent:latest"];
/// And for business, the stores' stack.
const STORE_IMAGES: [&str; 2] = ["postgres:15", "redis:7"];

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docker/swarm-bed.sh")
}

fn bed(args: &[&str]) -> Output {
    Command::new("bash")
        .arg(script())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("bash runs")
}

/// Three engines in one swarm for the test's length, removed when dropped.
struct Bed;

impl Bed {
    /// Up, with `images` on every node.
    fn up(images: &[&str]) -> Self {
        let root = Command::new("id").arg("-u").output().expect("id runs");
        assert_eq!(
            String::from_utf8_lossy(&root.stdout).trim(),
            "0",
            "the bed needs root: it makes namespaces and starts engines"
        );
        for &image in images {
            let there = Command::new("docker")
                .args(["image", "inspect", image])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            assert!(there, "no {image} image: bash docker/build-offline.sh");
        }
        let up = bed(&["up"]);
        assert!(up.status.success(), "{}", said(&up));
        // From here the drop takes it down, whatever fails.
        let bed = Self;
        let load = self::bed(&[&["load"], images].concat());
        assert!(load.status.success(), "{}", said(&load));
        bed
    }

    /// `greet-bench SCENARIO --quiet --swarm --agents 2 --servers hyper ARGS` from beside the
    /// manager.
    fn bench(&self, scenario: &str, args: &[&str], out: &Path) -> Output {
        Command::new("bash")
            .arg(script())
            .args(["run", BENCH, scenario])
            .args(["--quiet", "--swarm", "--agents", "2", "--servers", "hyper"])
            .args(args)
            .args(["--out", out.to_str().expect("utf-8 path")])
            .args(bin_dir_args())
            .stdin(Stdio::null())
            .output()
            .expect("bash runs")
    }

    fn ok(&self, scenario: &str, args: &[&str]) -> Results {
        let out = out_dir(&format!("bed-{scenario}"));
        let run = self.bench(scenario, args, &out);
        assert!(run.status.success(), "{scenario}: {}", said(&run));
        results(&out.join("results.json"))
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        let down = bed(&["down"]);
        if !std::thread::panicking() {
            assert!(down.status.success(), "{}", said(&down));
        }
    }
}

/// Where the server ran and where each agent did: node2, and node1 for both.
fn placed(what: &str, server: Option<&str>, agents: &[Option<String>]) {
    assert_eq!(server, Some("node2"), "{what}: the server's node");
    assert_eq!(agents.len(), 2, "{what}: {agents:?}");
    assert!(
        agents.iter().all(|a| a.as_deref() == Some("node1")),
        "{what}: the agents' nodes {agents:?}"
    );
}

#[test]
#[ignore = "needs root, a Docker engine, iproute2 and the images: bash docker/build-offline.sh"]
fn ladder_rate_and_business_cross_three_nodes_and_leave_nothing() {
    let _turn = turn();
    let started = Instant::now();
    let bed = Bed::up(&[IMAGES, STORE_IMAGES].concat());
    let up = started.elapsed();

    let ladder = bed
        .ok("ladder", &["--concurrency", "100,300", "--delay-ms", "200"])
        .sections
        .ladder
        .expect("ladder");
    let server = &ladder.servers[0];
    for level in &server.levels {
        let run = &level.run;
        assert_eq!(run.load.success_rate, 100.0, "{:?}", run.load);
        assert_eq!(
            run.load.requests, level.concurrency as u64,
            "{:?}",
            run.load
        );
        let agents: Vec<_> = run.agents.iter().map(|a| a.node.clone()).collect();
        placed("ladder", server.node.as_deref(), &agents);
        // Its process is not the manager's engine's: the watch task's figures are the
        // server's, not beside /proc's.
        let server = &run.server;
        assert_eq!(server.from, Some(SampledBy::Watch), "{server:?}");
        assert!(
            server.cpu_max_pct.is_some_and(|c| c > 0.0)
                && server.rss_max_mib.is_some_and(|m| m > 0.5),
            "watched on node2: {server:?}"
        );
    }

    let rate = bed
        .ok("rate", &["--quick", "--rates", "1000", "--duration", "1s"])
        .sections
        .rate
        .expect("rate");
    let level = &rate.servers[0].levels[0];
    assert_eq!(
        (level.requests, level.success_rate),
        (1000, 100.0),
        "{level:?}"
    );
    let agents: Vec<_> = level.runs[0]
        .agents
        .iter()
        .map(|a| a.node.clone())
        .collect();
    placed("rate", rate.servers[0].node.as_deref(), &agents);

    let business = bed
        .ok(
            "business",
            &[
                "--quick",
                "--stores",
                "postgres",
                "--endpoints",
                "/db",
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
    let stores: Vec<(&str, &str)> = business
        .store_nodes
        .iter()
        .map(|s| (s.service.as_str(), s.node.as_str()))
        .collect();
    assert_eq!(stores, [("postgres", "node3"), ("redis", "node3")]);
    let cell = &business.cells[0];
    let run = &cell.runs[0];
    assert_eq!(run.load.success_rate, 100.0, "{:?}", run.load);
    assert!(run.load.requests > 10, "{:?}", run.load);
    let agents: Vec<_> = run.agents.iter().map(|a| a.node.clone()).collect();
    placed("business", cell.node.as_deref(), &agents);

    let took = started.elapsed();
    drop(bed);
    eprintln!(
        "three nodes: up and images in {up:?}, ladder, rate and business by {took:?}, down in {:?}",
        started.elapsed() - took
    );
    assert_nothing_left();
}

#[test]
#[ignore = "needs root, a Docker engine, iproute2 and the images: bash docker/build-offline.sh"]
fn an_agent_killed_on_its_node_is_named_and_the_bed_goes_down_clean() {
    let _turn = turn();
    let bed = Bed::up(&IMAGES);
    let killer = once_agents_run(|| {
        let ps = self::bed(&[
            "node",
            "1",
            "ps",
            "--quiet",
            "--filter",
            "label=com.docker.swarm.service.name=greet-bench_load",
        ]);
        let ids = String::from_utf8_lossy(&ps.stdout).to_string();
        ids.split_whitespace()
            .next()
            .is_some_and(|id| self::bed(&["node", "1", "kill", id]).status.success())
    });
    let out = out_dir("bed-killed");
    let run = bed.bench(
        "ladder",
        &["--concurrency", "50", "--delay-ms", "5000"],
        &out,
    );
    assert!(
        killer.join().expect("killer"),
        "no agent task was seen to kill"
    );
    ladder_failed_once(&run, &out, &["agent task greet-bench_load."]);
    let services = bed_services();
    assert_eq!(services, "", "left deployed after a failed run");
    drop(bed);
    assert_nothing_left();
}

/// Runs `then` on a thread of its own once an agent container runs on node1 and has run its
/// share for a while (the agents start 5 s after their job: the level's requests are then in
/// flight); false when none was seen within 90 s.
fn once_agents_run(then: impl FnOnce() -> bool + Send + 'static) -> std::thread::JoinHandle<bool> {
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(90);
        while Instant::now() < deadline {
            let ps = bed(&[
                "node",
                "1",
                "ps",
                "--quiet",
                "--filter",
                "label=com.docker.swarm.service.name=greet-bench_load",
            ]);
            if !String::from_utf8_lossy(&ps.stdout).trim().is_empty() {
                std::thread::sleep(Duration::from_secs(6));
                return then();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    })
}

#[test]
#[ignore = "needs root, a Docker engine, iproute2 and the images: bash docker/build-offline.sh"]
fn a_node_lost_mid_load_is_named_and_what_it_held_goes_once_it_is_back() {
    let _turn = turn();
    let bed = Bed::up(&IMAGES);
    // The server's node, cut off the switch: its engine and its tasks go on, unheard.
    let cutter = once_agents_run(|| self::bed(&["cut", "2"]).status.success());
    let out = out_dir("bed-node-lost");
    let started = Instant::now();
    let run = bed.bench(
        "ladder",
        &["--concurrency", "50", "--delay-ms", "5000"],
        &out,
    );
    let took = started.elapsed();
    assert!(cutter.join().expect("cutter"), "no agent task was seen");
    ladder_failed_once(
        &run,
        &out,
        &["node node2 was lost mid-load", "greet-bench_server.1"],
    );
    assert_eq!(bed_services(), "", "left deployed after a lost node");
    // Back on the switch, the node hears that its tasks were removed, and removes them.
    assert!(self::bed(&["mend", "2"]).status.success());
    let back = Instant::now();
    let left = until_empty(2, Duration::from_secs(90));
    assert_eq!(
        left,
        "",
        "node2 still runs containers {:?} after it came back",
        back.elapsed()
    );
    eprintln!(
        "node2 lost: the run ended {took:?} after it started; its containers gone {:?} after it \
         was back",
        back.elapsed()
    );
    drop(bed);
    assert_nothing_left();
}

#[test]
#[ignore = "needs root, a Docker engine, iproute2 and the images: bash docker/build-offline.sh"]
fn ctrl_c_mid_level_removes_what_ran_on_every_node() {
    let _turn = turn();
    let bed = Bed::up(&IMAGES);
    let out = out_dir("bed-ctrl-c");
    let child = Command::new("bash")
        .arg(script())
        .args(["run", BENCH, "ladder"])
        .args(["--quiet", "--swarm", "--agents", "2", "--servers", "hyper"])
        .args(["--concurrency", "50", "--delay-ms", "5000"])
        .args(["--out", out.to_str().expect("utf-8 path")])
        .args(bin_dir_args())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash runs");
    // `run` execs the harness in node1's network namespace: the child is greet-bench.
    let pid = child.id().to_string();
    let interrupter = once_agents_run(move || {
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .is_ok_and(|s| s.success())
    });
    let run = child.wait_with_output().expect("greet-bench ends");
    assert!(
        interrupter.join().expect("interrupter"),
        "no agent task was seen"
    );
    let said = said(&run);
    assert_eq!(run.status.code(), Some(130), "{said}");
    let results = results(&out.join("results.json"));
    let incomplete = results.incomplete.expect("marked incomplete");
    assert_eq!(incomplete.signal, "SIGINT");
    assert_eq!(bed_services(), "", "left deployed after Ctrl-C");
    for node in ["1", "2", "3"] {
        let left = until_empty(node.parse().expect("a number"), Duration::from_secs(30));
        assert_eq!(left, "", "node{node} still runs containers after Ctrl-C");
    }
    drop(bed);
    assert_nothing_left();
}

/// Node `node`'s containers, once none is left or `limit` has passed.
fn until_empty(node: usize, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    loop {
        let ps = bed(&["node", &node.to_string(), "ps", "--all", "--quiet"]);
        let left = String::from_utf8_lossy(&ps.stdout).trim().to_owned();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The services still deployed on the bed's swarm, and the networks of the run's stacks.
fn bed_services() -> String {
    let text = |args: &[&str]| String::from_utf8_lossy(&bed(args).stdout).trim().to_owned();
    let services = text(&["node", "1", "service", "ls", "--quiet"]);
    let networks = text(&[
        "node",
        "1",
        "network",
        "ls",
        "--quiet",
        "--filter",
        "name=greet-bench",
    ]);
    format!("{services} {networks}").trim().to_owned()
}

/// No namespace, state directory or control group of the bed's is left on this host.
fn assert_nothing_left() {
    let namespaces = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip runs");
    let namespaces = String::from_utf8_lossy(&namespaces.stdout);
    assert!(
        !namespaces.contains("greet-bed-"),
        "namespaces left: {namespaces}"
    );
    assert!(!Path::new("/var/lib/greet-bed").exists(), "state left");
    let groups = Command::new("find")
        .args(["/sys/fs/cgroup", "-maxdepth", "3", "-name", "greet-bed-*"])
        .output()
        .expect("find runs");
    assert_eq!(
        String::from_utf8_lossy(&groups.stdout).trim(),
        "",
        "control groups left"
    );
}
