//! `--client-ca-file`: client certificates as kube's x509 authenticator checks them. The TLS layer asks
//! for a certificate but accepts any (Go's `RequestClientCert`); here the chain must lead to one of the
//! CA file's certificates, every link valid now and signed by the next, and the leaf usable for client
//! authentication. The user is the subject's common name, the groups its organizations
//! (`CommonNameUserConversion`). Sans IO: the time is passed in.

use x509_parser::certificate::X509Certificate;
use x509_parser::prelude::FromDer;

use crate::registry::user::UserInfo;

/// The certificate authorities of `--client-ca-file`, as DER.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientCa {
    roots: Vec<Vec<u8>>,
}

/// How deep a chain may go before it is refused.
const MAX_CHAIN: usize = 8;

impl ClientCa {
    /// The certificates of a PEM bundle; `path` is for the error.
    pub fn from_pem(path: &str, pem_text: &[u8]) -> Result<ClientCa, String> {
        let blocks = pem::parse_many(pem_text).map_err(|e| format!("{path}: {e}"))?;
        let mut roots = Vec::new();
        for block in blocks.into_iter().filter(|b| b.tag() == "CERTIFICATE") {
            X509Certificate::from_der(block.contents()).map_err(|e| format!("{path}: {e}"))?;
            roots.push(block.contents().to_vec());
        }
        if roots.is_empty() {
            return Err(format!("{path}: no certificate found"));
        }
        Ok(ClientCa { roots })
    }

    /// The user of the chain `chain` (leaf first, as TLS sends it), or why it is refused.
    pub fn verify(&self, chain: &[Vec<u8>], now_unix_s: i64) -> Result<UserInfo, String> {
        let leaf_der = chain.first().ok_or("no client certificate")?;
        let leaf = parse(leaf_der)?;
        if let Ok(Some(eku)) = leaf.extended_key_usage() {
            if !eku.value.any && !eku.value.client_auth {
                return Err("x509: certificate specifies an incompatible key usage".into());
            }
        }
        let intermediates: Vec<X509Certificate<'_>> = chain[1..].iter().filter_map(|d| parse(d).ok()).collect();
        let roots: Vec<X509Certificate<'_>> = self.roots.iter().filter_map(|d| parse(d).ok()).collect();
        let mut current = leaf.clone();
        for _ in 0..MAX_CHAIN {
            check_time(&current, now_unix_s)?;
            if let Some(root) = roots.iter().find(|r| signed_by(&current, r)) {
                check_time(root, now_unix_s)?;
                return Ok(user_of(&leaf));
            }
            match intermediates.iter().find(|i| signed_by(&current, i) && i.is_ca()) {
                Some(next) => current = next.clone(),
                None => return Err("x509: certificate signed by unknown authority".into()),
            }
        }
        Err("x509: too many intermediates for path length constraint".into())
    }
}

fn parse(der: &[u8]) -> Result<X509Certificate<'_>, String> {
    X509Certificate::from_der(der).map(|(_, c)| c).map_err(|e| e.to_string())
}

/// Whether `issuer` signed `cert`.
fn signed_by(cert: &X509Certificate<'_>, issuer: &X509Certificate<'_>) -> bool {
    cert.issuer() == issuer.subject() && cert.verify_signature(Some(issuer.public_key())).is_ok()
}

fn check_time(cert: &X509Certificate<'_>, now_unix_s: i64) -> Result<(), String> {
    let validity = cert.validity();
    if now_unix_s < validity.not_before.timestamp() || now_unix_s > validity.not_after.timestamp() {
        return Err("x509: certificate has expired or is not yet valid".into());
    }
    Ok(())
}

fn user_of(leaf: &X509Certificate<'_>) -> UserInfo {
    let subject = leaf.subject();
    let name = subject.iter_common_name().next().and_then(|cn| cn.as_str().ok()).unwrap_or("").to_string();
    let groups = subject.iter_organization().filter_map(|o| o.as_str().ok()).map(str::to_string).collect();
    UserInfo { username: name, uid: String::new(), groups, extra: Default::default() }
}
