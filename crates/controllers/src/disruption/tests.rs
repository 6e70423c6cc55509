use chrono::{TimeZone, Utc};
use serde_json::{json, Map, Value};

use super::budget::*;

fn pod(name: &str, ready: bool) -> Value {
    json!({"metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "status": {"conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}})
}

fn pdb(spec: Value) -> Value {
    json!({"metadata": {"name": "b", "namespace": "default", "generation": 1}, "spec": spec})
}

fn unmanaged(_: &Value) -> PodController {
    PodController::Unmanaged
}

#[test]
fn integer_min_available_counts_selected_pods() {
    let pods = [pod("a", true), pod("b", true), pod("c", false)];
    let refs: Vec<&Value> = pods.iter().collect();
    let b = pdb(json!({"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}));
    let (expected, desired, _) = expected_and_desired(&b, &refs, &unmanaged).unwrap();
    assert_eq!((expected, desired), (3, 2));
    let now = Utc::now();
    let healthy = count_healthy(&refs, &Map::new(), now);
    assert_eq!(healthy, 2);
    let counts = Counts {
        current_healthy: healthy,
        desired_healthy: desired,
        expected_pods: expected,
    };
    let status = new_status(&b, &counts, Map::new(), now).unwrap();
    assert_eq!(status["disruptionsAllowed"], 0);
    assert_eq!(status["observedGeneration"], 1);
    let cond = &status["conditions"][0];
    assert_eq!(cond["type"], "DisruptionAllowed");
    assert_eq!(cond["status"], "False");
    assert_eq!(cond["reason"], "InsufficientPods");
    // The same status again writes nothing.
    let mut b2 = b.clone();
    b2["status"] = status;
    assert!(new_status(&b2, &counts, Map::new(), now).is_none());
    // One more ready pod allows one disruption.
    let more = Counts {
        current_healthy: 3,
        ..counts
    };
    let status = new_status(&b2, &more, Map::new(), now).unwrap();
    assert_eq!(status["disruptionsAllowed"], 1);
    assert_eq!(status["conditions"][0]["reason"], "SufficientPods");
    assert_eq!(status["conditions"][0]["status"], "True");
}

#[test]
fn max_unavailable_and_percentages_use_the_controllers_scale() {
    let pods = [pod("a", true), pod("b", true)];
    let refs: Vec<&Value> = pods.iter().collect();
    let rs = |_: &Value| PodController::Scale {
        uid: "rs-1".into(),
        replicas: 5,
    };
    let b = pdb(json!({"maxUnavailable": 1}));
    assert_eq!(expected_and_desired(&b, &refs, &rs).unwrap().0, 5);
    assert_eq!(expected_and_desired(&b, &refs, &rs).unwrap().1, 4);
    let b = pdb(json!({"maxUnavailable": "50%"}));
    // 50% of 5 rounds up to 3 unavailable: 2 must stay healthy.
    assert_eq!(expected_and_desired(&b, &refs, &rs).unwrap().1, 2);
    let b = pdb(json!({"minAvailable": "50%"}));
    assert_eq!(expected_and_desired(&b, &refs, &rs).unwrap().1, 3);
    // Unmanaged pods count for nothing (and are reported).
    let b = pdb(json!({"maxUnavailable": 1}));
    let (e, d, un) = expected_and_desired(&b, &refs, &unmanaged).unwrap();
    assert_eq!((e, d, un.len()), (0, 0, 2));
    // An owner kube's finders do not know fails the sync.
    let missing = |_: &Value| PodController::NotFound;
    assert_eq!(
        expected_and_desired(&b, &refs, &missing).unwrap_err(),
        "found no controllers for pod \"a\""
    );
    let bad = pdb(json!({"minAvailable": "half"}));
    assert!(expected_and_desired(&bad, &refs, &rs).is_err());
}

#[test]
fn disrupted_pods_expire_after_two_minutes() {
    let t0 = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let pods = [pod("a", true), pod("b", true)];
    let refs: Vec<&Value> = pods.iter().collect();
    let mut b = pdb(json!({"minAvailable": 1}));
    b["status"] =
        json!({"disruptedPods": {"a": "2026-01-01T00:00:00Z", "gone": "2026-01-01T00:00:00Z"}});
    let (kept, recheck) = live_disrupted_pods(&b, &refs, t0 + chrono::Duration::seconds(30));
    assert_eq!(kept.keys().collect::<Vec<_>>(), ["a"]);
    assert_eq!(recheck, Some(t0 + DELETION_TIMEOUT));
    assert_eq!(
        count_healthy(&refs, &kept, t0 + chrono::Duration::seconds(30)),
        1
    );
    let (kept, recheck) = live_disrupted_pods(&b, &refs, t0 + chrono::Duration::seconds(121));
    assert!(kept.is_empty());
    assert!(recheck.is_none());
    assert_eq!(count_healthy(&refs, &kept, t0), 2);
}

#[test]
fn selectors_follow_label_selector_as_selector() {
    let labels = pod("a", true)["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap();
    assert_eq!(selector_matches(None, &labels), Some(false));
    assert_eq!(selector_matches(Some(&json!({})), &labels), Some(true));
    assert_eq!(
        selector_matches(
            Some(
                &json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]})
            ),
            &labels
        ),
        Some(true)
    );
    assert_eq!(
        selector_matches(Some(&json!({"matchLabels": {"app": "db"}})), &labels),
        Some(false)
    );
    assert_eq!(
        selector_matches(
            Some(&json!({"matchExpressions": [{"key": "app", "operator": "Bogus"}]})),
            &labels
        ),
        None
    );
    assert!(selector_is_empty(Some(&json!({}))));
    assert!(!selector_is_empty(Some(
        &json!({"matchLabels": {"a": "b"}})
    )));
}

#[test]
fn fail_safe_allows_nothing() {
    let mut b = pdb(json!({"maxUnavailable": 1}));
    b["status"] = json!({"disruptionsAllowed": 2, "observedGeneration": 1});
    let s = fail_safe_status(&b, "found no controllers for pod \"a\"", Utc::now());
    assert_eq!(s["disruptionsAllowed"], 0);
    assert_eq!(s["conditions"][0]["reason"], "SyncFailed");
    assert_eq!(
        s["conditions"][0]["message"],
        "found no controllers for pod \"a\""
    );
}
