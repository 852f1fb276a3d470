//! Failpoints: named places in the member shell where a test harness can make things go wrong on purpose
//! (delay, drop, fail, crash the node, hold until released).
//!
//! A [`Failpoints`] registry belongs to one member of one simulation. It is created by whoever builds the
//! member (the `sim` harness, or nothing at all in the real binary, which gets a registry with nothing armed)
//! and handed in through [`crate::service::MemberConfig`]; it is never a process global, so two simulations
//! in one process, or two members of one cluster, never see each other's failpoints.
//!
//! The points ([`Point`]) and where each one sits:
//! - [`Point::BeforeWatchResponseSend`] — `service::watch`, after a watch response leaves the member's
//!   outbox and before gRPC sends it to the client. `Drop` loses that one response (the stream goes on),
//!   `Error` ends the stream with an `Unavailable` status, `Delay`/`Hold` stall the whole stream.
//! - [`Point::BeforeWriteAck`] — `service::kv`, after a Put, DeleteRange, Txn or Compaction has been applied
//!   and before its response is returned. The write has taken effect either way: `Error` and `Drop` (which
//!   answer `Unavailable`) therefore produce an ambiguous outcome for the client, as a leader crash after
//!   commit would.
//! - [`Point::BeforeProgressNotify`] — `service::server`, before the periodic progress notification is
//!   computed and queued. `Drop` skips one round of notifications.
//! - [`Point::BeforeCompact`] — `service::kv`, before a Compaction request is proposed (the compaction path's
//!   seam in the shell; the MVCC core stays free of IO). `Drop` and `Error` refuse the compaction with
//!   `Unavailable` before it takes effect.
//!
//! Actions ([`Action`]): `Delay` sleeps on the runtime's clock, `Drop` and `Error` are described per point
//! above, `Crash` calls the crash hook the harness installed (under madsim it kills the node) and then never
//! returns, `Hold` waits until [`Failpoints::release`] is called for the point.
//!
//! Why a crash hook instead of a panic: fake-etcd must not depend on madsim, and a panic would need every
//! node built with `restart_on_panic`, which restarts at a time madsim picks; a hook lets the harness kill
//! the node and decide itself when (and whether) it comes back, and put both in the trace.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;

/// A named place in fake-etcd where a failure can be injected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Point {
    BeforeWatchResponseSend,
    BeforeWriteAck,
    BeforeProgressNotify,
    BeforeCompact,
}

impl Point {
    pub const ALL: [Point; 4] =
        [Point::BeforeWatchResponseSend, Point::BeforeWriteAck, Point::BeforeProgressNotify, Point::BeforeCompact];

    /// The point's stable name, as scenarios and traces spell it.
    pub fn name(self) -> &'static str {
        match self {
            Point::BeforeWatchResponseSend => "before-watch-response-send",
            Point::BeforeWriteAck => "before-write-ack",
            Point::BeforeProgressNotify => "before-progress-notify",
            Point::BeforeCompact => "before-compact",
        }
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failpoint name that names no [`Point`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPoint(pub String);

impl fmt::Display for UnknownPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<&str> = Point::ALL.iter().map(|p| p.name()).collect();
        write!(f, "no failpoint is named {:?} (known: {})", self.0, known.join(", "))
    }
}

impl std::error::Error for UnknownPoint {}

impl FromStr for Point {
    type Err = UnknownPoint;

    fn from_str(s: &str) -> Result<Point, UnknownPoint> {
        Point::ALL.into_iter().find(|p| p.name() == s).ok_or_else(|| UnknownPoint(s.to_string()))
    }
}

/// What an armed point does when execution reaches it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Delay(Duration),
    Drop,
    Error,
    Crash,
    Hold,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Delay(d) => write!(f, "delay {}ms", d.as_millis()),
            Action::Drop => f.write_str("drop"),
            Action::Error => f.write_str("error"),
            Action::Crash => f.write_str("crash"),
            Action::Hold => f.write_str("hold"),
        }
    }
}

/// When an armed point fires: after letting `skip` hits pass, on the next `times` hits (`None`: every hit).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arm {
    pub action: Action,
    pub skip: u32,
    pub times: Option<u32>,
}

impl Arm {
    /// Fires on every hit.
    pub fn always(action: Action) -> Arm {
        Arm { action, skip: 0, times: None }
    }
}

/// What the code at a point must do after [`Failpoints::eval`]: carry on, or give up on what it was doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Injected {
    /// Skip the work (lose the message, skip the tick).
    Drop,
    /// Fail the request or stream.
    Error,
}

impl Injected {
    /// The gRPC status a client sees for an injected failure at `point`.
    pub fn status(self, point: Point) -> tonic::Status {
        tonic::Status::unavailable(format!("fake-etcd: failpoint {point} injected a failure"))
    }
}

type Hook = Arc<dyn Fn() + Send + Sync>;
type Observer = Arc<dyn Fn(Point, &Action) + Send + Sync>;

/// One member's failpoint registry; clones share it.
#[derive(Clone, Default)]
pub struct Failpoints {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    /// A fast path for the common case of nothing armed: no lock on the request path.
    any_armed: AtomicBool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    armed: BTreeMap<Point, Armed>,
    held: BTreeMap<Point, Vec<oneshot::Sender<()>>>,
    crash: Option<Hook>,
    observer: Option<Observer>,
}

struct Armed {
    arm: Arm,
    hits: u32,
    fired: u32,
}

impl fmt::Debug for Failpoints {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.lock();
        let armed: Vec<String> = st.armed.iter().map(|(p, a)| format!("{p}={}", a.arm.action)).collect();
        f.debug_struct("Failpoints").field("armed", &armed).finish()
    }
}

impl Failpoints {
    pub fn new() -> Failpoints {
        Failpoints::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.state.lock().expect("failpoint registry lock poisoned")
    }

    /// Arms `point`, replacing whatever it was armed with.
    pub fn arm(&self, point: Point, arm: Arm) {
        let mut st = self.lock();
        st.armed.insert(point, Armed { arm, hits: 0, fired: 0 });
        self.inner.any_armed.store(true, Ordering::SeqCst);
    }

    /// Disarms `point` and releases anything it holds.
    pub fn disarm(&self, point: Point) {
        let mut st = self.lock();
        st.armed.remove(&point);
        self.inner.any_armed.store(!st.armed.is_empty(), Ordering::SeqCst);
        for tx in st.held.remove(&point).unwrap_or_default() {
            let _ = tx.send(());
        }
    }

    /// Lets every execution held at `point` continue; the point stays armed.
    pub fn release(&self, point: Point) {
        let mut st = self.lock();
        for tx in st.held.remove(&point).unwrap_or_default() {
            // A receiver gone means its task was dropped (the node was killed): nothing to release.
            let _ = tx.send(());
        }
    }

    /// How often `point` has fired since it was armed.
    pub fn fired(&self, point: Point) -> u32 {
        self.lock().armed.get(&point).map_or(0, |a| a.fired)
    }

    /// Installs what `Action::Crash` calls to crash this member's node.
    pub fn set_crash_hook(&self, hook: impl Fn() + Send + Sync + 'static) {
        self.lock().crash = Some(Arc::new(hook));
    }

    /// Installs a callback told about every firing (the harness writes it to its trace).
    pub fn set_observer(&self, observer: impl Fn(Point, &Action) + Send + Sync + 'static) {
        self.lock().observer = Some(Arc::new(observer));
    }

    /// Called by the code at `point`: does nothing unless the point is armed and due to fire, then performs
    /// the action. `Err` tells the caller to drop or fail what it was doing.
    pub async fn eval(&self, point: Point) -> Result<(), Injected> {
        if !self.inner.any_armed.load(Ordering::SeqCst) {
            return Ok(());
        }
        let (action, observer, crash, held) = {
            let mut st = self.lock();
            let Some(armed) = st.armed.get_mut(&point) else { return Ok(()) };
            armed.hits += 1;
            let due = armed.hits > armed.arm.skip && armed.arm.times.is_none_or(|t| armed.fired < t);
            if !due {
                return Ok(());
            }
            armed.fired += 1;
            let action = armed.arm.action.clone();
            let held = if action == Action::Hold {
                let (tx, rx) = oneshot::channel();
                st.held.entry(point).or_default().push(tx);
                Some(rx)
            } else {
                None
            };
            (action, st.observer.clone(), st.crash.clone(), held)
        };
        // Callbacks run outside the lock, so that they may use the registry themselves.
        if let Some(observe) = observer {
            observe(point, &action);
        }
        match action {
            Action::Delay(d) => {
                tokio::time::sleep(d).await;
                Ok(())
            }
            Action::Drop => Err(Injected::Drop),
            Action::Error => Err(Injected::Error),
            Action::Hold => {
                if let Some(rx) = held {
                    let _ = rx.await;
                }
                Ok(())
            }
            Action::Crash => {
                let hook = crash.unwrap_or_else(|| {
                    panic!("failpoint {point} armed with crash, but no crash hook is installed (a harness bug)")
                });
                hook();
                // The node is being killed; its tasks are dropped at their next await, this one included.
                std::future::pending::<()>().await;
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for p in Point::ALL {
            assert_eq!(p.name().parse::<Point>(), Ok(p));
        }
        let err = "before-everything".parse::<Point>().unwrap_err();
        assert!(err.to_string().contains("before-everything"), "{err}");
        assert!(err.to_string().contains("before-write-ack"), "{err}");
    }

    #[tokio::test]
    async fn skip_and_times_choose_which_hits_fire() {
        let fp = Failpoints::new();
        assert_eq!(fp.eval(Point::BeforeWriteAck).await, Ok(()));
        fp.arm(Point::BeforeWriteAck, Arm { action: Action::Drop, skip: 1, times: Some(2) });
        let got: Vec<_> = [0; 5].iter().map(|_| futures::executor::block_on(fp.eval(Point::BeforeWriteAck))).collect();
        assert_eq!(got, vec![Ok(()), Err(Injected::Drop), Err(Injected::Drop), Ok(()), Ok(())]);
        assert_eq!(fp.fired(Point::BeforeWriteAck), 2);
        // Other points are unaffected.
        assert_eq!(fp.eval(Point::BeforeCompact).await, Ok(()));
        fp.disarm(Point::BeforeWriteAck);
        assert_eq!(fp.eval(Point::BeforeWriteAck).await, Ok(()));
    }

    #[tokio::test]
    async fn hold_waits_for_release() {
        let fp = Failpoints::new();
        fp.arm(Point::BeforeCompact, Arm::always(Action::Hold));
        let waiting = tokio::spawn({
            let fp = fp.clone();
            async move { fp.eval(Point::BeforeCompact).await }
        });
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        assert!(!waiting.is_finished());
        fp.release(Point::BeforeCompact);
        assert_eq!(waiting.await.unwrap(), Ok(()));
    }
}
