//! Reports of one run, built after the run from what it already recorded (the trace, the history and
//! the verdicts), never from a second recording, so that writing a report cannot change a trace:
//!
//! - [`input`]: what a run hands over ([`RunData`]), with [`kube_input`] what its Kubernetes clients did
//!   ([`KubeData`]);
//! - [`model`]: the report's data (lanes, fault spans, markers, request bars, watch ticks, violations);
//! - [`build`]: the data from a run, with [`trace_line`] reading node events back from the trace,
//!   [`history`] the etcd bars and ticks, [`kube`] the Kubernetes clients' (requests, controller
//!   attempts, watch events, informer lanes, `apiserver` workloads), and [`violations`] what each
//!   violation points at;
//! - [`html`]: one self-contained HTML page (inline CSS and JavaScript, `page.css` and `page.js`) with
//!   the timeline, zoom and pan, and the violations; [`index`]: a sweep's index of failing seeds;
//! - [`perfetto`]: the Chrome trace-event JSON that Perfetto opens;
//! - [`scenario`] (simulation build): [`RunData`] from a scenario run and its judgement, with
//!   [`scenario_kube`] copying what its Kubernetes steps observed.
//!
//! Lanes come from the members, the clients and the trace's node names, so an apiserver node that writes
//! trace lines gets its lane. An apiserver scenario's report shows each Kubernetes client's requests as
//! bars (2xx ok, a 4xx refusal an error, a 429, a 5xx or no answer unknown) and its watch events as
//! ticks, a controller's attempts as bars, a lane per informer with each list (its resourceVersion and
//! apiserver) and event it believed, its relists, 410s, tombstones and restarts, and its store at the
//! end against etcd's; a failing Kubernetes step or informer guarantee is marked where it points.

pub mod build;
pub mod history;
pub mod html;
pub mod index;
pub mod input;
pub mod kube;
pub mod kube_input;
pub mod model;
pub mod perfetto;
#[cfg(madsim)]
pub mod scenario;
#[cfg(madsim)]
pub mod scenario_kube;
pub mod trace_line;
pub mod violations;

pub use build::build;
pub use input::{CheckInput, FindingInput, KubeData, RunData, Target};
pub use model::Report;
