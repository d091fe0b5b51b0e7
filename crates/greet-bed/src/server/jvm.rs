//! The original experiment's servers as peers: the Greetings API on embedded Tomcat 10 and
//! Jetty 9 (`peers/jvm`), compiled with the machine's JDK against Debian's jars and started
//! like the workspace's servers (same flags, same start-up line, same signals).
//!
//! What cannot be had is said in one line, with what to install: the run goes on without them.

use std::path::{Path, PathBuf};
use std::process::Command;

use greet_launch::process::which;

/// The Debian packages the peers need.
pub const PACKAGES: &str =
    "default-jdk-headless libtomcat10-embed-java libjetty9-java libjakarta-annotation-api-java";

/// Where Debian puts its Java libraries.
const JARS: &str = "/usr/share/java";

/// The jars each peer runs on, and its main class.
fn runtime(short: &str) -> Option<(&'static [&'static str], &'static str)> {
    match short {
        "tomcat" => Some((
            &["tomcat10-embed-core.jar", "jakarta-annotation-api.jar"],
            "greet.peers.TomcatMain",
        )),
        "jetty" => Some((
            &[
                "jetty9-server.jar",
                "jetty9-http.jar",
                "jetty9-io.jar",
                "jetty9-util.jar",
                "servlet-api.jar",
            ],
            "greet.peers.JettyMain",
        )),
        _ => None,
    }
}

/// The compiled peers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peers {
    classes: PathBuf,
}

impl Peers {
    /// Compiles `sources` (the workspace's `peers/jvm/src`) into `out` when they are newer than
    /// what is there; an error is one line saying what is missing.
    pub fn build(sources: &Path, out: &Path) -> Result<Self, String> {
        let javac = which("javac", []).ok_or_else(|| {
            format!("no JDK (javac is not on PATH): apt-get install -y {PACKAGES}")
        })?;
        if which("java", []).is_none() {
            return Err(format!("no java on PATH: apt-get install -y {PACKAGES}"));
        }
        let mut jars: Vec<&str> = Vec::new();
        for short in greet_model::plan::PEERS {
            jars.extend(runtime(short).map(|(j, _)| j).unwrap_or_default());
        }
        let missing: Vec<&str> = jars
            .iter()
            .copied()
            .filter(|j| !Path::new(JARS).join(j).is_file())
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "{} not in {JARS}: apt-get install -y {PACKAGES}",
                missing.join(", ")
            ));
        }
        let files: Vec<PathBuf> = std::fs::read_dir(sources.join("greet/peers"))
            .map_err(|e| format!("no peer sources in {}: {e}", sources.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "java"))
            .collect();
        let classes = out.join("classes");
        let stamp = out.join("built");
        if !newer(&files, &stamp) {
            return Ok(Self { classes });
        }
        std::fs::create_dir_all(&classes).map_err(|e| format!("{}: {e}", classes.display()))?;
        let cp = classpath(&jars);
        let output = Command::new(javac)
            .args(["-nowarn", "-encoding", "UTF-8", "-d"])
            .arg(&classes)
            .args(["-cp", &cp])
            .args(&files)
            .output()
            .map_err(|e| format!("cannot run javac: {e}"))?;
        if !output.status.success() {
            let err = String::from_utf8_lossy(&output.stderr);
            let first = err
                .lines()
                .find(|l| l.contains("error"))
                .unwrap_or("failed");
            return Err(format!("javac: {first}"));
        }
        std::fs::write(&stamp, "").map_err(|e| format!("{}: {e}", stamp.display()))?;
        Ok(Self { classes })
    }

    /// How to start peer `short`: `java` and what comes before the server's flags.
    pub fn launch(&self, short: &str) -> Option<(PathBuf, Vec<String>)> {
        let (jars, main) = runtime(short)?;
        let cp = format!("{}:{}", self.classes.display(), classpath(jars));
        Some((which("java", [])?, vec!["-cp".into(), cp, main.into()]))
    }
}

fn classpath(jars: &[&str]) -> String {
    jars.iter()
        .map(|j| format!("{JARS}/{j}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Whether any of `files` is newer than `stamp` (or there is no stamp).
fn newer(files: &[PathBuf], stamp: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match modified(stamp) {
        None => true,
        Some(built) => files.iter().any(|f| modified(f).is_none_or(|m| m > built)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_peer_has_a_runtime() {
        for short in greet_model::plan::PEERS {
            assert!(runtime(short).is_some(), "{short}");
        }
        assert!(runtime("axum").is_none());
    }
}
