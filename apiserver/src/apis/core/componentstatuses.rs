//! ComponentStatuses, `/api/v1/componentstatuses` (`KK/pkg/registry/core/componentstatus`): the deprecated
//! health of the control plane's parts, probed on every read, never stored. kube-apiserver probes its etcd
//! (`etcd-0`) and the scheduler's and controller manager's `/healthz` on their default secure ports of
//! 127.0.0.1 (10259, 10257).
//!
//! Here `etcd-0` is a quorum read through the stores (a namespace get: etcd answered, with the object or
//! a not-found, or it did not). The other two are a TCP connection to their port: refused is upstream's
//! unhealthy answer, word for word; a port that answers is `Unknown`, because this server has no HTTPS
//! client to read `/healthz` with. A simulated cluster runs neither component yet (issue 28), so under
//! simulation both are refused without a dial. Every answer carries kube's deprecation warning.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::printers::{column, name, name_column};
use crate::apis::{Printer, ResourceInfo, Verb};
use crate::registry::error::RegistryError;
use crate::registry::resource::Resource;
use crate::registry::rest::BoxFuture;
use crate::registry::review::{Review, ReviewContext, Unstored};
use crate::storage::{GetOptions, GroupResource};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        short_names: &["cs"],
        namespaced: false,
        verbs: &[Verb::Get, Verb::List],
        review: Some(Arc::new(ComponentStatuses)),
        deprecated: Some("v1 ComponentStatus is deprecated in v1.19+"),
        ..ResourceInfo::new(resource(), "componentstatus", Arc::new(Unstored { namespaced: false }), printer())
    }
}

fn resource() -> Resource {
    Resource {
        group: String::new(),
        version: "v1".into(),
        kind: "ComponentStatus".into(),
        plural: "componentstatuses".into(),
        etcd_prefix: "componentstatuses".into(),
    }
}

struct ComponentStatuses;

/// The components probed besides etcd, with their default secure ports.
const COMPONENTS: &[(&str, u16)] = &[("controller-manager", 10257), ("scheduler", 10259)];

/// What a probe found (`probe.Result` and its message and error).
#[derive(Debug, PartialEq)]
enum Health {
    Healthy(String),
    Unhealthy(String),
    /// A port that answers; never under simulation, where nothing listens on them.
    #[cfg_attr(madsim, allow(dead_code))]
    Unknown(String),
}

impl Review for ComponentStatuses {
    fn read<'a>(&'a self, ctx: ReviewContext<'a>) -> BoxFuture<'a, Result<Vec<Value>, RegistryError>> {
        Box::pin(async move {
            let mut out = Vec::new();
            for (component, port) in COMPONENTS {
                out.push(status(component, probe_port(*port).await));
            }
            let etcd = match ctx.store("", "v1", "namespaces") {
                None => Health::Unhealthy("no storage to probe".into()),
                Some(namespaces) => match namespaces.get("", "default", &GetOptions::default()).await {
                    Ok(_) | Err(RegistryError::NotFound { .. }) => Health::Healthy("ok".into()),
                    Err(err) => Health::Unhealthy(err.to_string()),
                },
            };
            out.push(status("etcd-0", etcd));
            Ok(out)
        })
    }

    fn not_found(&self, name: &str) -> RegistryError {
        RegistryError::NotFound { resource: GroupResource::new("", "componentstatuses"), name: name.into() }
    }
}

/// The `ComponentStatus` of `name`: one `Healthy` condition.
fn status(name: &str, health: Health) -> Value {
    let (status, message, error) = match health {
        Health::Healthy(message) => ("True", message, String::new()),
        Health::Unhealthy(error) => ("False", String::new(), error),
        Health::Unknown(error) => ("Unknown", String::new(), error),
    };
    let mut condition = json!({"type": "Healthy", "status": status});
    if !message.is_empty() {
        condition["message"] = json!(message);
    }
    if !error.is_empty() {
        condition["error"] = json!(error);
    }
    json!({
        "kind": "ComponentStatus",
        "apiVersion": "v1",
        "metadata": {"name": name, "creationTimestamp": null},
        "conditions": [condition],
    })
}

/// Go's `http.Get` error for a refused connection to the component's `/healthz`.
fn refused(port: u16) -> String {
    format!("Get \"https://127.0.0.1:{port}/healthz\": dial tcp 127.0.0.1:{port}: connect: connection refused")
}

#[cfg(not(madsim))]
async fn probe_port(port: u16) -> Health {
    let dial = tokio::net::TcpStream::connect(("127.0.0.1", port));
    match tokio::time::timeout(std::time::Duration::from_secs(1), dial).await {
        Ok(Ok(_)) => Health::Unknown(format!("kubesim cannot read https://127.0.0.1:{port}/healthz")),
        Ok(Err(err)) if err.kind() == std::io::ErrorKind::ConnectionRefused => Health::Unhealthy(refused(port)),
        Ok(Err(err)) => Health::Unhealthy(format!("Get \"https://127.0.0.1:{port}/healthz\": {err}")),
        Err(_) => Health::Unhealthy(format!(
            "Get \"https://127.0.0.1:{port}/healthz\": dial tcp 127.0.0.1:{port}: i/o timeout"
        )),
    }
}

#[cfg(madsim)]
async fn probe_port(port: u16) -> Health {
    Health::Unhealthy(refused(port))
}

/// `printComponentStatus`: the `Healthy` condition as Healthy, Unhealthy or Unknown, its message and error.
fn printer() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            column("Status", "string", "Status of the component conditions", 0),
            column("Message", "string", "Message of the component conditions", 0),
            column("Error", "string", "Error of the component conditions", 0),
        ],
        cells: |obj, _, _| {
            let conditions = obj.get("conditions").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
            let healthy = conditions.iter().find(|c| c.get("type").and_then(Value::as_str) == Some("Healthy"));
            let field = |f: &str| healthy.and_then(|c| c.get(f)).and_then(Value::as_str).unwrap_or("").to_string();
            let shown = match healthy.map(|_| field("status")) {
                None => "Unknown",
                Some(s) if s == "True" => "Healthy",
                Some(_) => "Unhealthy",
            };
            vec![name(obj), Value::from(shown), Value::from(field("message")), Value::from(field("error"))]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_print_as_upstream_prints_them() {
        let healthy = status("etcd-0", Health::Healthy("ok".into()));
        assert_eq!(
            healthy,
            json!({"kind": "ComponentStatus", "apiVersion": "v1", "metadata": {"name": "etcd-0", "creationTimestamp": null}, "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]})
        );
        assert_eq!(
            (printer().cells)(&healthy, 0, &[]),
            vec![json!("etcd-0"), json!("Healthy"), json!("ok"), json!("")]
        );
        let down = status("scheduler", Health::Unhealthy(refused(10259)));
        assert_eq!(
            (printer().cells)(&down, 0, &[]),
            vec![
                json!("scheduler"),
                json!("Unhealthy"),
                json!(""),
                json!("Get \"https://127.0.0.1:10259/healthz\": dial tcp 127.0.0.1:10259: connect: connection refused")
            ]
        );
        let unknown = status("x", Health::Unknown("?".into()));
        assert_eq!((printer().cells)(&unknown, 0, &[])[1], json!("Unhealthy"), "anything but True is unhealthy");
    }
}
