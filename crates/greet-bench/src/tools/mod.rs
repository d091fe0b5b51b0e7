//! The small programs beside the scenarios, one a file: `compare` (two runs side by side),
//! `report` (a run drawn again), `check` (running servers against the contract), `merge`
//! (agents' reports as one level) and `kube` (one level as Kubernetes manifests). Each returns an [`Outcome`], which the CLI
//! turns into an exit code.

pub(crate) mod check;
pub(crate) mod compare;
pub(crate) mod kube;
pub(crate) mod merge;
pub(crate) mod report;

/// How a small program ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It did its work.
    Done,
    /// It failed (what failed is said on stderr).
    Failed,
    /// Bad usage: one line, as its reason.
    Usage(String),
    /// A `--threshold` was breached.
    Breached,
}
