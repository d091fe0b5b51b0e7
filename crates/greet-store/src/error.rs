//! [`StoreError`]: why the stores cannot be used.

use std::fmt;

/// Why the stores cannot be used: one line for a person, and whose doing it is, so that a
/// server can choose its exit code (2 for flags that do not fit, 1 for a store that does not
/// come up).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// Settings that do not fit together: `--store postgres` without a PostgreSQL URL, a URL
    /// of the other kind, a zero timeout.
    Settings(String),
    /// A store that cannot be reached, opened or seeded.
    Unavailable(String),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Settings(why) | Self::Unavailable(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for StoreError {}
