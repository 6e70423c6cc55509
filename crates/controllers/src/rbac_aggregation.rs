//! The ClusterRole aggregation controller (kube-controller-manager's
//! `clusterrole-aggregation`): a ClusterRole with an `aggregationRule`
//! gets the rules of every ClusterRole its `clusterRoleSelectors` select
//! (in name order, each rule once), and follows them as they change.

use std::future::Future;
use std::sync::Arc;

use keelson_api::{ApiResult, GroupResource, ObjectKey, StoreApi, UpdateOptions};
use keelson_apimachinery::meta::meta_str;
use keelson_informer::Informer;
use serde_json::{json, Map, Value};

/// The aggregation controller.
pub struct AggregationController {
    store: Arc<dyn StoreApi>,
}

fn cluster_roles() -> GroupResource {
    GroupResource::new(keelson_auth::rbac::GROUP, "clusterroles")
}

/// Whether a `metav1.LabelSelector` (matchLabels, matchExpressions with
/// In, NotIn, Exists, DoesNotExist) selects `labels`. Hand-written: the
/// selectors crate parses the string form only. An empty selector selects
/// nothing here, as kube's aggregation treats it.
pub fn selects(selector: &Value, labels: &Map<String, Value>) -> bool {
    let match_labels = selector.get("matchLabels").and_then(Value::as_object);
    let exprs = selector.get("matchExpressions").and_then(Value::as_array);
    if match_labels.is_none_or(Map::is_empty) && exprs.is_none_or(Vec::is_empty) {
        return false;
    }
    let ok_labels = match_labels.is_none_or(|m| m.iter().all(|(k, v)| labels.get(k) == Some(v)));
    let ok_exprs = exprs.is_none_or(|es| {
        es.iter().all(|e| {
            let key = e.get("key").and_then(Value::as_str).unwrap_or("");
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let have = labels.get(key).and_then(Value::as_str);
            match e.get("operator").and_then(Value::as_str).unwrap_or("") {
                "In" => have.is_some_and(|h| values.contains(&h)),
                "NotIn" => have.is_none_or(|h| !values.contains(&h)),
                "Exists" => have.is_some(),
                "DoesNotExist" => have.is_none(),
                _ => false,
            }
        })
    });
    ok_labels && ok_exprs
}

/// The rules an aggregated ClusterRole should have, from `all` roles.
pub fn aggregate(role: &Value, all: &[Value]) -> Vec<Value> {
    let selectors: Vec<&Value> = role
        .pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let name = meta_str(role, "name");
    let mut sources: Vec<&Value> = all
        .iter()
        .filter(|r| meta_str(r, "name") != name)
        .filter(|r| {
            let empty = Map::new();
            let labels = r
                .pointer("/metadata/labels")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            selectors.iter().any(|s| selects(s, labels))
        })
        .collect();
    sources.sort_by_key(|r| meta_str(r, "name").to_string());
    let mut rules: Vec<Value> = Vec::new();
    for r in sources {
        for rule in r
            .get("rules")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !rules.contains(rule) {
                rules.push(rule.clone());
            }
        }
    }
    rules
}

impl AggregationController {
    /// A controller over `store`.
    pub fn new(store: Arc<dyn StoreApi>) -> Self {
        AggregationController { store }
    }

    /// Run until `shutdown` completes, listing again after failures.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let mut informer = Informer::new(
            "clusterrole aggregation",
            self.store.clone(),
            vec![cluster_roles()],
        )
        .retry_after(crate::namespace::RETRY_AFTER);
        let follow = async {
            loop {
                // Every listing and every change brings all roles up to date.
                informer.next().await;
                if let Err(e) = self.aggregate_all().await {
                    informer.failed(&e);
                }
            }
        };
        tokio::select! {
            () = shutdown => {}
            () = follow => {}
        }
    }

    /// Bring every aggregated ClusterRole's rules up to date.
    async fn aggregate_all(&self) -> ApiResult<()> {
        let all = self.store.list(&cluster_roles(), None).await?.items;
        for role in &all {
            if role.get("aggregationRule").is_none_or(Value::is_null) {
                continue;
            }
            let rules = aggregate(role, &all);
            let have = role.get("rules").cloned().unwrap_or(Value::Null);
            let same = match &have {
                Value::Array(a) => *a == rules,
                _ => rules.is_empty() && have.is_null(),
            };
            if same {
                continue;
            }
            let mut updated = role.clone();
            updated["rules"] = json!(rules);
            let key = ObjectKey::new(cluster_roles(), "", meta_str(role, "name"));
            match self
                .store
                .update(&key, updated, UpdateOptions::default())
                .await
            {
                Ok(_) => {}
                // Changed meanwhile: the next event brings it again.
                Err(e) if e.is_conflict() || e.is_not_found() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregates_selected_roles() {
        let agg = json!({"metadata": {"name": "view"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "true"}}]}});
        let a = json!({"metadata": {"name": "b", "labels": {"x": "true"}}, "rules": [{"verbs": ["get"]}]});
        let b = json!({"metadata": {"name": "a", "labels": {"x": "true"}}, "rules": [{"verbs": ["list"]}, {"verbs": ["get"]}]});
        let c = json!({"metadata": {"name": "c", "labels": {"x": "false"}}, "rules": [{"verbs": ["delete"]}]});
        let rules = aggregate(&agg, &[agg.clone(), a, b, c]);
        assert_eq!(
            rules,
            vec![json!({"verbs": ["list"]}), json!({"verbs": ["get"]})]
        );
        let labels = json!({"a": "1"});
        let labels = labels.as_object().unwrap();
        assert!(selects(
            &json!({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}]}),
            labels
        ));
        assert!(!selects(
            &json!({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}),
            labels
        ));
        assert!(!selects(&json!({}), labels));
    }
}
