//! `--write-kubeconfig`: a kubeconfig with one cluster, one user without credentials (the server does not
//! authenticate) and one context, in the form kubectl, kube-rs and the Python client load as they are.

use std::path::Path;

use base64::Engine;

/// The kubeconfig of a server at `server` (`http://127.0.0.1:6443`), trusting `ca_pem` for HTTPS.
pub fn render(server: &str, ca_pem: Option<&[u8]>) -> String {
    let ca = ca_pem.map_or(String::new(), |pem| {
        format!("    certificate-authority-data: {}\n", base64::engine::general_purpose::STANDARD.encode(pem))
    });
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
  user: {{}}
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
        assert!(render("https://x", Some(b"PEM")).contains("certificate-authority-data: UEVN\n"));
    }
}
