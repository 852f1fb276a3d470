//! Kubernetes requests and answers, in the same short words as the rest of this module: `create
//! configmaps default/a`, `get deployments.apps default/web/scale rv=0`, `list configmaps default limit=2
//! continue`, `watch configmaps default from rv=5 bookmarks initial-events`, and the answers `201 rv=12`,
//! `409 Conflict`, `200 items=3 rv=14 more`, `no answer (why)`. Parameters that are names in a scenario
//! (`rv=rev_of(create)`) go through as any `Display`.

use std::fmt::{self, Display, Formatter};

/// A request's parts: what the trace and a scenario's step show.
pub struct KubeRequest<'a> {
    /// `create`, `get`, `list`, `update`, `patch`, `delete`, `deletecollection`, `watch`.
    pub verb: &'a str,
    /// `configmaps`, `deployments.apps`.
    pub resource: &'a str,
    pub namespace: Option<&'a str>,
    pub name: Option<&'a str>,
    pub subresource: Option<&'a str>,
    /// The `resourceVersion` parameter, or an update's lock.
    pub rv: Option<&'a dyn Display>,
    /// Other parameters, already as `key=value` or flags, in the order to show them.
    pub params: Vec<String>,
}

impl Display for KubeRequest<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.verb, self.resource)?;
        let mut path: Vec<&str> = Vec::new();
        path.extend(self.namespace);
        path.extend(self.name);
        path.extend(self.subresource);
        if !path.is_empty() {
            write!(f, " {}", path.join("/"))?;
        }
        if let Some(rv) = self.rv {
            if self.verb == "watch" {
                write!(f, " from rv={rv}")?;
            } else {
                write!(f, " rv={rv}")?;
            }
        }
        for p in &self.params {
            write!(f, " {p}")?;
        }
        Ok(())
    }
}

/// An answer: its code and what identifies it (a refusal's reason, an object's or list's
/// resourceVersion, how many items and whether more follow), or why there was none.
pub enum KubeAnswer<'a> {
    Status {
        code: u16,
        reason: &'a str,
    },
    Object {
        code: u16,
        rv: Option<&'a str>,
    },
    List {
        code: u16,
        items: usize,
        rv: Option<&'a str>,
        more: bool,
    },
    /// A watch stream opened.
    Watching {
        code: u16,
    },
    None {
        why: &'a str,
    },
}

impl Display for KubeAnswer<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            KubeAnswer::Status { code, reason: "" } => write!(f, "{code}"),
            KubeAnswer::Status { code, reason } => write!(f, "{code} {reason}"),
            KubeAnswer::Object { code, rv: Some(rv) } => write!(f, "{code} rv={rv}"),
            KubeAnswer::Object { code, rv: None } => write!(f, "{code}"),
            KubeAnswer::List { code, items, rv, more } => {
                write!(f, "{code} items={items}")?;
                if let Some(rv) = rv {
                    write!(f, " rv={rv}")?;
                }
                if *more {
                    f.write_str(" more")?;
                }
                Ok(())
            }
            KubeAnswer::Watching { code } => write!(f, "{code} watching"),
            KubeAnswer::None { why } => write!(f, "no answer ({why})"),
        }
    }
}

/// One event of a Kubernetes watch: `ADDED a rv=5`, `BOOKMARK rv=9 initial-events-end`, `ERROR 410`.
pub fn kube_event(kind: &str, name: &str, rv: &str, initial_events_end: bool, code: Option<u16>) -> String {
    match kind {
        "ERROR" => format!("ERROR {}", code.map_or("?".into(), |c| c.to_string())),
        "BOOKMARK" if initial_events_end => format!("BOOKMARK rv={rv} initial-events-end"),
        "BOOKMARK" => format!("BOOKMARK rv={rv}"),
        _ => format!("{kind} {name} rv={rv}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_answers_read_as_one_line_each() {
        let rv = 5;
        let get = KubeRequest {
            verb: "get",
            resource: "deployments.apps",
            namespace: Some("default"),
            name: Some("web"),
            subresource: Some("scale"),
            rv: Some(&rv),
            params: vec![],
        };
        assert_eq!(get.to_string(), "get deployments.apps default/web/scale rv=5");
        let watch =
            KubeRequest { verb: "watch", name: None, subresource: None, params: vec!["bookmarks".into()], ..get };
        assert_eq!(watch.to_string(), "watch deployments.apps default from rv=5 bookmarks");
        assert_eq!(KubeAnswer::Status { code: 409, reason: "Conflict" }.to_string(), "409 Conflict");
        assert_eq!(
            KubeAnswer::List { code: 200, items: 2, rv: Some("14"), more: true }.to_string(),
            "200 items=2 rv=14 more"
        );
        assert_eq!(kube_event("BOOKMARK", "", "9", true, None), "BOOKMARK rv=9 initial-events-end");
    }
}
