//! CronJobs, `batch/v1` (`KK/pkg/registry/batch/cronjob`, `KK/pkg/apis/batch/validation`
//! `ValidateCronJobCreate` / `ValidateCronJobUpdate`, `KK/pkg/apis/batch/v1/defaults.go`): namespaced,
//! short name `cj`, category `all`, a `/status` subresource. Names are DNS subdomains of at most 52
//! characters on create (the controller appends an 11-character suffix to name its jobs); updates skip
//! that limit. v1's defaults: `concurrencyPolicy: Allow`, not suspended, three successful and one failed
//! job kept; the job template's pod template gets the pod defaults a Job's template gets. The schedule is
//! read by robfig/cron's standard parser (five fields, or a `@hourly`-style descriptor or `@every
//! <duration>`), with its error texts; `TZ=` and `CRON_TZ=` are refused in it (kept on update when the
//! stored schedule had them, unless `timeZone` is set too); `spec.timeZone` must name an IANA zone (and
//! is checked only when it changes on update); history limits and `startingDeadlineSeconds` are not
//! negative; the job template's spec is checked as a Job's (counts, completion mode, containers, a restart
//! policy of `OnFailure` or `Never`), has no selector and no `manualSelector: true`. The main endpoint
//! resets the status (empty on create, the stored one on update) and bumps the generation when the spec
//! changes; `/status` keeps the stored spec. Deleting answers a `Status` (the store does not return the
//! deleted object, and `batch/v1` deletes dependents in the background).

use std::str::FromStr;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::networking::ingresses::invalid_go;
use crate::apis::printers::apps::{template_cells, template_columns};
use crate::apis::printers::{age, age_column, doc_column, name, name_column, since};
use crate::apis::{status, Printer, ResourceInfo};
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
        if let Err(message) = parse_schedule(schedule) {
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
    if let Err(message) = load_location(zone) {
        errs.push(FieldError::invalid(field, zone, &message));
    }
    errs
}

/// Go's `time.LoadLocation`, as far as a name goes: `UTC`, `Local` and the IANA zones (with their
/// backward-compatible links) load; other names are unknown.
fn load_location(name: &str) -> Result<(), String> {
    if name.is_empty() || name == "UTC" || name == "Local" {
        return Ok(());
    }
    if name.contains("..") || name.starts_with('/') || name.starts_with('\\') {
        return Err("time: invalid location name".into());
    }
    chrono_tz::Tz::from_str(name).map(|_| ()).map_err(|_| format!("unknown time zone {name}"))
}

/// One field of a five-field schedule: its bounds and the names it takes.
struct Bounds {
    min: u64,
    max: u64,
    names: &'static [&'static str],
}

const MINUTES: Bounds = Bounds { min: 0, max: 59, names: &[] };
const HOURS: Bounds = Bounds { min: 0, max: 23, names: &[] };
const DAYS_OF_MONTH: Bounds = Bounds { min: 1, max: 31, names: &[] };
/// Months: `jan` is 1.
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &["", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
};
/// Days of the week: `sun` is 0.
const DAYS_OF_WEEK: Bounds = Bounds { min: 0, max: 6, names: &["sun", "mon", "tue", "wed", "thu", "fri", "sat"] };

/// The descriptors that stand for a whole schedule.
const DESCRIPTORS: &[&str] = &["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"];

/// robfig/cron v3's `ParseStandard`: whether `spec` is a schedule, else the parser's error text.
fn parse_schedule(spec: &str) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".into());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        // The zone runs from the '=' to the first blank; a spec with no blank has no schedule after it
        // (upstream's slicing fails outright there; see the module's tests).
        let eq = spec.find('=').unwrap_or(0);
        let end = spec.find(' ').filter(|end| *end > eq).unwrap_or(spec.len());
        let zone = &spec[eq + 1..end];
        if let Err(err) = load_location(zone) {
            return Err(format!("provided bad location {zone}: {err}"));
        }
        spec = spec[end..].trim();
    }
    if spec.starts_with('@') {
        return parse_descriptor(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!("expected exactly 5 fields, found {}: [{}]", fields.len(), fields.join(" ")));
    }
    for (field, bounds) in fields.iter().zip([&MINUTES, &HOURS, &DAYS_OF_MONTH, &MONTHS, &DAYS_OF_WEEK]) {
        for expr in field.split(',').filter(|e| !e.is_empty()) {
            parse_range(expr, bounds)?;
        }
    }
    Ok(())
}

fn parse_descriptor(spec: &str) -> Result<(), String> {
    if DESCRIPTORS.contains(&spec) {
        return Ok(());
    }
    match spec.strip_prefix("@every ") {
        Some(duration) => parse_go_duration(duration).map_err(|err| format!("failed to parse duration {spec}: {err}")),
        None => Err(format!("unrecognized descriptor: {spec}")),
    }
}

/// `getRange`: `*`, `?`, a number or name, or a range `a-b`, each with an optional `/step`.
fn parse_range(expr: &str, bounds: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (bounds.min, bounds.max)
    } else {
        let start = parse_int_or_name(low_and_high[0], bounds.names)?;
        match low_and_high.len() {
            1 => (start, start),
            2 => (start, parse_int_or_name(low_and_high[1], bounds.names)?),
            _ => return Err(format!("too many hyphens: {expr}")),
        }
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = parse_non_negative(range_and_step[1])?;
            if low_and_high.len() == 1 {
                end = bounds.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < bounds.min {
        return Err(format!("beginning of range ({start}) below minimum ({}): {expr}", bounds.min));
    }
    if end > bounds.max {
        return Err(format!("end of range ({end}) above maximum ({}): {expr}", bounds.max));
    }
    if start > end {
        return Err(format!("beginning of range ({start}) beyond end of range ({end}): {expr}"));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

fn parse_int_or_name(expr: &str, names: &[&str]) -> Result<u64, String> {
    let lower = expr.to_lowercase();
    match names.iter().position(|n| !n.is_empty() && *n == lower) {
        Some(i) => Ok(i as u64),
        None => parse_non_negative(expr),
    }
}

/// `mustParseInt`: Go's `strconv.Atoi`, then not negative.
fn parse_non_negative(expr: &str) -> Result<u64, String> {
    let number = go_atoi(expr).map_err(|err| format!("failed to parse int from {expr}: {err}"))?;
    u64::try_from(number).map_err(|_| format!("negative number ({number}) not allowed: {expr}"))
}

/// Go's `strconv.Atoi` on a 64-bit machine, with its error text.
fn go_atoi(text: &str) -> Result<i64, String> {
    let quoted = crate::go_text::quote(text);
    let syntax = || format!("strconv.Atoi: parsing {quoted}: invalid syntax");
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() {
        return Err(syntax());
    }
    let mut value: u64 = 0;
    for c in digits.bytes() {
        if !c.is_ascii_digit() {
            return Err(syntax());
        }
        value = match value.checked_mul(10).and_then(|v| v.checked_add(u64::from(c - b'0'))) {
            Some(v) => v,
            None => return Err(format!("strconv.Atoi: parsing {quoted}: value out of range")),
        };
    }
    let limit = if negative { 1u64 << 63 } else { (1u64 << 63) - 1 };
    if value > limit {
        return Err(format!("strconv.Atoi: parsing {quoted}: value out of range"));
    }
    Ok(if negative { (value as i64).wrapping_neg() } else { value as i64 })
}

/// The `time` package's own quoting: bytes outside printable ASCII as `\xNN`.
fn time_quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        if (c as u32) < 0x20 || (c as u32) >= 0x80 {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// Go's `time.ParseDuration`: whether `text` is a duration, else its error text.
fn parse_go_duration(text: &str) -> Result<(), String> {
    let invalid = || format!("time: invalid duration {}", time_quote(text));
    let mut s = text.strip_prefix(['-', '+']).unwrap_or(text);
    if s == "0" {
        return Ok(());
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: u128 = 0;
    while !s.is_empty() {
        let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
        if !(s.starts_with('.') || s.as_bytes()[0].is_ascii_digit()) {
            return Err(invalid());
        }
        let whole = digits(s);
        let integer: u128 = if whole > 0 { s[..whole].parse().map_err(|_| invalid())? } else { 0 };
        if integer > 1 << 63 {
            return Err(invalid());
        }
        s = &s[whole..];
        let mut fraction = 0;
        if let Some(rest) = s.strip_prefix('.') {
            fraction = digits(rest);
            s = &rest[fraction..];
        }
        if whole == 0 && fraction == 0 {
            return Err(invalid());
        }
        let unit_len = s.bytes().take_while(|c| *c != b'.' && !c.is_ascii_digit()).count();
        if unit_len == 0 {
            return Err(format!("time: missing unit in duration {}", time_quote(text)));
        }
        let unit = &s[..unit_len];
        s = &s[unit_len..];
        let nanos: u128 = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return Err(format!("time: unknown unit {} in duration {}", time_quote(unit), time_quote(text))),
        };
        total += integer * nanos;
        if total > 1 << 63 {
            return Err(invalid());
        }
    }
    if !text.starts_with('-') && total > (1 << 63) - 1 {
        return Err(invalid());
    }
    Ok(())
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
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn cron_job(spec: Value) -> Value {
        json!({"metadata": {"name": "hello", "namespace": "ns"}, "spec": spec})
    }

    /// A valid spec, as `kubectl create cronjob` sends it, with `edit` merged over its top level.
    fn spec_with(edit: Value) -> Value {
        let mut spec = json!({
            "schedule": "*/1 * * * *",
            "jobTemplate": {"metadata": {"name": "hello"}, "spec": {"template": {"spec": {
                "containers": [{"name": "hello", "image": "busybox"}], "restartPolicy": "OnFailure"}}}},
        });
        for (key, value) in edit.as_object().expect("an object") {
            spec[key] = value.clone();
        }
        spec
    }

    /// The errors of creating a cron job with `spec`, after the defaults.
    fn create_errors(spec: Value) -> Vec<String> {
        let mut obj = cron_job(spec);
        CronJobs.prepare_for_create(&mut obj);
        messages(CronJobs.validate(&obj))
    }

    #[test]
    fn schedules_parse_as_robfig_cron_parses_them() {
        let ok = [
            "*/1 * * * *",
            "0 0 * * *",
            "0,30 9-17 * jan-dec mon-fri",
            "? * 1 JAN SUN",
            "5/15 * * * *",
            "@hourly",
            "@every 1h30m",
            "@every 1.5s",
            "CRON_TZ=UTC 0 * * * *",
            "TZ=America/New_York @daily",
        ];
        for spec in ok {
            assert_eq!(parse_schedule(spec), Ok(()), "{spec}");
        }
        let bad = [
            ("bad", "expected exactly 5 fields, found 1: [bad]"),
            ("* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]"),
            ("60 * * * *", "end of range (60) above maximum (59): 60"),
            ("* 5-2 * * *", "beginning of range (5) beyond end of range (2): 5-2"),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            ("* * * foo *", "failed to parse int from foo: strconv.Atoi: parsing \"foo\": invalid syntax"),
            ("*/0 * * * *", "step of range should be a positive number: */0"),
            ("*/-1 * * * *", "negative number (-1) not allowed: -1"),
            ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
            ("1/2/3 * * * *", "too many slashes: 1/2/3"),
            (
                "99999999999999999999 * * * *",
                "failed to parse int from 99999999999999999999: strconv.Atoi: parsing \"99999999999999999999\": value out of range",
            ),
            ("@often", "unrecognized descriptor: @often"),
            ("@every 1x", "failed to parse duration @every 1x: time: unknown unit \"x\" in duration \"1x\""),
            ("@every 10", "failed to parse duration @every 10: time: missing unit in duration \"10\""),
            ("@every ", "failed to parse duration @every : time: invalid duration \"\""),
            ("TZ=Mars/Base * * * * *", "provided bad location Mars/Base: unknown time zone Mars/Base"),
            // Upstream slices past the end here; kubesim reads the zone as the rest and an empty schedule.
            ("TZ=UTC", "expected exactly 5 fields, found 0: []"),
        ];
        for (spec, want) in bad {
            assert_eq!(parse_schedule(spec), Err(want.to_string()), "{spec}");
        }
    }

    #[test]
    fn defaults_are_v1s() {
        let mut obj = cron_job(spec_with(json!({})));
        obj["status"] = json!({"active": [{"name": "x"}]});
        CronJobs.prepare_for_create(&mut obj);
        let spec = &obj["spec"];
        assert_eq!(spec["concurrencyPolicy"], "Allow");
        assert_eq!(spec["suspend"], false);
        assert_eq!(spec["successfulJobsHistoryLimit"], 3);
        assert_eq!(spec["failedJobsHistoryLimit"], 1);
        assert_eq!(spec["jobTemplate"]["metadata"], json!({"name": "hello", "creationTimestamp": null}));
        let template = &spec["jobTemplate"]["spec"]["template"];
        assert_eq!(template["metadata"], json!({"creationTimestamp": null}));
        assert_eq!(template["spec"]["dnsPolicy"], "ClusterFirst");
        assert_eq!(template["spec"]["restartPolicy"], "OnFailure");
        assert_eq!(template["spec"]["containers"][0]["imagePullPolicy"], "Always");
        // Job-level defaults are not a template's.
        assert_eq!(spec["jobTemplate"]["spec"].get("backoffLimit"), None);
        assert_eq!(obj["status"], json!({}));
        assert_eq!(obj["metadata"]["generation"], 1);
        assert!(messages(CronJobs.validate(&obj)).is_empty());
        let mut kept = cron_job(spec_with(json!({"concurrencyPolicy": "Forbid", "suspend": true})));
        CronJobs.prepare_for_create(&mut kept);
        assert_eq!(
            (kept["spec"]["concurrencyPolicy"].clone(), kept["spec"]["suspend"].clone()),
            (json!("Forbid"), json!(true))
        );
    }

    #[test]
    fn cron_jobs_are_validated_as_upstream_validates_them() {
        let template = |job_spec: Value| json!({"jobTemplate": {"spec": job_spec}});
        let containers = json!([{"name": "c", "image": "busybox"}]);
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (spec_with(json!({"timeZone": "Europe/Berlin", "startingDeadlineSeconds": 0})), vec![]),
            (spec_with(json!({"timeZone": "US/Eastern"})), vec![]),
            (spec_with(json!({"schedule": ""})), vec!["spec.schedule: Required value"]),
            (
                spec_with(json!({"schedule": "* * *"})),
                vec!["spec.schedule: Invalid value: \"* * *\": expected exactly 5 fields, found 3: [* * *]"],
            ),
            (
                spec_with(json!({"schedule": "TZ=UTC 0 * * * *"})),
                vec!["spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"],
            ),
            (
                spec_with(json!({"startingDeadlineSeconds": -1})),
                vec!["spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0"],
            ),
            (
                spec_with(json!({"timeZone": "Mars/Base"})),
                vec!["spec.timeZone: Invalid value: \"Mars/Base\": unknown time zone Mars/Base"],
            ),
            (
                spec_with(json!({"timeZone": "Europe/../etc"})),
                vec!["spec.timeZone: Invalid value: \"Europe/../etc\": unknown time zone Europe/../etc"],
            ),
            (
                spec_with(json!({"timeZone": "a..b"})),
                vec!["spec.timeZone: Invalid value: \"a..b\": time: invalid location name"],
            ),
            (
                spec_with(json!({"timeZone": ""})),
                vec!["spec.timeZone: Invalid value: \"\": timeZone must be nil or non-empty string"],
            ),
            (
                spec_with(json!({"timeZone": "Local"})),
                vec!["spec.timeZone: Invalid value: \"Local\": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"],
            ),
            (
                spec_with(json!({"timeZone": "local"})),
                vec![
                    "spec.timeZone: Invalid value: \"local\": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
                    "spec.timeZone: Invalid value: \"local\": unknown time zone local",
                ],
            ),
            (
                spec_with(json!({"concurrencyPolicy": "Sometimes"})),
                vec!["spec.concurrencyPolicy: Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\""],
            ),
            (
                spec_with(json!({"successfulJobsHistoryLimit": -1, "failedJobsHistoryLimit": -2})),
                vec![
                    "spec.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
                    "spec.failedJobsHistoryLimit: Invalid value: -2: must be greater than or equal to 0",
                ],
            ),
            (
                spec_with(template(json!({"template": {"spec": {"containers": containers}}}))),
                vec!["spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""],
            ),
            (
                spec_with(template(json!({"template": {"spec": {"containers": containers, "restartPolicy": "Sometimes"}}}))),
                vec!["spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"OnFailure\", \"Never\""],
            ),
            (
                spec_with(template(json!({"template": {"spec": {"containers": [], "restartPolicy": "Never"}}}))),
                vec!["spec.jobTemplate.spec.template.spec.containers: Required value"],
            ),
            (
                spec_with(template(json!({"parallelism": -1, "backoffLimit": -2, "template": {"spec": {"containers": containers, "restartPolicy": "Never"}}}))),
                vec![
                    "spec.jobTemplate.spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
                    "spec.jobTemplate.spec.backoffLimit: Invalid value: -2: must be greater than or equal to 0",
                ],
            ),
            (
                spec_with(template(json!({"completionMode": "Indexed", "template": {"spec": {"containers": containers, "restartPolicy": "Never"}}}))),
                vec!["spec.jobTemplate.spec.completions: Required value: when completion mode is Indexed"],
            ),
            (
                spec_with(template(json!({"completionMode": "Sometimes", "template": {"spec": {"containers": containers, "restartPolicy": "Never"}}}))),
                vec!["spec.jobTemplate.spec.completionMode: Unsupported value: \"Sometimes\": supported values: \"NonIndexed\", \"Indexed\""],
            ),
            (
                spec_with(template(json!({"maxFailedIndexes": 1, "template": {"spec": {"containers": containers, "restartPolicy": "Never"}}}))),
                vec![
                    "spec.jobTemplate.spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
                    "spec.jobTemplate.spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode",
                ],
            ),
            (
                spec_with(template(json!({"podReplacementPolicy": "Never", "template": {"spec": {"containers": containers, "restartPolicy": "Never"}}}))),
                vec!["spec.jobTemplate.spec.podReplacementPolicy: Unsupported value: \"Never\": supported values: \"Failed\", \"TerminatingOrFailed\""],
            ),
            (
                spec_with(template(json!({"selector": {"matchLabels": {"a": "b"}}, "manualSelector": true, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": containers, "restartPolicy": "Never"}}}))),
                vec![
                    "spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"a\":\"b\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated",
                    "spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: \"nil\", \"false\"",
                ],
            ),
        ];
        for (spec, want) in cases {
            assert_eq!(create_errors(spec.clone()), want, "{spec}");
        }
    }

    #[test]
    fn names_are_subdomains_of_at_most_52_characters_on_create() {
        let long = "a".repeat(53);
        let mut obj = cron_job(spec_with(json!({})));
        obj["metadata"]["name"] = json!(long);
        CronJobs.prepare_for_create(&mut obj);
        assert_eq!(
            messages(CronJobs.validate(&obj)),
            [format!("metadata.name: Invalid value: \"{long}\": must be no more than 52 characters")]
        );
        obj["metadata"]["name"] = json!("a".repeat(52));
        assert!(CronJobs.validate(&obj).is_empty());
        obj["metadata"]["name"] = json!("Hello");
        assert_eq!(messages(CronJobs.validate(&obj)).len(), 1);
        // An update does not apply the length limit.
        let mut old = cron_job(spec_with(json!({})));
        old["metadata"]["name"] = json!(long);
        CronJobs.prepare_for_create(&mut old);
        let mut new = old.clone();
        new["spec"]["suspend"] = json!(true);
        CronJobs.prepare_for_update(&mut new, &old);
        assert!(CronJobs.validate_update(&new, &old).is_empty());
    }

    #[test]
    fn updates_keep_status_bump_generation_and_tolerate_stored_tz() {
        let mut old = cron_job(spec_with(json!({})));
        CronJobs.prepare_for_create(&mut old);
        old["status"] = json!({"lastScheduleTime": "2024-01-01T00:00:00Z"});
        let mut new = old.clone();
        new["status"] = json!({});
        CronJobs.prepare_for_update(&mut new, &old);
        assert_eq!(new["status"], old["status"]);
        assert_eq!(new["metadata"]["generation"], 1);
        new["spec"]["schedule"] = json!("@daily");
        CronJobs.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        // /status keeps the spec.
        let mut via_status = old.clone();
        via_status["spec"]["schedule"] = json!("@weekly");
        via_status["status"] = json!({"active": []});
        CronJobs.prepare_for_subresource_update(Subresource::Status, &mut via_status, &old);
        assert_eq!(via_status["spec"], old["spec"]);
        assert_eq!(via_status["status"], json!({"active": []}));
        // A stored TZ= schedule may stay, but not beside a timeZone; a stored bad zone is not checked again.
        let mut tz_old = old.clone();
        tz_old["spec"]["schedule"] = json!("TZ=UTC 0 * * * *");
        tz_old["spec"]["timeZone"] = json!("Mars/Base");
        let mut tz_new = tz_old.clone();
        tz_new["spec"]["timeZone"] = Value::Null;
        assert!(CronJobs.validate_update(&tz_new, &tz_old).is_empty());
        assert_eq!(
            messages(CronJobs.validate_update(&tz_old, &tz_old)),
            ["spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": cannot use both timeZone field and TZ or CRON_TZ in schedule"]
        );
    }

    #[test]
    fn the_printer_shows_schedule_zone_and_activity() {
        let mut obj = cron_job(spec_with(json!({})));
        CronJobs.prepare_for_create(&mut obj);
        obj["metadata"]["creationTimestamp"] = json!("2023-11-14T22:13:20Z");
        let now = 1_700_000_000 + 30;
        assert_eq!(
            (printer().cells)(&obj, now, &[]),
            vec![
                json!("hello"),
                json!("*/1 * * * *"),
                json!("<none>"),
                json!("False"),
                json!(0),
                json!("<none>"),
                json!("30s"),
                json!("hello"),
                json!("busybox"),
                json!("<none>"),
            ]
        );
        obj["spec"]["timeZone"] = json!("Etc/UTC");
        obj["spec"].as_object_mut().unwrap().remove("suspend");
        obj["status"] = json!({"active": [{"name": "a"}, {"name": "b"}], "lastScheduleTime": "2023-11-14T22:13:40Z"});
        assert_eq!(
            (printer().cells)(&obj, now, &[])[2..6],
            [json!("Etc/UTC"), json!("<unset>"), json!(2), json!("10s")]
        );
        let columns: Vec<(String, i32)> = printer().columns.iter().map(|c| (c.name.to_string(), c.priority)).collect();
        let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "Name",
                "Schedule",
                "Timezone",
                "Suspend",
                "Active",
                "Last Schedule",
                "Age",
                "Containers",
                "Images",
                "Selector"
            ]
        );
        assert!(columns[7..].iter().all(|(_, p)| *p == 1) && columns[..7].iter().all(|(_, p)| *p == 0));
        let described: Vec<String> = printer().columns[1..6].iter().map(|c| c.description.to_string()).collect();
        assert_eq!(described[0], "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.");
        assert!(described[1].starts_with("The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones."));
        assert!(
            described[1].ends_with("https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones")
        );
        assert_eq!(described[2], "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.");
        assert_eq!(described[3], "A list of pointers to currently running jobs.");
        assert_eq!(described[4], "Information when was the last time the job was successfully scheduled.");
    }
}
