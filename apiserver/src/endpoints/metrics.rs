//! `/metrics`: request counts and latencies under kube-apiserver's metric names and labels
//! (`apiserver_request_total`, `apiserver_request_duration_seconds`, `apiserver_longrunning_requests`;
//! k8s.io/apiserver `pkg/endpoints/metrics`), in the Prometheus text format.
//!
//! Durations are measured on the runtime's clock (madsim's under simulation), so a simulated run's
//! figures are as deterministic as the run.

use std::time::Duration;

use prometheus::{Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder};

use crate::endpoints::request_info::Action;

/// The buckets of `apiserver_request_duration_seconds`.
const DURATION_BUCKETS_S: &[f64] = &[
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0,
    45.0, 60.0,
];

const LABELS: &[&str] = &["component", "dry_run", "group", "resource", "scope", "subresource", "verb", "version"];

/// The labels of one request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RequestLabels {
    pub verb: String,
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    /// `resource` (one object), `namespace` (a collection in a namespace) or `cluster`.
    pub scope: String,
    pub dry_run: bool,
}

impl RequestLabels {
    /// The labels of a resource request.
    pub(crate) fn resource(
        action: Action,
        group: &str,
        version: &str,
        resource: &str,
        sub: &str,
        namespace: &str,
        name: &str,
        dry_run: bool,
    ) -> RequestLabels {
        let scope = if !name.is_empty() {
            "resource"
        } else if !namespace.is_empty() {
            "namespace"
        } else {
            "cluster"
        };
        RequestLabels {
            verb: metric_verb(action).into(),
            group: group.into(),
            version: version.into(),
            resource: resource.into(),
            subresource: sub.into(),
            scope: scope.into(),
            dry_run,
        }
    }

    fn values(&self) -> [&str; 8] {
        let dry_run = if self.dry_run { "All" } else { "" };
        ["apiserver", dry_run, &self.group, &self.resource, &self.scope, &self.subresource, &self.verb, &self.version]
    }
}

/// The verb label: the method for writes (`POST`, `PUT`, `PATCH`, `DELETE`), the action for reads.
fn metric_verb(action: Action) -> &'static str {
    match action {
        Action::Get => "GET",
        Action::List => "LIST",
        Action::Watch => "WATCH",
        Action::Create => "POST",
        Action::Update => "PUT",
        Action::Patch => "PATCH",
        Action::Delete => "DELETE",
        Action::DeleteCollection => "DELETECOLLECTION",
    }
}

/// The server's metrics, in a registry of its own (never the process-global default).
pub(crate) struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    durations: HistogramVec,
    long_running: IntGaugeVec,
}

impl Default for Metrics {
    fn default() -> Metrics {
        let registry = Registry::new();
        let mut with_code: Vec<&str> = vec!["code"];
        with_code.extend_from_slice(LABELS);
        let requests = IntCounterVec::new(
            Opts::new(
                "apiserver_request_total",
                "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
            ),
            &with_code,
        )
        .expect("valid metric");
        let durations = HistogramVec::new(
            HistogramOpts::new(
                "apiserver_request_duration_seconds",
                "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
            )
            .buckets(DURATION_BUCKETS_S.to_vec()),
            LABELS,
        )
        .expect("valid metric");
        let long_running = IntGaugeVec::new(
            Opts::new(
                "apiserver_longrunning_requests",
                "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.",
            ),
            &["component", "group", "resource", "scope", "subresource", "verb", "version"],
        )
        .expect("valid metric");
        registry.register(Box::new(requests.clone())).expect("registered once");
        registry.register(Box::new(durations.clone())).expect("registered once");
        registry.register(Box::new(long_running.clone())).expect("registered once");
        Metrics { registry, requests, durations, long_running }
    }
}

impl Metrics {
    /// Records a finished request.
    pub(crate) fn observe(&self, labels: &RequestLabels, code: u16, took: Duration) {
        let code = code.to_string();
        let mut values: Vec<&str> = vec![&code];
        values.extend_from_slice(&labels.values());
        self.requests.with_label_values(&values).inc();
        self.durations.with_label_values(&labels.values()).observe(took.as_secs_f64());
    }

    /// Counts a watch in (`delta` 1) or out (-1).
    pub(crate) fn long_running(&self, labels: &RequestLabels, delta: i64) {
        let l = labels;
        self.long_running
            .with_label_values(&["apiserver", &l.group, &l.resource, &l.scope, &l.subresource, &l.verb, &l.version])
            .add(delta);
    }

    /// Every metric in the Prometheus text format.
    pub(crate) fn render(&self) -> String {
        let mut out = Vec::new();
        TextEncoder::new().encode(&self.registry.gather(), &mut out).expect("text encoding to memory");
        String::from_utf8(out).expect("the text format is UTF-8")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_under_kube_names() {
        let metrics = Metrics::default();
        let labels = RequestLabels::resource(Action::List, "", "v1", "configmaps", "", "default", "", false);
        metrics.observe(&labels, 200, Duration::from_millis(3));
        let text = metrics.render();
        assert!(
            text.contains(r#"apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"} 1"#),
            "{text}"
        );
        assert!(text.contains("apiserver_request_duration_seconds_bucket{"), "{text}");
    }
}
