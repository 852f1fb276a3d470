//! The failpoint registry: named places in a component's code where a test harness can make things go wrong
//! on purpose (delay, drop, fail, crash the node, hold until released); and, in [`bug`], the bug switches
//! that put a historical bug back where it lived.
//!
//! The registry is generic over the component's set of points ([`Point`]): fake-etcd and the apiserver each
//! declare their own points, as an enum with stable names, and share this one implementation of arming,
//! counting, holding and observing. Neither crate depends on the other, and neither knows the harness.
//!
//! A [`Failpoints`] registry belongs to one node of one simulation. It is created by whoever builds the
//! component (the `sim` harness, or nothing at all in a real binary, which gets a registry with nothing armed)
//! and handed in through the component's configuration; it is never a process global, so two simulations in
//! one process, or two nodes of one cluster, never see each other's failpoints.
//!
//! Actions ([`Action`]): `Delay` sleeps on the runtime's clock (madsim's under simulation), `Drop` and `Error`
//! are returned to the code at the point, which says in its own docs what they mean there, `Crash` calls the
//! crash hook the harness installed and then never returns, `Hold` waits until [`Failpoints::release`].
//!
//! Why a crash hook instead of a panic: the components must not depend on madsim, and a panic would need every
//! node built with `restart_on_panic`, which restarts at a time madsim picks; a hook lets the harness kill the
//! node and decide itself when (and whether) it comes back, and put both in the trace.

pub mod bug;

pub use bug::{Bug, BugSet, UnknownBug};

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;

/// A component's set of failpoints: a small enum whose every value has a stable name.
pub trait Point: Copy + Ord + fmt::Debug + Send + Sync + 'static {
    /// Every point, in the order error messages list them.
    const ALL: &'static [Self];

    /// The point's stable name, as scenarios and traces spell it.
    fn name(self) -> &'static str;
}

/// Declares a component's set of points: the enum, its `ALL` list and stable names, and the [`Point`],
/// `Display` and `FromStr` impls every set needs, so that a component writes each point and its name once.
///
/// ```
/// kubesim_failpoints::points! {
///     /// Where the example component can fail.
///     pub enum Point {
///         /// Before the example writes.
///         BeforeWrite => "before-write",
///     }
/// }
/// assert_eq!("before-write".parse::<Point>(), Ok(Point::BeforeWrite));
/// assert_eq!(Point::BeforeWrite.to_string(), "before-write");
/// ```
#[macro_export]
macro_rules! points {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal,)+ }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        $vis enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every point, in declaration order (the order error messages list them).
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The point's stable name, as scenarios, harnesses and traces spell it.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl $crate::Point for $name {
            const ALL: &'static [$name] = $name::ALL;

            fn name(self) -> &'static str {
                $name::name(self)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::UnknownPoint;

            fn from_str(s: &str) -> Result<$name, $crate::UnknownPoint> {
                $crate::parse(s)
            }
        }
    };
}

/// The point of kind `P` named `name`.
pub fn parse<P: Point>(name: &str) -> Result<P, UnknownPoint> {
    P::ALL
        .iter()
        .copied()
        .find(|p| p.name() == name)
        .ok_or_else(|| UnknownPoint { name: name.to_string(), known: P::ALL.iter().map(|p| p.name()).collect() })
}

/// A failpoint name that names no point of the component asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPoint {
    pub name: String,
    /// The names the component does define.
    pub known: Vec<&'static str>,
}

impl fmt::Display for UnknownPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no failpoint is named {:?} (known: {})", self.name, self.known.join(", "))
    }
}

impl std::error::Error for UnknownPoint {}

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

    /// Fires once, on the hit after the first `skip`.
    pub fn once_after(skip: u32, action: Action) -> Arm {
        Arm { action, skip, times: Some(1) }
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

type Hook = Arc<dyn Fn() + Send + Sync>;
type Observer<P> = Arc<dyn Fn(P, &Action) + Send + Sync>;

/// One node's failpoint registry for the points `P`; clones share it.
pub struct Failpoints<P: Point> {
    inner: Arc<Inner<P>>,
}

impl<P: Point> Clone for Failpoints<P> {
    fn clone(&self) -> Self {
        Failpoints { inner: self.inner.clone() }
    }
}

impl<P: Point> Default for Failpoints<P> {
    fn default() -> Self {
        Failpoints::new()
    }
}

struct Inner<P: Point> {
    /// A fast path for the common case of nothing armed: no lock on the request path.
    any_armed: AtomicBool,
    state: Mutex<State<P>>,
}

struct State<P: Point> {
    armed: BTreeMap<P, Armed>,
    held: BTreeMap<P, Vec<oneshot::Sender<()>>>,
    crash: Option<Hook>,
    observer: Option<Observer<P>>,
}

struct Armed {
    arm: Arm,
    hits: u32,
    fired: u32,
}

impl<P: Point> fmt::Debug for Failpoints<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.lock();
        let armed: Vec<String> = st.armed.iter().map(|(p, a)| format!("{}={}", p.name(), a.arm.action)).collect();
        f.debug_struct("Failpoints").field("armed", &armed).finish()
    }
}

impl<P: Point> Failpoints<P> {
    pub fn new() -> Failpoints<P> {
        let state = State { armed: BTreeMap::new(), held: BTreeMap::new(), crash: None, observer: None };
        Failpoints { inner: Arc::new(Inner { any_armed: AtomicBool::new(false), state: Mutex::new(state) }) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<P>> {
        self.inner.state.lock().expect("failpoint registry lock poisoned")
    }

    /// Arms `point`, replacing whatever it was armed with.
    pub fn arm(&self, point: P, arm: Arm) {
        let mut st = self.lock();
        st.armed.insert(point, Armed { arm, hits: 0, fired: 0 });
        self.inner.any_armed.store(true, Ordering::SeqCst);
    }

    /// Disarms `point` and releases anything it holds.
    pub fn disarm(&self, point: P) {
        let mut st = self.lock();
        st.armed.remove(&point);
        self.inner.any_armed.store(!st.armed.is_empty(), Ordering::SeqCst);
        for tx in st.held.remove(&point).unwrap_or_default() {
            let _ = tx.send(());
        }
    }

    /// Lets every execution held at `point` continue; the point stays armed.
    pub fn release(&self, point: P) {
        let mut st = self.lock();
        for tx in st.held.remove(&point).unwrap_or_default() {
            // A receiver gone means its task was dropped (the node was killed): nothing to release.
            let _ = tx.send(());
        }
    }

    /// How often `point` has fired since it was armed.
    pub fn fired(&self, point: P) -> u32 {
        self.lock().armed.get(&point).map_or(0, |a| a.fired)
    }

    /// How many executions are waiting at `point` for a release.
    pub fn held(&self, point: P) -> usize {
        self.lock().held.get(&point).map_or(0, |h| h.iter().filter(|tx| !tx.is_closed()).count())
    }

    /// Installs what `Action::Crash` calls to crash this node.
    pub fn set_crash_hook(&self, hook: impl Fn() + Send + Sync + 'static) {
        self.lock().crash = Some(Arc::new(hook));
    }

    /// Installs a callback told about every firing (the harness writes it to its trace).
    pub fn set_observer(&self, observer: impl Fn(P, &Action) + Send + Sync + 'static) {
        self.lock().observer = Some(Arc::new(observer));
    }

    /// Called by the code at `point`: does nothing unless the point is armed and due to fire, then performs
    /// the action. `Err` tells the caller to drop or fail what it was doing.
    pub async fn eval(&self, point: P) -> Result<(), Injected> {
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
                    panic!(
                        "failpoint {} armed with crash, but no crash hook is installed (a harness bug)",
                        point.name()
                    )
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

    points! {
        enum Demo {
            A => "before-a",
            B => "before-b",
        }
    }

    #[test]
    fn names_parse_and_unknown_names_list_the_known_ones() {
        assert_eq!(parse::<Demo>("before-b"), Ok(Demo::B));
        let err = parse::<Demo>("before-lunch").unwrap_err();
        assert_eq!(err.to_string(), "no failpoint is named \"before-lunch\" (known: before-a, before-b)");
    }

    #[tokio::test]
    async fn skip_and_times_choose_which_hits_fire() {
        let fp = Failpoints::<Demo>::new();
        assert_eq!(fp.eval(Demo::A).await, Ok(()));
        fp.arm(Demo::A, Arm { action: Action::Drop, skip: 1, times: Some(2) });
        let got: Vec<_> = [0; 5].iter().map(|_| futures::executor::block_on(fp.eval(Demo::A))).collect();
        assert_eq!(got, vec![Ok(()), Err(Injected::Drop), Err(Injected::Drop), Ok(()), Ok(())]);
        assert_eq!(fp.fired(Demo::A), 2);
        // Other points are unaffected.
        assert_eq!(fp.eval(Demo::B).await, Ok(()));
        fp.disarm(Demo::A);
        assert_eq!(fp.eval(Demo::A).await, Ok(()));
    }

    #[tokio::test]
    async fn hold_waits_for_release() {
        let fp = Failpoints::<Demo>::new();
        fp.arm(Demo::B, Arm::always(Action::Hold));
        let waiting = tokio::spawn({
            let fp = fp.clone();
            async move { fp.eval(Demo::B).await }
        });
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        assert!(!waiting.is_finished());
        assert_eq!(fp.held(Demo::B), 1);
        fp.release(Demo::B);
        assert_eq!(waiting.await.unwrap(), Ok(()));
    }
}
