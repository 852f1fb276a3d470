//! The Pod Security Standards' checks at their latest version, sans IO
//! (`staging/src/k8s.io/pod-security-admission/policy/check_*.go`), run in upstream's order: the baseline
//! checks by ID, then the restricted ones by ID, the restricted checks replacing the baseline ones they
//! override (capabilities, seccomp, hostPath volumes).
//!
//! Left out: the AppArmor, SELinux, `/proc` mount, sysctl and Windows host-process checks, and the
//! seccomp annotations of pods older than 1.19's fields.

use std::collections::BTreeSet;

use serde_json::Value;

use super::support::{items, text};

/// `Level`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    pub(crate) fn parse(text: &str) -> Option<Level> {
        match text {
            "privileged" => Some(Level::Privileged),
            "baseline" => Some(Level::Baseline),
            "restricted" => Some(Level::Restricted),
            _ => None,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }
}

/// One failed check: its reason and detail (`CheckResult`).
type Failure = (&'static str, String);

fn pluralize<'a>(singular: &'a str, plural: &'a str, n: usize) -> &'a str {
    if n == 1 {
        singular
    } else {
        plural
    }
}

fn join_quote<S: AsRef<str>>(items: &[S]) -> String {
    if items.is_empty() {
        return String::new();
    }
    format!("\"{}\"", items.iter().map(AsRef::as_ref).collect::<Vec<_>>().join("\", \""))
}

/// `visitContainers`: init containers, containers, ephemeral containers.
fn containers(pod: &Value) -> impl Iterator<Item = &Value> {
    ["/spec/initContainers", "/spec/containers", "/spec/ephemeralContainers"]
        .into_iter()
        .flat_map(move |l| items(pod, l))
}

fn name(c: &Value) -> String {
    text(c, "/name").to_string()
}

fn is_windows(pod: &Value) -> bool {
    text(pod, "/spec/os/name") == "windows"
}

/// `<container(s)> "a", "b"`.
fn named(list: &[String]) -> String {
    format!("{} {}", pluralize("container", "containers", list.len()), join_quote(list))
}

fn privileged(pod: &Value) -> Option<Failure> {
    let bad: Vec<String> = containers(pod)
        .filter(|c| c.pointer("/securityContext/privileged") == Some(&Value::Bool(true)))
        .map(name)
        .collect();
    (!bad.is_empty()).then(|| ("privileged", format!("{} must not set securityContext.privileged=true", named(&bad))))
}

fn host_namespaces(pod: &Value) -> Option<Failure> {
    let set: Vec<&str> =
        [("hostNetwork", "hostNetwork=true"), ("hostPID", "hostPID=true"), ("hostIPC", "hostIPC=true")]
            .into_iter()
            .filter(|(field, _)| pod.pointer(&format!("/spec/{field}")) == Some(&Value::Bool(true)))
            .map(|(_, text)| text)
            .collect();
    (!set.is_empty()).then(|| ("host namespaces", set.join(", ")))
}

fn host_path_volumes(pod: &Value) -> Option<Failure> {
    let bad: Vec<String> =
        items(pod, "/spec/volumes").iter().filter(|v| v.get("hostPath").is_some()).map(name).collect();
    (!bad.is_empty())
        .then(|| ("hostPath volumes", format!("{} {}", pluralize("volume", "volumes", bad.len()), join_quote(&bad))))
}

fn host_ports(pod: &Value) -> Option<Failure> {
    let mut bad = Vec::new();
    let mut ports = BTreeSet::new();
    for c in containers(pod) {
        let used: Vec<i64> = items(c, "/ports")
            .iter()
            .filter_map(|p| p.get("hostPort").and_then(Value::as_i64))
            .filter(|p| *p != 0)
            .collect();
        if !used.is_empty() {
            bad.push(name(c));
            ports.extend(used.iter().map(i64::to_string));
        }
    }
    (!bad.is_empty()).then(|| {
        let ports: Vec<String> = ports.into_iter().collect();
        let detail = format!(
            "{} {} {} {}",
            named(&bad),
            pluralize("uses", "use", bad.len()),
            pluralize("hostPort", "hostPorts", ports.len()),
            ports.join(", ")
        );
        ("hostPort", detail)
    })
}

/// The capabilities baseline allows a container to add (`capabilities_allowed_1_0`).
const BASELINE_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

fn added(c: &Value) -> Vec<String> {
    items(c, "/securityContext/capabilities/add").iter().filter_map(Value::as_str).map(str::to_string).collect()
}

fn capabilities_baseline(pod: &Value) -> Option<Failure> {
    let mut bad = Vec::new();
    let mut caps = BTreeSet::new();
    for c in containers(pod) {
        let extra: Vec<String> =
            added(c).into_iter().filter(|a| !BASELINE_CAPABILITIES.contains(&a.as_str())).collect();
        if !extra.is_empty() {
            bad.push(name(c));
            caps.extend(extra);
        }
    }
    (!bad.is_empty()).then(|| {
        let caps: Vec<String> = caps.into_iter().collect();
        (
            "non-default capabilities",
            format!("{} must not include {} in securityContext.capabilities.add", named(&bad), join_quote(&caps)),
        )
    })
}

fn capabilities_restricted(pod: &Value) -> Option<Failure> {
    if is_windows(pod) {
        return None;
    }
    let mut missing_drop = Vec::new();
    let mut adding = Vec::new();
    let mut caps = BTreeSet::new();
    for c in containers(pod) {
        if c.pointer("/securityContext/capabilities").is_none_or(Value::is_null) {
            missing_drop.push(name(c));
            continue;
        }
        if !items(c, "/securityContext/capabilities/drop").iter().any(|d| d.as_str() == Some("ALL")) {
            missing_drop.push(name(c));
        }
        let forbidden: Vec<String> = added(c).into_iter().filter(|a| a != "NET_BIND_SERVICE").collect();
        if !forbidden.is_empty() {
            adding.push(name(c));
            caps.extend(forbidden);
        }
    }
    let mut details = Vec::new();
    if !missing_drop.is_empty() {
        details.push(format!("{} must set securityContext.capabilities.drop=[\"ALL\"]", named(&missing_drop)));
    }
    if !adding.is_empty() {
        let caps: Vec<String> = caps.into_iter().collect();
        details.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            named(&adding),
            join_quote(&caps)
        ));
    }
    (!details.is_empty()).then(|| ("unrestricted capabilities", details.join("; ")))
}

fn seccomp_type(obj: &Value) -> Option<&str> {
    obj.pointer("/securityContext/seccompProfile").filter(|p| !p.is_null()).map(|p| text(p, "/type"))
}

fn valid_seccomp(t: &str) -> bool {
    t == "Localhost" || t == "RuntimeDefault"
}

/// Both seccomp checks: a profile set to anything else is refused; `restricted` also requires one.
fn seccomp(pod: &Value, restricted: bool) -> Option<Failure> {
    if restricted && is_windows(pod) {
        return None;
    }
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    let mut pod_set = false;
    if let Some(t) = seccomp_type(spec) {
        if valid_seccomp(t) {
            pod_set = true;
        } else {
            setters.push("pod".to_string());
            values.insert(t.to_string());
        }
    }
    let (mut explicit, mut implicit) = (Vec::new(), Vec::new());
    for c in containers(pod) {
        match seccomp_type(c) {
            Some(t) if !valid_seccomp(t) => {
                explicit.push(name(c));
                values.insert(t.to_string());
            }
            Some(_) => {}
            None if !pod_set => implicit.push(name(c)),
            None => {}
        }
    }
    if !explicit.is_empty() {
        setters.push(named(&explicit));
    }
    if !setters.is_empty() {
        let values: Vec<String> = values.into_iter().collect();
        let detail = format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters.join(" and "),
            join_quote(&values)
        );
        return Some(("seccompProfile", detail));
    }
    (restricted && !implicit.is_empty()).then(|| {
        let detail = format!(
            "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
            named(&implicit)
        );
        ("seccompProfile", detail)
    })
}

fn allow_privilege_escalation(pod: &Value) -> Option<Failure> {
    if is_windows(pod) {
        return None;
    }
    let bad: Vec<String> = containers(pod)
        .filter(|c| c.pointer("/securityContext/allowPrivilegeEscalation") != Some(&Value::Bool(false)))
        .map(name)
        .collect();
    (!bad.is_empty()).then(|| {
        (
            "allowPrivilegeEscalation != false",
            format!("{} must set securityContext.allowPrivilegeEscalation=false", named(&bad)),
        )
    })
}

/// The volume types `restricted` allows.
const ALLOWED_VOLUMES: &[&str] =
    &["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"];
/// The other volume types, by the name the detail gives them.
const OTHER_VOLUMES: &[&str] = &[
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
];

fn restricted_volumes(pod: &Value) -> Option<Failure> {
    let mut bad = Vec::new();
    let mut kinds = BTreeSet::new();
    for v in items(pod, "/spec/volumes") {
        let has = |k: &&str| v.get(*k).is_some_and(|s| !s.is_null());
        if ALLOWED_VOLUMES.iter().any(has) {
            continue;
        }
        bad.push(name(v));
        kinds.insert(OTHER_VOLUMES.iter().find(|k| has(k)).copied().unwrap_or("unknown").to_string());
    }
    (!bad.is_empty()).then(|| {
        let kinds: Vec<String> = kinds.into_iter().collect();
        let detail = format!(
            "{} {} {} {} {}",
            pluralize("volume", "volumes", bad.len()),
            join_quote(&bad),
            pluralize("uses", "use", bad.len()),
            pluralize("restricted volume type", "restricted volume types", kinds.len()),
            join_quote(&kinds)
        );
        ("restricted volume types", detail)
    })
}

fn run_as_non_root(pod: &Value) -> Option<Failure> {
    let mut setters = Vec::new();
    let mut pod_non_root = false;
    match pod.pointer("/spec/securityContext/runAsNonRoot").and_then(Value::as_bool) {
        Some(false) => setters.push("pod".to_string()),
        Some(true) => pod_non_root = true,
        None => {}
    }
    let (mut explicit, mut implicit) = (Vec::new(), Vec::new());
    for c in containers(pod) {
        match c.pointer("/securityContext/runAsNonRoot").and_then(Value::as_bool) {
            Some(false) => explicit.push(name(c)),
            Some(true) => {}
            None if !pod_non_root => implicit.push(name(c)),
            None => {}
        }
    }
    if !explicit.is_empty() {
        setters.push(named(&explicit));
    }
    if !setters.is_empty() {
        return Some((
            "runAsNonRoot != true",
            format!("{} must not set securityContext.runAsNonRoot=false", setters.join(" and ")),
        ));
    }
    (!implicit.is_empty()).then(|| {
        ("runAsNonRoot != true", format!("pod or {} must set securityContext.runAsNonRoot=true", named(&implicit)))
    })
}

fn run_as_user(pod: &Value) -> Option<Failure> {
    let mut setters = Vec::new();
    if pod.pointer("/spec/securityContext/runAsUser").and_then(Value::as_i64) == Some(0) {
        setters.push("pod".to_string());
    }
    let bad: Vec<String> = containers(pod)
        .filter(|c| c.pointer("/securityContext/runAsUser").and_then(Value::as_i64) == Some(0))
        .map(name)
        .collect();
    if !bad.is_empty() {
        setters.push(named(&bad));
    }
    (!setters.is_empty()).then(|| ("runAsUser=0", format!("{} must not set runAsUser=0", setters.join(" and "))))
}

/// `EvaluatePod` and `AggregateCheckResults(...).ForbiddenDetail()`: what `pod` violates at `level`, or
/// `None` when it meets it.
pub(crate) fn violations(level: Level, pod: &Value) -> Option<String> {
    type Check = fn(&Value) -> Option<Failure>;
    let baseline: [(&str, Check); 6] = [
        ("capabilities_baseline", capabilities_baseline),
        ("hostNamespaces", host_namespaces),
        ("hostPathVolumes", host_path_volumes),
        ("hostPorts", host_ports),
        ("privileged", privileged),
        ("seccompProfile_baseline", |p| seccomp(p, false)),
    ];
    let restricted: [(&str, Check); 6] = [
        ("allowPrivilegeEscalation", allow_privilege_escalation),
        ("capabilities_restricted", capabilities_restricted),
        ("restrictedVolumes", restricted_volumes),
        ("runAsNonRoot", run_as_non_root),
        ("runAsUser", run_as_user),
        ("seccompProfile_restricted", |p| seccomp(p, true)),
    ];
    const OVERRIDDEN: &[&str] = &["capabilities_baseline", "hostPathVolumes", "seccompProfile_baseline"];
    let checks: Vec<Check> = match level {
        Level::Privileged => return None,
        Level::Baseline => baseline.iter().map(|(_, c)| *c).collect(),
        Level::Restricted => baseline
            .iter()
            .filter(|(id, _)| !OVERRIDDEN.contains(id))
            .chain(restricted.iter())
            .map(|(_, c)| *c)
            .collect(),
    };
    let failures: Vec<String> = checks
        .iter()
        .filter_map(|check| check(pod))
        .map(|(reason, detail)| if detail.is_empty() { reason.to_string() } else { format!("{reason} ({detail})") })
        .collect();
    (!failures.is_empty()).then(|| failures.join(", "))
}
