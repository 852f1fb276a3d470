//! CronJobs, `batch/v1` (`KK/pkg/registry/batch/cronjob`, `KK/pkg/apis/batch/validation`
//! `ValidateCronJobCreate` / `ValidateCronJobUpdate`, `KK/pkg/apis/batch/v1/defaults.go`): namespaced,
//! short name `cj`, category `all`, a `/status` subresource. Names are DNS subdomains of at most 52
//! characters on create (the controller appends an 11-character suffix to name its jobs); updates skip
//! that limit. v1's defaults: `concurrencyPolicy: Allow`, not suspended, three successful and one failed
//! job kept; the job template's pod template gets the pod defaults a Job's template gets. The schedule is
//! read by robfig/cron's standard parser (`crate::cron`, which the CronJob controller shares; five fields, or a `@hourly`-style descriptor or `@every
//! <duration>`), with its error texts; `TZ=` and `CRON_TZ=` are refused in it (kept on update when the
//! stored schedule had them, unless `timeZone` is set too); `spec.timeZone` must name an IANA zone (and
//! is checked only when it changes on update); history limits and `startingDeadlineSeconds` are not
//! negative; the job template's spec is checked as a Job's (counts, completion mode, containers, a restart
//! policy of `OnFailure` or `Never`), has no selector and no `manualSelector: true`. The main endpoint
//! resets the status (empty on create, the stored one on update) and bumps the generation when the spec
//! changes; `/status` keeps the stored spec. Deleting answers a `Status` (the store does not return the
//! deleted object, and `batch/v1` deletes dependents in the background).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::networking::ingresses::invalid_go;
use crate::apis::printers::apps::{template_cells, template_columns};
use crate::apis::printers::{age, age_column, doc_column, name, name_column, since};
use crate::apis::{status, Printer, ResourceInfo};
use crate::cron;
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::workloads::{self, format_label_selector, go_label_selector};
use crate::registry::strategies::{bump_generation_on_spec_change, common, start_generation};
use crate::registry::strategy::{DeleteStrategy, Strategy, Subresource};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        short_names: &["cj"],
        categories: &["all"],
        subresources: vec![status("CronJob")],
        ..ResourceInfo::new(resource(), "cronjob", Arc::new(CronJobs), printer())
    }
}

fn resource() -> Resource {
    Resource::group("batch", "v1", "CronJob", "cronjobs")
}

/// The concurrency policies, in the order the message lists them.
const CONCURRENCY_POLICIES: &[&str] = &["Allow", "Forbid", "Replace"];
/// The longest name a cron job may get: a job name (a DNS label, 63) less the controller's suffix.
const MAX_NAME_LENGTH: usize = 52;
const NON_NEGATIVE: &str = "must be greater than or equal to 0";
/// The job template's restart policies.
const RESTART_POLICIES: &[&str] = &["OnFailure", "Never"];
/// The pod replacement policies, sorted.
const POD_REPLACEMENT_POLICIES: &[&str] = &["Failed", "TerminatingOrFailed"];
const COMPLETION_MODES: &[&str] = &["NonIndexed", "Indexed"];

/// `SetDefaults_CronJob`, and the pod defaults of the job template's pod template. The template's own
/// metadata (a struct, not a pointer, in Go) always shows `creationTimestamp: null`.
fn set_defaults(obj: &mut Value) {
    workloads::default_at(obj, &["spec"], "concurrencyPolicy", json!("Allow"));
    workloads::default_spec_field(obj, "suspend", json!(false));
    workloads::default_spec_field(obj, "successfulJobsHistoryLimit", json!(3));
    workloads::default_spec_field(obj, "failedJobsHistoryLimit", json!(1));
    if let Some(template) = obj.pointer_mut("/spec/jobTemplate").filter(|t| t.is_object()) {
        workloads::default_template(template);
        if let Some(Value::Object(metadata)) =
            template.as_object_mut().map(|t| t.entry("metadata").or_insert_with(|| json!({})))
        {
            metadata.entry("creationTimestamp").or_insert(Value::Null);
        }
    }
}

fn int_at(obj: &Value, pointer: &str) -> Option<i64> {
    obj.pointer(pointer).and_then(Value::as_i64)
}

fn set(obj: &Value, pointer: &str) -> bool {
    obj.pointer(pointer).is_some_and(|v| !v.is_null())
}

/// `validateJobSpec` over the job template (`template` is `spec.jobTemplate`: its fields are the Job's
/// under `spec`), then `ValidateJobTemplateSpec`'s own rules; paths are the Job's, prefixed by the caller.
fn validate_job_template(template: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in ["parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"] {
        errs.extend(workloads::validate_non_negative(template, &format!("/spec/{field}"), &format!("spec.{field}")));
    }
    errs.extend(workloads::validate_non_negative(template, "/spec/backoffLimitPerIndex", "spec.backoffLimitPerIndex"));
    if set(template, "/spec/maxFailedIndexes") {
        errs.extend(workloads::validate_non_negative(template, "/spec/maxFailedIndexes", "spec.maxFailedIndexes"));
        if !set(template, "/spec/backoffLimitPerIndex") {
            errs.push(FieldError::required("spec.backoffLimitPerIndex", "when maxFailedIndexes is specified"));
        }
    }
    let mode = template.pointer("/spec/completionMode").and_then(Value::as_str);
    if let Some(mode) = mode {
        if !COMPLETION_MODES.contains(&mode) {
            errs.push(FieldError::not_supported("spec.completionMode", mode, COMPLETION_MODES));
        }
        if mode == "Indexed" && !set(template, "/spec/completions") {
            errs.push(FieldError::required("spec.completions", "when completion mode is Indexed"));
        }
    }
    if mode.is_none_or(|m| m == "NonIndexed") {
        for field in ["backoffLimitPerIndex", "maxFailedIndexes"] {
            if let Some(value) = int_at(template, &format!("/spec/{field}")) {
                errs.push(FieldError::invalid_int(&format!("spec.{field}"), value, "requires indexed completion mode"));
            }
        }
    }
    if !set(template, "/spec/podFailurePolicy") {
        if let Some(policy) = template.pointer("/spec/podReplacementPolicy").and_then(Value::as_str) {
            if !POD_REPLACEMENT_POLICIES.contains(&policy) {
                errs.push(FieldError::not_supported("spec.podReplacementPolicy", policy, POD_REPLACEMENT_POLICIES));
            }
        }
    }
    // The Job's template checks; a restart policy of `Always` (what the pod defaults give one left out) or
    // none is a missing value to the Job's validation, with the values it takes.
    let policy = template.pointer("/spec/template/spec/restartPolicy").and_then(Value::as_str).unwrap_or("");
    for err in workloads::validate_template_spec(template, RESTART_POLICIES) {
        if err.field == "spec.template.spec.restartPolicy" && (policy.is_empty() || policy == "Always") {
            errs.push(FieldError::required(&err.field, "valid values: \"OnFailure\", \"Never\""));
        } else {
            errs.push(err);
        }
    }
    if let Some(selector) = template.pointer("/spec/selector").filter(|s| !s.is_null()) {
        errs.push(invalid_go("spec.selector", go_label_selector(Some(selector)), "`selector` will be auto-generated"));
    }
    if template.pointer("/spec/manualSelector").and_then(Value::as_bool) == Some(true) {
        errs.push(FieldError {
            kind: FieldErrorType::NotSupported,
            field: "spec.manualSelector".into(),
            value: BadValue::GoSyntax("true".into()),
            detail: "supported values: \"nil\", \"false\"".into(),
        });
    }
    errs
}

/// `validateCronJobSpec`; `old` is the stored object on update.
fn validate_spec(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let schedule = obj.pointer("/spec/schedule").and_then(Value::as_str).unwrap_or("");
    let zone_at = |obj: &Value| obj.pointer("/spec/timeZone").filter(|v| !v.is_null()).cloned();
    let time_zone = obj.pointer("/spec/timeZone").and_then(Value::as_str);
    if schedule.is_empty() {
        errs.push(FieldError::required("spec.schedule", ""));
    } else {
        let allow_tz =
            old.is_some_and(|old| old.pointer("/spec/schedule").and_then(Value::as_str).unwrap_or("").contains("TZ"));
        if let Err(message) = cron::Schedule::parse_standard(schedule) {
            errs.push(FieldError::invalid("spec.schedule", schedule, &message));
        }
        if schedule.contains("TZ") {
            if !allow_tz {
                errs.push(FieldError::invalid(
                    "spec.schedule",
                    schedule,
                    "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
                ));
            } else if time_zone.is_some() {
                errs.push(FieldError::invalid(
                    "spec.schedule",
                    schedule,
                    "cannot use both timeZone field and TZ or CRON_TZ in schedule",
                ));
            }
        }
    }
    if let Some(deadline) = int_at(obj, "/spec/startingDeadlineSeconds") {
        if deadline < 0 {
            errs.push(FieldError::invalid_int("spec.startingDeadlineSeconds", deadline, NON_NEGATIVE));
        }
    }
    let zone_changed = old.is_none_or(|old| zone_at(old) != zone_at(obj));
    if let (true, Some(zone)) = (zone_changed, time_zone) {
        errs.extend(validate_time_zone(zone));
    }
    let policy = obj.pointer("/spec/concurrencyPolicy").and_then(Value::as_str).unwrap_or("");
    if policy.is_empty() {
        errs.push(FieldError::required("spec.concurrencyPolicy", ""));
    } else if !CONCURRENCY_POLICIES.contains(&policy) {
        errs.push(FieldError::not_supported("spec.concurrencyPolicy", policy, CONCURRENCY_POLICIES));
    }
    let empty = json!({});
    let template = obj.pointer("/spec/jobTemplate").filter(|t| t.is_object()).unwrap_or(&empty);
    errs.extend(validate_job_template(template).into_iter().map(|mut e| {
        e.field = format!("spec.jobTemplate.{}", e.field);
        e
    }));
    for field in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
        errs.extend(workloads::validate_non_negative(obj, &format!("/spec/{field}"), &format!("spec.{field}")));
    }
    errs
}

/// `validateTimeZone`: an explicit IANA zone, by its name's shape and then the zone database.
fn validate_time_zone(zone: &str) -> Vec<FieldError> {
    let field = "spec.timeZone";
    if zone.is_empty() {
        return vec![FieldError::invalid(field, zone, "timeZone must be nil or non-empty string")];
    }
    let part_ok = |part: &str| {
        (1..=14).contains(&part.len())
            && part != "."
            && part != ".."
            && !part.starts_with('-')
            && part.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_' | b'+'))
    };
    if !zone.split('/').all(part_ok) {
        return vec![FieldError::invalid(field, zone, &format!("unknown time zone {zone}"))];
    }
    let mut errs = Vec::new();
    if zone.eq_ignore_ascii_case("Local") {
        errs.push(FieldError::invalid(
            field,
            zone,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ));
    }
    if let Err(message) = cron::load_location(zone) {
        errs.push(FieldError::invalid(field, zone, &message));
    }
    errs
}

/// The CronJob strategy.
struct CronJobs;

impl Strategy for CronJobs {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        set_defaults(obj);
        obj["status"] = json!({});
        start_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        set_defaults(new);
        common::keep_status(new, old);
        bump_generation_on_spec_change(new, old);
    }

    /// `/status` keeps the stored spec; the rest is the request's.
    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        new["spec"] = old.get("spec").cloned().unwrap_or(json!({}));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(obj, None));
        let name = meta::get_str(obj, "name");
        if name.len() > MAX_NAME_LENGTH {
            errs.push(FieldError::invalid("metadata.name", name, "must be no more than 52 characters"));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(new, Some(old)));
        errs
    }

    /// The status strategy checks nothing of its own; the metadata's update rules still hold.
    fn validate_subresource_update(&self, _sub: Subresource, new: &Value, old: &Value) -> Vec<FieldError> {
        meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain)
    }
}

impl DeleteStrategy for CronJobs {}

/// `printBoolPtr`.
fn bool_cell(value: Option<&Value>) -> &'static str {
    match value.and_then(Value::as_bool) {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    }
}

/// `printCronJob`: schedule, zone, suspension, active jobs, the last schedule; wide: the job template's
/// containers, images and selector.
fn printer() -> Printer {
    const SPEC: &str = "io.k8s.api.batch.v1.CronJobSpec";
    const STATUS: &str = "io.k8s.api.batch.v1.CronJobStatus";
    let [containers, images] = template_columns();
    Printer {
        columns: vec![
            name_column(),
            doc_column("Schedule", "string", SPEC, "schedule", 0),
            doc_column("Timezone", "string", SPEC, "timeZone", 0),
            doc_column("Suspend", "boolean", SPEC, "suspend", 0),
            doc_column("Active", "integer", STATUS, "active", 0),
            doc_column("Last Schedule", "string", STATUS, "lastScheduleTime", 0),
            age_column(),
            containers,
            images,
            doc_column("Selector", "string", "io.k8s.api.batch.v1.JobSpec", "selector", 1),
        ],
        cells: |obj, now, _| {
            let job = json!({"spec": obj.pointer("/spec/jobTemplate/spec").cloned().unwrap_or(Value::Null)});
            let [containers, images] = template_cells(&job);
            let active = obj.pointer("/status/active").and_then(Value::as_array).map_or(0, Vec::len);
            let last = match obj.pointer("/status/lastScheduleTime").and_then(Value::as_str) {
                Some(time) => since(time, now),
                None => "<none>".into(),
            };
            vec![
                name(obj),
                Value::from(obj.pointer("/spec/schedule").and_then(Value::as_str).unwrap_or("")),
                Value::from(obj.pointer("/spec/timeZone").and_then(Value::as_str).unwrap_or("<none>")),
                Value::from(bool_cell(obj.pointer("/spec/suspend"))),
                Value::from(active),
                Value::from(last),
                age(obj, now),
                containers,
                images,
                Value::from(format_label_selector(obj.pointer("/spec/jobTemplate/spec/selector"))),
            ]
        },
    }
}

#[cfg(test)]
mod tests;
