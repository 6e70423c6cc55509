//! batch/v1: jobs and cron jobs.

use serde_json::Value;

use super::columns::*;
use super::time::{self, Time};
use super::util::*;
use super::{Printer, Row};

pub(crate) static JOB: Printer = Printer {
    columns: &[
        NAME,
        col("Status", "string", "Status of the job."),
        col("Completions", "string", JOB_STATUS_SUCCEEDED),
        col("Duration", "string", "Time required to complete the job."),
        AGE,
        CONTAINERS,
        IMAGES,
        wide("Selector", "string", JOB_SPEC_SELECTOR),
    ],
    print: print_job,
};

pub(crate) static CRON_JOB: Printer = Printer {
    columns: &[
        NAME,
        col("Schedule", "string", CRONJOB_SPEC_SCHEDULE),
        col("Timezone", "string", CRONJOB_SPEC_TIME_ZONE),
        col("Suspend", "boolean", CRONJOB_SPEC_SUSPEND),
        col("Active", "integer", CRONJOB_STATUS_ACTIVE),
        col("Last Schedule", "string", CRONJOB_STATUS_LAST_SCHEDULE),
        AGE,
        CONTAINERS,
        IMAGES,
        wide("Selector", "string", JOB_SPEC_SELECTOR),
    ],
    print: print_cron_job,
};

/// `hasJobCondition`: the first condition of the type decides.
fn has_condition(job: &Value, ty: &str) -> bool {
    arr_at(job, &["status", "conditions"])
        .iter()
        .find(|c| str_at(c, &["type"]) == ty)
        .is_some_and(|c| str_at(c, &["status"]) == "True")
}

fn print_job(o: &Value, now: Time) -> Row {
    let succeeded = int_at(o, &["status", "succeeded"]);
    let completions = match opt_int(o, &["spec", "completions"]) {
        Some(c) => format!("{succeeded}/{c}"),
        None => match opt_int(o, &["spec", "parallelism"]).unwrap_or(0) {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let duration = match (
        time_at(o, &["status", "startTime"]),
        time_at(o, &["status", "completionTime"]),
    ) {
        (None, _) => String::new(),
        (Some(start), None) => time::human_duration(time::between(start, now)),
        (Some(start), Some(end)) => time::human_duration(time::between(start, end)),
    };
    let status = if has_condition(o, "Complete") {
        "Complete"
    } else if has_condition(o, "Failed") {
        "Failed"
    } else if deleting(o) {
        "Terminating"
    } else if has_condition(o, "Suspended") {
        "Suspended"
    } else if has_condition(o, "FailureTarget") {
        "FailureTarget"
    } else if has_condition(o, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    let (containers, images) =
        container_cells(arr_at(o, &["spec", "template", "spec", "containers"]));
    Row::new(vec![
        Value::from(name(o)),
        Value::from(status),
        Value::from(completions),
        Value::from(duration),
        age(o, now),
        containers,
        images,
        Value::from(format_label_selector(at(o, &["spec", "selector"]))),
    ])
}

fn print_cron_job(o: &Value, now: Time) -> Row {
    let last_schedule = match time_at(o, &["status", "lastScheduleTime"]) {
        Some(t) => time::since(Some(t), now),
        None if opt_str(o, &["status", "lastScheduleTime"]).is_some() => "<unknown>".into(),
        None => "<none>".to_string(),
    };
    let job = at(o, &["spec", "jobTemplate", "spec"]).unwrap_or(&Value::Null);
    let (containers, images) = container_cells(arr_at(job, &["template", "spec", "containers"]));
    Row::new(vec![
        Value::from(name(o)),
        Value::from(str_at(o, &["spec", "schedule"])),
        Value::from(opt_str(o, &["spec", "timeZone"]).unwrap_or("<none>")),
        Value::from(bool_ptr(opt_bool(o, &["spec", "suspend"]))),
        Value::from(arr_at(o, &["status", "active"]).len() as i64),
        Value::from(last_schedule),
        age(o, now),
        containers,
        images,
        Value::from(format_label_selector(at(job, &["selector"]))),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::table::time::test_now as now;

    // Facts from kube's printers_test.go TestPrintJob / TestPrintCronJob.
    #[test]
    fn jobs() {
        let job = |spec: Value, status: Value| {
            json!({"metadata": {"name": "job1", "creationTimestamp": "2024-05-01T11:00:00Z"},
                   "spec": spec, "status": status})
        };
        let c = print_job(
            &job(
                json!({"completions": 2, "template": {"spec": {"containers": [{"name": "fake-job-container1", "image": "fake-job-image1"}]}},
                       "selector": {"matchLabels": {"job-label": "job-lable-value"}}}),
                json!({"succeeded": 1}),
            ),
            now(),
        )
        .cells;
        assert_eq!(
            c,
            vec![
                json!("job1"),
                json!("Running"),
                json!("1/2"),
                json!(""),
                json!("60m"),
                json!("fake-job-container1"),
                json!("fake-job-image1"),
                json!("job-label=job-lable-value")
            ]
        );
        let c = print_job(&job(json!({}), json!({"succeeded": 0})), now()).cells;
        assert_eq!((&c[1], &c[2]), (&json!("Running"), &json!("0/1")));
        let c = print_job(&job(json!({"parallelism": 2}), json!({})), now()).cells;
        assert_eq!(c[2], json!("0/1 of 2"));
        let done = job(
            json!({"completions": 2}),
            json!({"succeeded": 2, "startTime": "2024-05-01T11:00:00Z", "completionTime": "2024-05-01T11:03:20Z",
                   "conditions": [{"type": "Complete", "status": "True"}]}),
        );
        let c = print_job(&done, now()).cells;
        assert_eq!(
            (&c[1], &c[2], &c[3]),
            (&json!("Complete"), &json!("2/2"), &json!("3m20s"))
        );
        let running = job(
            json!({}),
            json!({"startTime": "2024-05-01T11:58:00Z", "conditions": [{"type": "Suspended", "status": "True"}]}),
        );
        let c = print_job(&running, now()).cells;
        assert_eq!((&c[1], &c[3]), (&json!("Suspended"), &json!("2m")));
        let failed = job(
            json!({}),
            json!({"conditions": [{"type": "FailureTarget", "status": "True"}, {"type": "Failed", "status": "True"}]}),
        );
        assert_eq!(print_job(&failed, now()).cells[1], json!("Failed"));
        let mut terminating = job(json!({}), json!({}));
        terminating["metadata"]["deletionTimestamp"] = json!("2024-05-01T11:59:00Z");
        assert_eq!(
            print_job(&terminating, now()).cells[1],
            json!("Terminating")
        );
    }

    #[test]
    fn cron_jobs() {
        let cj = json!({
            "metadata": {"name": "cronjob1", "creationTimestamp": "2024-05-01T11:59:00Z"},
            "spec": {"schedule": "0/5 * * * ?", "suspend": false,
                     "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
                                              "selector": {"matchLabels": {"a": "b"}}}}},
            "status": {"lastScheduleTime": "2024-05-01T11:59:30Z"}
        });
        assert_eq!(
            print_cron_job(&cj, now()).cells,
            vec![
                json!("cronjob1"),
                json!("0/5 * * * ?"),
                json!("<none>"),
                json!("False"),
                json!(0),
                json!("30s"),
                json!("60s"),
                json!("c"),
                json!("i"),
                json!("a=b")
            ]
        );
        let bare = json!({"metadata": {"name": "x"}, "spec": {"timeZone": "Europe/Paris"}, "status": {"active": [{}, {}]}});
        let c = print_cron_job(&bare, now()).cells;
        assert_eq!(
            &c[2..6],
            &[
                json!("Europe/Paris"),
                json!("<unset>"),
                json!(2),
                json!("<none>")
            ]
        );
        assert_eq!(c[9], json!("<none>"));
    }
}
