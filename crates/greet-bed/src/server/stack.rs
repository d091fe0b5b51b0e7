//! Docker Swarm stack files as typed values (compose format 3.8, what `docker stack deploy`
//! reads), written by a serializer: the server's stack and the stores' stack.

use std::collections::BTreeMap;

use serde::Serialize;

use super::container::CONTAINER_MEMORY;
use super::stores::{POSTGRES_ENV, REDIS_ARGS};

/// The server's name on its stack's network, by which the agents reach it.
pub const SERVER_HOST: &str = "server";
/// The stores' images, as docker/build-offline.sh tags them.
pub(super) const STORE_IMAGES: [&str; 2] = ["postgres:15", "redis:7"];

/// A stack file.
#[derive(Debug, Serialize)]
pub(super) struct StackFile {
    version: &'static str,
    services: BTreeMap<&'static str, Service>,
    networks: BTreeMap<&'static str, Network>,
}

#[derive(Debug, Serialize)]
struct Service {
    image: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    command: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    environment: BTreeMap<&'static str, String>,
    healthcheck: Healthcheck,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ports: Vec<Port>,
    networks: Vec<&'static str>,
    deploy: Deploy,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Healthcheck {
    /// The image's own check off: it would probe the server mid-level.
    Off { disable: bool },
    /// Ready once this passes.
    Test {
        test: Vec<String>,
        interval: &'static str,
        timeout: &'static str,
        retries: u32,
    },
}

#[derive(Debug, Serialize)]
struct Port {
    target: u16,
    published: u16,
    protocol: &'static str,
    mode: &'static str,
}

#[derive(Debug, Serialize)]
struct Deploy {
    replicas: u32,
    endpoint_mode: &'static str,
    restart_policy: RestartPolicy,
    #[serde(skip_serializing_if = "Option::is_none")]
    placement: Option<Placement>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resources: Option<Resources>,
}

impl Deploy {
    /// One task, never restarted, reached by name at its own address (dnsrr: no virtual IP
    /// and IPVS in the path), on nodes matching `constraint` when there is one.
    fn one(constraint: Option<&str>, resources: Option<Resources>) -> Self {
        Self {
            replicas: 1,
            endpoint_mode: "dnsrr",
            restart_policy: RestartPolicy { condition: "none" },
            placement: constraint.map(|c| Placement {
                constraints: vec![c.to_owned()],
            }),
            resources,
        }
    }
}

#[derive(Debug, Serialize)]
struct RestartPolicy {
    condition: &'static str,
}

#[derive(Debug, Serialize)]
struct Placement {
    constraints: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Resources {
    limits: Limits,
}

#[derive(Debug, Serialize)]
struct Limits {
    cpus: &'static str,
    memory: String,
}

#[derive(Debug, Default, Serialize)]
struct Network {
    #[serde(skip_serializing_if = "Option::is_none")]
    driver: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attachable: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    external: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
}

impl Network {
    /// The stack's own overlay network, which other tasks (the agents' job) may join.
    fn own() -> Self {
        Self {
            driver: Some("overlay"),
            attachable: Some(true),
            ..Self::default()
        }
    }
}

impl StackFile {
    /// The stack of a server: `image` run with `args`, published on `port` of its node (mode
    /// host: no routing mesh between the harness's checks and the server), with compose.yaml's
    /// limits, on the stack's network and, when given, on `join` (the stores' network);
    /// placed by `constraint`.
    pub(super) fn server(
        image: &str,
        args: &[String],
        port: u16,
        (constraint, join): (Option<&str>, Option<&str>),
    ) -> Self {
        let environment = BTreeMap::from([
            ("HOST", "0.0.0.0".to_owned()),
            ("PORT", "8080".to_owned()),
            ("RUST_LOG", "info".to_owned()),
        ]);
        let limits = Limits {
            cpus: "1",
            memory: CONTAINER_MEMORY
                .to_uppercase()
                .trim_end_matches('B')
                .to_owned(),
        };
        let server = Service {
            image: image.to_owned(),
            command: args.to_vec(),
            environment,
            healthcheck: Healthcheck::Off { disable: true },
            ports: vec![Port {
                target: 8080,
                published: port,
                protocol: "tcp",
                mode: "host",
            }],
            networks: if join.is_some() {
                vec!["net", "stores"]
            } else {
                vec!["net"]
            },
            deploy: Deploy::one(constraint, Some(Resources { limits })),
        };
        let mut networks = BTreeMap::from([("net", Network::own())]);
        if let Some(join) = join {
            let external = Network {
                external: Some(true),
                name: Some(join.to_owned()),
                ..Network::default()
            };
            networks.insert("stores", external);
        }
        Self {
            version: "3.8",
            services: BTreeMap::from([(SERVER_HOST, server)]),
            networks,
        }
    }

    /// The stores' stack: PostgreSQL and Redis as compose.yaml runs them (on nodes matching
    /// `constraint` when given), each ready once its health check passes.
    pub(super) fn stores(constraint: Option<&str>) -> Self {
        let health = |test: &[&str]| Healthcheck::Test {
            test: test.iter().map(|s| (*s).to_owned()).collect(),
            interval: "250ms",
            timeout: "2s",
            retries: 240,
        };
        let store = |image: &str, command: &[&str], environment, healthcheck| Service {
            image: image.to_owned(),
            command: command.iter().map(|s| (*s).to_owned()).collect(),
            environment,
            healthcheck,
            ports: Vec::new(),
            networks: vec!["net"],
            deploy: Deploy::one(constraint, None),
        };
        let postgres = store(
            STORE_IMAGES[0],
            &[],
            POSTGRES_ENV
                .iter()
                .map(|(k, v)| (*k, (*v).to_owned()))
                .collect(),
            health(&["CMD", "pg_isready", "-U", "greet", "-d", "greet"]),
        );
        let redis = store(
            STORE_IMAGES[1],
            &REDIS_ARGS,
            BTreeMap::new(),
            health(&["CMD", "redis-cli", "ping"]),
        );
        Self {
            version: "3.8",
            services: BTreeMap::from([("postgres", postgres), ("redis", redis)]),
            networks: BTreeMap::from([("net", Network::own())]),
        }
    }

    /// The file, as YAML.
    pub(super) fn yaml(&self) -> String {
        yaml(self)
    }
}

/// `value` as YAML that YAML 1.1 readers read as it was written too. yaml_serde writes YAML
/// 1.2, where `no`, `yes`, `on` and `off` are strings, and leaves them unquoted; kubectl
/// (go-yaml v2), PyYAML and docker-compose 1.x read YAML 1.1, where they are booleans (Redis's
/// `--protected-mode no` would reach a container as `false`). Those plain values are quoted.
pub fn yaml(value: &impl Serialize) -> String {
    // Plain strings, numbers and maps: they always serialize.
    let text = yaml_serde::to_string(value).unwrap_or_default();
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.lines() {
        out.push_str(&quote_yaml11_bool(line));
        out.push('\n');
    }
    out
}

/// The line with its plain scalar value quoted when YAML 1.1 alone would read it as a
/// boolean: a sequence item (`- no`) or a mapping value (`key: off`).
fn quote_yaml11_bool(line: &str) -> String {
    // YAML 1.2's booleans (true, false) come out quoted when they are strings: only the
    // words YAML 1.1 alone reads as booleans are left plain.
    const BOOLS: [&str; 16] = [
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off",
        "OFF",
    ];
    let value_at = if let Some(at) = line.find(": ") {
        Some(at + 2)
    } else {
        let item = line.trim_start();
        item.strip_prefix("- ").map(|_| line.len() - item.len() + 2)
    };
    match value_at {
        Some(at) if BOOLS.contains(&&line[at..]) => format!("{}'{}'", &line[..at], &line[at..]),
        _ => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn read(file: &StackFile) -> Value {
        yaml_serde::from_str(&file.yaml()).expect("valid YAML")
    }

    #[test]
    fn words_yaml_1_1_reads_as_booleans_are_quoted() {
        let text = yaml(&serde_json::json!({
            "args": ["--protected-mode", "no", "on", "nope"],
            "mode": "off",
            "name": "y: x",
            "flag": true,
            "word": "true",
        }));
        assert!(
            text.contains("- 'no'\n") && text.contains("- 'on'\n"),
            "{text}"
        );
        assert!(
            text.contains("- nope\n") && text.contains("mode: 'off'\n"),
            "{text}"
        );
        assert!(
            text.contains("flag: true\n"),
            "a real boolean stays one: {text}"
        );
        let back: Value = yaml_serde::from_str(&text).expect("valid YAML");
        assert_eq!(back["args"][1], "no");
        assert_eq!(back["name"], "y: x");
    }

    #[test]
    fn a_stack_file_places_and_publishes_the_server() {
        let file = read(&StackFile::server(
            "greet-hyper:latest",
            &["--delay-ms".to_owned(), "1000".to_owned()],
            18080,
            (Some("node.labels.greet.role==server"), None),
        ));
        let server = &file["services"]["server"];
        assert_eq!(server["command"], json!(["--delay-ms", "1000"]));
        assert_eq!(server["environment"]["PORT"], "8080");
        assert_eq!(server["healthcheck"], json!({"disable": true}));
        assert_eq!(
            server["ports"],
            json!([{"target": 8080, "published": 18080, "protocol": "tcp", "mode": "host"}])
        );
        assert_eq!(
            server["deploy"]["placement"]["constraints"],
            json!(["node.labels.greet.role==server"])
        );
        assert_eq!(server["deploy"]["resources"]["limits"]["memory"], "256M");
        assert_eq!(server["deploy"]["endpoint_mode"], "dnsrr");
        assert_eq!(server["networks"], json!(["net"]));
        let anywhere = read(&StackFile::server(
            "greet-hyper:latest",
            &[],
            1,
            (None, Some("greet-bench-stores_net")),
        ));
        let server = &anywhere["services"]["server"];
        assert!(server["deploy"].get("placement").is_none(), "{anywhere}");
        assert_eq!(server["networks"], json!(["net", "stores"]));
        assert_eq!(
            anywhere["networks"]["stores"],
            json!({"external": true, "name": "greet-bench-stores_net"})
        );
        assert_eq!(
            anywhere["networks"]["net"],
            json!({"driver": "overlay", "attachable": true})
        );
    }

    #[test]
    fn the_stores_stack_runs_them_as_compose_does() {
        let file = read(&StackFile::stores(Some("node.labels.greet.role==store")));
        let (postgres, redis) = (&file["services"]["postgres"], &file["services"]["redis"]);
        assert_eq!(postgres["image"], "postgres:15");
        assert_eq!(postgres["environment"]["POSTGRES_PASSWORD"], "greet");
        assert_eq!(
            postgres["healthcheck"]["test"],
            json!(["CMD", "pg_isready", "-U", "greet", "-d", "greet"])
        );
        assert_eq!(redis["image"], "redis:7");
        let command = redis["command"].as_array().expect("a list");
        assert!(command.ends_with(&[json!("--maxmemory-policy"), json!("allkeys-lru")]));
        for store in [postgres, redis] {
            assert_eq!(store["deploy"]["endpoint_mode"], "dnsrr");
            assert_eq!(
                store["deploy"]["placement"]["constraints"],
                json!(["node.labels.greet.role==store"])
            );
        }
        // The servers' URLs name these services.
        assert!(super::super::stores::DATABASE_URL.contains("@postgres:5432/"));
        assert!(super::super::stores::REDIS_URL.starts_with("redis://redis:"));
    }
}
