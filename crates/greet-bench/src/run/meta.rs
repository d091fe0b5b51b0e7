//! What a run records of itself: the machine and its CPUs, the kernel, the crates' versions,
//! the commit it was built from, when it started (UTC, from the system clock alone).

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use greet_probe::procfs;

use crate::harness::Harness;
use crate::scenario::Planned;
use greet_bed::server::workspace_root;
use greet_model::results::{Cpus, Meta};
use greet_stats::paired;

pub(super) fn meta(harness: &Harness, scenarios: &[Planned]) -> Meta {
    let (machine, kernel) = procfs::host_and_kernel();
    let crate_versions: BTreeMap<String, String> = env!("GREET_CRATE_VERSIONS")
        .split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    Meta {
        machine,
        cpus: Cpus {
            count: harness.cpus.len(),
            model: procfs::cpu_model(),
            server: harness.server_cpus.clone(),
            load: harness.load_cpus.clone(),
            stores: harness.store_cpus().to_vec(),
        },
        kernel,
        crate_versions,
        scenarios: scenarios
            .iter()
            .map(|s| s.kind().name().to_owned())
            .collect(),
        comparison_method: paired::METHOD.to_owned(),
        band: harness.band(),
        started_at: rfc3339(SystemTime::now()),
        commit: commit(),
        rustc: Some(env!("GREET_RUSTC").to_owned()).filter(|v| !v.is_empty()),
    }
}

/// `git rev-parse --short HEAD` of the workspace this harness was built from, `+dirty` with
/// uncommitted changes; none without git or the workspace.
fn commit() -> Option<String> {
    let root = workspace_root()?;
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(args)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let head = git(&["rev-parse", "--short", "HEAD"]).filter(|h| !h.is_empty())?;
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(if dirty { format!("{head}+dirty") } else { head })
}

/// `YYYY-MM-DDTHH:MM:SSZ` for `t`.
pub(crate) fn rfc3339(t: SystemTime) -> String {
    let (date, secs) = civil(t);
    format!(
        "{date}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// `YYYYMMDDTHHMMSSZ` for now: the default results directory.
pub(super) fn timestamp_dir() -> String {
    let (date, secs) = civil(SystemTime::now());
    format!(
        "{}T{:02}{:02}{:02}Z",
        date.replace('-', ""),
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The UTC date `YYYY-MM-DD` and seconds into that day (Howard Hinnant's civil-from-days).
fn civil(t: SystemTime) -> (String, u64) {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (format!("{year:04}-{month:02}-{day:02}"), secs % 86_400)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_utc_times() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_796_003_633);
        assert_eq!(rfc3339(t), "2026-11-30T01:53:53Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00Z");
    }
}
