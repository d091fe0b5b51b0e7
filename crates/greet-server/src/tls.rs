//! TLS for every server, one definition: rustls (the ring provider), TLS 1.3 and 1.2, ALPN
//! offering `h2` then `http/1.1`. The certificate comes from PEM files (`--tls-cert`,
//! `--tls-key`) or is made at start-up for `localhost` and `127.0.0.1`
//! (`--tls-self-signed`); either way its SHA-256 fingerprint goes in the start-up line, so a
//! client can pin what it talks to.
//!
//! Each framework terminates TLS itself with this configuration: hyper and axum through
//! tokio-rustls in the shared accept loop, actix-web through its own rustls acceptor.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, bail};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// ALPN protocol ids, most preferred first.
pub const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// A server's TLS: the rustls configuration every connection is accepted with, and the
/// certificate it presents.
#[derive(Debug, Clone)]
pub struct Tls {
    /// What every connection is accepted with.
    pub config: Arc<rustls::ServerConfig>,
    /// The end-entity certificate, DER: a client (a test, the harness) may trust exactly it.
    pub certificate: CertificateDer<'static>,
}

impl Tls {
    /// TLS with the chain in `cert` and the key in `key` (PEM files). Errors are one line that
    /// names the file and the reason.
    pub fn from_pem_files(cert: &Path, key: &Path) -> anyhow::Result<Self> {
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
            .and_then(Iterator::collect)
            .map_err(|err| anyhow!("--tls-cert {}: {}", cert.display(), pem_error(&err)))?;
        if chain.is_empty() {
            bail!("--tls-cert {}: no CERTIFICATE in it", cert.display());
        }
        let private = PrivateKeyDer::from_pem_file(key)
            .map_err(|err| anyhow!("--tls-key {}: {}", key.display(), pem_error(&err)))?;
        Self::new(chain, private).map_err(|err| {
            anyhow!(
                "--tls-key {} with --tls-cert {}: {err}",
                key.display(),
                cert.display()
            )
        })
    }

    /// TLS with a certificate made now, for `localhost` and `127.0.0.1`, valid for a year.
    pub fn self_signed() -> anyhow::Result<Self> {
        let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        let made = rcgen::generate_simple_self_signed(names)
            .map_err(|err| anyhow!("--tls-self-signed: {err}"))?;
        let key = PrivateKeyDer::Pkcs8(made.signing_key.serialize_der().into());
        Self::new(vec![made.cert.der().clone()], key)
            .map_err(|err| anyhow!("--tls-self-signed: {err}"))
    }

    fn new(
        chain: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
    ) -> Result<Self, rustls::Error> {
        let certificate = chain[0].clone();
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(rustls::ALL_VERSIONS)?
            .with_no_client_auth()
            .with_single_cert(chain, key)?;
        config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
        Ok(Self {
            config: Arc::new(config),
            certificate,
        })
    }

    /// The certificate's SHA-256 fingerprint, `AB:CD:…` as `openssl x509 -fingerprint
    /// -sha256` prints it.
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.certificate)
    }
}

/// The crypto every TLS of the workspace uses: ring, which builds with a C compiler alone.
pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// `der`'s SHA-256 fingerprint, `AB:CD:…`.
pub fn fingerprint(der: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, der);
    let mut out = String::with_capacity(95);
    for (i, byte) in digest.as_ref().iter().enumerate() {
        if i > 0 {
            out.push(':');
        }
        let _ = write!(out, "{byte:02X}");
    }
    out
}

/// A PEM reading error as a reason: the file's own error for I/O, else what is missing.
fn pem_error(err: &rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error;
    match err {
        Error::Io(err) => err.to_string(),
        Error::NoItemsFound => "no PEM item of the expected kind in it".to_owned(),
        other => format!("not valid PEM ({other:?})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_self_signed_certificate_offers_h2_and_http1() {
        let tls = Tls::self_signed().expect("self-signed");
        assert_eq!(
            tls.config.alpn_protocols,
            [b"h2".to_vec(), b"http/1.1".to_vec()]
        );
        let print = tls.fingerprint();
        assert_eq!(print.len(), 32 * 3 - 1, "{print}");
        assert_ne!(
            print,
            Tls::self_signed().unwrap().fingerprint(),
            "made anew"
        );
    }

    #[test]
    fn bad_files_are_named_with_their_reason() {
        let dir = std::env::temp_dir().join(format!("greet-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (cert, key, junk) = (dir.join("c.pem"), dir.join("k.pem"), dir.join("j.pem"));
        let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        std::fs::write(&cert, made.cert.pem()).unwrap();
        std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
        std::fs::write(&junk, "not pem\n").unwrap();
        assert!(Tls::from_pem_files(&cert, &key).is_ok());

        let missing = dir.join("none.pem");
        let err = Tls::from_pem_files(&missing, &key).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("--tls-cert {}: ", missing.display())),
            "{err}"
        );
        let err = Tls::from_pem_files(&junk, &key).unwrap_err().to_string();
        assert!(err.contains("--tls-cert") && err.contains("j.pem"), "{err}");
        let err = Tls::from_pem_files(&cert, &cert).unwrap_err().to_string();
        assert!(
            err.starts_with("--tls-key") && err.contains("c.pem"),
            "{err}"
        );
        let other = rcgen::generate_simple_self_signed(vec!["x".to_owned()]).unwrap();
        std::fs::write(&junk, other.signing_key.serialize_pem()).unwrap();
        let err = Tls::from_pem_files(&cert, &junk).unwrap_err().to_string();
        assert!(
            err.starts_with("--tls-key"),
            "a key of another certificate: {err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
