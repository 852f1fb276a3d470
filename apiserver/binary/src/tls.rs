//! Serving HTTPS with `--tls-cert-file` and `--tls-private-key-file`: a rustls acceptor that offers HTTP/2
//! and HTTP/1.1 by ALPN, as kube-apiserver does (kubectl then speaks HTTP/2).

use std::path::Path;
use std::sync::Arc;

use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

/// An acceptor for the certificate chain and key in the PEM files; also returns the chain's PEM, which the
/// kubeconfig trusts.
pub fn acceptor(cert_file: &Path, key_file: &Path) -> Result<(TlsAcceptor, Vec<u8>), String> {
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
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("the certificate and key do not form a usable pair: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok((TlsAcceptor::from(Arc::new(config)), cert_pem))
}
