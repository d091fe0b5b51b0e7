//! `greet-bench check URL…`: running servers verified against the contract's quick cases,
//! and over HTTP/2 or TLS where asked.

use greet_conformance::protocols::{answers_alike, tls_answers_alike};
use greet_probe::tls::Trust;

use greet_model::plan::Protocol;

use super::Outcome;

/// The contract check of the server at `url` over `protocol`; on success, what was checked
/// beyond HTTP/1.1 in cleartext, else one line saying what failed.
pub(crate) async fn check(url: &str, protocol: Option<Protocol>) -> Result<String, String> {
    let tls = url.starts_with("https://");
    let addr = || async { greet_probe::resolve(url).await.map_err(|e| e.to_string()) };
    match (tls, protocol) {
        (false, None | Some(Protocol::Http1)) => greet_conformance::check(url)
            .await
            .map(|()| String::new())
            .map_err(|e| e.to_string()),
        (false, Some(Protocol::H2c)) => {
            greet_conformance::check(url)
                .await
                .map_err(|e| e.to_string())?;
            answers_alike(addr().await?, None)
                .await
                .map_err(|e| format!("{e:#}"))?;
            Ok(" (and the same over h2c)".to_owned())
        }
        (true, None | Some(Protocol::Https | Protocol::H2)) => {
            tls_answers_alike(addr().await?, &Trust::Any)
                .await
                .map_err(|e| format!("{e:#}"))?;
            Ok(" over https and h2 (the same answers on both)".to_owned())
        }
        (_, Some(p)) => Err(format!(
            "--protocol {p} needs an {} URL",
            if p.tls() { "https://" } else { "http://" }
        )),
    }
}

/// Checks every server of `urls`, one line each on stdout; whether all passed.
async fn check_all(urls: &[String], protocol: Option<Protocol>) -> bool {
    let mut ok = true;
    for url in urls {
        match check(url, protocol).await {
            Ok(how) => println!("{url}: contract check passed{how}"),
            Err(err) => {
                ok = false;
                println!("{url}: {err}");
            }
        }
    }
    ok
}

/// `greet-bench check URL…`: done when every server passed.
pub(crate) fn run(urls: &[String], protocol: Option<Protocol>) -> Outcome {
    match tokio::runtime::Runtime::new() {
        Ok(rt) if rt.block_on(check_all(urls, protocol)) => Outcome::Done,
        Ok(_) => Outcome::Failed,
        Err(err) => {
            eprintln!("greet-bench: error: {err}");
            Outcome::Failed
        }
    }
}
