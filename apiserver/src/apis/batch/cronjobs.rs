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
mod tests;
