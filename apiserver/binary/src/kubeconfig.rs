//! `--write-kubeconfig`: a kubeconfig with one cluster, one user and one context, in the form kubectl,
//! kube-rs and the Python client load as they are. The server authenticates nobody; over HTTPS the user
//! carries a token all the same, because kubectl prompts for a username when an HTTPS user has no
//! credentials at all.

use std::path::Path;

use base64::Engine;

/// The kubeconfig of a server at `server` (`http://127.0.0.1:6443`), trusting `ca_pem` for HTTPS.
pub fn render(server: &str, ca_pem: Option<&[u8]>) -> String {
    let ca = ca_pem.map_or(String::new(), |pem| {
        format!("    certificate-authority-data: {}\n", base64::engine::general_purpose::STANDARD.encode(pem))
    });
    let user = if ca_pem.is_some() { "\n    token: kubesim" } else { " {}" };
    format!(
        "apiVersion: v1
kind: Config
clusters:
- cluster:
{ca}    server: {server}
  name: kubesim
contexts:
- context:
    cluster: kubesim
    namespace: default
    user: kubesim
  name: kubesim
current-context: kubesim
preferences: {{}}
users:
- name: kubesim
  user:{user}
"
    )
}

/// Writes the kubeconfig to `path`, creating its directory.
pub fn write(path: &Path, server: &str, ca_pem: Option<&[u8]>) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    std::fs::write(path, render(server, ca_pem)).map_err(|e| format!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_http_kubeconfig() {
        let text = render("http://127.0.0.1:6443", None);
        assert!(text.contains("    server: http://127.0.0.1:6443\n"));
        assert!(text.contains("current-context: kubesim\n"));
        assert!(!text.contains("certificate-authority-data"));
        assert!(text.contains("  user: {}\n"));
        let tls = render("https://x", Some(b"PEM"));
        assert!(tls.contains("certificate-authority-data: UEVN\n"));
        assert!(tls.contains("  user:\n    token: kubesim\n"));
    }
}
