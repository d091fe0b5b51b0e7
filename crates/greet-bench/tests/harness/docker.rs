//! Containers beyond the host's network, where a Docker engine answers and the images are
//! built (`docker/build-offline.sh`; `.ci/run` builds them before the tests): on a user-defined
//! network, loaded at their address there, sampled through the engine's stats beside /proc.
//! `#[ignore]`d, since they need both: `cargo test -- --include-ignored` runs them.

use std::process::Command;

use crate::common::{assert_one_line_exit, out_dir, results, BENCH};
use greet_model::results::{Mode, SampledBy};

fn docker(args: &[&str]) -> bool {
    Command::new("docker")
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A network that is removed when the test ends, passed or not.
struct Network(String);

impl Drop for Network {
    fn drop(&mut self) {
        let _ = docker(&["network", "rm", &self.0]);
    }
}

/// The engine and the image these tests need, or a panic that says how to get them.
fn engine_and_image() {
    assert!(
        docker(&["info"]),
        "no Docker engine answers (docker info): install and start Docker"
    );
    assert!(
        docker(&["image", "inspect", "greet-hyper:latest"]),
        "no greet-hyper image: bash docker/build-offline.sh"
    );
}

#[test]
#[ignore = "needs a Docker engine and the images: bash docker/build-offline.sh"]
fn containers_on_a_network_are_loaded_by_address_and_sampled_by_the_engine() {
    // What runs without an engine is in ladder.rs (`--docker` says there is none).
    engine_and_image();
    let network = Network(format!("greet-bench-test-{}", std::process::id()));
    assert!(
        docker(&["network", "create", &network.0]),
        "network created"
    );
    let out = out_dir("docker-network");
    let output = Command::new(BENCH)
        .args(["--quiet", "--docker", "--docker-network", &network.0])
        .args([
            "--servers",
            "hyper",
            "--concurrency",
            "10,50",
            "--delay-ms",
            "300",
        ])
        .args(["--out", out.to_str().expect("utf-8")])
        .output()
        .expect("greet-bench runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let ladder = results(&out.join("results.json"))
        .sections
        .ladder
        .expect("ladder");
    assert_eq!(ladder.mode, Mode::Docker);
    let server = &ladder.servers[0];
    let addr = server.addr.as_deref().expect("the address loaded");
    assert!(
        !addr.starts_with("127."),
        "loaded on the network, not loopback: {addr}"
    );
    assert!(addr.ends_with(":8080"), "{addr}");
    for level in &server.levels {
        let run = &level.run;
        assert_eq!(run.load.success_rate, 100.0, "{run:?}");
        // The container's process is this host's: /proc samples it, and the engine too.
        assert_eq!(run.server.from, Some(SampledBy::Proc), "{run:?}");
        let engine = run.engine.as_ref().expect("the engine's figures");
        assert_eq!(engine.from, Some(SampledBy::DockerStats));
        let (proc_threads, engine_threads) = (
            run.server.threads_max.expect("proc threads"),
            engine.threads_max.expect("engine tasks"),
        );
        // The engine counts the container's tasks: the server's threads.
        assert!(
            proc_threads.abs_diff(engine_threads) <= 1,
            "{proc_threads} {engine_threads}"
        );
        assert!(engine.rss_max_mib.is_some_and(|m| m > 0.0), "{engine:?}");
        assert!(engine.cpu_max_pct.is_some(), "{engine:?}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
#[ignore = "needs a Docker engine and the images: bash docker/build-offline.sh"]
fn a_missing_network_is_one_line() {
    engine_and_image();
    let out = out_dir("docker-no-network");
    let output = Command::new(BENCH)
        .args([
            "--quiet",
            "--docker",
            "--docker-network",
            "no-such-network-here",
        ])
        .args(["--servers", "hyper", "--concurrency", "5"])
        .args(["--out", out.to_str().expect("utf-8")])
        .output()
        .expect("greet-bench runs");
    let stderr = assert_one_line_exit(&output, 1);
    assert!(
        stderr.contains("docker network create no-such-network-here"),
        "{stderr}"
    );
}
