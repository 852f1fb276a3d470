//! The tests of [`super`]: its upstream validation messages, defaults, update rules and printer.

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
        assert!(cron::Schedule::parse_standard(spec).is_ok(), "{spec}");
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
        assert_eq!(cron::Schedule::parse_standard(spec).map(|_| ()), Err(want.to_string()), "{spec}");
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
    assert_eq!((printer().cells)(&obj, now, &[])[2..6], [json!("Etc/UTC"), json!("<unset>"), json!(2), json!("10s")]);
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
    assert!(described[1].starts_with(
        "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones."
    ));
    assert!(described[1].ends_with("https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones"));
    assert_eq!(described[2], "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.");
    assert_eq!(described[3], "A list of pointers to currently running jobs.");
    assert_eq!(described[4], "Information when was the last time the job was successfully scheduled.");
}
