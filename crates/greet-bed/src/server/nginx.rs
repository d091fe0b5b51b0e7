//! Debian's nginx as the outside anchor: started like the servers (pinned, timed to its first
//! 200 on `/health`, sampled from /proc, stopped with SIGTERM) from a configuration written
//! here for each start, on a loopback port picked just before.
//!
//! nginx cannot listen on port 0 and say where it listens, so the port is the one the kernel
//! gave a socket bound and closed just before: another process could take it in between,
//! and then nginx exits during start-up saying so. It runs one process (`master_process
//! off`), one event loop: the harness samples one process, and on this machine the server
//! side has one CPU. Its answers are the workspace's: `ok`, `Hello, World!`, the JSON
//! message, and `<word> <name>!` at once on the greeting endpoints, the word drawn from the
//! five by the request's id, the name as the query has it (not decoded).

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};

use greet_launch::process::which;

/// The Debian package nginx comes from.
pub const PACKAGE: &str = "nginx-light";

/// The machine's nginx and the directory its configurations go in, removed when dropped.
#[derive(Debug, PartialEq, Eq)]
pub struct Nginx {
    bin: PathBuf,
    dir: PathBuf,
}

impl Nginx {
    /// Finds nginx; an error is one line with what to install.
    pub fn find() -> Result<Self, String> {
        let bin = which("nginx", [PathBuf::from("/usr/sbin")]).ok_or_else(|| {
            format!("no nginx (not in /usr/sbin nor on PATH): apt-get install -y {PACKAGE}")
        })?;
        let dir = std::env::temp_dir().join(format!("greet-bench-nginx-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Self { bin, dir })
    }

    /// Writes a configuration for a fresh loopback port: the program, its arguments and the
    /// address it will listen on.
    pub fn prepare(&self) -> Result<(PathBuf, Vec<String>, SocketAddr), String> {
        let addr = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free loopback port: {e}"))?;
        let conf = self.dir.join(format!("nginx-{}.conf", addr.port()));
        std::fs::write(&conf, config(&self.dir, addr))
            .map_err(|e| format!("{}: {e}", conf.display()))?;
        let args = ["-p", &path(&self.dir), "-c", &path(&conf), "-e", "stderr"];
        Ok((self.bin.clone(), args.map(str::to_owned).to_vec(), addr))
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// The configuration: one process in the foreground, no access log, keep-alive for as long as
/// the load wants, temporary files in `dir`, the workspace's answers at `addr`.
fn config(dir: &Path, addr: SocketAddr) -> String {
    let dir = path(dir);
    let words = greet_core::WORDS;
    let share = 100 / words.len();
    let mut split = String::new();
    for word in &words[..words.len() - 1] {
        split += &format!(" {share}% \"{word}\";");
    }
    split += &format!(" * \"{}\";", words[words.len() - 1]);
    let text = greet_core::CONTENT_TYPE;
    let json = greet_core::JSON_CONTENT_TYPE;
    let greeting = "return 200 \"$greet_word $greet_name!\";";
    format!(
        r#"daemon off;
master_process off;
error_log stderr notice;
pid {dir}/nginx-{port}.pid;
events {{ worker_connections 16384; }}
http {{
  access_log off;
  client_body_temp_path {dir}/body;
  proxy_temp_path {dir}/proxy;
  fastcgi_temp_path {dir}/fastcgi;
  uwsgi_temp_path {dir}/uwsgi;
  scgi_temp_path {dir}/scgi;
  keepalive_requests 100000000;
  keepalive_timeout 75s;
  map $arg_name $greet_name {{ "" World; default $arg_name; }}
  split_clients "$request_id" $greet_word {{{split} }}
  server {{
    listen {addr} backlog=4096;
    default_type "{text}";
    location = /health {{ return 200 "ok"; }}
    location = /plaintext {{ return 200 "Hello, World!"; }}
    location = /json {{ default_type {json}; return 200 '{{"message":"Hello, World!"}}'; }}
    location = /greetings {{ {greeting} }}
    location = /greetings/blocking {{ {greeting} }}
    location / {{ return 404 "not found"; }}
  }}
}}
"#,
        port = addr.port()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_serves_the_workspace_answers_on_its_port() {
        let addr: SocketAddr = "127.0.0.1:41234".parse().unwrap();
        let conf = config(Path::new("/tmp/x"), addr);
        assert!(conf.contains("listen 127.0.0.1:41234 backlog=4096;"));
        assert!(conf.contains("master_process off;") && conf.contains("daemon off;"));
        for word in greet_core::WORDS {
            assert!(conf.contains(&format!("\"{word}\";")), "{word}");
        }
        assert!(conf.contains(r#"'{"message":"Hello, World!"}'"#));
        assert!(conf.contains("pid /tmp/x/nginx-41234.pid;"));
    }
}
