//! PostgreSQL and Redis beside the servers, as compose.yaml runs them: one definition for the
//! swarm's stores' stack and the Kubernetes manifests, and the URLs the servers reach them at
//! by name on their network. Readying them for a scenario is `provision`'s.

/// PostgreSQL as the servers reach it beside them (compose, a swarm stack, a cluster).
pub const DATABASE_URL: &str = "postgres://greet:greet@postgres:5432/greet";
/// Redis as the servers reach it beside them.
pub const REDIS_URL: &str = "redis://redis:6379";

/// The stores' own settings, as compose.yaml's.
pub const POSTGRES_ENV: [(&str, &str); 3] = [
    ("POSTGRES_USER", "greet"),
    ("POSTGRES_PASSWORD", "greet"),
    ("POSTGRES_DB", "greet"),
];

/// Redis as compose.yaml runs it: bounded memory, least recently used keys evicted.
pub const REDIS_ARGS: [&str; 9] = [
    "redis-server",
    "--bind",
    "0.0.0.0",
    "--protected-mode",
    "no",
    "--maxmemory",
    "64mb",
    "--maxmemory-policy",
    "allkeys-lru",
];
