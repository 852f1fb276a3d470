//! Serving HTTPS with `--tls-cert-file` and `--tls-private-key-file`: a rustls acceptor that offers HTTP/2
//! and HTTP/1.1 by ALPN, as kube-apiserver does (kubectl then speaks HTTP/2). With `--client-ca-file` the
//! handshake asks for a client certificate and takes any that proves its key (Go's
//! `RequestClientCert`): whether its chain leads to a trusted authority is the authenticator's question,
//! so that a stranger's certificate is a 401 with a body rather than a failed handshake.

use std::path::Path;
use std::sync::Arc;

use tokio_rustls::rustls::client::danger::HandshakeSignatureValid;
use tokio_rustls::rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use tokio_rustls::rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use tokio_rustls::rustls::{DigitallySignedStruct, DistinguishedName, Error, ServerConfig, SignatureScheme};
use tokio_rustls::TlsAcceptor;

/// An acceptor for the certificate chain and key in the PEM files, asking clients for certificates if
/// `request_client_certificates`; also returns the chain's PEM, which the kubeconfig trusts.
pub fn acceptor(
    cert_file: &Path,
    key_file: &Path,
    request_client_certificates: bool,
) -> Result<(TlsAcceptor, Vec<u8>), String> {
    let cert_pem = std::fs::read(cert_file).map_err(|e| format!("reading {}: {e}", cert_file.display()))?;
    let key_pem = std::fs::read(key_file).map_err(|e| format!("reading {}: {e}", key_file.display()))?;
    let certs: Vec<CertificateDer<'static>> = rustls_pemfile::certs(&mut cert_pem.as_slice())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", cert_file.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no certificate found", cert_file.display()));
    }
    let key: PrivateKeyDer<'static> = rustls_pemfile::private_key(&mut key_pem.as_slice())
        .map_err(|e| format!("{}: {e}", key_file.display()))?
        .ok_or_else(|| format!("{}: no private key found", key_file.display()))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let builder = if request_client_certificates {
        builder.with_client_cert_verifier(Arc::new(AnyClientCertificate { provider }))
    } else {
        builder.with_no_client_auth()
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| format!("the certificate and key do not form a usable pair: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok((TlsAcceptor::from(Arc::new(config)), cert_pem))
}

/// A client certificate verifier that asks for a certificate, does not require one, and accepts any whose
/// holder proves its key in the handshake; the chain is checked by the apiserver's x509 authenticator.
#[derive(Debug)]
struct AnyClientCertificate {
    provider: Arc<CryptoProvider>,
}

impl ClientCertVerifier for AnyClientCertificate {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}
