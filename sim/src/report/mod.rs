//! Reports of one run, built after the run from what it already recorded (the trace, the history and
//! the verdicts), never from a second recording, so that writing a report cannot change a trace:
//!
//! - [`input`]: what a run hands over ([`RunData`]);
//! - [`model`]: the report's data (lanes, fault spans, markers, request bars, watch ticks, violations);
//! - [`build`]: the data from a run, with [`trace_line`] reading node events back from the trace,
//!   [`history`] the bars and ticks, and [`violations`] what each violation points at;
//! - [`html`]: one self-contained HTML page (inline CSS and JavaScript, `page.css` and `page.js`) with
//!   the timeline, zoom and pan, and the violations; [`index`]: a sweep's index of failing seeds;
//! - [`perfetto`]: the Chrome trace-event JSON that Perfetto opens;
//! - [`scenario`] (simulation build): [`RunData`] from a scenario run and its judgement.
//!
//! Lanes come from the trace's node names, so an apiserver node that writes trace lines gets its lane.

pub mod build;
pub mod history;
pub mod html;
pub mod index;
pub mod input;
pub mod model;
pub mod perfetto;
#[cfg(madsim)]
pub mod scenario;
pub mod trace_line;
pub mod violations;

pub use build::build;
pub use input::{CheckInput, FindingInput, RunData, Target};
pub use model::Report;
