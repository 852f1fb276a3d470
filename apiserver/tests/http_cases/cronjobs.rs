//! batch/v1 CronJobs over HTTP: v1's defaults (the job template's pod template defaulted as a Job's),
//! the status reset by the main endpoint and written by `/status`, the generation following the spec,
//! robfig/cron's schedule errors and the other refusals with kube-apiserver 1.32's texts, the Table
//! columns, and a delete that answers a `Status`. Everything is namespaced: no names are shared with other
//! files.

use serde_json::json;

use super::{case, delete, get, post, put, Case};

const CJS: &str = "/apis/batch/v1/namespaces/{ns}/cronjobs";
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// What `kubectl create cronjob hello --image=busybox --schedule='*/1 * * * *'` sends, with a status.
const HELLO: &str = r#"{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"hello"},"spec":{"schedule":"*/1 * * * *","jobTemplate":{"metadata":{"name":"hello"},"spec":{"template":{"spec":{"containers":[{"name":"hello","image":"busybox"}],"restartPolicy":"OnFailure"}}}}},"status":{"lastScheduleTime":"2024-01-01T00:00:00Z"}}"#;

fn with_spec(name: &str, spec: &str) -> String {
    format!(r#"{{"metadata":{{"name":"{name}"}},"spec":{spec}}}"#)
}

const TEMPLATE: &str = r#""jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox"}],"restartPolicy":"Never"}}}}"#;

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "a cron job: v1's defaults, status reset on create and kept by the main endpoint, /status, generation, table, delete",
            vec![
                post(CJS, HELLO)
                    .field("/spec/concurrencyPolicy", json!("Allow"))
                    .field("/spec/suspend", json!(false))
                    .field("/spec/successfulJobsHistoryLimit", json!(3))
                    .field("/spec/failedJobsHistoryLimit", json!(1))
                    .field("/spec/jobTemplate/metadata", json!({"name": "hello", "creationTimestamp": null}))
                    .field("/spec/jobTemplate/spec/template/metadata", json!({"creationTimestamp": null}))
                    .field("/spec/jobTemplate/spec/template/spec/dnsPolicy", json!("ClusterFirst"))
                    .field("/spec/jobTemplate/spec/template/spec/containers/0/imagePullPolicy", json!("Always"))
                    .field("/spec/jobTemplate/spec/backoffLimit", json!(null))
                    .field("/status", json!({}))
                    .field("/metadata/generation", json!(1)),
                get(&format!("{CJS}/hello")).field("/kind", json!("CronJob")).field("/spec/schedule", json!("*/1 * * * *")),
                get(CJS).field("/kind", json!("CronJobList")).field("/items/0/metadata/name", json!("hello")),
                put(
                    &format!("{CJS}/hello/status"),
                    r#"{"metadata":{"name":"hello"},"spec":{"schedule":"@daily"},"status":{"active":[{"kind":"Job","name":"hello-1","namespace":"{ns}"}],"lastScheduleTime":"2024-01-01T00:00:00Z"}}"#,
                )
                .field("/spec/schedule", json!("*/1 * * * *"))
                .field("/status/active/0/name", json!("hello-1"))
                .field("/metadata/generation", json!(1)),
                put(
                    &format!("{CJS}/hello"),
                    r#"{"metadata":{"name":"hello"},"spec":{"schedule":"@hourly","suspend":true,"timeZone":"Europe/Berlin","jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"hello","image":"busybox:1.36"}],"restartPolicy":"OnFailure"}}}}},"status":{}}"#,
                )
                .field("/status/active/0/name", json!("hello-1"))
                .field("/spec/concurrencyPolicy", json!("Allow"))
                .field("/metadata/generation", json!(2)),
                get(&format!("{CJS}/hello"))
                    .header("Accept", TABLE)
                    .field("/columnDefinitions/2/name", json!("Timezone"))
                    .field("/columnDefinitions/3/type", json!("boolean"))
                    .field("/columnDefinitions/9/priority", json!(1))
                    .field("/rows/0/cells/1", json!("@hourly"))
                    .field("/rows/0/cells/2", json!("Europe/Berlin"))
                    .field("/rows/0/cells/3", json!("True"))
                    .field("/rows/0/cells/4", json!(1))
                    .field("/rows/0/cells/7", json!("hello"))
                    .field("/rows/0/cells/8", json!("busybox:1.36"))
                    .field("/rows/0/cells/9", json!("<none>")),
                delete(&format!("{CJS}/hello"))
                    .field("/kind", json!("Status"))
                    .field("/status", json!("Success"))
                    .field("/details/name", json!("hello"))
                    .field("/details/group", json!("batch"))
                    .field("/details/kind", json!("cronjobs")),
                get(&format!("{CJS}/hello")).status(404, "NotFound", r#"cronjobs.batch "hello" not found"#),
            ],
        ),
        case(
            "a cron job's schedule, zone, name and job template are refused with upstream's texts",
            vec![
                post(CJS, &with_spec("bad", &format!(r#"{{"schedule":"bad",{TEMPLATE}}}"#))).status(
                    422,
                    "Invalid",
                    r#"CronJob.batch "bad" is invalid: spec.schedule: Invalid value: "bad": expected exactly 5 fields, found 1: [bad]"#,
                ),
                post(CJS, &with_spec("bad", &format!(r#"{{"schedule":"61 * * * *",{TEMPLATE}}}"#))).status(
                    422,
                    "Invalid",
                    r#"CronJob.batch "bad" is invalid: spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61"#,
                ),
                post(CJS, &with_spec("bad", &format!(r#"{{"schedule":"CRON_TZ=UTC 0 * * * *",{TEMPLATE}}}"#))).status(
                    422,
                    "Invalid",
                    r#"CronJob.batch "bad" is invalid: spec.schedule: Invalid value: "CRON_TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"#,
                ),
                post(CJS, &with_spec("bad", &format!(r#"{{"schedule":"@every 1x",{TEMPLATE}}}"#))).status(
                    422,
                    "Invalid",
                    r#"CronJob.batch "bad" is invalid: spec.schedule: Invalid value: "@every 1x": failed to parse duration @every 1x: time: unknown unit "x" in duration "1x""#,
                ),
                post(CJS, &with_spec("bad", &format!(r#"{{"schedule":"@daily","timeZone":"Mars/Base",{TEMPLATE}}}"#))).status(
                    422,
                    "Invalid",
                    r#"CronJob.batch "bad" is invalid: spec.timeZone: Invalid value: "Mars/Base": unknown time zone Mars/Base"#,
                ),
                post(
                    CJS,
                    &with_spec(
                        "bad",
                        &format!(r#"{{"schedule":"@daily","concurrencyPolicy":"Sometimes","startingDeadlineSeconds":-1,"failedJobsHistoryLimit":-1,{TEMPLATE}}}"#),
                    ),
                )
                .status(
                    422,
                    "Invalid",
                    r#"CronJob.batch "bad" is invalid: [spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0, spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace", spec.failedJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0]"#,
                ),
                post(
                    CJS,
                    &with_spec(
                        "bad",
                        r#"{"schedule":"@daily","jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}}"#,
                    ),
                )
                .status(
                    422,
                    "Invalid",
                    r#"CronJob.batch "bad" is invalid: spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never""#,
                ),
                post(
                    CJS,
                    &with_spec(
                        "bad",
                        r#"{"schedule":"@daily","jobTemplate":{"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"busybox"}],"restartPolicy":"Never"}}}}}"#,
                    ),
                )
                .status(
                    422,
                    "Invalid",
                    r#"CronJob.batch "bad" is invalid: spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"a":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated"#,
                ),
                post(CJS, &with_spec(&"a".repeat(53), &format!(r#"{{"schedule":"@daily",{TEMPLATE}}}"#))).status(
                    422,
                    "Invalid",
                    &format!(
                        r#"CronJob.batch "{n}" is invalid: metadata.name: Invalid value: "{n}": must be no more than 52 characters"#,
                        n = "a".repeat(53)
                    ),
                ),
                post(CJS, &with_spec(&"a".repeat(52), &format!(r#"{{"schedule":"0 9-17 * jan-dec MON-FRI",{TEMPLATE}}}"#))),
            ],
        ),
    ]
}
