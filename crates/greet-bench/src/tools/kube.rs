//! One level of fresh connections on Kubernetes, as manifests built from typed values: a server as a
//! Deployment and a Service, PostgreSQL and Redis as StatefulSets with Services, and the load
//! as an Indexed Job of agent pods (the `greet-agent` image), each pod's `JOB_COMPLETION_INDEX`
//! its shard. The Job's arguments are [`Shard::level_flags`], the same the harness gives its
//! own agents, and the servers' settings are compose.yaml's: `deploy/kubernetes/greet.yaml` is
//! [`manifests`] of the defaults, and a test holds the two together (`GREET_UPDATE_DOCS=1`
//! rewrites the file).
//!
//! What a user with a cluster runs: `kubectl apply -f greet.yaml`, waits for the Job, and
//! `kubectl logs -l job-name=greet-load --tail=-1 | greet-bench merge` (every agent's report
//! must be there). The images are the offline ones (docker/build-offline.sh), pushed to a
//! registry the cluster reads.

use std::collections::BTreeMap;
use std::time::Duration;

use greet_load::{Expect, Shard, Work};
use serde::Serialize;

use greet_bed::server::stores::{DATABASE_URL, POSTGRES_ENV, REDIS_ARGS, REDIS_URL};
use greet_bed::server::swarm::AGENT_IMAGE;
use greet_bed::server::yaml;
use greet_model::plan::{self, package, Protocol};

/// One level on a cluster.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Kubernetes {
    /// The server's short name (`hyper`, `axum`, `actix`).
    pub(crate) server: String,
    /// Agents, the Job's completions and parallelism.
    pub(crate) agents: usize,
    /// The level's concurrency (and requests: one per fresh connection).
    pub(crate) concurrency: usize,
    /// The server's greeting delay.
    pub(crate) delay_ms: u64,
    /// Per-request limit.
    pub(crate) timeout: Duration,
}

impl Default for Kubernetes {
    fn default() -> Self {
        Self {
            server: "hyper".to_owned(),
            agents: 4,
            concurrency: 2700,
            delay_ms: plan::DELAY_MS,
            timeout: Duration::from_secs(30),
        }
    }
}

/// The servers' settings, as compose.yaml sets them: on PostgreSQL and Redis.
const SERVER_ENV: [(&str, &str); 7] = [
    ("HOST", "0.0.0.0"),
    ("PORT", "8080"),
    ("RUST_LOG", "info"),
    ("STORE", "postgres"),
    ("DATABASE_URL", DATABASE_URL),
    ("CACHE", "redis"),
    ("REDIS_URL", REDIS_URL),
];

/// The manifests of `k`, one YAML stream.
pub(crate) fn manifests(k: &Kubernetes) -> String {
    let name = package(&k.server);
    let shard = Shard {
        url: format!("http://{name}:8080{}", greet_core::paths::GREETINGS),
        expect: Expect::Greeting,
        headers: Vec::new(),
        body: None,
        protocol: Protocol::Http1,
        tls_resume: false,
        websocket: false,
        timeout: k.timeout,
        work: Work::Fresh {
            concurrency: k.concurrency,
            requests: k.concurrency,
        },
        index: 0,
        agents: k.agents,
        start_at_ms: 0,
    };
    let mut server_env: Vec<(&str, String)> = SERVER_ENV
        .iter()
        .map(|(k, v)| (*k, (*v).to_owned()))
        .collect();
    server_env.push(("GREETING_DELAY_MS", k.delay_ms.to_string()));
    let server = Container {
        image: format!("{name}:latest"),
        ports: vec![ContainerPort {
            container_port: 8080,
        }],
        env: env(&server_env),
        resources: Some(Resources {
            limits: BTreeMap::from([("cpu", "1"), ("memory", "256Mi")]),
        }),
        readiness_probe: Some(Probe::exec(&["/server", "--health-check"])),
        ..Container::named("server")
    };
    let postgres = Container {
        image: "postgres:15".to_owned(),
        ports: vec![ContainerPort {
            container_port: 5432,
        }],
        env: env(&POSTGRES_ENV.map(|(k, v)| (k, v.to_owned()))),
        readiness_probe: Some(Probe::exec(&["pg_isready", "-U", "greet", "-d", "greet"])),
        ..Container::named("postgres")
    };
    let redis = Container {
        image: "redis:7".to_owned(),
        args: REDIS_ARGS.iter().map(|a| (*a).to_owned()).collect(),
        ports: vec![ContainerPort {
            container_port: 6379,
        }],
        readiness_probe: Some(Probe::exec(&["redis-cli", "ping"])),
        ..Container::named("redis")
    };
    let mut flags = shard.level_flags();
    flags.extend(["--wait".to_owned(), "300s".to_owned()]);
    let agent = Container {
        image: AGENT_IMAGE.to_owned(),
        args: flags,
        ..Container::named("agent")
    };
    let objects = [
        Object::workload("Deployment", &name, "server", None, server),
        Object::service(&name, 8080),
        Object::workload(
            "StatefulSet",
            "postgres",
            "store",
            Some("postgres"),
            postgres,
        ),
        Object::service("postgres", 5432),
        Object::workload("StatefulSet", "redis", "store", Some("redis"), redis),
        Object::service("redis", 6379),
        Object::job(k.agents, agent),
    ];
    let mut out = format!(
        "# Generated by greet-bench's kube module (greet-bench kubernetes --server {} --agents {} \
         --concurrency {}); edit that, not this.\n",
        k.server, k.agents, k.concurrency
    );
    for object in objects {
        out.push_str("---\n");
        out.push_str(&yaml(&object));
    }
    out
}

/// `name: value` pairs as a container's environment.
fn env(pairs: &[(&str, String)]) -> Vec<EnvVar> {
    pairs
        .iter()
        .map(|(name, value)| EnvVar {
            name: (*name).to_owned(),
            value: value.clone(),
        })
        .collect()
}

/// One Kubernetes object: its kind, its name and labels, its spec.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Object {
    api_version: &'static str,
    kind: &'static str,
    metadata: Metadata,
    spec: Spec,
}

#[derive(Debug, Serialize)]
struct Metadata {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    labels: BTreeMap<&'static str, String>,
}

impl Metadata {
    /// App `name` (when given), labelled by `role` (when given).
    fn of(name: Option<&str>, role: Option<&str>) -> Self {
        let mut labels = BTreeMap::new();
        if let (Some(name), Some(_)) = (name, role) {
            labels.insert("app", name.to_owned());
        }
        if let Some(role) = role {
            labels.insert("greet.role", role.to_owned());
        }
        Self {
            name: name.map(str::to_owned),
            labels,
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Spec {
    Workload(WorkloadSpec),
    Service(ServiceSpec),
    Job(JobSpec),
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct WorkloadSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    service_name: Option<String>,
    replicas: u32,
    selector: Selector,
    template: Template,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Selector {
    match_labels: BTreeMap<&'static str, String>,
}

#[derive(Debug, Serialize)]
struct Template {
    metadata: Metadata,
    spec: PodSpec,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PodSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    restart_policy: Option<&'static str>,
    affinity: Affinity,
    containers: Vec<Container>,
}

/// Nodes labelled `greet.role=ROLE` preferred, any node otherwise: the placement a run got is
/// the cluster's to tell (`kubectl get pods -o wide`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Affinity {
    node_affinity: NodeAffinity,
}

#[derive(Debug, Serialize)]
struct NodeAffinity {
    #[serde(rename = "preferredDuringSchedulingIgnoredDuringExecution")]
    preferred: Vec<Preferred>,
}

#[derive(Debug, Serialize)]
struct Preferred {
    weight: u32,
    preference: Preference,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Preference {
    match_expressions: Vec<Requirement>,
}

#[derive(Debug, Serialize)]
struct Requirement {
    key: &'static str,
    operator: &'static str,
    values: Vec<String>,
}

impl Affinity {
    fn role(role: &str) -> Self {
        Self {
            node_affinity: NodeAffinity {
                preferred: vec![Preferred {
                    weight: 100,
                    preference: Preference {
                        match_expressions: vec![Requirement {
                            key: "greet.role",
                            operator: "In",
                            values: vec![role.to_owned()],
                        }],
                    },
                }],
            },
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Container {
    name: String,
    image: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    args: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ports: Vec<ContainerPort>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    env: Vec<EnvVar>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resources: Option<Resources>,
    #[serde(skip_serializing_if = "Option::is_none")]
    readiness_probe: Option<Probe>,
}

impl Container {
    fn named(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            image: String::new(),
            args: Vec::new(),
            ports: Vec::new(),
            env: Vec::new(),
            resources: None,
            readiness_probe: None,
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ContainerPort {
    container_port: u16,
}

#[derive(Debug, Serialize)]
struct EnvVar {
    name: String,
    value: String,
}

#[derive(Debug, Serialize)]
struct Resources {
    limits: BTreeMap<&'static str, &'static str>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Probe {
    exec: Exec,
    period_seconds: u32,
}

#[derive(Debug, Serialize)]
struct Exec {
    command: Vec<String>,
}

impl Probe {
    /// Ready once `command` exits 0, tried every second.
    fn exec(command: &[&str]) -> Self {
        Self {
            exec: Exec {
                command: command.iter().map(|c| (*c).to_owned()).collect(),
            },
            period_seconds: 1,
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ServiceSpec {
    selector: BTreeMap<&'static str, String>,
    ports: Vec<ServicePort>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ServicePort {
    port: u16,
    target_port: u16,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct JobSpec {
    completion_mode: &'static str,
    completions: usize,
    parallelism: usize,
    backoff_limit: u32,
    template: Template,
}

impl Object {
    /// A Deployment or StatefulSet of one pod, app `name`, labelled and placed by `role`
    /// (a StatefulSet names its headless `service`), running `container`.
    fn workload(
        kind: &'static str,
        name: &str,
        role: &str,
        service: Option<&str>,
        container: Container,
    ) -> Self {
        Self {
            api_version: "apps/v1",
            kind,
            metadata: Metadata::of(Some(name), Some(role)),
            spec: Spec::Workload(WorkloadSpec {
                service_name: service.map(str::to_owned),
                replicas: 1,
                selector: Selector {
                    match_labels: BTreeMap::from([("app", name.to_owned())]),
                },
                template: Template {
                    metadata: Metadata::of(None, None).app(name, role),
                    spec: PodSpec {
                        restart_policy: None,
                        affinity: Affinity::role(role),
                        containers: vec![container],
                    },
                },
            }),
        }
    }

    /// The Service in front of app `name`, on `port`.
    fn service(name: &str, port: u16) -> Self {
        Self {
            api_version: "v1",
            kind: "Service",
            metadata: Metadata::of(Some(name), None),
            spec: Spec::Service(ServiceSpec {
                selector: BTreeMap::from([("app", name.to_owned())]),
                ports: vec![ServicePort {
                    port,
                    target_port: port,
                }],
            }),
        }
    }

    /// The load: an Indexed Job of `agents` pods at once, none retried.
    fn job(agents: usize, container: Container) -> Self {
        let mut metadata = Metadata::of(Some("greet-load"), None);
        metadata.labels.insert("greet.role", "load".to_owned());
        let mut labels = Metadata::of(None, None);
        labels.labels.insert("greet.role", "load".to_owned());
        Self {
            api_version: "batch/v1",
            kind: "Job",
            metadata,
            spec: Spec::Job(JobSpec {
                completion_mode: "Indexed",
                completions: agents,
                parallelism: agents,
                backoff_limit: 0,
                template: Template {
                    metadata: labels,
                    spec: PodSpec {
                        restart_policy: Some("Never"),
                        affinity: Affinity::role("load"),
                        containers: vec![container],
                    },
                },
            }),
        }
    }
}

impl Metadata {
    /// These labels, app `name` and `greet.role` `role` among them.
    fn app(mut self, name: &str, role: &str) -> Self {
        self.labels.insert("app", name.to_owned());
        self.labels.insert("greet.role", role.to_owned());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn objects(yaml: &str) -> Vec<Value> {
        yaml.split("\n---\n")
            .skip(1)
            .map(|doc| yaml_serde::from_str(doc).expect("valid YAML"))
            .collect()
    }

    #[test]
    fn the_job_runs_the_agents_the_harness_runs() {
        let objects = objects(&manifests(&Kubernetes::default()));
        assert_eq!(objects.len(), 7, "seven objects");
        let job = objects.iter().find(|o| o["kind"] == "Job").expect("a Job");
        assert_eq!(
            (&job["spec"]["completions"], &job["spec"]["parallelism"]),
            (&json!(4), &json!(4))
        );
        let agent = &job["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(agent["image"], AGENT_IMAGE);
        let args: Vec<&str> = agent["args"]
            .as_array()
            .expect("args")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(args[..2], ["--url", "http://greet-hyper:8080/greetings"]);
        assert!(!args.contains(&"--index"), "the index is the pod's own");
        let deployment = &objects[0];
        assert_eq!(deployment["kind"], "Deployment");
        assert_eq!(
            deployment["spec"]["template"]["metadata"]["labels"],
            json!({"app": "greet-hyper", "greet.role": "server"})
        );
    }

    fn committed() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/kubernetes/greet.yaml")
    }

    /// The committed manifests are these defaults' (GREET_UPDATE_DOCS=1 rewrites them).
    #[test]
    fn the_committed_manifests_are_generated() {
        let want = manifests(&Kubernetes::default());
        if std::env::var_os("GREET_UPDATE_DOCS").is_some() {
            std::fs::write(committed(), &want).expect("write the manifests");
        }
        let have = std::fs::read_to_string(committed()).expect("deploy/kubernetes/greet.yaml");
        assert!(
            have == want,
            "deploy/kubernetes/greet.yaml is not what kube::manifests makes: \
             GREET_UPDATE_DOCS=1 cargo test -p greet-bench --lib kube"
        );
    }

    /// Every object validates against Kubernetes' own schemas, strictly (no unknown field),
    /// with no cluster: kubernetes-validate carries the schemas.
    #[test]
    #[ignore = "needs kubernetes-validate: pip install kubernetes-validate"]
    fn the_manifests_validate_against_the_kubernetes_schemas() {
        let out = std::process::Command::new("kubernetes-validate")
            .arg("--strict")
            .arg(committed())
            .output()
            .expect("kubernetes-validate runs (pip install kubernetes-validate)");
        let said = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{said}");
        assert_eq!(said.matches(" passed for resource ").count(), 7, "{said}");
    }
}
