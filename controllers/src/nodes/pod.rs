//! One pod's life on a simulated node, as a sans-IO state machine: the kubelet's pod worker without
//! containers (kubelet 1.32, `pkg/kubelet/pod_workers.go`, `kubelet.go` `SyncPod`/`SyncTerminatingPod`,
//! `status/status_manager.go`). Time is handed in ([`Now`]); every duration the pod takes is drawn from a
//! seeded generator or read from the pod's `kubesim.io/*` annotations; [`PodMachine::next_deadline`] says
//! when it next changes on its own, and [`PodMachine::pending_write`] what the node must send.
//!
//! The life: a bound pod is admitted (status Pending with `startTime`, its containers waiting), its sandbox
//! comes up after a short start delay (pod IP), its init containers run one after another and exit 0, then
//! its containers start together (Running; each Ready at once or after its readiness probe's
//! `initialDelaySeconds`). A pod whose restart policy is not `Always` runs its containers for
//! `kubesim.io/run-seconds` (or a drawn time) and they exit with `kubesim.io/exit-code` (0 by default):
//! `Never` ends Succeeded (reason Completed) or Failed (reason Error); `OnFailure` restarts failed containers
//! (the first time at once, then after the kubelet's crash loop back-off, 10 s doubling to 5 min).
//!
//! Deletion: a pod that never started is deleted at once; otherwise its containers stop after
//! `kubesim.io/shutdown-seconds` (or a drawn short time), never later than `deletionGracePeriodSeconds`
//! after the node saw the deletion (a container still running then is killed: exit code 137, reason Error).
//! The node then writes the terminal status and deletes the pod with grace period 0 and a UID
//! precondition, as the status manager does once a terminated pod's status is written.

use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

use super::status::{self, Container, Phase, RestartPolicy, State, Terminated};

/// How long a pod's containers run, in decimal seconds (pods whose restart policy is not `Always`).
pub const RUN_SECONDS: &str = "kubesim.io/run-seconds";
/// The exit code the containers of a run-to-completion pod end with.
pub const EXIT_CODE: &str = "kubesim.io/exit-code";
/// How long the containers take to stop once the pod is deleted, in decimal seconds.
pub const SHUTDOWN_SECONDS: &str = "kubesim.io/shutdown-seconds";

/// The exit code of a container killed at the end of its grace period (128 + SIGKILL).
const KILLED_EXIT_CODE: i32 = 137;
/// The kubelet's crash loop back-off (`backOffPeriod`, `MaxContainerBackOff`).
const BACKOFF_INITIAL: Duration = Duration::from_secs(10);
const BACKOFF_MAX: Duration = Duration::from_secs(300);
/// How long a failed write waits before it is sent again.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// The drawn durations, in milliseconds (inclusive ranges): short enough that a Deployment of three is
/// available well under a second, long enough that a pod is seen Pending first.
const START_DELAY_MS: (u64, u64) = (20, 200);
const INIT_RUN_MS: (u64, u64) = (10, 100);
const RUN_MS: (u64, u64) = (500, 3_000);
const SHUTDOWN_MS: (u64, u64) = (10, 300);

/// The moment a step happens: `at` on the node's monotonic clock (deadlines), `unix_us` the time of day
/// the status stamps show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Now {
    pub at: Duration,
    pub unix_us: i64,
}

impl Now {
    /// The time of day of the earlier instant `at` (a deadline that passed while the node was busy).
    fn unix_us_at(self, at: Duration) -> i64 {
        self.unix_us - self.at.saturating_sub(at).as_micros() as i64
    }
}

/// What the node must send for the pod.
#[derive(Clone, Debug, PartialEq)]
pub enum Write {
    /// The kubelet-owned status, to patch into `pods/{name}/status`.
    Status(Value),
    /// Delete the pod, grace period 0, on the condition that its UID is still this one.
    Delete,
}

/// One container of the spec, as far as the simulation cares.
#[derive(Clone, Debug)]
struct Spec {
    name: String,
    image: String,
    ready_delay: Duration,
}

#[derive(Clone, Debug, PartialEq)]
enum Stage {
    /// Bound; the sandbox comes up at `start_at`.
    Admitted { start_at: Duration },
    /// Init container `index` runs until `done_at`.
    Init { index: usize, done_at: Duration },
    /// The containers run (until `finish_at` for a run-to-completion pod).
    Running { finish_at: Option<Duration> },
    /// The failed containers wait for their restart.
    BackOff { restart_at: Duration },
    /// Deleted: the containers stop at `stop_at`, killed if that is the grace period's end.
    Stopping { stop_at: Duration, killed: bool },
    /// Nothing runs any more.
    Done,
}

/// One pod on one node.
pub struct PodMachine {
    uid: String,
    /// `name_namespace(uid)`, as the kubelet names a pod in its messages.
    pod_ref: String,
    policy: RestartPolicy,
    init_specs: Vec<Spec>,
    specs: Vec<Spec>,
    run_for: Duration,
    exit_code: i32,
    shutdown_for: Option<Duration>,
    host_ip: String,
    pod_ip: Option<String>,
    rng: ChaCha8Rng,
    stage: Stage,
    init: Vec<Container>,
    main: Vec<Container>,
    /// When each container turns ready (the readiness probe's initial delay), while it is not yet.
    ready_at: Vec<Option<Duration>>,
    start_time_us: i64,
    sandbox: bool,
    /// Whether the pod IP shows in the status (from the first sandbox on).
    ip_shown: bool,
    /// The kubelet's `podIsTerminal`: deleted and stopped.
    terminal: bool,
    phase: Phase,
    /// The conditions last computed, each with its transition time.
    conditions: Vec<(status::Condition, i64)>,
    failures: u32,
    dirty: bool,
    delete_pending: bool,
    delete_sent: bool,
    retry_at: Option<Duration>,
}

fn annotation_seconds(pod: &Value, key: &str) -> Option<Duration> {
    let text = pod.pointer("/metadata/annotations")?.get(key)?.as_str()?;
    let seconds: f64 = text.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

fn specs(pod: &Value, list: &str) -> Vec<Spec> {
    let containers = pod.pointer(&format!("/spec/{list}")).and_then(Value::as_array).cloned().unwrap_or_default();
    containers
        .iter()
        .map(|c| Spec {
            name: c["name"].as_str().unwrap_or_default().to_string(),
            image: c["image"].as_str().unwrap_or_default().to_string(),
            ready_delay: Duration::from_secs(
                c.pointer("/readinessProbe/initialDelaySeconds").and_then(Value::as_u64).unwrap_or(0),
            ),
        })
        .collect()
}

/// The grace period of a deleted pod (`None` while it is not being deleted).
pub fn deletion_grace(pod: &Value) -> Option<Duration> {
    pod.pointer("/metadata/deletionTimestamp").filter(|t| !t.is_null())?;
    let seconds = pod.pointer("/metadata/deletionGracePeriodSeconds").and_then(Value::as_i64).unwrap_or(0);
    Some(Duration::from_secs(seconds.max(0) as u64))
}

fn draw(rng: &mut ChaCha8Rng, (lo, hi): (u64, u64)) -> Duration {
    Duration::from_millis(rng.random_range(lo..=hi))
}

/// A container ID as containerd reports it: 64 hex digits.
fn container_id(rng: &mut ChaCha8Rng) -> String {
    let mut id = String::from("containerd://");
    for _ in 0..4 {
        id.push_str(&format!("{:016x}", rng.random::<u64>()));
    }
    id
}

/// A stable image ID for `image` (the same image always gets the same digest), in containerd's form:
/// the normalized repository, `@sha256:` and a digest.
pub fn image_id(image: &str) -> String {
    let name = image.split('@').next().unwrap_or(image);
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let repo = match name[last_slash..].find(':') {
        Some(colon) => &name[..last_slash + colon],
        None => name,
    };
    let first = repo.split('/').next().unwrap_or("");
    let repo = if !repo.contains('/') {
        format!("docker.io/library/{repo}")
    } else if !first.contains('.') && !first.contains(':') && first != "localhost" {
        format!("docker.io/{repo}")
    } else {
        repo.to_string()
    };
    // FNV-1a over the image name, salted four times for 256 bits.
    let digest: String = (0u8..4)
        .map(|salt| {
            let hash = image
                .bytes()
                .chain([salt])
                .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3));
            format!("{hash:016x}")
        })
        .collect();
    format!("{repo}@sha256:{digest}")
}

impl PodMachine {
    /// A pod the node sees for the first time. A pod already Running (a node taken over) resumes with its
    /// containers running; a finished one stays finished; any other starts from admission.
    pub fn new(pod: &Value, host_ip: &str, pod_ip: Option<String>, seed: u64, now: Now) -> PodMachine {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let policy = RestartPolicy::parse(pod.pointer("/spec/restartPolicy").and_then(Value::as_str).unwrap_or(""));
        let init_specs = specs(pod, "initContainers");
        let specs = specs(pod, "containers");
        let run_for = annotation_seconds(pod, RUN_SECONDS).unwrap_or_else(|| draw(&mut rng, RUN_MS));
        let exit_code = pod
            .pointer(&format!("/metadata/annotations/{}", EXIT_CODE.replace('/', "~1")))
            .and_then(Value::as_str)
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        let main_reason = if init_specs.is_empty() { "ContainerCreating" } else { "PodInitializing" };
        let start_at = now.at + draw(&mut rng, START_DELAY_MS);
        let meta = |f: &str| pod.pointer(&format!("/metadata/{f}")).and_then(Value::as_str).unwrap_or_default();
        let mut machine = PodMachine {
            uid: meta("uid").to_string(),
            pod_ref: format!("{}_{}({})", meta("name"), meta("namespace"), meta("uid")),
            policy,
            init: init_specs.iter().map(|s| Container::waiting(&s.name, &s.image, "ContainerCreating")).collect(),
            main: specs.iter().map(|s| Container::waiting(&s.name, &s.image, main_reason)).collect(),
            ready_at: vec![None; specs.len()],
            init_specs,
            specs,
            run_for,
            exit_code,
            shutdown_for: annotation_seconds(pod, SHUTDOWN_SECONDS),
            host_ip: host_ip.to_string(),
            pod_ip,
            rng,
            stage: Stage::Admitted { start_at },
            start_time_us: now.unix_us,
            sandbox: false,
            ip_shown: false,
            terminal: false,
            phase: Phase::Pending,
            conditions: Vec::new(),
            failures: 0,
            dirty: true,
            delete_pending: false,
            delete_sent: false,
            retry_at: None,
        };
        match pod.pointer("/status/phase").and_then(Value::as_str) {
            Some("Succeeded" | "Failed") => {
                machine.stage = Stage::Done;
                machine.phase = if pod["status"]["phase"] == "Succeeded" { Phase::Succeeded } else { Phase::Failed };
                machine.dirty = false;
            }
            Some("Running") => machine.resume(pod, now),
            _ => {}
        }
        machine.refresh(now);
        machine.observe(pod, now);
        machine
    }

    /// Takes over a pod a previous node process started: its containers run, with the IDs and start
    /// times its status shows.
    fn resume(&mut self, pod: &Value, now: Now) {
        let stored = |list: &str, name: &str| {
            pod.pointer(&format!("/status/{list}"))
                .and_then(Value::as_array)
                .and_then(|l| l.iter().find(|c| c["name"] == name))
                .cloned()
        };
        let time = |v: Option<&Value>| v.and_then(Value::as_str).and_then(crate::runtime::time::parse_time_us);
        self.start_time_us = time(pod.pointer("/status/startTime")).unwrap_or(now.unix_us);
        for c in &mut self.init {
            c.state = State::Terminated(Terminated {
                exit_code: 0,
                reason: "Completed".into(),
                message: None,
                started_us: None,
                finished_us: now.unix_us,
                container_id: None,
            });
            c.ready = true;
        }
        let mut all_running = true;
        for (c, spec) in self.main.iter_mut().zip(&self.specs) {
            let old = stored("containerStatuses", &spec.name).unwrap_or(Value::Null);
            let started_us = time(old.pointer("/state/running/startedAt"));
            all_running &= started_us.is_some();
            c.container_id =
                old["containerID"].as_str().map(String::from).or_else(|| Some(container_id(&mut self.rng)));
            c.image_id = image_id(&spec.image);
            c.state = State::Running { started_us: started_us.unwrap_or(now.unix_us) };
            c.started = true;
            c.ready = true;
            c.restart_count = old["restartCount"].as_u64().unwrap_or(0) as u32;
        }
        self.sandbox = true;
        self.ip_shown = true;
        self.stage =
            Stage::Running { finish_at: (self.policy != RestartPolicy::Always).then(|| now.at + self.run_for) };
        self.phase = Phase::Running;
        for c in pod.pointer("/status/conditions").and_then(Value::as_array).into_iter().flatten() {
            if let (Some(kind), Some(since)) = (c["type"].as_str(), time(c.get("lastTransitionTime"))) {
                let status = c["status"] == "True";
                let kind = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
                    .into_iter()
                    .find(|k| *k == kind);
                if let Some(kind) = kind {
                    self.conditions.push((status::Condition { kind, status, reason: None, message: None }, since));
                }
            }
        }
        self.dirty = !all_running;
    }

    /// A newer state of the pod from the apiserver: a deletion starts the shutdown (or shortens it to a
    /// smaller grace period).
    pub fn observe(&mut self, pod: &Value, now: Now) {
        if let Some(grace) = deletion_grace(pod) {
            self.begin_deletion(grace, now);
        }
    }

    fn begin_deletion(&mut self, grace: Duration, now: Now) {
        let deadline = now.at + grace;
        match self.stage.clone() {
            Stage::Admitted { .. } => {
                // Never started: nothing to stop and no status worth writing.
                self.stage = Stage::Done;
                self.dirty = false;
                self.delete_pending = !self.delete_sent;
            }
            Stage::Done => self.delete_pending = !self.delete_sent,
            Stage::Stopping { stop_at, .. } => {
                if deadline < stop_at {
                    self.stage = Stage::Stopping { stop_at: deadline, killed: true };
                }
            }
            Stage::Init { .. } | Stage::Running { .. } | Stage::BackOff { .. } => {
                let shutdown = self.shutdown_for.unwrap_or_else(|| draw(&mut self.rng, SHUTDOWN_MS));
                self.stage = if shutdown > grace {
                    Stage::Stopping { stop_at: deadline, killed: true }
                } else {
                    Stage::Stopping { stop_at: now.at + shutdown, killed: false }
                };
            }
        }
    }

    /// When the pod next changes on its own (or a failed write is due again).
    pub fn next_deadline(&self) -> Option<Duration> {
        let stage = match &self.stage {
            Stage::Admitted { start_at } => Some(*start_at),
            Stage::Init { done_at, .. } => Some(*done_at),
            Stage::Running { finish_at } => *finish_at,
            Stage::BackOff { restart_at } => Some(*restart_at),
            Stage::Stopping { stop_at, .. } => Some(*stop_at),
            Stage::Done => None,
        };
        let ready = match self.stage {
            Stage::Running { .. } | Stage::Stopping { .. } => self.ready_at.iter().flatten().min().copied(),
            _ => None,
        };
        let retry = self.retry_at.filter(|_| self.dirty || self.delete_pending);
        [stage, ready, retry].into_iter().flatten().min()
    }

    /// Everything due by `now`, in order.
    pub fn advance(&mut self, now: Now) {
        loop {
            let ready_due = self.ready_at.iter().flatten().min().copied().filter(|at| *at <= now.at);
            let stage_due = match &self.stage {
                Stage::Admitted { start_at } => Some(*start_at),
                Stage::Init { done_at, .. } => Some(*done_at),
                Stage::Running { finish_at } => *finish_at,
                Stage::BackOff { restart_at } => Some(*restart_at),
                Stage::Stopping { stop_at, .. } => Some(*stop_at),
                Stage::Done => None,
            }
            .filter(|at| *at <= now.at);
            // Whichever came first; a readiness due at the same moment as the stage's end goes first.
            match (ready_due, stage_due) {
                (Some(r), s) if s.is_none_or(|s| r <= s) => self.turn_ready(r),
                (_, Some(at)) => self.step(at, now),
                _ => break,
            }
        }
        self.refresh(now);
    }

    fn turn_ready(&mut self, at: Duration) {
        for (c, ready_at) in self.main.iter_mut().zip(&mut self.ready_at) {
            if *ready_at == Some(at) {
                *ready_at = None;
                if matches!(c.state, State::Running { .. }) {
                    c.ready = true;
                    self.dirty = true;
                }
            }
        }
    }

    fn step(&mut self, at: Duration, now: Now) {
        self.dirty = true;
        let us = now.unix_us_at(at);
        match self.stage.clone() {
            Stage::Admitted { .. } => {
                self.sandbox = true;
                self.ip_shown = true;
                if self.init.is_empty() {
                    self.start_main(at, us);
                } else {
                    self.start_init(0, at, us);
                }
            }
            Stage::Init { index, .. } => {
                let c = &mut self.init[index];
                let started_us = match c.state {
                    State::Running { started_us } => Some(started_us),
                    _ => None,
                };
                c.state = State::Terminated(Terminated {
                    exit_code: 0,
                    reason: "Completed".into(),
                    message: None,
                    started_us,
                    finished_us: us,
                    container_id: c.container_id.clone(),
                });
                c.ready = true;
                c.started = false;
                if index + 1 < self.init.len() {
                    self.start_init(index + 1, at, us);
                } else {
                    self.start_main(at, us);
                }
            }
            Stage::Running { .. } => self.finish(at, us),
            Stage::BackOff { .. } => self.start_main(at, us),
            Stage::Stopping { killed, .. } => self.stop(killed, us),
            Stage::Done => {}
        }
    }

    fn start_init(&mut self, index: usize, at: Duration, us: i64) {
        let id = container_id(&mut self.rng);
        let c = &mut self.init[index];
        c.container_id = Some(id);
        c.image_id = image_id(&self.init_specs[index].image);
        c.state = State::Running { started_us: us };
        c.started = true;
        self.stage = Stage::Init { index, done_at: at + draw(&mut self.rng, INIT_RUN_MS) };
    }

    fn start_main(&mut self, at: Duration, us: i64) {
        for i in 0..self.main.len() {
            let id = container_id(&mut self.rng);
            let (c, spec) = (&mut self.main[i], &self.specs[i]);
            c.container_id = Some(id);
            c.image_id = image_id(&spec.image);
            c.state = State::Running { started_us: us };
            c.started = true;
            c.ready = spec.ready_delay.is_zero();
            self.ready_at[i] = (!c.ready).then(|| at + spec.ready_delay);
        }
        let finish_at = (self.policy != RestartPolicy::Always).then(|| at + self.run_for);
        self.stage = Stage::Running { finish_at };
    }

    /// A run-to-completion pod's containers exit.
    fn finish(&mut self, at: Duration, us: i64) {
        let code = self.exit_code;
        for c in &mut self.main {
            let started_us = match c.state {
                State::Running { started_us } => Some(started_us),
                _ => None,
            };
            c.state = State::Terminated(Terminated {
                exit_code: code,
                reason: if code == 0 { "Completed" } else { "Error" }.into(),
                message: None,
                started_us,
                finished_us: us,
                container_id: c.container_id.clone(),
            });
            c.ready = false;
            c.started = false;
        }
        self.ready_at.iter_mut().for_each(|r| *r = None);
        if code == 0 || self.policy != RestartPolicy::OnFailure {
            self.stage = Stage::Done;
            self.sandbox = false;
            return;
        }
        // OnFailure: restart, at once the first time and after the crash loop back-off from then on.
        self.failures += 1;
        let backoff = match self.failures {
            1 => Duration::ZERO,
            n => BACKOFF_INITIAL.saturating_mul(1u32 << (n - 2).min(16)).min(BACKOFF_MAX),
        };
        for c in &mut self.main {
            if let State::Terminated(t) = &c.state {
                c.last = Some(t.clone());
            }
            c.restart_count += 1;
            c.state = State::Waiting {
                reason: "CrashLoopBackOff".into(),
                message: Some(format!(
                    "back-off {}s restarting failed container={} pod={}",
                    backoff.as_secs(),
                    c.name,
                    self.pod_ref
                )),
            };
        }
        if backoff.is_zero() {
            self.start_main(at, us);
        } else {
            self.stage = Stage::BackOff { restart_at: at + backoff };
        }
    }

    /// A deleted pod's containers stop: those running exit (0, or 137 if killed at the grace period's
    /// end); those that never ran are reported as the status manager's `TerminatePod` reports them.
    fn stop(&mut self, killed: bool, us: i64) {
        let code = if killed { KILLED_EXIT_CODE } else { 0 };
        for c in self.init.iter_mut().chain(self.main.iter_mut()) {
            c.state = match &c.state {
                State::Terminated(t) => State::Terminated(t.clone()),
                State::Running { started_us } => State::Terminated(Terminated {
                    exit_code: code,
                    reason: if killed { "Error" } else { "Completed" }.into(),
                    message: None,
                    started_us: Some(*started_us),
                    finished_us: us,
                    container_id: c.container_id.clone(),
                }),
                State::Waiting { .. } => State::Terminated(Terminated {
                    exit_code: KILLED_EXIT_CODE,
                    reason: "ContainerStatusUnknown".into(),
                    message: Some("The container could not be located when the pod was terminated".into()),
                    started_us: None,
                    finished_us: us,
                    container_id: None,
                }),
            };
            c.started = false;
        }
        for c in &mut self.main {
            c.ready = false;
        }
        self.ready_at.iter_mut().for_each(|r| *r = None);
        self.terminal = true;
        self.sandbox = false;
        self.stage = Stage::Done;
        self.delete_pending = !self.delete_sent;
    }

    /// Recomputes the phase (never leaving a terminal one) and the conditions with their transition times.
    fn refresh(&mut self, now: Now) {
        if !self.phase.is_terminal() {
            self.phase = status::phase(&self.init, &self.main, self.policy, self.terminal);
        }
        let next = status::conditions(&self.init, &self.main, self.phase, self.sandbox);
        let old = std::mem::take(&mut self.conditions);
        self.conditions = next
            .into_iter()
            .map(|c| {
                let since = old
                    .iter()
                    .find(|(o, _)| o.kind == c.kind && o.status == c.status)
                    .map_or(now.unix_us, |(_, since)| *since);
                (c, since)
            })
            .collect();
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    pub fn uid(&self) -> &str {
        &self.uid
    }

    /// Whether the pod's sandbox is gone for good, so that its IP may go to another pod.
    pub fn released(&self) -> bool {
        self.stage == Stage::Done
    }

    /// The kubelet-owned status.
    pub fn status(&self) -> Value {
        let conditions: Vec<Value> = self
            .conditions
            .iter()
            .map(|(c, since)| {
                let mut v = json!({
                    "type": c.kind,
                    "status": if c.status { "True" } else { "False" },
                    "lastProbeTime": null,
                    "lastTransitionTime": status::stamp(*since),
                });
                if let Some(reason) = c.reason {
                    v["reason"] = json!(reason);
                }
                if let Some(message) = &c.message {
                    v["message"] = json!(message);
                }
                v
            })
            .collect();
        let mut out = json!({
            "phase": self.phase.as_str(),
            "conditions": conditions,
            "hostIP": self.host_ip,
            "hostIPs": [{"ip": self.host_ip}],
            "startTime": status::stamp(self.start_time_us),
            "containerStatuses": self.main.iter().map(status::container_json).collect::<Vec<_>>(),
        });
        if !self.init.is_empty() {
            out["initContainerStatuses"] = self.init.iter().map(status::container_json).collect();
        }
        if let Some(ip) = self.pod_ip.as_ref().filter(|_| self.ip_shown) {
            out["podIP"] = json!(ip);
            out["podIPs"] = json!([{"ip": ip}]);
        }
        out
    }

    /// What the node must send now, if anything: the status first, the deletion once the status that
    /// shows the pod stopped is written.
    pub fn pending_write(&self, now: Now) -> Option<Write> {
        if self.retry_at.is_some_and(|at| at > now.at) {
            return None;
        }
        if self.dirty {
            Some(Write::Status(self.status()))
        } else if self.delete_pending {
            Some(Write::Delete)
        } else {
            None
        }
    }

    /// The write went through (or no longer matters: the pod is gone).
    pub fn written(&mut self, write: &Write) {
        self.retry_at = None;
        match write {
            Write::Status(_) => self.dirty = false,
            Write::Delete => {
                self.delete_pending = false;
                self.delete_sent = true;
            }
        }
    }

    /// The write failed; it is sent again a second later.
    pub fn write_failed(&mut self, now: Now) {
        self.retry_at = Some(now.at + RETRY_AFTER);
    }
}

#[cfg(test)]
#[path = "pod_tests.rs"]
mod tests;
