//! The `--html PATH` and `--perfetto PATH` options of `kubesim run` and `kubesim traffic`: builds the
//! report from the finished run's trace, history and judgement (`sim::report`) and writes the files,
//! printing each file's size and how long writing it took (the wall clock, read in this parent only
//! after the simulation has ended, for the README's figures).
//!
//! A run that panics midway hands nothing back, so while a report is wanted this process keeps its own
//! copy of the trace lines as they are emitted (every line is also a `tracing` event, target
//! `kubesim::trace`) and of panic messages; the report of a run that panicked is built from those. The
//! copy only listens: the trace the run writes is the same with or without it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use sim::report::{self, Report};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

#[derive(clap::Args, Clone, Debug, Default)]
pub struct ReportArgs {
    /// Write the run's HTML timeline report (self-contained, opens offline) to this file.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// Write the run as Chrome trace-event JSON (opens in Perfetto or chrome://tracing) to this file.
    #[arg(long, value_name = "PATH", alias = "chrome-trace")]
    pub perfetto: Option<PathBuf>,
}

impl ReportArgs {
    pub fn wanted(&self) -> bool {
        self.html.is_some() || self.perfetto.is_some()
    }
}

/// Trace lines and panic messages seen so far in this process.
#[derive(Default)]
pub struct Captured {
    pub lines: Vec<String>,
    /// Each panic message with the number of trace lines before it.
    pub panics: Vec<(usize, String)>,
}

fn captured() -> &'static Arc<Mutex<Captured>> {
    static CAPTURED: OnceLock<Arc<Mutex<Captured>>> = OnceLock::new();
    CAPTURED.get_or_init(Arc::default)
}

/// Copies every trace line into [`Captured`].
struct TraceCopy;

struct Message(Option<String>);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = Some(format!("{value:?}"));
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0 = Some(value.to_string());
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for TraceCopy {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() != "kubesim::trace" {
            return;
        }
        let mut m = Message(None);
        event.record(&mut m);
        if let Some(line) = m.0 {
            captured().lock().expect("capture lock").lines.push(line);
        }
    }
}

/// Starts keeping the copy of trace lines and panic messages. Call once, before the run.
pub fn start_capture() {
    let subscriber = tracing_subscriber::registry()
        .with(TraceCopy.with_filter(tracing_subscriber::filter::filter_fn(|m| m.target() == "kubesim::trace")));
    // Another subscriber (RUST_LOG) already set means no copy; a run that panics then has no report.
    let _ = tracing::subscriber::set_global_default(subscriber);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = match (info.payload().downcast_ref::<&str>(), info.payload().downcast_ref::<String>()) {
            (Some(s), _) => s.to_string(),
            (_, Some(s)) => s.clone(),
            _ => "(a panic without a message)".to_string(),
        };
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        if let Ok(mut c) = captured().lock() {
            let n = c.lines.len();
            c.panics.push((n, format!("{message}{at}")));
        }
        previous(info);
    }));
}

/// The copy kept so far.
pub fn take_captured() -> Captured {
    std::mem::take(&mut *captured().lock().expect("capture lock"))
}

/// The payload of a caught panic as text.
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(s), _) => s.to_string(),
        (_, Some(s)) => s.clone(),
        _ => "(a panic without a message)".to_string(),
    }
}

/// Builds the report of `data` and writes the files asked for. Returns false when a file cannot be
/// written (the reason printed).
pub fn write(args: &ReportArgs, data: &report::RunData<'_>) -> bool {
    let (report, built) = crate::wall_time(|| report::build(data));
    let mut ok = true;
    if let Some(path) = &args.html {
        let (page, ms) = crate::wall_time(|| report::html::page(&report));
        ok &= save(path, &page, "HTML report", built + ms, &report);
    }
    if let Some(path) = &args.perfetto {
        let (json, ms) = crate::wall_time(|| report::perfetto::trace_events(&report).to_string());
        ok &= save(path, &json, "Perfetto trace", built + ms, &report);
    }
    ok
}

fn save(path: &Path, text: &str, what: &str, took: std::time::Duration, r: &Report) -> bool {
    match std::fs::write(path, text) {
        Ok(()) => {
            let counts = r.counts();
            eprintln!(
                "kubesim: {what} written to {} ({} bytes; {} lanes, {} requests, {} watch events, {} violations; \
                 built in {:.1} ms)",
                path.display(),
                text.len(),
                r.lanes.len(),
                counts.requests,
                counts.watch_events,
                r.violations.len(),
                took.as_secs_f64() * 1e3
            );
            true
        }
        Err(e) => {
            eprintln!("kubesim: cannot write the {what} to {}: {e}", path.display());
            false
        }
    }
}
