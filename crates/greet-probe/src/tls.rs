//! The client side of TLS, one way for the workspace: rustls on ring, as the servers, with the
//! ALPN protocols a caller offers and one of two trusts: exactly one certificate (a test that
//! made it, a harness that read it), or any certificate, for a server's own `--health-check`
//! against itself and for `--tls-self-signed` servers whose certificate is made at start-up.

use std::fmt;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// Which server certificates a client accepts.
#[derive(Debug, Clone)]
pub enum Trust {
    /// Any: the handshake's signatures are still checked, the certificate's owner is not.
    /// Only for servers on this machine that the caller started or points at by hand.
    Any,
    /// This certificate alone, as a root of its own (self-signed).
    Certificate(CertificateDer<'static>),
}

/// A client configuration that offers `alpn` (most preferred first) and trusts `trust`.
pub fn client_config(trust: &Trust, alpn: &[&[u8]]) -> Result<Arc<ClientConfig>, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(rustls::ALL_VERSIONS)?;
    let mut config = match trust {
        Trust::Any => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
            .with_no_client_auth(),
        Trust::Certificate(der) => {
            let mut roots = RootCertStore::empty();
            roots.add(der.clone())?;
            builder.with_root_certificates(roots).with_no_client_auth()
        }
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

/// Accepts any certificate, and checks the handshake's signatures against it.
struct AnyCertificate(Arc<CryptoProvider>);

impl fmt::Debug for AnyCertificate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AnyCertificate")
    }
}

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The name a client asks for when it reaches `addr`: its IP address (the servers' own
/// certificates name 127.0.0.1 and localhost).
pub fn server_name(addr: std::net::SocketAddr) -> ServerName<'static> {
    ServerName::IpAddress(addr.ip().into())
}
