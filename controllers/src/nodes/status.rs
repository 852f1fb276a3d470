//! A pod's status as the kubelet reports it, computed from its containers' states (kubelet 1.32,
//! `pkg/kubelet/kubelet_pods.go` `getPhase` and `convertToAPIContainerStatuses`,
//! `pkg/kubelet/status/generate.go`): the phase, the kubelet-owned conditions in the kubelet's order
//! (`PodReadyToStartContainers`, `Initialized`, `Ready`, `ContainersReady`, `PodScheduled`) with
//! upstream's reasons and messages, and each container's status as JSON. Pure functions; the pod's state
//! machine (`pod.rs`) owns the states and the transition times.
//!
//! Restartable init containers (sidecars) are treated as ordinary init containers, and readiness gates are
//! not evaluated: the simulated kubelet reports only what it owns.

use serde_json::{json, Map, Value};

/// `spec.restartPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestartPolicy {
    Always,
    OnFailure,
    Never,
}

impl RestartPolicy {
    /// The policy a pod spec names; the API's default is `Always`.
    pub fn parse(text: &str) -> RestartPolicy {
        match text {
            "Never" => RestartPolicy::Never,
            "OnFailure" => RestartPolicy::OnFailure,
            _ => RestartPolicy::Always,
        }
    }
}

/// `status.phase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Pending,
    Running,
    Succeeded,
    Failed,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Pending => "Pending",
            Phase::Running => "Running",
            Phase::Succeeded => "Succeeded",
            Phase::Failed => "Failed",
        }
    }

    pub fn is_terminal(self) -> bool {
        matches!(self, Phase::Succeeded | Phase::Failed)
    }
}

/// A container's finished run (`ContainerStateTerminated`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Terminated {
    pub exit_code: i32,
    /// `Completed`, `Error`, `ContainerStatusUnknown`.
    pub reason: String,
    pub message: Option<String>,
    pub started_us: Option<i64>,
    pub finished_us: i64,
    pub container_id: Option<String>,
}

/// A container's current state (`ContainerState`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    Waiting { reason: String, message: Option<String> },
    Running { started_us: i64 },
    Terminated(Terminated),
}

/// What the kubelet knows of one container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Container {
    pub name: String,
    pub image: String,
    pub image_id: String,
    /// `containerd://<id>` once a container was created.
    pub container_id: Option<String>,
    pub state: State,
    pub last: Option<Terminated>,
    pub ready: bool,
    pub started: bool,
    pub restart_count: u32,
}

impl Container {
    /// A container not created yet, waiting for `reason` (`ContainerCreating`, `PodInitializing`).
    pub fn waiting(name: &str, image: &str, reason: &str) -> Container {
        Container {
            name: name.into(),
            image: image.into(),
            image_id: String::new(),
            container_id: None,
            state: State::Waiting { reason: reason.into(), message: None },
            last: None,
            ready: false,
            started: false,
            restart_count: 0,
        }
    }
}

/// `getPhase`: the phase the containers' states add up to. `terminal` is the kubelet's `podIsTerminal`
/// (a deleted pod whose containers were all stopped), which makes a stopped pod Succeeded or Failed
/// whatever its restart policy.
pub fn phase(init: &[Container], main: &[Container], policy: RestartPolicy, terminal: bool) -> Phase {
    let mut pending_init = 0;
    let mut failed_init = 0;
    for c in init {
        match &c.state {
            State::Running { .. } => pending_init += 1,
            State::Terminated(t) if t.exit_code != 0 => failed_init += 1,
            State::Terminated(_) => {}
            State::Waiting { .. } => match &c.last {
                Some(t) if t.exit_code != 0 => failed_init += 1,
                Some(_) => {}
                None => pending_init += 1,
            },
        }
    }
    let (mut running, mut waiting, mut stopped, mut succeeded) = (0, 0, 0, 0);
    for c in main {
        match &c.state {
            State::Running { .. } => running += 1,
            State::Terminated(t) => {
                stopped += 1;
                if t.exit_code == 0 {
                    succeeded += 1;
                }
            }
            State::Waiting { .. } if c.last.is_some() => stopped += 1,
            State::Waiting { .. } => waiting += 1,
        }
    }
    if failed_init > 0 && policy == RestartPolicy::Never {
        return Phase::Failed;
    }
    if (pending_init > 0 && !any_regular_started(main)) || waiting > 0 {
        return Phase::Pending;
    }
    if running > 0 {
        return Phase::Running;
    }
    if stopped == 0 {
        return Phase::Pending;
    }
    if terminal {
        return if stopped == succeeded { Phase::Succeeded } else { Phase::Failed };
    }
    match policy {
        RestartPolicy::Always => Phase::Running,
        _ if stopped == succeeded => Phase::Succeeded,
        RestartPolicy::Never => Phase::Failed,
        RestartPolicy::OnFailure => Phase::Running,
    }
}

/// `HasAnyRegularContainerStarted`.
fn any_regular_started(main: &[Container]) -> bool {
    main.iter().any(|c| matches!(c.state, State::Running { .. } | State::Terminated(_)))
}

/// One kubelet-owned condition, before its transition time is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    pub kind: &'static str,
    pub status: bool,
    pub reason: Option<&'static str>,
    pub message: Option<String>,
}

impl Condition {
    fn new(kind: &'static str, status: bool) -> Condition {
        Condition { kind, status, reason: None, message: None }
    }

    fn because(kind: &'static str, reason: &'static str, message: Option<String>) -> Condition {
        Condition { kind, status: false, reason: Some(reason), message }
    }
}

/// Go's `%s` of a string slice: `[a b]`.
fn go_list(names: &[&str]) -> String {
    format!("[{}]", names.join(" "))
}

/// The kubelet's conditions in the order `generateAPIPodStatus` appends them. `sandbox` says whether the
/// pod's sandbox (its network) is up.
pub fn conditions(init: &[Container], main: &[Container], phase: Phase, sandbox: bool) -> Vec<Condition> {
    let containers_ready = containers_ready(main, phase);
    let ready = Condition { kind: "Ready", ..containers_ready.clone() };
    vec![
        Condition::new("PodReadyToStartContainers", sandbox),
        initialized(init, main, phase),
        ready,
        containers_ready,
        Condition::new("PodScheduled", true),
    ]
}

/// `GeneratePodInitializedCondition`.
fn initialized(init: &[Container], main: &[Container], phase: Phase) -> Condition {
    if init.is_empty() || any_regular_started(main) {
        return Condition::new("Initialized", true);
    }
    if phase == Phase::Succeeded {
        return Condition { reason: Some("PodCompleted"), ..Condition::new("Initialized", true) };
    }
    let incomplete: Vec<&str> = init.iter().filter(|c| !c.ready).map(|c| c.name.as_str()).collect();
    if incomplete.is_empty() {
        return Condition::new("Initialized", true);
    }
    let message = format!("containers with incomplete status: {}", go_list(&incomplete));
    Condition::because("Initialized", "ContainersNotInitialized", Some(message))
}

/// `GenerateContainersReadyCondition` (which `GeneratePodReadyCondition` copies while it is not true).
fn containers_ready(main: &[Container], phase: Phase) -> Condition {
    match phase {
        Phase::Succeeded => return Condition::because("ContainersReady", "PodCompleted", None),
        Phase::Failed => return Condition::because("ContainersReady", "PodFailed", None),
        Phase::Pending | Phase::Running => {}
    }
    let unready: Vec<&str> = main.iter().filter(|c| !c.ready).map(|c| c.name.as_str()).collect();
    if unready.is_empty() {
        return Condition::new("ContainersReady", true);
    }
    let message = format!("containers with unready status: {}", go_list(&unready));
    Condition::because("ContainersReady", "ContainersNotReady", Some(message))
}

/// A timestamp as the API shows `metav1.Time`.
pub fn stamp(unix_us: i64) -> String {
    apiserver::registry::system::rfc3339(unix_us.div_euclid(1_000_000))
}

fn terminated_json(t: &Terminated) -> Value {
    let mut out = Map::new();
    out.insert("exitCode".into(), json!(t.exit_code));
    out.insert("reason".into(), json!(t.reason));
    if let Some(message) = &t.message {
        out.insert("message".into(), json!(message));
    }
    out.insert("startedAt".into(), t.started_us.map_or(Value::Null, |us| json!(stamp(us))));
    out.insert("finishedAt".into(), json!(stamp(t.finished_us)));
    if let Some(id) = &t.container_id {
        out.insert("containerID".into(), json!(id));
    }
    Value::Object(out)
}

/// One `ContainerStatus`.
pub fn container_json(c: &Container) -> Value {
    let state = match &c.state {
        State::Waiting { reason, message: Some(message) } => json!({"waiting": {"reason": reason, "message": message}}),
        State::Waiting { reason, message: None } => json!({"waiting": {"reason": reason}}),
        State::Running { started_us } => json!({"running": {"startedAt": stamp(*started_us)}}),
        State::Terminated(t) => json!({"terminated": terminated_json(t)}),
    };
    let last = c.last.as_ref().map_or(json!({}), |t| json!({"terminated": terminated_json(t)}));
    let mut out = json!({
        "name": c.name,
        "state": state,
        "lastState": last,
        "ready": c.ready,
        "restartCount": c.restart_count,
        "image": c.image,
        "imageID": c.image_id,
        "started": c.started,
    });
    if let Some(id) = &c.container_id {
        out["containerID"] = json!(id);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running(name: &str, ready: bool) -> Container {
        Container { state: State::Running { started_us: 0 }, ready, started: true, ..Container::waiting(name, "i", "") }
    }

    fn exited(name: &str, code: i32) -> Container {
        let t = Terminated {
            exit_code: code,
            reason: if code == 0 { "Completed" } else { "Error" }.into(),
            message: None,
            started_us: Some(0),
            finished_us: 1,
            container_id: None,
        };
        Container { state: State::Terminated(t), ready: code == 0, ..Container::waiting(name, "i", "") }
    }

    fn backing_off(name: &str) -> Container {
        let last = match exited(name, 1).state {
            State::Terminated(t) => t,
            _ => unreachable!(),
        };
        Container {
            state: State::Waiting { reason: "CrashLoopBackOff".into(), message: None },
            last: Some(last),
            restart_count: 1,
            ..Container::waiting(name, "i", "")
        }
    }

    #[test]
    fn phases_follow_get_phase() {
        use RestartPolicy::*;
        let creating = || Container::waiting("c", "i", "ContainerCreating");
        // (init containers, containers, policy, podIsTerminal, phase)
        let cases: Vec<(Vec<Container>, Vec<Container>, RestartPolicy, bool, Phase)> = vec![
            (vec![], vec![creating()], Always, false, Phase::Pending),
            (vec![running("i", false)], vec![creating()], Always, false, Phase::Pending),
            (vec![exited("i", 0)], vec![running("c", true)], Always, false, Phase::Running),
            (vec![exited("i", 2)], vec![creating()], Never, false, Phase::Failed),
            (vec![], vec![running("a", true), exited("b", 0)], Never, false, Phase::Running),
            (vec![], vec![exited("a", 0), exited("b", 0)], Never, false, Phase::Succeeded),
            (vec![], vec![exited("a", 0), exited("b", 3)], Never, false, Phase::Failed),
            (vec![], vec![exited("a", 3)], OnFailure, false, Phase::Running),
            (vec![], vec![backing_off("a")], OnFailure, false, Phase::Running),
            (vec![], vec![exited("a", 0)], OnFailure, false, Phase::Succeeded),
            (vec![], vec![exited("a", 0)], Always, false, Phase::Running),
            (vec![], vec![exited("a", 0)], Always, true, Phase::Succeeded),
            (vec![], vec![exited("a", 137)], Always, true, Phase::Failed),
        ];
        for (i, (init, main, policy, terminal, want)) in cases.into_iter().enumerate() {
            assert_eq!(phase(&init, &main, policy, terminal), want, "case {i}");
        }
    }

    #[test]
    fn conditions_carry_upstreams_reasons_and_messages() {
        let creating = |n: &str| Container::waiting(n, "i", "ContainerCreating");
        // (init, main, phase, sandbox, expected (type, status, reason, message) after PodReadyToStartContainers)
        type Want = [(&'static str, bool, Option<&'static str>, Option<&'static str>); 3];
        let cases: Vec<(Vec<Container>, Vec<Container>, Phase, bool, Want)> = vec![
            (
                vec![],
                vec![creating("web"), creating("log")],
                Phase::Pending,
                false,
                [
                    ("Initialized", true, None, None),
                    ("Ready", false, Some("ContainersNotReady"), Some("containers with unready status: [web log]")),
                    (
                        "ContainersReady",
                        false,
                        Some("ContainersNotReady"),
                        Some("containers with unready status: [web log]"),
                    ),
                ],
            ),
            (
                vec![running("setup", false), creating("more")],
                vec![creating("web")],
                Phase::Pending,
                true,
                [
                    (
                        "Initialized",
                        false,
                        Some("ContainersNotInitialized"),
                        Some("containers with incomplete status: [setup more]"),
                    ),
                    ("Ready", false, Some("ContainersNotReady"), Some("containers with unready status: [web]")),
                    (
                        "ContainersReady",
                        false,
                        Some("ContainersNotReady"),
                        Some("containers with unready status: [web]"),
                    ),
                ],
            ),
            (
                vec![exited("setup", 0)],
                vec![running("web", true)],
                Phase::Running,
                true,
                [("Initialized", true, None, None), ("Ready", true, None, None), ("ContainersReady", true, None, None)],
            ),
            (
                vec![],
                vec![exited("job", 0)],
                Phase::Succeeded,
                false,
                [
                    ("Initialized", true, None, None),
                    ("Ready", false, Some("PodCompleted"), None),
                    ("ContainersReady", false, Some("PodCompleted"), None),
                ],
            ),
            (
                vec![],
                vec![exited("job", 3)],
                Phase::Failed,
                false,
                [
                    ("Initialized", true, None, None),
                    ("Ready", false, Some("PodFailed"), None),
                    ("ContainersReady", false, Some("PodFailed"), None),
                ],
            ),
        ];
        for (i, (init, main, phase, sandbox, want)) in cases.into_iter().enumerate() {
            let got = conditions(&init, &main, phase, sandbox);
            assert_eq!(got.len(), 5);
            assert_eq!((got[0].kind, got[0].status), ("PodReadyToStartContainers", sandbox), "case {i}");
            assert_eq!((got[4].kind, got[4].status), ("PodScheduled", true), "case {i}");
            let middle: Vec<_> = got[1..4].iter().map(|c| (c.kind, c.status, c.reason, c.message.as_deref())).collect();
            assert_eq!(middle, want.to_vec(), "case {i}");
        }
    }

    #[test]
    fn container_statuses_render_as_the_api_shows_them() {
        let mut c = exited("job", 3);
        c.container_id = Some("containerd://abc".into());
        if let State::Terminated(t) = &mut c.state {
            t.container_id = c.container_id.clone();
        }
        let v = container_json(&c);
        assert_eq!(v["state"]["terminated"]["exitCode"], 3);
        assert_eq!(v["state"]["terminated"]["reason"], "Error");
        assert_eq!(v["state"]["terminated"]["finishedAt"], "1970-01-01T00:00:00Z");
        assert_eq!(v["state"]["terminated"]["containerID"], "containerd://abc");
        assert_eq!(v["containerID"], "containerd://abc");
        assert_eq!(v["lastState"], json!({}));
        let v = container_json(&Container::waiting("web", "nginx", "ContainerCreating"));
        assert_eq!(v["state"], json!({"waiting": {"reason": "ContainerCreating"}}));
        assert!(v.get("containerID").is_none());
        assert_eq!(
            (v["ready"].clone(), v["started"].clone(), v["restartCount"].clone()),
            (json!(false), json!(false), json!(0))
        );
        let v = container_json(&backing_off("a"));
        assert_eq!(v["lastState"]["terminated"]["exitCode"], 1);
    }
}
