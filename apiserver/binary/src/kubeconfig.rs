//! `--write-kubeconfig`: a kubeconfig with one cluster, one user and one context, in the form kubectl,
//! kube-rs and the Python client load as they are. The user is the server's admin: a bearer token the
//! server drew at start and trusts as `kubesim-admin` in `system:masters`, which RBAC binds to
//! `cluster-admin`.

use std::path::Path;

use base64::Engine;

/// The kubeconfig of a server at `server` (`http://127.0.0.1:6443`), trusting `ca_pem` for HTTPS, as the
/// user of `token`.
pub fn render(server: &str, ca_pem: Option<&[u8]>, token: &str) -> String {
    let ca = ca_pem.map_or(String::new(), |pem| {
        format!("    certificate-authority-data: {}\n", base64::engine::general_purpose::STANDARD.encode(pem))
    });
    let user = format!("\n    token: {token}");
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
pub fn write(path: &Path, server: &str, ca_pem: Option<&[u8]>, token: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    std::fs::write(path, render(server, ca_pem, token)).map_err(|e| format!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_http_kubeconfig() {
        let text = render("http://127.0.0.1:6443", None, "t0k");
        assert!(text.contains("    server: http://127.0.0.1:6443\n"));
        assert!(text.contains("current-context: kubesim\n"));
        assert!(!text.contains("certificate-authority-data"));
        assert!(text.contains("  user:\n    token: t0k\n"));
        let tls = render("https://x", Some(b"PEM"), "t0k");
        assert!(tls.contains("certificate-authority-data: UEVN\n"));
        assert!(tls.contains("  user:\n    token: t0k\n"));
    }
}
