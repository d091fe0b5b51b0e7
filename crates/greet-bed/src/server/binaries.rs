//! Where server programs come from: the workspace's release binaries (built when missing and
//! the workspace is there), a directory, `PATH`, the JVM peers, or the machine's nginx. A
//! server with build knobs (`axum+mimalloc`) runs a build of its own, made once into
//! `target/knobs/<build>` and reused. What a build weighs is read here too: a binary's size
//! stripped, and the crates it depends on (the cost scenario's "what choosing the crate
//! costs").

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use greet_launch::process::which;
use greet_server::Knob;

use crate::server::jvm::Peers;
use crate::server::nginx::Nginx;
use greet_model::plan::{binary, build_of, is_peer, knobs_of, package, Bins, ANCHOR, KNOB_MARK};

/// Where server binaries are looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Where {
    /// In this directory.
    Dir(PathBuf),
    /// Beside the harness, then on `PATH` (an installed harness).
    Search,
}

/// A program that becomes a server when given the server flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The executable.
    pub path: PathBuf,
    /// Arguments before the server flags (`-cp … Main` for a JVM peer); all its arguments
    /// when it listens where its configuration says.
    pub leading: Vec<String>,
    /// Where its configuration has it listen (nginx): it takes no server flags and logs no
    /// address.
    pub at: Option<SocketAddr>,
}

impl Program {
    /// This program run under `prefix` (`valgrind --tool=…`, `perf stat … --`): the prefix's
    /// first word is what runs, the rest and this program its arguments.
    pub fn wrapped(&self, prefix: &[String]) -> Program {
        let Some((first, rest)) = prefix.split_first() else {
            return self.clone();
        };
        let mut leading = rest.to_vec();
        leading.push(self.path.display().to_string());
        leading.extend(self.leading.iter().cloned());
        Program {
            path: which(first, []).unwrap_or_else(|| PathBuf::from(first)),
            leading,
            at: self.at,
        }
    }
}

/// Where the servers of a run come from: the workspace's binaries, the JVM peers and nginx
/// when the run has them.
#[derive(Debug, PartialEq, Eq)]
pub struct Binaries {
    /// The workspace's server binaries.
    pub rust: Where,
    /// Where the builds with build knobs are (`target/knobs`), or why there are none.
    pub builds: Result<PathBuf, String>,
    /// The compiled JVM peers, or why there are none.
    pub peers: Result<Peers, String>,
    /// The machine's nginx, or why there is none.
    pub nginx: Result<Nginx, String>,
}

impl Binaries {
    /// Where the binaries of `shorts` are, building them first when `bins` says so and the
    /// harness runs from its workspace's target directory; the JVM peers among `shorts` are
    /// compiled with the machine's JDK.
    pub fn prepare(bins: &Bins, shorts: &[String], quiet: bool) -> Result<Self> {
        let (peers, rust): (Vec<String>, Vec<String>) = shorts
            .iter()
            .filter(|s| *s != ANCHOR)
            .cloned()
            .partition(|s| is_peer(s));
        let peers = if peers.is_empty() {
            Err("no JVM peer was asked for".to_owned())
        } else {
            build_peers()
        };
        let nginx = if shorts.iter().any(|s| s == ANCHOR) {
            Nginx::find()
        } else {
            Err("nginx was not asked for".to_owned())
        };
        let (built, rust): (Vec<String>, Vec<String>) =
            rust.into_iter().partition(|s| build_of(s).is_some());
        let target = workspace_target_dir();
        let builds = match (bins, &target) {
            (Bins::Dir(_), _) | (_, None) => Err(
                "a build knob is built by greet-bench run from its workspace (cargo run -p \
                 greet-bench), into target/knobs"
                    .to_owned(),
            ),
            (_, Some(target)) => Ok(target.join("knobs")),
        };
        let rust = match (bins, target) {
            (Bins::Dir(dir), _) => Where::Dir(dir.clone()),
            (_, None) => Where::Search,
            (bins, Some(target)) => {
                if *bins == Bins::Build && !rust.is_empty() {
                    if !quiet {
                        eprintln!(
                            "greet-bench: building the release servers ({})",
                            rust.join(", ")
                        );
                    }
                    build(build_command(&rust), quiet)?;
                }
                Where::Dir(target.join("release"))
            }
        };
        if let (Bins::Build, Ok(dir)) = (bins, &builds) {
            for (knobs, shorts) in by_build(&built) {
                if !quiet {
                    eprintln!(
                        "greet-bench: building the release servers with {knobs} ({}) in {} \
                         (minutes the first time, then reused)",
                        shorts.join(", "),
                        dir.join(&knobs).display()
                    );
                }
                build(knobs_build_command(&knobs, &shorts, dir), quiet)?;
            }
        }
        Ok(Self {
            rust,
            builds,
            peers,
            nginx,
        })
    }

    /// How to start server `short`, or an error that says how to get it.
    pub fn locate(&self, short: &str) -> Result<Program> {
        if is_peer(short) {
            let peers = self
                .peers
                .as_ref()
                .map_err(|why| anyhow::anyhow!("skipped: {why}"))?;
            let (path, leading) = peers
                .launch(short)
                .with_context(|| format!("{} cannot be launched", package(short)))?;
            return Ok(Program {
                path,
                leading,
                at: None,
            });
        }
        if short == ANCHOR {
            let nginx = self
                .nginx
                .as_ref()
                .map_err(|why| anyhow::anyhow!("skipped: {why}"))?;
            let (path, leading, at) = nginx.prepare().map_err(anyhow::Error::msg)?;
            return Ok(Program {
                path,
                leading,
                at: Some(at),
            });
        }
        let path = match build_of(short) {
            None => self.rust.locate(short)?,
            Some(build) => {
                let dir = self.builds.as_ref().map_err(|why| {
                    anyhow::anyhow!("{} runs a build of its own: {why}", package(short))
                })?;
                let path = dir.join(&build).join("release").join(binary(short));
                if !path.is_file() {
                    bail!(
                        "{} not found: greet-bench builds it unless --no-build is given",
                        path.display()
                    );
                }
                path
            }
        };
        Ok(Program {
            path,
            leading: Vec::new(),
            at: None,
        })
    }
}

/// The servers of `shorts` grouped by their build (`mimalloc+fat-lto`), each a set of
/// binaries: `hyper+mimalloc` and `hyper+mimalloc+pipeline-flush` run one binary.
fn by_build(shorts: &[String]) -> Vec<(String, Vec<String>)> {
    let mut builds: Vec<(String, Vec<String>)> = Vec::new();
    for short in shorts {
        let Some(build) = build_of(short) else {
            continue;
        };
        let binary = binary(short);
        match builds.iter_mut().find(|(b, _)| *b == build) {
            Some((_, binaries)) if binaries.contains(&binary) => {}
            Some((_, binaries)) => binaries.push(binary),
            None => builds.push((build, vec![binary])),
        }
    }
    builds
}

/// The cargo command that builds `binaries` with the build knobs of `knobs`
/// (`mimalloc+fat-lto`) into `dir/<knobs>`, as the harness runs it from its workspace (none
/// without one).
fn knobs_build_command(knobs: &str, binaries: &[String], dir: &Path) -> Option<Command> {
    let root = workspace_root()?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args(["build", "--release", "--target-dir"])
        .arg(dir.join(knobs));
    for binary in binaries {
        cmd.args(["-p", binary]);
    }
    for knob in knobs.split(KNOB_MARK).filter_map(Knob::named) {
        cmd.args(knob.cargo_args());
    }
    without_cargo_run_env(&mut cmd);
    Some(cmd)
}

/// Compiles the JVM peers from the workspace's `peers/jvm` into its target directory.
fn build_peers() -> Result<Peers, String> {
    let root = workspace_root().ok_or_else(|| {
        "the JVM peers are compiled from the workspace's peers/jvm: run greet-bench from the \
         workspace"
            .to_owned()
    })?;
    let out = workspace_target_dir()
        .unwrap_or_else(|| root.join("target"))
        .join("jvm");
    Peers::build(&root.join("peers/jvm/src"), &out)
}

impl Where {
    /// The path of server `short`'s binary, or an error that says how to get it.
    pub fn locate(&self, short: &str) -> Result<PathBuf> {
        let name = binary(short);
        match self {
            Self::Dir(dir) => {
                let path = dir.join(&name);
                if path.is_file() {
                    Ok(path)
                } else {
                    bail!(
                        "{name} not found in {}: build it with `cargo build --release -p {name}`",
                        dir.display()
                    )
                }
            }
            Self::Search => {
                let beside = std::env::current_exe()
                    .ok()
                    .and_then(|exe| exe.parent().map(Path::to_path_buf));
                which(&name, beside).with_context(|| {
                    format!(
                        "{name} is neither beside greet-bench nor on PATH: install it \
                             (`cargo install --path crates/{name}`) or pass --bin-dir DIR"
                    )
                })
            }
        }
    }
}

/// The target directory the harness was built into, when it runs from there and its
/// workspace is still where it was built: cargo marks a target directory with CACHEDIR.TAG.
fn workspace_target_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let target = exe.parent()?.parent()?;
    (target.join("CACHEDIR.TAG").is_file() && workspace_root().is_some())
        .then(|| target.to_path_buf())
}

/// The workspace this harness was built from, if it is still there.
pub fn workspace_root() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.join("Cargo.toml").is_file().then_some(root)
}

/// Runs cargo's build `cmd` (a no-op when what it builds is fresh; none without the
/// workspace); cargo's own progress goes to stderr.
fn build(cmd: Option<Command>, quiet: bool) -> Result<()> {
    let Some(mut cmd) = cmd else {
        return Ok(());
    };
    if quiet {
        cmd.arg("--quiet");
    }
    let status = cmd
        .status()
        .context("cannot run cargo to build the servers")?;
    if !status.success() {
        bail!("building the servers failed ({status})");
    }
    Ok(())
}

/// The harness's package, whose selection the servers' build joins.
const HARNESS: &str = "greet-bench";

/// The cargo command that builds the release binaries of `shorts`, as the harness runs it
/// from its workspace (none without one). The harness is named too: the same selection as
/// `cargo run -p greet-bench` resolves the same features, so nothing it compiled is compiled
/// again (the harness depends on the servers' libraries for that). And cargo is given the
/// environment a shell would: not what `cargo run` set for the harness
/// (`without_cargo_run_env`).
pub fn build_command(shorts: &[String]) -> Option<Command> {
    let root = workspace_root()?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args(["build", "--release", "-p", HARNESS]);
    let mut packages: Vec<String> = shorts.iter().map(|s| binary(s)).collect();
    packages.sort_unstable();
    packages.dedup();
    for package in &packages {
        cmd.args(["-p", package]);
    }
    without_cargo_run_env(&mut cmd);
    Some(cmd)
}

/// Clears from `cmd`'s environment what `cargo run` (and `cargo test`) set for the program
/// they run: its package's name, version and manifest, its build script's `OUT_DIR`. Build
/// scripts declare some of them with `rerun-if-env-changed` (ring does `CARGO_PKG_NAME` and
/// `CARGO_MANIFEST_DIR`), and cargo compares them with its own environment: a cargo started
/// with the harness's values would rebuild ring and everything above it, and the next cargo
/// started from a shell would rebuild it all again.
pub fn without_cargo_run_env(cmd: &mut Command) {
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        let set_by_cargo_run = name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_BIN_EXE_")
            || [
                "CARGO_MANIFEST_DIR",
                "CARGO_MANIFEST_PATH",
                "CARGO_CRATE_NAME",
                "CARGO_BIN_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "OUT_DIR",
            ]
            .contains(&name);
        if set_by_cargo_run {
            cmd.env_remove(name);
        }
    }
}

/// The size of `binary` once stripped of its symbols, as it would ship: a copy stripped.
pub fn stripped_size(binary: &Path) -> Result<u64> {
    let copy = std::env::temp_dir().join(format!("greet-bench-strip-{}", std::process::id()));
    std::fs::copy(binary, &copy).context("copy the binary")?;
    let stripped = std::process::Command::new("strip")
        .arg(&copy)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    let size = std::fs::metadata(&copy).map(|m| m.len());
    let _ = std::fs::remove_file(&copy);
    if !stripped {
        bail!("strip (binutils) did not run");
    }
    Ok(size?)
}

/// The crates server `short`'s binary depends on, once each: its normal dependencies as cargo
/// resolves them with its build knobs, the workspace's own crates left out; none outside its
/// workspace.
pub fn dependencies(short: &str) -> Option<usize> {
    let root = workspace_root()?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let package = binary(short);
    let out = std::process::Command::new(cargo)
        .current_dir(root)
        .args([
            "tree", "--locked", "--edges", "normal", "--prefix", "none", "-p", &package,
        ])
        .args(build_args(short))
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut crates: Vec<&str> = text
        .lines()
        // The workspace's own crates are shown with their path.
        .filter(|l| !l.contains(" (/"))
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            Some(words.next()?).filter(|_| words.next().is_some())
        })
        .collect();
    crates.sort_unstable();
    crates.dedup();
    Some(crates.len())
}

/// What cargo is given to build server `short` with its build knobs.
pub fn build_args(short: &str) -> Vec<&'static str> {
    knobs_of(short)
        .into_iter()
        .filter_map(Knob::named)
        .flat_map(Knob::cargo_args)
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_binary_says_how_to_get_it() {
        let err = Where::Dir(PathBuf::from("/nonexistent"))
            .locate("axum")
            .unwrap_err()
            .to_string();
        assert!(err.contains("cargo build --release -p greet-axum"), "{err}");
        let err = Where::Search
            .locate("no-such-server")
            .unwrap_err()
            .to_string();
        assert!(err.contains("--bin-dir") && err.contains("PATH"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        let none = Binaries {
            rust: Where::Search,
            builds: Err("not from the workspace".into()),
            peers: Err("no JDK".into()),
            nginx: Err("no nginx".into()),
        };
        let err = none.locate("tomcat").unwrap_err().to_string();
        assert_eq!(err, "skipped: no JDK");
        let err = none.locate("nginx").unwrap_err().to_string();
        assert_eq!(err, "skipped: no nginx");
        let err = none.locate("axum+mimalloc").unwrap_err().to_string();
        assert_eq!(
            err,
            "greet-axum+mimalloc runs a build of its own: not from the workspace"
        );
    }

    #[test]
    fn a_build_with_knobs_has_its_own_target_directory() {
        let dir = Path::new("/t/knobs");
        let cmd = knobs_build_command("mimalloc+panic-abort", &["greet-axum".into()], dir)
            .expect("run from the workspace");
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let want = [
            "build",
            "--release",
            "--target-dir",
            "/t/knobs/mimalloc+panic-abort",
            "-p",
            "greet-axum",
            "--features",
            "greet-server/mimalloc",
            "--config",
            "profile.release.panic=\"abort\"",
        ];
        assert_eq!(args, want);
    }

    #[test]
    fn one_build_per_set_of_build_knobs() {
        let shorts: Vec<String> = [
            "hyper+mimalloc",
            "hyper+pipeline-flush+mimalloc",
            "axum+mimalloc",
            "axum+fat-lto",
            "actix",
        ]
        .map(String::from)
        .into();
        let builds = by_build(&shorts);
        let want = [
            ("mimalloc", vec!["greet-hyper", "greet-axum"]),
            ("fat-lto", vec!["greet-axum"]),
        ];
        assert_eq!(builds.len(), want.len(), "{builds:?}");
        for ((build, binaries), (want_build, want_binaries)) in builds.iter().zip(want) {
            assert_eq!(
                (build.as_str(), binaries.clone()),
                (
                    want_build,
                    want_binaries
                        .into_iter()
                        .map(String::from)
                        .collect::<Vec<_>>()
                )
            );
        }
    }
}
